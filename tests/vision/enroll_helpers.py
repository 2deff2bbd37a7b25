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
