"""Localiser geometry and decoding, without a model: quads, heatmap peaks, overlap suppression."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.detect import (
    STRIDE,
    decode,
    drop_covered,
    edge_turns,
    prepare,
    quad_iou_boxes,
    quad_params,
    rect_quads,
    refine_angles,
    shrink,
    suppress_overlaps,
)


@settings(max_examples=200, deadline=None)
@given(
    cx=st.floats(0, 1000),
    cy=st.floats(0, 1000),
    short=st.floats(5, 100),
    ratio=st.floats(1.05, 3),
    theta=st.floats(-math.pi / 2 + 1e-3, math.pi / 2 - 1e-3),
)
def test_rect_quads_and_quad_params_round_trip(
    cx: float, cy: float, short: float, ratio: float, theta: float
) -> None:
    f = np.float32
    q = rect_quads(
        np.array([cx], f),
        np.array([cy], f),
        np.array([short], f),
        np.array([short * ratio], f),
        np.array([theta], f),
    )
    cx2, cy2, s2, l2, t2 = quad_params(q)[0]
    assert abs(cx2 - cx) < 1e-2 and abs(cy2 - cy) < 1e-2
    assert abs(s2 - short) < 1e-2 * short and abs(l2 - short * ratio) < 1e-2 * short
    # angles are equal modulo pi
    d = (t2 - theta + math.pi / 2) % math.pi - math.pi / 2
    assert abs(d) < 1e-3


def test_quads_are_clockwise_from_top_left_of_an_upright_tile() -> None:
    f = np.float32
    q = rect_quads(
        np.array([50], f), np.array([50], f), np.array([20], f), np.array([30], f), np.array([0], f)
    )[0]
    np.testing.assert_allclose(q, [[40, 35], [60, 35], [60, 65], [40, 65]], atol=1e-4)
    # a tile lying on its side (theta = 90 degrees) is wide
    q = rect_quads(
        np.array([50], f),
        np.array([50], f),
        np.array([20], f),
        np.array([30], f),
        np.array([math.pi / 2], f),
    )[0]
    assert np.ptp(q[:, 0]) > np.ptp(q[:, 1])


def test_decode_reads_peaks_and_regression_back_into_pixels() -> None:
    h, w = 20, 30
    peaks = np.zeros((1, h, w), np.float32)
    reg = np.zeros((6, h, w), np.float32)
    peaks[0, 5, 7] = 0.9
    peaks[0, 12, 20] = 0.2  # below threshold
    reg[:, 5, 7] = [0.25, -0.5, math.log(16 / STRIDE), math.log(24 / STRIDE), 1.0, 0.0]
    quads, score = decode(peaks, reg, threshold=0.3)
    assert score.tolist() == [np.float32(0.9)]
    cx, cy, short, long, theta = quad_params(quads)[0]
    assert abs(cx - ((7 + 0.25) * STRIDE + 1.5)) < 1e-3
    assert abs(cy - ((5 - 0.5) * STRIDE + 1.5)) < 1e-3
    assert abs(short - 16) < 1e-3 and abs(long - 24) < 1e-3 and abs(theta) < 1e-4


def test_suppress_overlaps_keeps_the_best_of_a_duplicate_pair() -> None:
    f = np.float32
    q = rect_quads(
        np.array([50, 52, 150], f),
        np.array([50, 50, 50], f),
        np.full(3, 20, f),
        np.full(3, 30, f),
        np.zeros(3, f),
    )
    keep = suppress_overlaps(q, np.array([0.5, 0.9, 0.7], f))
    assert keep.tolist() == [1, 2]


def test_touching_tiles_are_not_suppressed() -> None:
    f = np.float32
    xs = np.arange(10, dtype=f) * 20 + 20
    q = rect_quads(xs, np.full(10, 50, f), np.full(10, 20, f), np.full(10, 27, f), np.zeros(10, f))
    assert len(suppress_overlaps(q, np.linspace(0.5, 0.9, 10).astype(f))) == 10


def test_drop_covered_drops_a_second_box_on_one_tile() -> None:
    f = np.float32
    # a tile, a half-size box inside it (weaker), and a neighbour turned 30 degrees whose upright
    # bounding box overlaps the tile's a lot while the tiles themselves barely touch
    q = rect_quads(
        np.array([100, 104, 131], f),
        np.array([100, 96, 100], f),
        np.array([24, 14, 24], f),
        np.array([32, 20, 32], f),
        np.array([0, 0, math.radians(30)], f),
    )
    score = np.array([0.9, 0.6, 0.8], f)
    assert drop_covered(q, score).tolist() == [0, 2]
    # the share is of the weaker quad's area: a tile's box round a surer half-size box stays
    assert drop_covered(q, np.array([0.5, 0.6, 0.8], f)).tolist() == [0, 1, 2]
    # two boxes on one tile: the surer stays, whichever it is
    same = rect_quads(
        np.array([100, 102], f),
        np.array([100, 99], f),
        np.array([24, 22], f),
        np.array([32, 30], f),
        np.zeros(2, f),
    )
    assert drop_covered(same, np.array([0.9, 0.6], f)).tolist() == [0]
    assert drop_covered(same, np.array([0.6, 0.9], f)).tolist() == [1]
    # rows of touching tiles at any angle keep every tile
    for deg in (0, 20, 45, 90):
        xs = np.arange(10, dtype=f) * 24.5
        t = math.radians(deg)
        rows = rect_quads(
            200 + xs * math.cos(t),
            200 + xs * math.sin(t),
            np.full(10, 24, f),
            np.full(10, 32, f),
            np.full(10, t, f),
        )
        assert len(drop_covered(rows, np.linspace(0.5, 0.9, 10).astype(f))) == 10, deg
    assert drop_covered(q[:1], score[:1]).tolist() == [0]
    assert drop_covered(np.zeros((0, 4, 2), f), np.zeros(0, f)).tolist() == []


def test_box_iou() -> None:
    a = np.array([[0, 0, 10, 10]], np.float32)
    b = np.array([[0, 0, 10, 10], [5, 0, 15, 10], [20, 20, 30, 30]], np.float32)
    np.testing.assert_allclose(quad_iou_boxes(a, b)[0], [1.0, 1 / 3, 0.0], atol=1e-6)


def test_prepare_pads_to_a_multiple_of_32() -> None:
    img = np.zeros((720, 1280, 3), np.uint8)
    batch, sx, sy = prepare(img, 0.5)
    assert batch.shape == (1, 3, 384, 640)
    assert abs(sx - 0.5) < 1e-6 and abs(sy - 0.5) < 1e-6


@pytest.mark.parametrize("size", [(640, 640), (643, 481), (1280, 720), (300, 200)])
@pytest.mark.parametrize("scale", [0.37, 0.4, 0.5, 0.6, 0.8])
def test_shrink_is_area_averaging_and_maps_points_back(size: tuple[int, int], scale: float) -> None:
    """The fast shrink stays close to OpenCV's area averaging, and its factors put a mark where
    the factors of the whole image would (within a pixel of the small image)."""
    w, h = size
    rng = np.random.default_rng(w + h)
    img = cv2.GaussianBlur(rng.integers(0, 256, (h, w, 3), dtype=np.uint8), (0, 0), 2.0)
    img[h // 3 : h // 3 + 9, w // 2 : w // 2 + 9] = 255  # a bright mark
    nw, nh = round(w * scale), round(h * scale)
    small, (uw, uh) = shrink(img, nw, nh)
    assert small.shape == (nh, nw, 3) and small.dtype == np.uint8
    assert w - uw < 1 / scale and h - uh < 1 / scale
    area = cv2.resize(img, (nw, nh), interpolation=cv2.INTER_AREA)
    assert float(np.abs(small.astype(float) - area).mean()) < 3.0
    ys, xs = np.nonzero(small[..., 0] > 200)
    mark = np.array([w / 2 + 4.5, h // 3 + 4.5]) * [nw / uw, nh / uh] - 0.5
    assert abs(xs.mean() - mark[0]) < 1.0 and abs(ys.mean() - mark[1]) < 1.0


def test_shrink_averages_a_long_strip_held_up_by_its_short_side() -> None:
    """A strip shrunk far more along its length than across it (the 32-pixel floor holds its short
    side): fine stripes along it average out to grey, and do not alias into bands."""
    img = np.zeros((120, 3000, 3), np.uint8)
    img[:, ::2] = 255  # one-pixel stripes
    small, _ = shrink(img, 300, 32)
    assert small.shape == (32, 300, 3)
    assert float(small.std()) < 8.0 and abs(float(small.mean()) - 127.5) < 8.0


def test_prepare_returns_the_factors_of_the_part_it_shrank() -> None:
    img = np.zeros((641, 641, 3), np.uint8)  # shrunk by 2 whole first: the last row and column go
    batch, sx, sy = prepare(img, 0.4)
    assert batch.shape == (1, 3, 256, 256)
    assert abs(sx - 256 / 640) < 1e-9 and abs(sy - 256 / 640) < 1e-9


def tile_row(theta_deg: float, n: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """A green table with ``n`` touching ivory tiles (40 x 54 px, a dark face mark each) in a row
    turned ``theta_deg`` from upright; returns the image and the tiles' centres."""
    img = np.zeros((480, 640, 3), np.uint8)
    img[:] = (40, 110, 30)
    t = math.radians(theta_deg)
    along = np.array([math.cos(t), math.sin(t)])  # the row runs across the tiles' short sides
    centres = np.array([320, 240]) + np.outer(np.arange(n) - (n - 1) / 2, along * 41)
    quads = rect_quads(
        centres[:, 0], centres[:, 1], np.full(n, 40.0), np.full(n, 54.0), np.full(n, t)
    )
    for q in quads:
        cv2.fillConvexPoly(img, q.astype(np.int32), (215, 230, 235))
        cv2.polylines(img, [q.astype(np.int32)], True, (150, 160, 165), 1)
        c = q.mean(axis=0).astype(int)
        cv2.circle(img, (int(c[0]), int(c[1])), 8, (60, 40, 160), -1)
    return img, centres.astype(np.float32)


@pytest.mark.parametrize("theta_deg", [0.0, 12.0, 20.0, -30.0, 75.0])
def test_refine_angles_turns_upright_quads_to_the_tiles_edges(theta_deg: float) -> None:
    img, centres = tile_row(theta_deg)
    n = len(centres)
    # the localiser's habit: the right centre and size, but upright (or lying, for a tile near 90)
    guess = 0.0 if abs(theta_deg) < 45 else math.pi / 2
    upright = rect_quads(
        centres[:, 0], centres[:, 1], np.full(n, 40.0), np.full(n, 54.0), np.full(n, guess)
    )
    got = quad_params(refine_angles(img, upright))
    assert np.allclose(got[:, :4], quad_params(upright)[:, :4], atol=1e-3)  # centre and size kept
    err = np.degrees(np.abs(got[:, 4] - math.radians(theta_deg)))
    assert np.all(np.minimum(err, 180 - err) < 3.0), got[:, 4]


def test_refine_angles_leaves_a_quad_alone_where_no_edges_agree() -> None:
    blank = np.full((200, 200, 3), 120, np.uint8)
    noise = np.random.default_rng(0).integers(0, 255, (200, 200, 3), dtype=np.uint8)
    q = rect_quads(
        np.array([100.0]), np.array([100.0]), np.array([40.0]), np.array([54.0]), np.array([0.3])
    )
    for img in (blank, noise):
        assert np.allclose(refine_angles(img, q), q, atol=1e-3)
    assert refine_angles(blank, np.zeros((0, 4, 2), np.float32)).shape == (0, 4, 2)


def test_edge_turns_measures_how_far_the_edges_agree() -> None:
    img, centres = tile_row(35.0)
    n = len(centres)
    upright = rect_quads(centres[:, 0], centres[:, 1], np.full(n, 40.0), np.full(n, 54.0), np.zeros(n))
    turned, strength = edge_turns(img, upright)
    assert np.all(strength > 0.3), strength  # clean edges: refine_angles turns these
    err = np.degrees(np.abs(quad_params(turned)[:, 4] - math.radians(35.0)))
    assert np.all(err < 3.0), err
    noise = np.random.default_rng(0).integers(0, 255, img.shape, dtype=np.uint8)
    _, weak = edge_turns(noise, upright)
    assert np.all(weak < 0.12), weak  # nothing agrees: not even a doubtful turn
    none, s0 = edge_turns(img, np.zeros((0, 4, 2), np.float32))
    assert none.shape == (0, 4, 2) and s0.shape == (0,)
