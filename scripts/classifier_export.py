"""The tile classifier's files: the deployed graph (:class:`Exported`, the crop and its half turn
averaged), its export to ``classifier.onnx`` and ``classifier.json`` (:func:`export`), and a net
started from a saved one (:func:`extra_blocks`, :func:`load_into`, :func:`init_from`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from scripts.classifier_data import centre_crops
from scripts.classifier_net import CLASSES, EMB_DIM, SCALE, TileNet, to_tensor
from vision.classify import CROP_H, CROP_W


class Exported(nn.Module):
    """The deployed graph: mean embedding of the crop and its half turn -> (logits, embedding)."""

    def __init__(self, net: TileNet) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        emb = 0.5 * (self.net.embedding(x) + self.net.embedding(torch.flip(x, dims=[2, 3])))
        return self.net.logits(emb), emb


def export(net: TileNet, out_dir: Path, meta: dict[str, Any]) -> Path:
    net = net.cpu().eval()  # exported from the CPU, wherever it trained
    out_dir.mkdir(parents=True, exist_ok=True)
    onnx_path = out_dir / "classifier.onnx"
    dummy = torch.zeros(1, 3, CROP_H, CROP_W)
    torch.onnx.export(
        Exported(net),
        (dummy,),
        str(onnx_path),
        input_names=["crops"],
        output_names=["logits", "embedding"],
        dynamic_axes={"crops": {0: "n"}, "logits": {0: "n"}, "embedding": {0: "n"}},
        opset_version=17,
        dynamo=False,
    )
    digest = hashlib.sha256(onnx_path.read_bytes()).hexdigest()
    (out_dir / "classifier.onnx.sha256").write_text(f"{digest}  classifier.onnx\n")
    spec = {
        "classes": list(CLASSES),
        "input": {
            "name": "crops",
            "shape": ["N", 3, CROP_H, CROP_W],
            "dtype": "float32",
            "layout": "NCHW",
            "channels": "BGR",
            "range": "pixel / 255",
        },
        "scale": 1 / 255,
        "outputs": ["logits", "embedding"],
        "embedding_dim": EMB_DIM,
        "cosine_scale": SCALE,
        "sha256": digest,
        **meta,
    }
    (out_dir / "classifier.json").write_text(json.dumps(spec, indent=1) + "\n")
    return onnx_path


def extra_blocks(path: Path) -> int:
    """How many residual blocks the net saved at ``path`` has (``classifier.json`` beside an
    exported model says; a ``last.pt`` holds their weights)."""
    if path.suffix == ".onnx":
        spec = path.with_suffix(".json")
        return int(json.loads(spec.read_text()).get("extra_blocks", 0)) if spec.is_file() else 0
    state = torch.load(path, weights_only=False, map_location="cpu")["model"]
    return len({k.split(".")[1] for k in state if k.startswith("extra.")})


def load_into(net: TileNet, path: Path, calib: Callable[[], torch.Tensor]) -> None:
    """``net`` started from ``path`` (``last.pt`` or an exported ``.onnx``; ``calib()``: a batch to
    measure an ONNX file's BatchNorms on).  A net with more residual blocks than the file starts
    its new blocks as the identity (:class:`Residual`), so it computes what the file computes;
    fewer is an error."""
    from scripts.onnx_weights import init_weights

    have, want = extra_blocks(path), len(net.extra)
    if have > want:
        raise ValueError(f"{path} has {have} extra residual blocks, the net {want}: pass --extra-blocks {have}")
    base = TileNet(extra=have)
    init_weights(base, path, calib)
    missing = net.load_state_dict(base.state_dict(), strict=False).missing_keys
    if any(not k.startswith("extra.") for k in missing):
        raise ValueError(f"{path}: the net's {missing} are not in the file")


def init_from(net: TileNet, path: Path, photo_patches: np.ndarray) -> None:
    """Start ``net`` from a checkpoint (``last.pt``) or from an exported ``classifier.onnx``
    (its BatchNorms measured on 512 photo crops): :func:`load_into`."""
    pick = np.random.default_rng(0).permutation(len(photo_patches))[:512]
    load_into(net, path, lambda: to_tensor(centre_crops(photo_patches[pick])))
