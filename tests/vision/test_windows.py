"""vision.windows: a still photo cut into overlapping windows, and each tile kept once."""

from __future__ import annotations

import numpy as np
import pytest

from vision import windows
from vision.detect import drop_covered
from vision.types import Detections


def quad(cx: float, cy: float, w: float = 40.0, h: float = 54.0, turn: float = 0.0) -> np.ndarray:
    c, s = np.cos(np.radians(turn)), np.sin(np.radians(turn))
    corners = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
    return (corners @ np.array([[c, s], [-s, c]]) + [cx, cy]).astype(np.float32)


def tiles(*quads: np.ndarray, codes: list[str] | None = None, conf: list[float] | None = None) -> Detections:
    q = np.stack(quads).astype(np.float32)
    return Detections.from_quads(q, codes or ["5D"] * len(q), np.array(conf or [0.9] * len(q), np.float32))


@pytest.mark.parametrize("length", [700, 768, 769, 1280, 1920, 2560, 4032])
def test_windows_cover_the_side_evenly_and_overlap_enough(length: int) -> None:
    s = windows.starts(length)
    assert s[0] == 0
    assert s[-1] + min(windows.WINDOW, length) == length  # the last window ends at the picture's edge
    gaps = np.diff(s)
    assert (gaps <= windows.STRIDE * windows.WINDOW).all()
    assert (gaps > 0).all()
    if length <= windows.WINDOW:
        assert s == [0]


def kept(det: Detections) -> list[int]:
    """The tiles read_in_windows keeps of ``det``, scored by their confidence."""
    return drop_covered(det.quads, det.confidence, windows.SAME_TILE_SHARE).tolist()


def test_one_tile_seen_by_two_windows_is_kept_once_at_its_surer_reading() -> None:
    det = tiles(quad(100, 100), quad(101, 99), quad(160, 100), codes=["5D", "6D", "7B"], conf=[0.7, 0.95, 0.9])
    assert [str(c) for c in det[np.array(kept(det))].codes] == ["6D", "7B"]  # the neighbour, touching, stays


def test_half_a_tile_read_less_surely_than_its_whole_is_dropped() -> None:
    whole, half = quad(300, 300), quad(300, 287, h=27.0)
    assert kept(tiles(whole, half, conf=[0.99, 0.6])) == [0]
    assert kept(tiles(whole, quad(300, 280, h=14.0), conf=[0.99, 0.6])) == [0]  # a quarter too


def test_turned_neighbours_whose_boxes_overlap_are_both_kept() -> None:
    a, b = quad(200, 200, turn=45), quad(200 + 48 / np.sqrt(2), 200 + 48 / np.sqrt(2), turn=45)
    det = tiles(a, b)
    assert np.all(det.boxes[0, 2:] > det.boxes[1, :2])  # their upright boxes overlap
    assert kept(det) == [0, 1]


def test_windows_read_in_the_pictures_pixels_each_tile_once() -> None:
    """A fake window reader that finds one tile at a fixed place of the whole picture: each window
    that holds it whole reports it in its own pixels; the merged reading holds it once, in the
    picture's pixels, also when the picture was shrunk first (tiles larger than STILL_TILE_PX)."""
    picture = np.zeros((1000, 1500, 3), np.uint8)
    for tile_px, r in ((40.0, 1.0), (160.0, 0.5)):
        at = np.array([700.0, 400.0]) * r  # the tile's centre in the (shrunk) picture
        seen: list[tuple[int, int]] = []

        def read(crop: np.ndarray, at: np.ndarray = at, seen: list[tuple[int, int]] = seen,
                 r: float = r) -> tuple[Detections, np.ndarray]:
            h, w = crop.shape[:2]
            seen.append((w, h))
            # the crop's origin in the (shrunk) picture, from the picture's coordinates drawn into it
            x0, y0 = float(crop[0, 0, 0]) * 8 * r, float(crop[0, 0, 1]) * 8 * r
            c = at - [x0, y0]
            if not (20 <= c[0] <= w - 20 and 27 <= c[1] <= h - 27):
                return Detections.empty(), np.zeros(0, np.float32)
            return tiles(quad(*c, w=20, h=27)), np.array([0.8], np.float32)

        ys, xs = np.mgrid[0:1000, 0:1500]
        picture[..., 0], picture[..., 1] = (xs // 8).clip(0, 255), (ys // 8).clip(0, 255)
        out = windows.read_in_windows(picture, tile_px, read)
        assert out is not None
        det, obj = out
        assert len(det) == 1 and obj.tolist() == pytest.approx([0.8])
        np.testing.assert_allclose(det.centres[0], [700, 400], atol=10)
        assert len(seen) == len(windows.starts(int(1000 * r) if r < 1 else 1000)) * len(windows.starts(int(1500 * r)))


def test_a_huge_still_is_cut_into_at_most_seven_windows_a_side() -> None:
    seen: list[tuple[int, ...]] = []

    def read(crop: np.ndarray) -> tuple[Detections, np.ndarray]:
        seen.append(crop.shape)
        return Detections.empty(), np.zeros(0, np.float32)

    windows.read_in_windows(np.zeros((6000, 8000, 3), np.uint8), 10.0, read)  # tiles far under STILL_TILE_PX
    assert len(seen) == len(windows.starts(3072)) * len(windows.starts(windows.MAX_SIDE)) == 5 * 7


def test_no_tile_in_any_window_is_no_reading() -> None:
    empty = (Detections.empty(), np.zeros(0, np.float32))
    assert windows.read_in_windows(np.zeros((900, 1600, 3), np.uint8), 30.0, lambda crop: empty) is None
