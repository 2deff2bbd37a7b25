"""Shared helpers of the dashboard tests: an enrollment photo to upload."""

from __future__ import annotations

import cv2
import numpy as np


def swapped_layout_jpeg() -> bytes:
    """A grid photo of a set laid out as the Chinese sheet asks, but for 3 Bams and 4 Bams swapped."""
    from vision.artwork import TRAIN_STYLES, tile_faces
    from vision.enroll import grid_photo

    faces = {c: v[0] for c, v in tile_faces(TRAIN_STYLES[0]).items()}
    faces["3B"], faces["4B"] = faces["4B"], faces["3B"]
    image, _ = grid_photo(faces, "chinese", np.random.default_rng(0))
    return bytes(cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 95])[1])
