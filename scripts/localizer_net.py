"""The tile localiser's network: :class:`LocNet` (a stride-4 CenterNet-style heatmap net), its
building blocks, the residual blocks ``--grow`` adds (:data:`GROWN`, :data:`GROWN_TWICE`), and how
often a saved net was grown (:func:`grown_file`, :func:`grown_checkpoint`).

Trained by ``scripts/train_localizer.py``; imports torch (a training module, never the runtime's).
"""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn


def dws(cin: int, cout: int, stride: int = 1, dil: int = 1) -> nn.Sequential:
    """Depthwise-separable 3x3 conv block."""
    return nn.Sequential(
        nn.Conv2d(cin, cin, 3, stride, padding=dil, dilation=dil, groups=cin, bias=False),
        nn.BatchNorm2d(cin),
        nn.ReLU(inplace=True),
        nn.Conv2d(cin, cout, 1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    )


class Residual(nn.Module):
    """``x + block(x)``: a depthwise-separable 3x3 block whose last BatchNorm starts at zero, so a
    net grown by it computes at first exactly what it did without it (no ReLU after the sum's
    branch, so the zero start still passes gradients)."""

    def __init__(self, ch: int, dil: int = 1) -> None:
        super().__init__()
        self.block = nn.Sequential(
            nn.Conv2d(ch, ch, 3, 1, padding=dil, dilation=dil, groups=ch, bias=False),
            nn.BatchNorm2d(ch),
            nn.ReLU(inplace=True),
            nn.Conv2d(ch, ch, 1, bias=False),
            nn.BatchNorm2d(ch),
        )
        nn.init.zeros_(self.block[-1].weight)  # type: ignore[arg-type]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.block(x)


GROWN = ("g8", "g16", "g32", "d16", "d8")
"""The residual blocks ``--grow`` adds (thirty-first session): after the encoder's stride-8, -16 and
-32 stages and after the decoder's stride-16 and -8 merges, where context is cheap (a stride-8
cell is 1/4 of a stride-4 one); the stride-4 layers, which cost most, are left as they are."""
GROWN_TWICE = ("g4", "g8b", "g16b", "d8b", "d4")
"""The blocks ``--grow 2`` adds to those: one after the encoder's stride-4 stage and one after the
decoder's stride-4 merge, and a second at the encoder's stride 8 and 16 and the decoder's stride 8."""


class LocNet(nn.Module):
    """Stride-4 heatmap net: encoder to stride 32, FPN-like decoder back to stride 4.

    ``grow``: 1 adds the :data:`GROWN` residual blocks, 2 :data:`GROWN_TWICE` too (each the
    identity at first)."""

    def __init__(self, grow: int = 0) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True)
        )
        self.s4 = nn.Sequential(dws(16, 32, 2), dws(32, 32))
        self.s8 = nn.Sequential(dws(32, 64, 2), dws(64, 64))
        self.s16 = nn.Sequential(dws(64, 96, 2), dws(96, 96), dws(96, 96, dil=2))
        self.s32 = nn.Sequential(dws(96, 128, 2), dws(128, 128), dws(128, 128, dil=2))
        self.strip_h = nn.Conv2d(128, 128, 1)
        self.strip_v = nn.Conv2d(128, 128, 1)
        for layer in (self.strip_h, self.strip_v):  # start as identity: residual context
            nn.init.zeros_(layer.weight)
            nn.init.zeros_(layer.bias)
        self.l32 = nn.Conv2d(128, 64, 1)
        self.l16 = nn.Conv2d(96, 64, 1)
        self.l8 = nn.Conv2d(64, 64, 1)
        self.l4 = nn.Conv2d(32, 48, 1)
        self.m16 = dws(64, 64)
        self.m8 = dws(64, 48)
        self.m4 = dws(48, 48)
        self.heat = nn.Sequential(
            nn.Conv2d(48, 32, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(32, 1, 1)
        )
        self.reg = nn.Sequential(
            nn.Conv2d(48, 32, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(32, 6, 1)
        )
        self.heat[-1].bias.data.fill_(-2.2)  # type: ignore[union-attr]
        ident = nn.Identity
        self.g8: nn.Module = Residual(64) if grow else ident()
        self.g16: nn.Module = Residual(96, dil=2) if grow else ident()
        self.g32: nn.Module = Residual(128, dil=2) if grow else ident()
        self.d16: nn.Module = Residual(64) if grow else ident()
        self.d8: nn.Module = Residual(48) if grow else ident()
        twice = grow >= 2
        self.g4: nn.Module = Residual(32) if twice else ident()
        self.g8b: nn.Module = Residual(64) if twice else ident()
        self.g16b: nn.Module = Residual(96) if twice else ident()
        self.d8b: nn.Module = Residual(48) if twice else ident()
        self.d4: nn.Module = Residual(48) if twice else ident()

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = x / 255.0 - 0.5
        f4 = self.g4(self.s4(self.stem(x)))
        f8 = self.g8b(self.g8(self.s8(f4)))
        f16 = self.g16b(self.g16(self.s16(f8)))
        f32 = self.g32(self.s32(f16))
        # strip pooling: whole-row and whole-column context for very long, thin tiles
        f32 = F.relu(
            f32
            + self.strip_h(f32.mean(dim=3, keepdim=True))
            + self.strip_v(f32.mean(dim=2, keepdim=True))
        )
        up = F.interpolate(self.l32(f32), scale_factor=2.0, mode="nearest")
        p16 = self.d16(self.m16(up + self.l16(f16)))
        p8 = self.d8b(self.d8(self.m8(F.interpolate(p16, scale_factor=2.0, mode="nearest") + self.l8(f8))))
        p4 = self.d4(self.m4(F.interpolate(p8, scale_factor=2.0, mode="nearest") + self.l4(f4)))
        return self.heat(p4), self.reg(p4)


def grown_file(path: Path) -> int:
    """How often an exported localiser was grown (``--grow``: 0, 1 or 2): the ``LocNet(grow=N)``
    with as many convolutions as its graph (the export folds each BatchNorm into its convolution);
    -1 for a file that is none of them."""
    import onnx

    convs = sum(node.op_type == "Conv" for node in onnx.load(str(path)).graph.node)
    sizes = {sum(isinstance(m, nn.Conv2d) for m in LocNet(grow=n).modules()): n for n in (0, 1, 2)}
    return sizes.get(convs, -1)


def grown_checkpoint(path: Path) -> int:
    """How often the net of a run's checkpoint (``last.pt``) was grown: the highest ``--grow`` level
    any of whose blocks it holds."""
    blocks = {key.split(".")[0] for key in torch.load(path, weights_only=False, map_location="cpu")["model"]}
    return 2 if blocks & set(GROWN_TWICE) else 1 if blocks & set(GROWN) else 0
