"""Motion gate and reading smoother."""

from __future__ import annotations

import numpy as np
import pytest

from companion.table import TableObservation, ZoneReading
from vision.track import MotionGate, ReadingSmoother


def _img(v: int) -> np.ndarray:
    img = np.full((90, 160, 3), 100, np.uint8)
    img[20:60, 40:100] = v
    return img


def test_gate_needs_still_frames_after_motion() -> None:
    gate = MotionGate(still_frames=2)
    seq = [gate.update(_img(v)) for v in (100, 100, 100, 100, 250, 250, 250, 250)]
    assert [m.moving for m in seq] == [True, False, False, False, True, False, False, False]
    assert [m.stable for m in seq] == [False, False, True, True, False, False, True, True]


def test_gate_ignores_sensor_noise() -> None:
    rng = np.random.default_rng(0)
    gate = MotionGate(still_frames=1)
    gate.update(_img(100))
    noisy = np.clip(_img(100).astype(int) + rng.integers(-4, 5, (90, 160, 3)), 0, 255).astype(np.uint8)
    assert not gate.update(noisy).moving


def _obs(tiles: tuple[str, ...] | None) -> TableObservation:
    zones = {} if tiles is None else {"R": ZoneReading("R", "rack", tiles, (tiles,) if tiles else ())}
    return TableObservation(zones=zones)


def test_smoother_majority_and_hold() -> None:
    sm = ReadingSmoother(window=3)
    a, b = ("1B", "1B", "1B"), ("1B", "7B", "1B")
    out = [sm.update_with_observation(_obs(t)).zones.get("R") for t in (a, a, b, a, b, b)]
    codes = [z.tiles if z else None for z in out]
    # a single stray misread never wins; two of the last three do
    assert codes == [a, a, a, a, b, b]


def test_smoother_counts_misses() -> None:
    sm = ReadingSmoother(window=3)
    a = ("N", "N", "N")
    seq = [sm.update_with_observation(_obs(t)).zones.get("R") for t in (a, None, None, None)]
    assert [z is not None for z in seq] == [True, True, False, False]


def test_smoother_rejects_bad_window() -> None:
    with pytest.raises(ValueError, match="window"):
        ReadingSmoother(0)
