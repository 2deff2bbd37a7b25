"""Where the tile artwork lies, and the small image helpers that shape every source's tiles
alike (:mod:`vision.artwork_sources`): BGR portrait faces ``FACE_H x FACE_W`` (96 x 72), a glyph
fitted onto a plain face (:func:`compose`), transparency flattened or trimmed.
"""

from __future__ import annotations

import os
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

Image = npt.NDArray[np.uint8]
FACE_H, FACE_W = 96, 72

REPO = Path(__file__).resolve().parents[1]


class ArtworkError(ValueError):
    """Artwork that cannot be found or rendered; the message names the file or style."""


def shared_dir() -> Path:
    """The shared data folder: ``$COMPANION_SHARED/data`` or ``<repo>/../shared/data``."""
    env = os.environ.get("COMPANION_SHARED")
    return (Path(env) if env else REPO.parent / "shared") / "data"


def artwork_dir() -> Path:
    return shared_dir() / "artwork"


# ---------------------------------------------------------------- small image helpers


def flatten_alpha(img: npt.NDArray[np.uint8], bg: tuple[int, int, int] = (255, 255, 255)) -> Image:
    """BGRA -> BGR over a plain colour; BGR passes through; grey becomes BGR."""
    if img.ndim == 2:
        return np.asarray(cv2.cvtColor(img, cv2.COLOR_GRAY2BGR), np.uint8)
    if img.shape[2] == 3:
        return img
    a = img[:, :, 3:4].astype(np.float32) / 255.0
    out = img[:, :, :3].astype(np.float32) * a + np.array(bg, np.float32) * (1 - a)
    return out.astype(np.uint8)


def trim_alpha(img: npt.NDArray[np.uint8], thresh: int = 8) -> npt.NDArray[np.uint8]:
    """Crop a BGRA image to the bounding box of its visible pixels."""
    ys, xs = np.nonzero(img[:, :, 3] > thresh)
    if len(xs) == 0:
        return img
    return img[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]


def to_face(img: Image) -> Image:
    """Resize any tile image to the face size, turning landscape images upright first."""
    if img.shape[1] > img.shape[0] * 1.15:
        img = np.ascontiguousarray(np.rot90(img))
    return np.asarray(cv2.resize(img, (FACE_W, FACE_H), interpolation=cv2.INTER_AREA), np.uint8)


def plain_face(colour: tuple[int, int, int] = (222, 236, 242), border: int = 2) -> Image:
    """A blank tile face: a slight vertical gradient and a darker rim."""
    grad = np.linspace(1.03, 0.95, FACE_H, dtype=np.float32)[:, None, None]
    face = np.clip(np.array(colour, np.float32)[None, None, :] * grad, 0, 255)
    face = np.repeat(face, FACE_W, axis=1)
    rim = np.array(colour, np.float32) * 0.72
    face[:border, :] = rim
    face[-border:, :] = rim
    face[:, :border] = rim
    face[:, -border:] = rim
    return face.astype(np.uint8)


def compose(glyph: npt.NDArray[np.uint8], face: Image, margin: float = 0.09) -> Image:
    """Fit a BGRA glyph (aspect kept) into the centre of a face, alpha-blended."""
    glyph = trim_alpha(glyph)
    h, w = face.shape[:2]
    box_h, box_w = int(h * (1 - 2 * margin)), int(w * (1 - 2 * margin))
    s = min(box_h / glyph.shape[0], box_w / glyph.shape[1])
    gh, gw = max(1, round(glyph.shape[0] * s)), max(1, round(glyph.shape[1] * s))
    g = cv2.resize(glyph, (gw, gh), interpolation=cv2.INTER_AREA).astype(np.float32)
    y0, x0 = (h - gh) // 2, (w - gw) // 2
    out = face.astype(np.float32)
    a = g[:, :, 3:4] / 255.0
    roi = out[y0 : y0 + gh, x0 : x0 + gw]
    out[y0 : y0 + gh, x0 : x0 + gw] = g[:, :, :3] * a + roi * (1 - a)
    return out.astype(np.uint8)
