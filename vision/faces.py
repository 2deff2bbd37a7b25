"""Tile faces for synthetic tables: faces drawn with their code printed on them, or crops of real
photographed tiles.

:func:`vision.render.render_table` takes any ``Faces`` (a list of 96 x 72 BGR images per tile
code, e.g. ``vision.artwork.tile_faces()``); without one it draws :func:`drawn_faces` (fast and
dependency-free, for tests).  :func:`real_crops` cuts faces from the ``tiles-photos-v4`` photos
(CC BY 4.0).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from companion.rules.tiles import BACK, JOKER, NATURAL_CODES

Image = npt.NDArray[np.uint8]
Faces = dict[str, list[Image]]


def _drawn_face(code: str) -> Image:
    img = np.full((96, 72, 3), (222, 236, 242), np.uint8)
    if code == BACK:
        img[:] = (60, 120, 40)
        cv2.rectangle(img, (8, 8), (63, 87), (90, 160, 70), 2)
        return img
    colour = {"B": (40, 120, 20), "C": (30, 30, 190), "D": (160, 60, 20)}.get(code[-1], (30, 30, 30))
    if code in ("RD", "GD", "WD", "J", "F"):
        colour = {"RD": (30, 30, 200), "GD": (40, 140, 30), "WD": (160, 60, 20), "J": (140, 20, 140)}.get(code, (20, 90, 160))
    cv2.rectangle(img, (2, 2), (69, 93), (180, 190, 195), 2)
    label = "JKR" if code == JOKER else code
    scale = 1.2 if len(label) <= 2 else 0.85
    (tw, th), _ = cv2.getTextSize(label, cv2.FONT_HERSHEY_DUPLEX, scale, 2)
    cv2.putText(img, label, ((72 - tw) // 2, (96 + th) // 2), cv2.FONT_HERSHEY_DUPLEX, scale, colour, 2, cv2.LINE_AA)
    cv2.putText(img, label[:2], (5, 16), cv2.FONT_HERSHEY_SIMPLEX, 0.4, colour, 1, cv2.LINE_AA)
    return img


@lru_cache(maxsize=1)
def _drawn_cache() -> dict[str, tuple[Image, ...]]:
    codes = (*NATURAL_CODES, "F", "FL1", "FL2", "FL3", "FL4", "SE1", "SE2", "SE3", "SE4", JOKER, BACK)
    return {c: (_drawn_face(c),) for c in codes}


def drawn_faces() -> Faces:
    """Plain faces with the code printed on them: fast and dependency-free."""
    return {c: list(v) for c, v in _drawn_cache().items()}


def shared_data_dir() -> Path:
    """The shared data folder (:func:`vision.artwork.shared_dir`: ``$COMPANION_SHARED/data`` or
    ``<repo>/../shared/data``).  Until the twenty-third session this read ``$COMPANION_SHARED``
    itself as the data folder, so the real-photo faces were missing wherever it was set."""
    from vision.artwork import shared_dir

    return shared_dir()


_PHOTO_CLASSES = (
    "SE1 1C 1D 1B E SE2 2C 2D 2B S SE3 3C 3D 3B W SE4 4C 4D 4B N FL1 5C 5D 5B WD FL2 6C 6D 6B GD "
    "FL3 7C 7D 7B RD FL4 8C 8D 8B 9C 9D 9B"
).split()


def real_crops(per_code: int = 3, split: str = "valid") -> Faces:
    """Crops of real photographed tiles from ``tiles-photos-v4`` (CC BY 4.0), resized to 96 x 72."""
    root = shared_data_dir() / "tiles-photos-v4" / split
    out: Faces = {}
    for label in sorted((root / "labels").glob("*.txt")):
        img = cv2.imread(str(root / "images" / (label.stem + ".jpg")))
        if img is None:
            continue
        h, w = img.shape[:2]
        for row in label.read_text().split("\n"):
            vals = row.split()
            if len(vals) != 5 or int(vals[0]) >= len(_PHOTO_CLASSES):
                continue
            code = _PHOTO_CLASSES[int(vals[0])]
            if len(out.setdefault(code, [])) >= per_code:
                continue
            xc, yc, bw, bh = (float(v) for v in vals[1:])
            x1, y1 = int((xc - bw / 2) * w), int((yc - bh / 2) * h)
            crop = img[max(0, y1) : int((yc + bh / 2) * h), max(0, x1) : int((xc + bw / 2) * w)]
            if crop.size and min(crop.shape[:2]) >= 12:
                if crop.shape[1] > crop.shape[0]:
                    crop = cv2.rotate(crop, cv2.ROTATE_90_CLOCKWISE)
                out[code].append(np.asarray(cv2.resize(crop, (72, 96), interpolation=cv2.INTER_AREA), np.uint8))
        if len(out) == len(_PHOTO_CLASSES) and all(len(v) >= per_code for v in out.values()):
            break
    return {c: v for c, v in out.items() if v}


def drawn_options(code: str) -> tuple[Image, ...]:
    """The drawn face of ``code``, for a code a caller's faces lack (cached for the usual codes)."""
    return _drawn_cache().get(code) or (_drawn_face(code),)
