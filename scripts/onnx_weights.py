"""Start a torch model from an exported ONNX file: the committed model is the durable checkpoint.

Training checkpoints (``runs/*/last.pt``) live on one machine; ``models/*.onnx`` is what is
committed. The exporter folds every BatchNorm into the convolution before it, so the file
holds ``W' = W * g / s`` and ``b' = beta - mu * g / s`` and no BatchNorm at all. To fine-tune
from it, each folded pair is unfolded again so that the torch model computes exactly what the
ONNX model computes:

* the convolution gets ``W'`` (it has no bias of its own);
* the BatchNorm gets running statistics measured on a calibration batch (``mu``, ``v`` of the
  convolution's output) and ``gamma = sqrt(v + eps)``, ``beta = mu + b'``, so that in eval mode
  ``BN(z) = z + b'`` exactly, and in train mode, where the batch's own statistics are used,
  very nearly (they are close to the calibration batch's).

Parameters the exporter kept under their own names (heads, linear layers, the cosine weights)
are copied by name. The folded pairs are matched in the order the forward pass calls them, which
is the order of the ONNX graph; any shape that does not line up is an error, never a guess.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from torch import nn


def _forward_order(model: nn.Module, example: torch.Tensor) -> list[nn.Module]:
    """Conv2d and BatchNorm2d modules in the order a forward pass first calls them."""
    order: list[nn.Module] = []
    hooks = []
    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.BatchNorm2d)):
            hooks.append(m.register_forward_hook(lambda mod, _i, _o: order.append(mod) if mod not in order else None))
    try:
        with torch.no_grad():
            model(example)
    finally:
        for h in hooks:
            h.remove()
    return order


def load_onnx_weights(model: nn.Module, onnx_path: Path, calib: torch.Tensor, prefix: str = "net.") -> int:
    """Load ``onnx_path`` into ``model`` (the torch module that was exported, called on ``calib``).

    ``prefix`` is the attribute path of ``model`` inside the exported wrapper (``Exported(net)``
    names its parameters ``net.*``). Returns the number of tensors loaded. Raises ValueError when
    the file does not fit the model.
    """
    graph = onnx.load(str(onnx_path)).graph
    inits = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    state = model.state_dict()
    named: dict[str, torch.Tensor] = {}
    for name, arr in inits.items():
        key = name[len(prefix):] if name.startswith(prefix) else name
        if key in state:
            if tuple(state[key].shape) != arr.shape:
                raise ValueError(f"{onnx_path}: {name} has shape {arr.shape}, the model wants {tuple(state[key].shape)}")
            named[key] = torch.from_numpy(arr.copy())
    folded = _folded_convs(graph, inits, state, prefix, onnx_path)
    pairs = _conv_bn_pairs(model, calib)
    if len(pairs) != len(folded):
        raise ValueError(f"{onnx_path}: {len(folded)} folded convolutions, the model has {len(pairs)} conv+BN pairs")
    model.load_state_dict({**state, **named})
    bias_of = _load_folded(pairs, folded, onnx_path)
    _calibrate(model, pairs, bias_of, calib)
    return len(named) + 2 * len(pairs)


def _folded_convs(
    graph: Any, inits: dict[str, np.ndarray], state: dict[str, torch.Tensor], prefix: str, onnx_path: Path
) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """The weights and biases of the graph's folded conv+BN pairs: conv nodes whose weight is not a
    named parameter, in graph order.  A weight used twice (the crop and its half turn) reaches its
    second conv through Identity, and counts once."""
    alias = {n.output[0]: n.input[0] for n in graph.node if n.op_type == "Identity"}

    def resolve(name: str) -> str:
        while name in alias:
            name = alias[name]
        return name

    folded: list[tuple[np.ndarray, np.ndarray | None]] = []
    seen: set[str] = set()
    for node in graph.node:
        if node.op_type != "Conv" or len(node.input) < 2:
            continue
        w_name = resolve(node.input[1])
        key = w_name[len(prefix):] if w_name.startswith(prefix) else w_name
        if key in state or w_name in seen:
            continue
        seen.add(w_name)
        if w_name not in inits:
            raise ValueError(f"{onnx_path}: conv weight {w_name} is not an initializer")
        bias = inits.get(resolve(node.input[2])) if len(node.input) > 2 else None
        folded.append((inits[w_name], bias))
    return folded


def _conv_bn_pairs(model: nn.Module, calib: torch.Tensor) -> list[tuple[nn.Conv2d, nn.BatchNorm2d]]:
    """Each convolution of ``model`` followed by a BatchNorm of its width, in the order a forward
    pass runs them."""
    order = _forward_order(model, calib[:2])
    return [(a, b) for a, b in zip(order, order[1:], strict=False)
            if isinstance(a, nn.Conv2d) and isinstance(b, nn.BatchNorm2d) and a.out_channels == b.num_features]


def _load_folded(
    pairs: list[tuple[nn.Conv2d, nn.BatchNorm2d]], folded: list[tuple[np.ndarray, np.ndarray | None]], onnx_path: Path
) -> dict[nn.BatchNorm2d, torch.Tensor]:
    """Each folded weight into its conv (bias zero) and its bias into the BatchNorm after it, set to
    identity-plus-bias first, so the layers after see exactly the ONNX activations: each
    BatchNorm's bias."""
    bias_of: dict[nn.BatchNorm2d, torch.Tensor] = {}
    for (conv, bn), (w, b) in zip(pairs, folded, strict=True):
        if tuple(conv.weight.shape) != w.shape:
            raise ValueError(f"{onnx_path}: a folded conv has shape {w.shape}, the model's has {tuple(conv.weight.shape)}")
        with torch.no_grad():
            conv.weight.copy_(torch.from_numpy(w.copy()))
            if conv.bias is not None:
                conv.bias.zero_()
            bvec = torch.from_numpy(b.copy()) if b is not None else torch.zeros(bn.num_features)
            bn.running_mean.zero_()
            bn.running_var.fill_(1.0)
            bn.weight.fill_(float(np.sqrt(1.0 + bn.eps)))
            bn.bias.copy_(bvec)
        bias_of[bn] = bvec
    return bias_of


def _calibrate(
    model: nn.Module, pairs: list[tuple[nn.Conv2d, nn.BatchNorm2d]], bias_of: dict[nn.BatchNorm2d, torch.Tensor],
    calib: torch.Tensor,
) -> None:
    """Each BatchNorm's input measured on the calibration batch, and the stats moved into it: the
    BatchNorm then computes what it did, and trains as a BatchNorm again."""
    stats: dict[nn.BatchNorm2d, tuple[torch.Tensor, torch.Tensor]] = {}

    def grab(mod: nn.Module, inp: tuple[torch.Tensor, ...], _out: torch.Tensor) -> None:
        z = inp[0].detach()
        if mod not in stats:
            stats[mod] = (z.mean(dim=(0, 2, 3)), z.var(dim=(0, 2, 3), unbiased=False))  # type: ignore[index]

    was_training = model.training
    model.eval()
    hooks = [bn.register_forward_hook(grab) for _, bn in pairs]
    try:
        with torch.no_grad():
            model(calib)
    finally:
        for h in hooks:
            h.remove()
    with torch.no_grad():
        for _, bn in pairs:
            mu, var = stats[bn]
            bn.running_mean.copy_(mu)
            bn.running_var.copy_(var)
            bn.weight.copy_(torch.sqrt(var + bn.eps))
            bn.bias.copy_(mu + bias_of[bn])
    model.train(was_training)


def init_weights(model: nn.Module, path: Path, calib: Callable[[], torch.Tensor], strict: bool = True) -> list[str]:
    """Start ``model`` from ``path``: a run's ``last.pt`` (its ``"model"`` state) or an exported
    ``.onnx`` (:func:`load_onnx_weights`, with the batch ``calib()`` makes, called only then).
    Returns the model's keys the file did not have (``strict=False``: new layers)."""
    if path.suffix == ".onnx":
        load_onnx_weights(model, path, calib())
        return []
    missing = model.load_state_dict(torch.load(path, weights_only=False)["model"], strict=strict)
    return list(missing.missing_keys)
