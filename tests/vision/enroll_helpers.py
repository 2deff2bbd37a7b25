"""Shared helpers of the enrollment tests (``test_enroll*.py``): the classifier model to enroll
with and a grid photo of the held-out artwork style."""

from __future__ import annotations

import os
from pathlib import Path

import cv2
import numpy as np

from vision.artwork import HOLDOUT_STYLE, tile_faces
from vision.classify import DEFAULT_MODEL
from vision.enroll import grid_photo

MODEL = Path(os.environ.get("COMPANION_CLASSIFIER_MODEL", DEFAULT_MODEL))


def holdout_grid(tmp_path: Path, seed: int = 0) -> tuple[Path, np.ndarray, np.ndarray]:
    faces = {c: v[0] for c, v in tile_faces(HOLDOUT_STYLE).items()}
    image, quads = grid_photo(faces, "chinese", np.random.default_rng(seed))
    path = tmp_path / "grid.png"
    cv2.imwrite(str(path), image)
    return path, image, quads


SWAPS = {"3B": "4B", "4B": "3B", "E": "S", "S": "W", "W": "E"}
"""A layout laid out of the sheet's order: in each place, the tile that lies there instead (3B and
4B swapped; E, S and W moved round)."""


def swapped_grid(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A grid photo of a training style's set laid as the sheet asks, and one laid with
    :data:`SWAPS`: ``(right, swapped)``."""
    from vision.artwork import TRAIN_STYLES

    faces = {c: v[0] for c, v in tile_faces(TRAIN_STYLES[0]).items()}
    right, _ = grid_photo(faces, "chinese", np.random.default_rng(seed))
    laid = {c: faces[SWAPS.get(c, c)] for c in faces}
    swapped, _ = grid_photo(laid, "chinese", np.random.default_rng(seed))
    return right, swapped
