"""Tiles framed on their rims: one scale for all the tiles of a picture.

The localiser frames a set it does not know smaller or larger than its faces (its print alone, or
its shadow too), about alike for every tile.  :func:`rim_scale` finds the one scale, about each
tile's centre, at which the quads' sides lie most sharply on the tiles' rims
(:func:`rim_contrast`).  Enrollment cuts a layout's crops there
(:func:`on_the_rims`, :mod:`vision.enroll`); a photo read under an enrolled set the models do not
know reports its tiles there (:func:`rim_framed`, :class:`vision.pipeline.TileRecognizer`).
:mod:`vision.mend` grows a small quad onto its tile's rim, and turns a tile, by the same measure.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from vision.types import Detections

Image = npt.NDArray[np.uint8]
FloatArray = npt.NDArray[np.float32]

RIM_SAMPLES = 9
"""Points sampled along each side of a quad by :func:`rim_contrast`, from 15 % to 85 % of it."""
RIM_STEP = 0.08
""":func:`rim_contrast` compares the colours this share of a quad's short side (1.5 px at least)
to either side of each of its sides."""


def rim_contrast(image_lab: npt.NDArray[Any], quads: FloatArray, bgr: bool = False) -> FloatArray:
    """``(N,)``: how sharply each quad's weakest side parts two colours: per side, the median over
    :data:`RIM_SAMPLES` points along it of the CIELAB distance between the colours a little way
    (:data:`RIM_STEP`) to either side of it, and the least of the four sides.  A quad laid on a tile's face
    edge scores high on every side; one boxing half a tile has a side across the face's print or
    its plain ground, and scores low there.  ``image_lab``: the picture in CIELAB (8-bit values as
    float32); with ``bgr``, the 8-bit BGR picture itself, sampled there and only the samples turned
    to CIELAB (for many quads over a large picture, whose conversion costs 1-2 ms)."""
    q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    n = len(q)
    if n == 0:
        return np.zeros(0, np.float32)
    e = q[:, [1, 2, 3, 0]] - q  # the sides, in order
    length = np.sqrt((e**2).sum(axis=2))
    short = np.minimum(length[:, 0] + length[:, 2], length[:, 1] + length[:, 3]) / 2
    # each side's unit normal (either way: the colours on its two sides are compared)
    normal = np.stack([e[..., 1], -e[..., 0]], axis=-1) / np.maximum(length, 1e-6)[..., None]
    step = (np.maximum(1.5, RIM_STEP * short)[:, None, None] * normal)[:, :, None, :]
    t = _rim_points(RIM_SAMPLES)[None, None, :, None]
    pts = q[:, :, None, :] + e[:, :, None, :] * t  # (n, 4, samples, 2)
    m = np.concatenate([pts + step, pts - step]).reshape(-1, 1, 2).astype(np.float32)
    v = cv2.remap(image_lab, m[..., 0], m[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    if bgr:
        v = cv2.cvtColor(np.asarray(v, np.uint8).reshape(-1, 1, 3), cv2.COLOR_BGR2LAB)
    v = np.asarray(v, np.float32).reshape(2, n, 4, RIM_SAMPLES, 3)
    diff = np.sqrt(((v[0] - v[1]) ** 2).sum(axis=-1))
    if RIM_SAMPLES % 2:  # the middle one: np.median's value, without its cost on small arrays
        middle = np.partition(diff, RIM_SAMPLES // 2, axis=2)[:, :, RIM_SAMPLES // 2]
    else:
        middle = np.median(diff, axis=2)
    return np.asarray(middle.min(axis=1), np.float32)


@functools.lru_cache(maxsize=4)
def _rim_points(samples: int) -> FloatArray:
    """Where :func:`rim_contrast` samples a side, as shares of it (made once)."""
    t = np.linspace(0.15, 0.85, samples, dtype=np.float32)
    t.flags.writeable = False
    return t


RIM_SCALES = tuple(round(0.9 + 0.02 * k, 2) for k in range(19))
"""The scales (0.90-1.26) at which :func:`rim_scale` tries a picture's quads.  Wider, a photo's
tiles were once taken at their shadows' edge (1.40: Symbola, read 0.8730 -> 0.8664)."""

RIM_TIE = 0.98
"""The scales whose quads lie on the rims within this share as sharply as the sharpest are all as
good, and the middle one is kept: :func:`rim_contrast` compares the colours a
little way to either side of each side, so a plain tile on plain cloth reads as sharp over a tenth
either way of its rim, and a face with a bevel drawn inside it from 0.90 to 1.06 on a flat grid;
the sharpest among those moved with a lamp's tint."""


PHOTO_RIM_SCALES = tuple(s for s in RIM_SCALES if 1.0 <= s <= 1.12)
"""The scales :func:`rim_framed` tries: the localiser frames a set it does not know inside its
rims (a face's print alone, within the edge its artwork draws), not outside them, and below 1 a
bevel drawn inside a face can seem the rim; past 1.12 a real photo's rims are its tiles' bodies
and shadows.  Forty-sixth session, the held-out scenes enrolled (``bench_vision --held-out``'s,
seeds 21 / 7; a ``/tmp`` script), 0.90-1.26 / 1.00-1.26 / 1.00-1.12: ``xm-dorothys`` 0.9763 /
0.9763 / 0.9757 and 0.9729 / 0.9769 / 0.9775, Symbola 0.9546 / 0.9553 / 0.9559 (seed 21); on
scenes of its Chinese faces (seed 7, 20 scenes) 0.9712 / 0.9753 / 0.9753.  Valid's real set
(``IMG_27xx``), read plain and boxed so as a test of a real set's rims: F1 0.9391 as boxed,
0.8222 / 0.9009 on the rims at 1.00-1.26 / 1.00-1.12."""


def rim_scale(image: Image, quads: FloatArray, tried: tuple[float, ...] = RIM_SCALES) -> float:
    """The one of ``tried`` at which ``quads``, each scaled about its centre, lie most on
    the tiles' rims: the median over the tiles of how sharply each quad's weakest side parts two
    colours (:func:`rim_contrast`), and of the scales within :data:`RIM_TIE` of the
    sharpest, the middle one.  1.0 for no quads."""

    q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    if not len(q):
        return 1.0
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2LAB).astype(np.float32)
    c = q.mean(axis=1, keepdims=True)
    sharp = np.array([np.median(rim_contrast(lab, c + (q - c) * s)) for s in tried])
    near = [s for s, v in zip(tried, sharp, strict=True) if v >= RIM_TIE * sharp.max()]
    return float(np.median(near))


def scaled(quads: FloatArray, scale: float) -> FloatArray:
    """``quads`` (N, 4, 2) each scaled by ``scale`` about its centre."""
    q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    c = q.mean(axis=1, keepdims=True)
    return np.asarray(c + (q - c) * scale, np.float32)


def on_the_rims(image: Image, quads: FloatArray) -> FloatArray:
    """An enrollment layout's ``quads`` (cut at one size, :func:`vision.enroll_grid.even_sized`)
    all scaled by :func:`rim_scale`.  The crops are then framed as a face is, as the flat grid's
    outlines frame them.  On rendered table photos of two sets no model saw, enrolled, their scenes
    read -0.9 to +3.6 points (mean +0.8 over 15 photos; forty-fifth session)."""
    q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    return scaled(q, rim_scale(image, q)) if len(q) else q


def rim_framed(image: Image, tiles: Detections) -> Detections:
    """``tiles`` with their quads, and so their boxes, scaled by :func:`rim_scale` over
    :data:`PHOTO_RIM_SCALES`, every field else as read; ``meta['rim_scale']`` holds the scale.
    For a photo read under an enrolled set the models do not know; not for others: on valid's real
    photos the rims lie at a median 1.16 of the localiser's quads, round each tile's body and
    side, where the photos' labels box its face alone."""
    if not len(tiles):
        return tiles
    s = rim_scale(image, tiles.quads, PHOTO_RIM_SCALES)
    q = scaled(tiles.quads, s)
    boxes = np.concatenate([q.min(axis=1), q.max(axis=1)], axis=1).astype(np.float32)
    return replace(tiles, quads=q, boxes=boxes, meta={**tiles.meta, "rim_scale": round(s, 2)})
