"""The tile classifier's network: :class:`TileNet` (a small CNN, a 64-d embedding and cosine
logits over :data:`CLASSES`), its residual blocks (:class:`Residual`, ``--extra-blocks``) and
:func:`to_tensor`, which turns crops into its input.

Trained by ``scripts/train_classifier.py``; imports torch (a training module, never the runtime's).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from companion.rules.tiles import ALL_CODES

CLASSES: tuple[str, ...] = ALL_CODES
EMB_DIM = 64
SCALE = 16.0


def _block(cin: int, cout: int, stride: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)
    )


class Residual(nn.Module):
    """``relu(x + bn(conv3x3(x)))``; the BatchNorm's scale starts at zero, so a block added to a
    trained net starts as the identity (the net computes what it did) and learns from there."""

    def __init__(self, c: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, 1, 1, bias=False)
        self.bn = nn.BatchNorm2d(c)
        nn.init.zeros_(self.bn.weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(x + self.bn(self.conv(x)))


class TileNet(nn.Module):
    """CNN -> 64-d embedding -> cosine logits (scale 16) over the tile codes.

    ``extra``: residual blocks after the last stage (8 x 6 x 96), each ~4 MFLOPs a crop.
    """

    def __init__(self, n_classes: int = len(CLASSES), emb_dim: int = EMB_DIM, extra: int = 0) -> None:
        super().__init__()
        # two early stride-2 stages keep it at ~9 MFLOPs a crop (x2 for the half-turn average)
        widths = [(3, 24, 2), (24, 32, 2), (32, 48, 1), (48, 64, 2), (64, 96, 1)]
        self.features = nn.Sequential(*[_block(a, b, s) for a, b, s in widths])
        self.extra = nn.Sequential(*[Residual(widths[-1][1]) for _ in range(extra)])
        self.embed = nn.Linear(widths[-1][1], emb_dim)
        self.weight = nn.Parameter(torch.randn(n_classes, emb_dim) * 0.1)

    def embedding(self, x: torch.Tensor) -> torch.Tensor:
        x = (x - 0.5) / 0.25
        return self.embed(self.extra(self.features(x)).mean(dim=(2, 3)))

    def logits(self, emb: torch.Tensor) -> torch.Tensor:
        return SCALE * F.normalize(emb, dim=1) @ F.normalize(self.weight, dim=1).t()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.logits(self.embedding(x))


def to_tensor(crops: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(crops.transpose(0, 3, 1, 2))).float() / 255.0
