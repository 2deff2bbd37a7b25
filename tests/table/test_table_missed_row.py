"""A rack row the localiser found nothing on, sampled on the picture: its stretches of tile that
end on table and are a whole number of tiles long are laid as tiles (``missed_row``)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.table_extents import missed_row
from companion.table_runs import RUN_JOINT_MM
from companion.table_types import TILE_MM

FELT, BACK = (40, 110, 30), (20, 120, 240)  # BGR: green felt, orange backs
PITCH = TILE_MM[0] + RUN_JOINT_MM


def _row(spans: list[tuple[float, int]]) -> np.ndarray:
    """A 400 x 100 mm strip of felt at 1 px/mm with ``(start, tiles)`` runs of touching backs on
    the row across its middle (y 34-66 mm), a dark seam between tiles."""
    top = np.zeros((100, 400, 3), np.uint8)
    top[:] = FELT
    for start, n in spans:
        for k in range(n):
            x = start + k * PITCH
            cv2.rectangle(top, (round(x), 34), (round(x + TILE_MM[0]), 66), BACK, -1)
            cv2.line(top, (round(x), 34), (round(x), 66), (20, 60, 120), 1)
    return top


def _missed(top: np.ndarray, contrast: float = 100.0) -> list[float]:
    felt = cv2.cvtColor(np.array([[FELT]], np.uint8), cv2.COLOR_BGR2LAB).astype(np.float32)[0, 0]
    axis, perp = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    return missed_row(top, np.eye(3), axis, perp, 50.0, (0.0, 400.0), felt, contrast)


@pytest.mark.parametrize("n", [1, 5, 12])
def test_a_run_of_touching_backs_is_laid_tile_by_tile(n: int) -> None:
    got = _missed(_row([(20.0, n)]))
    assert len(got) == n
    assert np.allclose(np.diff(got), PITCH, atol=1.0) and abs(got[0] - (20 + TILE_MM[0] / 2)) < 1.5


def test_two_runs_apart_are_laid_apart() -> None:
    assert len(_missed(_row([(20.0, 3), (200.0, 4)]))) == 7


@pytest.mark.parametrize(("top", "contrast", "why"), [
    (_row([(20.0, 3)]), 20.0, "tiles too like the table to be measured"),
    (_row([(340.0, 3)]), 100.0, "a stretch running out of the zone"),
    (np.where(np.arange(400)[None, :, None] < 60, np.uint8(BACK), _row([])).astype(np.uint8), 100.0,
     "a stretch from the zone's start"),
])
def test_a_stretch_that_may_not_be_whole_tiles_is_left(top: np.ndarray, contrast: float, why: str) -> None:
    assert _missed(top, contrast) == [], why


def test_a_stretch_between_whole_tiles_is_left() -> None:
    top = _row([])
    cv2.rectangle(top, (100, 34), (100 + round(2.5 * PITCH), 66), BACK, -1)  # two and a half tiles long
    assert _missed(top) == []


@pytest.mark.parametrize(("share", "laid"), [(0.9, True), (0.6, False)])
def test_a_stretch_nearer_the_table_than_the_racks_other_tiles_is_left(share: float, laid: bool) -> None:
    """Three tiles of a colour ``share`` as far from the felt as the rack's other row is: at 0.9
    they are tiles, at 0.6 (under MISSED_ROW_CONTRAST) the felt's own texture could make as much."""
    pale = (70, 150, 60)
    top = _row([])
    cv2.rectangle(top, (100, 34), (100 + round(3 * PITCH - RUN_JOINT_MM), 66), pale, -1)
    lab = cv2.cvtColor(np.array([[FELT, pale]], np.uint8), cv2.COLOR_BGR2LAB).astype(np.float32)[0]
    dist = float(np.linalg.norm(lab[1] - lab[0]))
    assert dist / share >= 30  # a contrast the row is measured at
    assert len(_missed(top, dist / share)) == (3 if laid else 0)
