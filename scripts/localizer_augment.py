"""The localiser's training windows: :data:`SIZE`, the SIZE x SIZE crop every sample is cut to,
and the augmentation that cuts it from a photo (scale or band stretch, quarter turn, colour
jitter; :func:`augment`, :func:`augment_with`).  Torch-free.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

SIZE = 320


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
