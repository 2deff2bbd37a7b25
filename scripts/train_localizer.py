"""Train the tile localiser (a CenterNet-style heatmap net) and export it to ``models/localizer.onnx``.

    python scripts/train_localizer.py --out runs/loc --epochs 12 --seed 1          # train (resumes)
    python scripts/train_localizer.py --out runs/loc --export-only                  # export last.pt

Data: tiles-photos-v4/train (real photos; axis-aligned boxes, polygon rows give orientation) plus,
with ``--synth F``, a fraction F of synthetic scenes from ``scripts/synth_scenes.py`` (exact quads,
any rotation).  Every epoch writes ``OUT/last.pt`` (model, optimiser, epoch, RNG state); rerunning
the same command resumes from it.  ``torch.set_num_threads(1)`` keeps the shared machine usable.
``--device cuda`` (``auto``, the default, takes a GPU when torch sees one) trains on a GPU: the
samples are still drawn on the CPU, in this process and in the same order as on the CPU, or in
``--workers N`` processes (:class:`Batches`) to keep the GPU busy.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scripts.devices import DEVICE_HELP, train_device  # noqa: E402
from scripts.photos import PhotoSample, load_split  # noqa: E402
from vision.detect import STRIDE, decode, quad_iou_boxes, quad_params, suppress_overlaps  # noqa: E402

SIZE = 320


# ----------------------------------------------------------------------------- model
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


class ExportNet(nn.Module):
    """Inference wrapper: sigmoid + 3x3 max-pool peak test inside the graph."""

    def __init__(self, net: LocNet) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logit, reg = self.net(x)
        heat = torch.sigmoid(logit)
        peak = F.max_pool2d(heat, 3, 1, 1)
        return heat * (heat >= peak).float(), reg


# ----------------------------------------------------------------------------- samples
def photo_quads(s: PhotoSample) -> np.ndarray:
    """Quads for a photo's tiles: polygon rows via minAreaRect, others as their box."""
    quads = []
    for box, poly in zip(s.boxes, s.polygons, strict=True):
        if poly is not None and len(poly) >= 4:
            quads.append(cv2.boxPoints(cv2.minAreaRect(poly.astype(np.float32))))
        else:
            x1, y1, x2, y2 = box
            quads.append(np.array([[x1, y1], [x2, y1], [x2, y2], [x1, y2]], np.float32))
    return np.asarray(quads, np.float32).reshape(-1, 4, 2)


def loose_boxes(boxes: np.ndarray) -> bool:
    """True for photos whose boxes overlap like the export's +-45 degree turns (boxes of turned
    tiles): their sizes and angles are not trusted, only their centres (577 of 1350 train photos,
    0 of 296 valid photos at this threshold)."""
    if len(boxes) < 2:
        return False
    iou = quad_iou_boxes(boxes.astype(np.float32), boxes.astype(np.float32))
    np.fill_diagonal(iou, 0)
    return bool(np.median(iou.max(axis=1)) > 0.2)


def colour_jitter(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    out = img.astype(np.float32)
    out = out * rng.uniform(0.6, 1.35) + rng.uniform(-30, 30)
    out = out * rng.uniform(0.85, 1.15, size=3)[None, None, :]
    if rng.random() < 0.3:
        k = int(rng.choice([3, 5]))
        out = cv2.GaussianBlur(out, (k, k), 0)
    if rng.random() < 0.3:
        out = out + rng.normal(0, rng.uniform(2, 8), out.shape)
    return np.clip(out, 0, 255).astype(np.uint8)


def band_matrix(w: int, h: int, quads: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Affine (3x3) mapping one row (or column) of tiles, as a band across the photo, onto the
    whole SIZE x SIZE crop, stretched 3-12x across the band: like valid/'s photos squeezed from
    panoramas (tiles ~10x longer than wide in 35 of 296 valid photos; none in train/)."""
    q = quads[int(rng.integers(len(quads)))]
    lo, hi = q.min(axis=0), q.max(axis=0)
    c = (lo + hi) / 2
    f = math.exp(rng.uniform(math.log(3), math.log(12)))
    axis = int(rng.integers(2))  # 0: horizontal band (stretched vertically), 1: vertical band
    thick = (hi - lo)[1 - axis] * rng.uniform(1.0, 1.5)
    across = SIZE / max(thick, 4)
    along = across / f
    s = np.array([along, across]) if axis == 0 else np.array([across, along])
    shift = rng.uniform(-0.4, 0.4) * SIZE
    off = SIZE / 2 - c * s
    off[axis] += shift
    return np.array([[s[0], 0, off[0]], [0, s[1], off[1]], [0, 0, 1]], np.float64)


def scale_matrix(w: int, h: int, rng: np.random.Generator) -> np.ndarray:
    """Affine (3x3): random scale and mild stretch, placed at a random offset in the crop."""
    if rng.random() < 0.25:
        sx = sy = SIZE / max(h, w)  # the whole image, as at inference
    else:
        s = SIZE / max(h, w) * math.exp(rng.uniform(math.log(0.6), math.log(1.6)))
        st = math.exp(rng.uniform(-0.2, 0.2))
        sx, sy = s * st, s / st
    ox = rng.uniform(min(0, SIZE - w * sx), max(0, SIZE - w * sx))
    oy = rng.uniform(min(0, SIZE - h * sy), max(0, SIZE - h * sy))
    return np.array([[sx, 0, ox], [0, sy, oy], [0, 0, 1]], np.float64)


def augment(
    img: np.ndarray, quads: np.ndarray, rng: np.random.Generator, band: float = 0.2
) -> tuple[np.ndarray, np.ndarray]:
    """Scale (or stretch one band of tiles), 90-degree turn, crop to SIZE x SIZE; quads follow."""
    out, q, _ = augment_with(img, quads, rng, band)
    return out, q


def augment_with(
    img: np.ndarray, quads: np.ndarray, rng: np.random.Generator, band: float = 0.2,
    extra: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """:func:`augment`, with ``extra`` (a mask of the image's size) moved as the image is
    (nearest neighbour, zero outside the image); the same draws from ``rng`` either way."""
    h, w = img.shape[:2]
    if len(quads) and rng.random() < band:
        a = band_matrix(w, h, quads, rng)
    else:
        a = scale_matrix(w, h, rng)
    k = int(rng.integers(4))
    rot = np.eye(3)
    rot[:2, :2] = np.linalg.matrix_power(np.array([[0, 1], [-1, 0]], np.float64), k)
    c = np.array([[1, 0, -SIZE / 2], [0, 1, -SIZE / 2], [0, 0, 1]], np.float64)
    m = (np.linalg.inv(c) @ rot @ c @ a)[:2]  # turn about the crop centre
    border = tuple(float(v) for v in rng.uniform(0, 255, 3))
    out = cv2.warpAffine(
        img,
        m,
        (SIZE, SIZE),
        flags=cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=border,
    )
    q = quads.reshape(-1, 2) @ m[:, :2].T + m[:, 2]
    moved = None if extra is None else cv2.warpAffine(
        extra, m, (SIZE, SIZE), flags=cv2.INTER_NEAREST, borderMode=cv2.BORDER_CONSTANT, borderValue=0
    )
    return colour_jitter(out, rng), q.reshape(-1, 4, 2).astype(np.float32), moved


BACK_COLOURS: dict[str, tuple[tuple[int, int, int], tuple[int, int, int]]] = {
    "blue": ((90, 70, 110), (115, 255, 255)),
    "magenta": ((145, 90, 60), (175, 255, 255)),
}
"""OpenCV HSV bounds of the backs of the sets in tiles-photos-v4 whose face-down tiles its labels
leave out: the light blue of the automatic tables' sets (141 of the 1,350 train/ photos show 0.5 %
or more of such pixels outside every box) and a magenta-pink (86 photos)."""


def unlabelled_backs(img: np.ndarray, boxes: np.ndarray, colours: tuple[str, ...] = ("blue",)) -> np.ndarray:
    """Where a photo shows face-down tiles of the :data:`BACK_COLOURS` ``colours``, which its labels
    leave out (uint8 0/1).

    Trained as they are, such photos teach the localiser that a plain back is no tile, against the
    synthetic scenes' ``BK``.  Regions of a back's colour of at least 300 pixels after a 5x5
    opening (a tile's own coloured print is smaller), outside every labelled box."""
    hsv = cv2.cvtColor(img, cv2.COLOR_BGR2HSV)
    found = np.zeros(img.shape[:2], np.uint8)
    for name in colours:
        lo, hi = BACK_COLOURS[name]
        found |= cv2.inRange(hsv, np.array(lo, np.uint8), np.array(hi, np.uint8))
    found = cv2.morphologyEx(found, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(found, connectivity=8)
    big = np.zeros(n, np.uint8)
    big[1:] = stats[1:, cv2.CC_STAT_AREA] >= 300
    out = big[labels]
    for b in np.asarray(boxes, np.float64).reshape(-1, 4).astype(int):
        out[max(b[1], 0) : max(b[3], 0), max(b[0], 0) : max(b[2], 0)] = 0
    return out


def unlabelled_tiles_mask(
    shape: tuple[int, ...], quads: np.ndarray, mask: np.ndarray | None = None
) -> np.ndarray:
    """``mask`` (or a blank one of the photo's ``shape``) with the ``quads`` of tiles its labels
    leave out filled (uint8 0/1; ``scripts.crops.unlabelled_photo_tiles``)."""
    out = np.zeros(shape[:2], np.uint8) if mask is None else mask.copy()
    for q in np.asarray(quads, np.float32).reshape(-1, 4, 2):
        cv2.fillConvexPoly(out, np.round(q).astype(np.int32), 1)
    return out


def one_per_tile(quads: np.ndarray, iou: float = 0.3) -> np.ndarray:
    """``quads`` less each one whose bounds overlap an earlier one's by more than ``iou``
    (:func:`vision.detect.suppress_overlaps`, the earlier kept): one quad a tile where several
    readings found it (``scripts.crops.unlabelled_photo_tiles``)."""
    q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    earlier_first = np.arange(len(q), 0, -1).astype(np.float32)
    return q[np.sort(suppress_overlaps(q, earlier_first, iou))]


def backs_colours(text: str) -> tuple[str, ...]:
    """``--backs-ignored``'s colours, each one of :data:`BACK_COLOURS`."""
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in BACK_COLOURS]
    if unknown:
        raise SystemExit(f"--backs-ignored: unknown colour(s) {', '.join(unknown)} (known: {', '.join(BACK_COLOURS)})")
    return names


def unlabelled_weight(weight: np.ndarray, mask: np.ndarray, heat: np.ndarray) -> np.ndarray:
    """``weight`` with the heat loss ignored on grid cells a quarter or more covered by ``mask``
    (SIZE x SIZE, 0/1), save at a labelled tile's own centre."""
    g = weight.shape[0]
    cover = cv2.resize(mask.astype(np.float32), (g, g), interpolation=cv2.INTER_AREA)
    return np.where((cover >= 0.25) & (heat[0] < 1.0), 0.0, weight).astype(np.float32)


def keep_visible(quads: np.ndarray, size: int = SIZE) -> tuple[np.ndarray, np.ndarray]:
    """Split quads into kept (centre inside, >= 45% visible) and ignored (partly visible)."""
    if len(quads) == 0:
        return quads, quads
    lo, hi = quads.min(axis=1), quads.max(axis=1)
    area = np.prod(hi - lo, axis=1)
    vis = np.prod(np.clip(np.minimum(hi, size) - np.maximum(lo, 0), 0, None), axis=1)
    frac = vis / np.maximum(area, 1e-6)
    keep = frac >= 0.45
    ignore = (~keep) & (frac > 0.05)
    return quads[keep], quads[ignore]


def make_targets(
    quads: np.ndarray, ignored: np.ndarray, size: int = SIZE
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Heatmap (1,H,W), regression (6,H,W), regression mask (H,W), heat-loss weight (H,W)."""
    g = size // STRIDE
    heat = np.zeros((g, g), np.float32)
    reg = np.zeros((6, g, g), np.float32)
    mask = np.zeros((g, g), np.float32)
    weight = np.ones((g, g), np.float32)
    yy, xx = np.mgrid[0:g, 0:g].astype(np.float32)
    px, py = xx * STRIDE + (STRIDE - 1) / 2, yy * STRIDE + (STRIDE - 1) / 2
    for q in ignored:
        lo, hi = (q.min(axis=0) / STRIDE).astype(int), (q.max(axis=0) / STRIDE).astype(int)
        weight[max(lo[1], 0) : hi[1] + 1, max(lo[0], 0) : hi[0] + 1] = 0.0
    if len(quads) == 0:
        return heat[None], reg, mask, weight
    params = quad_params(quads)
    for q, (cx, cy, short, long, theta) in zip(quads, params, strict=True):
        bw, bh = np.ptp(q[:, 0]), np.ptp(q[:, 1])
        sgx, sgy = max(0.6, bw / STRIDE / 6), max(0.6, bh / STRIDE / 6)
        gx, gy = (cx - (STRIDE - 1) / 2) / STRIDE, (cy - (STRIDE - 1) / 2) / STRIDE
        x0, x1 = max(int(gx - 3 * sgx), 0), min(int(gx + 3 * sgx) + 2, g)
        y0, y1 = max(int(gy - 3 * sgy), 0), min(int(gy + 3 * sgy) + 2, g)
        if x0 >= x1 or y0 >= y1:
            continue
        sub = np.exp(
            -((xx[y0:y1, x0:x1] - gx) ** 2) / (2 * sgx**2)
            - ((yy[y0:y1, x0:x1] - gy) ** 2) / (2 * sgy**2)
        )
        ix, iy = min(max(int(round(gx)), 0), g - 1), min(max(int(round(gy)), 0), g - 1)
        if x0 <= ix < x1 and y0 <= iy < y1:
            sub[iy - y0, ix - x0] = 1.0
        cur = heat[y0:y1, x0:x1]
        own = (sub >= 0.5) & (sub > cur)
        heat[y0:y1, x0:x1] = np.maximum(cur, sub)
        m = np.zeros_like(mask, dtype=bool)
        m[y0:y1, x0:x1] = own
        reg[0][m] = (cx - px[m]) / STRIDE
        reg[1][m] = (cy - py[m]) / STRIDE
        reg[2][m] = math.log(max(short, 2.0) / STRIDE)
        reg[3][m] = math.log(max(long, 2.0) / STRIDE)
        reg[4][m] = math.cos(2 * theta)
        reg[5][m] = math.sin(2 * theta)
        mask[m] = 1.0
    return heat[None], reg, mask, weight


class TablePool:
    """Rendered whole-table frames (:mod:`vision.render`) cut into SIZE x SIZE training windows.

    Two kinds of window, centred near a random tile: a share ``top_down`` of them is the table
    seen from straight above at ``companion.table.RECTIFIED_PX_PER_MM`` (x0.8-1.25), as
    ``TableReader`` localises; the others are the frame itself scaled so that its median tile is
    about :data:`vision.scales.TARGET_TILE_PX` wide (x0.7-1.4).  Faces: every training artwork
    style, the American style alone, or real tiles from tiles-photos-v4 ``train/``
    (``scripts/table_crops.py``).
    """

    def __init__(self, frames: int, seed: int, top_down: float = 0.0, area: float = 0.0,
                 dense: float = 0.0) -> None:
        from companion.rules.tiles import AMERICAN, CHINESE
        from scripts.table_crops import SIZES, SOURCES, _faces
        from vision.layout import load_layout
        from vision.render import CAMERA_SUPERSAMPLE, random_view, render_table
        from vision.render_scenes import random_scene

        layout = load_layout("siamese-2")
        self.top_down = top_down
        self.frames: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        for i in range(frames):
            fs = seed * 7907 + i
            rng = np.random.default_rng(fs)
            source = SOURCES[i % len(SOURCES)]
            tileset = CHINESE if source == "photos" or rng.random() < 0.25 else AMERICAN
            size = SIZES[int(rng.integers(len(SIZES)))]
            # a share ``area`` area-sampled as a camera sums light (render_table's default since the
            # twenty-first session), the rest one sample per pixel, as the third session's table
            # localiser trained; a share ``dense`` with the discards laid in rows.  Draws of their
            # own, so that with both at 0 the pool is the very frames it always was.
            extra = np.random.default_rng(fs + 7).random(2)
            supersample = CAMERA_SUPERSAMPLE if extra[0] < area else 1
            scene = random_scene(layout, fs, tileset)
            if extra[1] < dense:
                from scripts.bench_table import with_dense_discards

                scene = with_dense_discards(scene, tileset, int(rng.integers(20, 61)), fs)
            r = render_table(layout, scene, seed=fs, view=random_view(fs, size),
                             faces=_faces(source), supersample=supersample)
            self.frames.append((r.image, np.asarray([t.quad_px for t in r.tiles], np.float32), r.table_to_image))

    def sample(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        from vision.scales import TARGET_TILE_PX

        img, quads, to_image = self.frames[int(rng.integers(len(self.frames)))]
        if rng.random() < self.top_down:
            return self._top_down(img, quads, to_image, rng)
        short = float(np.median(quad_params(quads)[:, 2]))
        s = TARGET_TILE_PX / max(short, 1.0) * math.exp(rng.uniform(math.log(0.7), math.log(1.4)))
        c = quads[int(rng.integers(len(quads)))].mean(axis=0) + rng.normal(0, 60, 2)
        m = np.array([[s, 0, SIZE / 2 - s * c[0]], [0, s, SIZE / 2 - s * c[1]]], np.float64)
        out = cv2.warpAffine(img, m, (SIZE, SIZE), flags=cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR,
                             borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0))
        q = quads.reshape(-1, 2) @ m[:, :2].T + m[:, 2]
        return colour_jitter(out, rng), q.reshape(-1, 4, 2).astype(np.float32)

    def _top_down(self, img: np.ndarray, quads: np.ndarray, to_image: np.ndarray,
                  rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        from companion.table import RECTIFIED_PX_PER_MM

        s = RECTIFIED_PX_PER_MM * math.exp(rng.uniform(math.log(0.8), math.log(1.25)))
        to_mm = np.linalg.inv(to_image)
        mm = cv2.perspectiveTransform(quads.reshape(-1, 1, 2).astype(np.float64), to_mm).reshape(-1, 4, 2)
        c = mm[int(rng.integers(len(mm)))].mean(axis=0) + rng.normal(0, 60, 2)
        window = np.array([[s, 0, SIZE / 2 - s * c[0]], [0, s, SIZE / 2 - s * c[1]], [0, 0, 1]], np.float64)
        m = window @ to_mm
        out = cv2.warpPerspective(img, m, (SIZE, SIZE), flags=cv2.INTER_LINEAR,
                                  borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0))
        q = cv2.perspectiveTransform(quads.reshape(-1, 1, 2).astype(np.float64), m).reshape(-1, 4, 2)
        return colour_jitter(out, rng), q.astype(np.float32)


class Source:
    """Training samples: augmented photos, plus synthetic scenes and table frames when requested."""

    def __init__(
        self, photos: list[PhotoSample], synth_frac: float, seed: int, band: float = 0.2,
        table_frac: float = 0.0, table_frames: int = 60, top_down: float = 0.0,
        american: float = 0.0,
        backs: float = 0.0,
        in_view: bool = False,
        area: float = 0.0,
        dense: float = 0.0,
        light: float = 0.0,
        backs_ignored: tuple[str, ...] = (),
        tiles_ignored: dict[str, np.ndarray] | None = None,
        tiles_labelled: dict[str, np.ndarray] | None = None,
    ) -> None:
        self.photos = photos
        self.backs_ignored = backs_ignored
        self.tiles_ignored = tiles_ignored or {}
        self.light = light
        self.band = band
        self.quads = [photo_quads(s) for s in photos]
        for i, s in enumerate(photos):  # the tiles the labels leave out, labelled once each
            extra = (tiles_labelled or {}).get(s.image_path.name)
            if extra is not None and len(extra):
                self.quads[i] = np.concatenate([self.quads[i], one_per_tile(extra)]).astype(np.float32)
        self.loose = [loose_boxes(s.boxes) for s in photos]
        self.synth_frac = synth_frac
        self.synth = None
        if synth_frac > 0:
            from scripts.synth_scenes import SceneMaker, american_scene_faces

            self.synth = SceneMaker(seed=seed, in_view=in_view)
        self.american_frac = american
        self.american = None
        if synth_frac > 0 and american > 0:
            self.american = SceneMaker(seed=seed + 1, faces=american_scene_faces(seed + 1000), back_share=backs,
                                      in_view=in_view)
        self.table_frac = table_frac
        self.table = TablePool(table_frames, seed, top_down, area, dense) if table_frac > 0 else None

    def sample(self, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
        if self.table is not None and rng.random() < self.table_frac:
            img, quads = self.table.sample(rng)
            loose, backs = False, None
        elif self.synth is not None and rng.random() < self.synth_frac:
            maker = self.american if self.american is not None and rng.random() < self.american_frac else self.synth
            sc = maker.scene(SIZE, SIZE, rng)
            img, quads = colour_jitter(sc.image, rng), sc.quads
            loose, backs = False, None
        else:
            i = int(rng.integers(len(self.photos)))
            loose = bool(self.loose[i])
            img = cv2.imread(str(self.photos[i].image_path))
            backs = unlabelled_backs(img, self.photos[i].boxes, self.backs_ignored) if self.backs_ignored else None
            piles = self.tiles_ignored.get(self.photos[i].image_path.name)
            if piles is not None and len(piles):
                backs = unlabelled_tiles_mask(img.shape, piles, backs)
            img, quads, backs = augment_with(img, self.quads[i], rng, self.band, backs)
        if self.light and rng.random() < self.light:
            from scripts.crops import bad_light

            img = bad_light(img, rng)
        kept, ignored = keep_visible(quads)
        heat, reg, mask, weight = make_targets(kept, ignored)
        if backs is not None:
            weight = unlabelled_weight(weight, backs, heat)
        mask = np.stack([mask, mask * (0.0 if loose else 1.0)])
        return img.transpose(2, 0, 1).astype(np.float32), heat, reg, mask, weight

    def arrays(self, n: int, rng: np.random.Generator) -> list[np.ndarray]:
        """``n`` samples stacked: image, heat, regression targets, mask, weight."""
        items = [self.sample(rng) for _ in range(n)]
        return [np.stack(col) for col in zip(*items, strict=True)]

    def batch(self, n: int, rng: np.random.Generator) -> list[torch.Tensor]:
        return [torch.from_numpy(a) for a in self.arrays(n, rng)]


_WORKER_SOURCE: Source | None = None


def _worker_batch(job: tuple[int, int, int, int]) -> list[np.ndarray]:
    """A batch drawn in a worker (forked holding the run's :class:`Source`): ``(seed, epoch, step, n)``."""
    seed, epoch, step, n = job
    assert _WORKER_SOURCE is not None
    return _WORKER_SOURCE.arrays(n, np.random.default_rng([seed, epoch, step]))


class Batches:
    """The batches of each epoch (:meth:`epoch`).  ``--workers 0`` draws them in this process, one
    after another, from the run's one random stream, as every run before the thirty-fifth session
    did.  ``--workers N`` draws them in N processes, forked once when the run starts (each one
    core: OpenCV runs single-threaded, see :func:`train`), batch ``(epoch, step)`` from its own
    stream seeded ``[seed, epoch, step]``: the same batches for any N, a resumed run included, but
    not the ones ``--workers 0`` draws.  At most 2N batches wait ahead of the training step."""

    def __init__(self, source: Source, args: argparse.Namespace) -> None:
        self.source, self.args = source, args
        self.pool: Any = None
        if args.workers > 0:
            import multiprocessing as mp

            global _WORKER_SOURCE
            _WORKER_SOURCE = source
            self.pool = mp.get_context("fork").Pool(args.workers)

    def epoch(self, epoch: int, rng: np.random.Generator) -> Iterator[list[torch.Tensor]]:
        args = self.args
        if self.pool is None:
            for _ in range(args.steps):
                yield self.source.batch(args.batch, rng)
            return
        jobs = iter([(args.seed, epoch, step, args.batch) for step in range(args.steps)])
        ahead = [self.pool.apply_async(_worker_batch, (job,)) for job in itertools.islice(jobs, 2 * args.workers)]
        while ahead:
            arrays = ahead.pop(0).get()
            ahead.extend(self.pool.apply_async(_worker_batch, (job,)) for job in itertools.islice(jobs, 1))
            yield [torch.from_numpy(a) for a in arrays]

    def close(self) -> None:
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
            self.pool = None


# ----------------------------------------------------------------------------- loss
def focal_loss(logit: torch.Tensor, heat: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    p = torch.sigmoid(logit).clamp(1e-4, 1 - 1e-4)
    pos = heat.eq(1).float()
    neg = (1 - pos) * weight[:, None]
    pos_l = torch.log(p) * (1 - p) ** 2 * pos
    neg_l = torch.log(1 - p) * p**2 * (1 - heat) ** 4 * neg
    n = pos.sum().clamp(min=1)
    return -(pos_l.sum() + neg_l.sum()) / n


def reg_loss(pred: torch.Tensor, target: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Smooth L1 on offsets (mask[:, 0]) and on sizes/angle (mask[:, 1])."""
    m = torch.cat([mask[:, :1].expand(-1, 2, -1, -1), mask[:, 1:].expand(-1, 4, -1, -1)], dim=1)
    return (F.smooth_l1_loss(pred * m, target * m, reduction="sum", beta=0.1)) / mask[
        :, 0
    ].sum().clamp(min=1)


# ----------------------------------------------------------------------------- eval
def evaluate(net: LocNet, photos: list[PhotoSample], iou_thr: float = 0.5) -> dict[str, float]:
    """Class-agnostic P/R/F1 at IoU >= 0.5 on whole photos resized to SIZE."""
    net.eval()
    export = ExportNet(net).eval()
    device = next(net.parameters()).device
    tp = fp = fn = 0
    with torch.no_grad():
        for s in photos:
            img = cv2.imread(str(s.image_path))
            h, w = img.shape[:2]
            small = cv2.resize(img, (SIZE, SIZE), interpolation=cv2.INTER_AREA)
            x = torch.from_numpy(small.transpose(2, 0, 1)[None].astype(np.float32)).to(device)
            peaks, reg = export(x)
            quads, score = decode(peaks[0].cpu().numpy(), reg[0].cpu().numpy(), 0.3)
            keep = suppress_overlaps(quads, score)
            quads = quads[keep] * np.array([w / SIZE, h / SIZE], np.float32)
            boxes = np.concatenate([quads.min(axis=1), quads.max(axis=1)], axis=1)
            t, p_, n_ = match_counts(boxes, s.boxes, iou_thr)
            tp, fp, fn = tp + t, fp + p_, fn + n_
    net.train()
    p = tp / max(tp + fp, 1)
    r = tp / max(tp + fn, 1)
    return {"precision": p, "recall": r, "f1": 2 * p * r / max(p + r, 1e-9)}


def match_counts(pred: np.ndarray, truth: np.ndarray, iou_thr: float) -> tuple[int, int, int]:
    if len(pred) == 0 or len(truth) == 0:
        return 0, len(pred), len(truth)
    iou = quad_iou_boxes(pred.astype(np.float32), truth.astype(np.float32))
    tp = 0
    used = np.zeros(len(truth), bool)
    for i in np.argsort(-iou.max(axis=1)):
        j = int(np.argmax(np.where(used, -1, iou[i])))
        if iou[i, j] >= iou_thr and not used[j]:
            used[j] = True
            tp += 1
    return tp, len(pred) - tp, len(truth) - tp


# ----------------------------------------------------------------------------- main
def export_onnx(net: LocNet, path: Path) -> None:
    net = net.cpu().eval()  # exported from the CPU, wherever it trained
    model = ExportNet(net).eval()
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(
        model,
        (torch.zeros(1, 3, SIZE, SIZE),),
        str(path),
        input_names=["image"],
        output_names=["peaks", "reg"],
        dynamic_axes={
            "image": {0: "n", 2: "h", 3: "w"},
            "peaks": {0: "n", 2: "gh", 3: "gw"},
            "reg": {0: "n", 2: "gh", 3: "gw"},
        },
        opset_version=17,
        dynamo=False,
    )
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    path.with_suffix(path.suffix + ".sha256").write_text(f"{digest}  {path.name}\n")
    print(f"exported {path} sha256 {digest}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", type=Path, default=REPO / "runs" / "loc")
    ap.add_argument("--epochs", type=int, default=12, help="length of the learning-rate schedule")
    ap.add_argument("--stop-epoch", type=int, help="stop (and export) after this epoch")
    ap.add_argument("--steps", type=int, default=150, help="batches per epoch")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--synth", type=float, default=0.0, help="fraction of synthetic scenes")
    ap.add_argument("--table", type=float, default=0.0,
                    help="fraction of windows cut from rendered whole-table frames (TablePool)")
    ap.add_argument("--table-frames", type=int, default=60, help="rendered table frames in the pool")
    ap.add_argument("--top-down", type=float, default=0.0,
                    help="share of table windows seen from straight above, as the table reader localises")
    ap.add_argument("--area", type=float, default=0.0,
                    help="share of the table frames area-sampled (render_table's default; 0: one sample per "
                         "pixel, as the committed table localiser trained)")
    ap.add_argument("--dense", type=float, default=0.0,
                    help="share of the table frames with the discards laid in rows, side by side")
    ap.add_argument("--american", type=float, default=0.0,
                    help="share of the synthetic scenes drawn with an American set's faces (american_scene_faces)")
    ap.add_argument("--backs", type=float, default=0.0,
                    help="in the American scenes, the share of tiles drawn as plain backs (BK; default: as any code)")
    ap.add_argument("--backs-ignored", default="", metavar="COLOURS",
                    help="no heat loss on the photos' unlabelled face-down tiles of these back colours, comma-separated "
                         f"({', '.join(BACK_COLOURS)}; unlabelled_backs): the photos then no longer teach that a plain "
                         "back is no tile")
    ap.add_argument("--tiles-ignored", action="store_true",
                    help="no heat loss on the face-up tiles the photo pipeline reads surely where the photos' labels "
                         "leave them out (scripts.crops.unlabelled_photo_tiles: the discards heaped beside a labelled "
                         "rack): the photos then no longer teach that a pile of tiles is table")
    ap.add_argument("--tiles-labelled", action="store_true",
                    help="the same tiles as --tiles-ignored taken as labelled tiles instead (one quad a tile, "
                         "as the photo pipeline reads it)")
    ap.add_argument("--in-view", action="store_true",
                    help="synthetic scenes whose perspective only widens the table (no mirrored border) and whose "
                         "truth holds only tiles mostly in the picture (SceneMaker(in_view=True)); the committed "
                         "models trained without it")
    ap.add_argument("--band", type=float, default=0.2, help="fraction of band-stretched photos")
    ap.add_argument("--light", type=float, default=0.0,
                    help="share of the training windows taken as a poor picture takes them: over-exposed, washed "
                         "out, lit from one side or blurred (scripts.crops.bad_light)")
    ap.add_argument("--eval-photos", type=int, default=60)
    ap.add_argument("--export", type=Path, default=REPO / "models" / "localizer.onnx")
    ap.add_argument("--export-only", action="store_true")
    ap.add_argument("--init", type=Path, help="start from these weights (fine-tune), not a resume: a run's last.pt or an "
                         "exported .onnx such as models/localizer-table.onnx")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="auto", help=DEVICE_HELP)
    ap.add_argument("--workers", type=int, default=0,
                    help="processes that draw the samples (0: this one, the stream every earlier run drew; N: each "
                         "batch from its own seeded stream, the same for any N), so that a GPU is kept busy")
    ap.add_argument("--grow", type=int, nargs="?", const=1, default=0, metavar="N",
                    help="add the GROWN residual blocks (N=1, the default), GROWN_TWICE's too (N=2); each is the "
                         "identity at first, so --init from a file grown less starts exactly where that file is")
    ap.add_argument(
        "--recipe",
        action="store_true",
        help="the committed model's three stages, into OUT/stage1..3",
    )
    return ap.parse_args(argv)


def recipe(args: argparse.Namespace) -> None:
    """Stage 1: photos only (7 of a 12-epoch schedule); stage 2: + band stretches and 25%
    synthetic scenes (11 epochs); stage 3: the same at lr 1e-3 (4 epochs).  Each stage starts
    from the previous one and resumes from its own checkpoint.  (A fourth stage at lr 5e-4 was
    tried and measured no better: boxes-only F1 0.912 against 0.913.)"""
    from scripts.train_all import recipe_stages  # the stages' one definition (torch-free)

    for argv in recipe_stages(args.out, args.export, args.seed):
        train(parse_args(argv))


def main() -> None:
    args = parse_args()
    if args.recipe:
        recipe(args)
    else:
        train(args)


def _calibration_batch(seed: int, n: int = 64) -> torch.Tensor:
    """Augmented windows of ``n`` train photos, for the BatchNorms of a model started from ONNX."""
    source = Source(load_split("train")[:n], 0.0, seed, band=0.0)
    rng = np.random.default_rng(seed + 99)
    return torch.cat([source.batch(16, rng)[0] for _ in range(n // 16)])


def train(args: argparse.Namespace) -> None:
    device = train_device(args.device)
    if args.workers > 0:  # a forked worker hangs in OpenCV if the process it was forked from had
        cv2.setNumThreads(1)  # OpenCV threads running (an --init's calibration batch starts them)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    random.seed(args.seed)
    rng = np.random.default_rng(args.seed)
    net = LocNet(grow=args.grow)
    args.out.mkdir(parents=True, exist_ok=True)
    ckpt = args.out / "last.pt"
    state = torch.load(ckpt, weights_only=False, map_location="cpu") if ckpt.is_file() else None
    if state is None and args.init is not None:
        _initialise(net, args)
    net.to(device)  # the optimiser's state follows its parameters there when a checkpoint is loaded
    opt = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=1e-4)
    total = args.epochs * args.steps
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=args.lr, total_steps=total, pct_start=0.1
    )
    start = 0
    if state is not None:
        net.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        sched.load_state_dict(state["sched"])
        rng.bit_generator.state = state["rng"]
        torch.set_rng_state(state["torch_rng"])
        start = state["epoch"]
        print(f"resumed from {ckpt} at epoch {start}")
    if args.export_only:
        export_onnx(net, args.export)
        return
    print(f"params: {sum(p.numel() for p in net.parameters())}; device {device}", flush=True)
    tiles_ignored, tiles_labelled = _unlabelled_tiles(args)
    source = Source(load_split("train"), args.synth, args.seed, args.band, args.table, args.table_frames,
                    args.top_down, args.american, args.backs, args.in_view, args.area, args.dense, args.light,
                    backs_colours(args.backs_ignored), tiles_ignored, tiles_labelled)
    val = load_split("valid")[: args.eval_photos]
    drawer = Batches(source, args)
    try:
        _epochs(net, opt, sched, drawer, val, rng, args, start, ckpt)
    finally:
        drawer.close()
    export_onnx(net, args.export)


def _initialise(net: LocNet, args: argparse.Namespace) -> None:
    """``net`` started from ``--init`` (an ONNX file or a run's checkpoint); a file grown by fewer
    blocks than ``--grow`` is loaded as it is, then grown (the new blocks start at zero)."""
    from scripts.onnx_weights import init_weights

    was = grown_file(args.init) if args.init.suffix == ".onnx" else grown_checkpoint(args.init)
    if was > args.grow:
        raise SystemExit(f"{args.init} holds the blocks of --grow {was}: pass --grow {was} (or more) to train from it")
    if 0 <= was < args.grow:
        base = LocNet(grow=was)
        init_weights(base, args.init, lambda: _calibration_batch(args.seed))
        missing = list(net.load_state_dict(base.state_dict(), strict=False).missing_keys)
    else:
        missing = init_weights(net, args.init, lambda: _calibration_batch(args.seed), strict=False)
    print(f"new layers: {missing}")
    print(f"initialised from {args.init}")


def _unlabelled_tiles(args: argparse.Namespace) -> tuple[Any, Any]:
    """``(ignored, labelled)``: the tiles the train photos' labels leave out, for
    ``--tiles-ignored`` or ``--tiles-labelled`` (None for the other, and both without either)."""
    if args.tiles_ignored and args.tiles_labelled:
        raise SystemExit("--tiles-ignored and --tiles-labelled are two ways with the same tiles: give one")
    if not (args.tiles_ignored or args.tiles_labelled):
        return None, None
    from scripts.crops import unlabelled_photo_tiles

    found = unlabelled_photo_tiles("train")
    print(f"tiles the labels leave out, {'ignored' if args.tiles_ignored else 'labelled'}: "
          f"{sum(map(len, found.values()))} readings on {len(found)} photos", flush=True)
    return (found, None) if args.tiles_ignored else (None, found)


def _epochs(net: LocNet, opt: Any, sched: Any, drawer: Batches, val: list[PhotoSample], rng: np.random.Generator,
            args: argparse.Namespace, start: int, ckpt: Path) -> None:
    """Train from epoch ``start`` on, a checkpoint and a log line after each epoch."""
    device = next(net.parameters()).device
    net.train()
    for epoch in range(start, args.stop_epoch or args.epochs):
        t0 = time.time()
        sums = np.zeros(3)
        for step, drawn in enumerate(drawer.epoch(epoch, rng)):
            x, heat, reg, mask, weight = (t.to(device, non_blocking=True) for t in drawn)
            logit, pred = net(x)
            lh = focal_loss(logit, heat, weight)
            lr_ = reg_loss(pred, reg, mask)
            loss = lh + lr_
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            sums += [loss.item(), lh.item(), lr_.item()]
            if step % 25 == 0:
                print(
                    f"epoch {epoch} step {step} loss {loss.item():.3f} heat {lh.item():.3f} reg {lr_.item():.3f} "
                    f"{(step + 1) * args.batch / (time.time() - t0):.1f} img/s",
                    flush=True,
                )
        metrics = evaluate(net, val)
        torch.save(
            {
                "model": net.state_dict(),
                "opt": opt.state_dict(),
                "sched": sched.state_dict(),
                "rng": rng.bit_generator.state,
                "torch_rng": torch.get_rng_state(),
                "epoch": epoch + 1,
            },
            ckpt,
        )
        line = {
            "epoch": epoch + 1,
            "loss": sums[0] / args.steps,
            "heat": sums[1] / args.steps,
            "reg": sums[2] / args.steps,
            "secs": round(time.time() - t0),
            **metrics,
        }
        print(json.dumps(line), flush=True)
        with open(args.out / "log.jsonl", "a") as fh:
            fh.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
