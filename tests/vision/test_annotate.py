"""Drawing tiles on a picture: outlines and codes that show at any size the picture is looked at."""

from __future__ import annotations

import numpy as np

from vision.annotate import annotate
from vision.types import Detections


def _drawn(side: int, confidence: float = 0.9) -> tuple[np.ndarray, float]:
    k = side / 640
    img = np.full((side * 3 // 4, side, 3), 128, np.uint8)
    quad = np.array([[100, 100], [160, 100], [160, 180], [100, 180]], np.float32) * k
    out = annotate(img, Detections.from_quads(quad[None], ["5D"], np.array([confidence], np.float32)))
    assert np.all(img == 128)  # the picture itself is left as it was
    return out, k


def _edge_width(out: np.ndarray, k: float) -> int:
    """How many pixels the quad's left edge changed on a row through its middle."""
    row = np.any(out[int(140 * k)] != 128, axis=1)
    x = int(100 * k)
    return int(row[x - int(6 * k) - 2: x + int(6 * k) + 3].sum())


def test_outlines_and_codes_grow_with_the_picture() -> None:
    small, ks = _drawn(640)
    big, kb = _drawn(4032)
    assert 1 <= _edge_width(small, ks) <= 3
    assert _edge_width(big, kb) >= _edge_width(small, ks) + 2  # a phone's still: 3 pixels and more
    # the code is written above the tile, taller on the larger picture
    def code_rows(out: np.ndarray, k: float) -> int:
        above = out[: int(100 * k), int(100 * k): int(180 * k)]
        return int(np.any(above != 128, axis=(1, 2)).sum())

    assert code_rows(small, ks) >= 5 and code_rows(big, kb) > 3 * code_rows(small, ks)
    assert np.all(small[int(140 * ks), int(130 * ks)] == 128)  # the face is left as it is


def _hues(out: np.ndarray) -> set[str]:
    """The colours drawn (anti-aliased, so by the strongest channel of the clearly coloured pixels)."""
    px = out.reshape(-1, 3).astype(int)
    coloured = px[(px.max(axis=1) - px.min(axis=1)) > 60]
    return {("blue", "green", "red")[int(c.argmax())] for c in coloured}


def test_a_doubtful_reading_is_drawn_orange_with_a_question_mark() -> None:
    sure, k = _drawn(640, 0.9)
    doubt, _ = _drawn(640, 0.4)
    assert _hues(sure) == {"green"} and _hues(doubt) == {"red"}  # orange (0, 140, 255) is mostly red
    above = (slice(0, int(100 * k)), slice(int(90 * k), int(200 * k)))
    assert np.any(doubt[above] != 128, axis=2).sum() > np.any(sure[above] != 128, axis=2).sum()  # "5D?"
