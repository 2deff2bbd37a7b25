"""Calibration from rendered markers, clicked corners, stale tracking and rectification."""

from __future__ import annotations

import numpy as np
import pytest
from table_helpers import SIAMESE, VIEW, table

from vision.calibrate import (
    Calibration,
    CalibrationError,
    Calibrator,
    calibrate_from_markers,
    find_markers,
    find_markers_soft,
    rectify,
)
from vision.light import poorly_taken
from vision.render import View, random_view


def _centre_error(r: object, cal: Calibration) -> float:
    tiles = r.tiles  # type: ignore[attr-defined]
    truth = np.array([t.centre_mm for t in tiles])
    seen = cal.to_table(np.array([t.quad_px for t in tiles]).mean(axis=1))
    return float(np.abs(seen - truth).max())


@pytest.mark.parametrize("view", [VIEW, View("right", 60.0, (1920, 1080)), View("top", 32.0, (1280, 720), roll_deg=4.0)])
def test_markers_give_the_true_homography(view: View) -> None:
    r = table(view=view)
    cal = calibrate_from_markers(r.image, SIAMESE.table_mm)
    assert cal.source == "markers"
    assert _centre_error(r, cal) < 4.0  # mm, everywhere on the table


def test_a_webcam_frame_finds_its_small_far_markers_enlarged() -> None:
    """640x480, a camera leaning 55 degrees from the near side: the far markers are 10-15 px
    across, and only the picture enlarged twice shows both; the homography is then true."""
    view = random_view(16, (640, 480))  # bench_table's 17th view at that size
    assert view.side == "bottom" and 54 < view.tilt_deg < 56
    r = table(view=view)
    assert sorted(find_markers_soft(r.image, enlarge=False)) == [2, 3]
    assert sorted(find_markers_soft(r.image)) == [0, 1, 2, 3]
    cal = calibrate_from_markers(r.image, SIAMESE.table_mm)
    assert cal.source == "markers" and _centre_error(r, cal) < 6.0


def test_an_over_exposed_720p_frame_is_first_calibrated_enlarged() -> None:
    """1280x720, over-exposed: one far marker is lost in the glare at the frame's own size and
    found enlarged, which a 720p frame is only until the table is first calibrated."""
    r = table(view=random_view(7, (1280, 720)))
    img = poorly_taken(r.image, "over")
    assert sorted(find_markers_soft(img)) == [0, 2, 3]  # a frame once calibrated: no enlarged look
    cal = Calibrator.for_layout(SIAMESE)
    first, state = cal.update(img)
    assert state == "fresh" and first is not None and first.source == "markers"
    assert _centre_error(r, first) < 6.0
    assert calibrate_from_markers(img, SIAMESE.table_mm).source == "markers"


def test_clicked_corners_match_markers() -> None:
    r = table()
    corners = np.array(
        [np.asarray(r.table_to_image) @ [x, y, 1] for x, y in [(0, 0), (900, 0), (900, 900), (0, 900)]]
    )
    cv_corners = corners[:, :2] / corners[:, 2:]
    cal = Calibration.from_corners(cv_corners, SIAMESE.table_mm)
    assert _centre_error(r, cal) < 0.5
    assert np.allclose(cal.to_image(cal.to_table([[640, 400]])), [[640, 400]], atol=1e-2)


@pytest.mark.parametrize(
    ("points", "message"),
    [([[0, 0], [100, 0], [100, 100]], "need 4 corner points"),
     ([[0, 0], [100, 0], [0, 100], [100, 100]], "convex"),
     ([[0, 0], [1, 0], [1, 1], [0, 1]], "almost no area")],
)
def test_bad_corners(points: list[list[float]], message: str) -> None:
    with pytest.raises(CalibrationError, match=message):
        Calibration.from_corners(points, (900, 900))


def test_covered_marker_keeps_the_last_good_homography() -> None:
    cal = Calibrator.for_layout(SIAMESE)
    assert cal.update(np.full((720, 1280, 3), 90, np.uint8)) == (None, "missing")
    good, state = cal.update(table().image)
    assert state == "fresh" and good is not None
    covered = table(hide_markers=(0,)).image
    again, state = cal.update(covered)
    assert state == "stale" and again is good and cal.stale_frames == 1
    assert cal.update(table().image)[1] == "fresh" and cal.stale_frames == 0


def test_three_markers_without_history_and_two_not_enough() -> None:
    r = table(hide_markers=(1,))
    cal = calibrate_from_markers(r.image, SIAMESE.table_mm, SIAMESE.marker_mm)
    assert cal.source == "markers-3"
    assert _centre_error(r, cal) < 25.0
    with pytest.raises(CalibrationError, match=r"missing: ids \[1\]"):
        calibrate_from_markers(r.image, SIAMESE.table_mm)  # marker size unknown: 4 needed
    with pytest.raises(CalibrationError, match=r"ids \[0, 1\]"):
        calibrate_from_markers(table(hide_markers=(0, 1)).image, SIAMESE.table_mm, SIAMESE.marker_mm)


def test_rectified_image_puts_table_points_where_they_belong() -> None:
    r = table(discards="RD")
    cal = calibrate_from_markers(r.image, SIAMESE.table_mm)
    top = rectify(r.image, cal, px_per_mm=0.5, margin_mm=20)
    assert top.shape[:2] == (470, 470)
    x, y = next(t.centre_mm for t in r.tiles if t.code == "RD")
    u, v = int((x + 20) * 0.5), int((y + 20) * 0.5)
    patch = top[v - 3 : v + 4, u - 3 : u + 4].astype(int)
    felt = top[v - 3 : v + 4, 4:11].astype(int)  # bare felt at the table's left edge
    assert abs(patch.mean() - felt.mean()) > 15  # a tile, not felt


def test_calibration_round_trips_through_json() -> None:
    cal = calibrate_from_markers(table().image, SIAMESE.table_mm)
    again = Calibration.from_json(cal.to_json())
    assert np.allclose(again.to_table([[640, 360]]), cal.to_table([[640, 360]]), atol=1e-3)
    assert again.source == "markers" and again.table_mm == (900.0, 900.0)
    with pytest.raises(CalibrationError, match="saved.json: image_to_table must be an invertible"):
        Calibration.from_json({"image_to_table": [[0] * 3] * 3, "table_mm": [900, 900]}, "saved.json")
    with pytest.raises(CalibrationError, match="saved.json: not a calibration"):
        Calibration.from_json({"table_mm": [900, 900]}, "saved.json")


@pytest.mark.parametrize("view", [View("bottom", 60.0, (1280, 720)), View("right", 66.0, (1920, 1080))])
def test_markers_a_soft_picture_hides_are_found_sharpened(view: View) -> None:
    """A phone out of focus: the far markers blur into the felt and the first look misses some;
    the second look, at the picture sharpened, finds all four, and the homography is still true."""
    r = table(view=view)
    soft = poorly_taken(r.image, "blur")
    assert len(find_markers(soft)) < 4
    cal = calibrate_from_markers(soft, SIAMESE.table_mm)
    assert cal.source == "markers"
    assert _centre_error(r, cal) < 6.0
    live, state = Calibrator(SIAMESE.table_mm).update(soft)
    assert state == "fresh" and live is not None and live.source == "markers"
