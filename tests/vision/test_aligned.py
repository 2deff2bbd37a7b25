"""A photo's tiles found again by their enrolled crops (vision.aligned): where the crop lies, and
which reading is kept."""

from __future__ import annotations

import numpy as np
import pytest

from vision.aligned import aligned_quads, read_aligned, templates
from vision.classify import CROP_H, CROP_W
from vision.types import Detections

TRUTH = np.array([[70, 60], [130, 60], [130, 140], [70, 140]], np.float32)  # a face 60 x 80 px


def _face(seed: int) -> np.ndarray:
    """A crop-sized face with a print of its own: blocks of colour on ivory."""
    rng = np.random.default_rng(seed)
    face = np.full((CROP_H, CROP_W, 3), (200, 225, 235), np.uint8)
    for _ in range(7):
        y, x = int(rng.integers(4, CROP_H - 16)), int(rng.integers(4, CROP_W - 12))
        face[y : y + 12, x : x + 8] = rng.integers(0, 160, 3)
    return face


def _photo(face: np.ndarray, turned: bool = False) -> np.ndarray:
    """``face`` laid on green cloth at :data:`TRUTH` (half round when ``turned``)."""
    import cv2

    rng = np.random.default_rng(0)
    img = np.clip(rng.normal((40, 110, 30), 6, (200, 200, 3)), 0, 255).astype(np.uint8)
    x0, y0 = TRUTH[0].astype(int)
    img[y0:y0 + 80, x0:x0 + 60] = cv2.resize(face[::-1, ::-1] if turned else face, (60, 80), interpolation=cv2.INTER_AREA)
    return img


def _off(quad: np.ndarray) -> np.ndarray:
    """``quad`` as the localiser outlines a face it does not know: 0.85 of it, a tenth of its
    height lower."""
    c = quad.mean(axis=0)
    return (c + (quad - c) * 0.85 + np.array([0, 8], np.float32)).astype(np.float32)


@pytest.mark.parametrize("turned", [False, True])
def test_a_face_outlined_off_it_is_found_where_its_crop_lies(turned: bool) -> None:
    face = _face(1)
    img = _photo(face, turned)
    got = aligned_quads(img, _off(TRUTH)[None], [templates(face)])[0]
    want = np.roll(TRUTH, 2, axis=0) if turned else TRUTH  # corners from the face's own top-left
    assert np.abs(_off(TRUTH) - want).max() > 12  # the outline given is well off the face
    assert np.abs(got - want).max() < 5, got


def test_the_surer_reading_at_the_found_outline_is_kept_and_the_tile_stays_where_it_was() -> None:
    seven, four = _face(7), _face(4)
    img = _photo(seven)
    classes = ("4D", "7D", "9D")
    found: list[np.ndarray] = []

    def classify(image: np.ndarray, quads: np.ndarray) -> Detections:
        """Reads a 7 Dots surely on the face's outline, a 4 Dots weakly anywhere else."""
        found.append(quads)
        on = np.abs(quads - TRUTH).max(axis=(1, 2)) < 5
        probs = np.where(on[:, None], [[0.05, 0.9, 0.05]], [[0.6, 0.3, 0.1]]).astype(np.float32)
        return Detections.from_quads(quads, [classes[k] for k in probs.argmax(axis=1)], probs.max(axis=1),
                                     probs=probs, classes=classes)

    given = np.stack([_off(TRUTH), _off(TRUTH) + np.array([0, 200], np.float32)])  # the second: off the picture
    probs = np.array([[0.7, 0.25, 0.05], [0.02, 0.02, 0.96]], np.float32)
    tiles = Detections.from_quads(given, ["4D", "9D"], probs.max(axis=1), probs=probs, classes=classes)
    out = read_aligned(img, tiles, classify, {"7D": templates(seven), "4D": templates(four)})
    assert list(out.codes) == ["7D", "9D"]  # read again surer at the face; the sure 9 Dots kept
    assert out.confidence[0] == pytest.approx(0.9) and out.probs is not None and out.probs[0, 1] == pytest.approx(0.9)
    assert np.array_equal(out.quads, tiles.quads) and np.array_equal(out.boxes, tiles.boxes)
    assert np.abs(found[0][0] - TRUTH).max() < 5  # read where the 7 Dots' crop lies
