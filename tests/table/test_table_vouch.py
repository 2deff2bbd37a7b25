"""A weak tile that the second table classifier reads as the first does, surely, is vouched for:
its rack is judged where before it was left unjudged; a second reading that differs, or is not
sure, vouches for nothing."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from table_helpers import (
    CARD,
    CLASSES,
    SecondReader,
    exps,
    flags_of,
    player,
    probs,
    table,
    with_probs,
)

from companion.table import TableReader
from companion.table_readings import VOUCH_CONFIDENCE, vouched
from vision.types import Detections


def dead_table_read_weakly() -> tuple[Any, Detections]:
    """P1-B shows F F F and a kong of 2 Craks, a dead hand on the example card; its 2 Craks read at
    0.6 (8 Craks 0.35, which would make the hand live: F F F with 8C x 4 is on the card)."""
    r = table(player("P1", exps("N N N N"), exps("F F F", "2C 2C 2C 2C")))
    return r, with_probs(r, "P1-B", "2C", {"2C": 0.6, "8C": 0.35})


def test_without_a_witness_the_weak_rack_is_left_unjudged() -> None:
    r, det = dead_table_read_weakly()
    for reader in (TableReader(r.layout, card=CARD),  # no second reader
                   TableReader(r.layout, SecondReader(r.detections(), confidence=0.99, with_probs=True), card=CARD, vouch=None)):
        obs = reader.read(r.image, det)
        assert obs.zones["P1-B"].uncertain and obs.zones["P1-B"].exposures == exps("F F F", "2C 2C 2C 2C")
        assert flags_of(obs, "wrong_rack") == [] and flags_of(obs, "unreadable") == ["P1-B"]


def test_a_weak_rack_the_second_reader_reads_alike_surely_is_judged() -> None:
    r, det = dead_table_read_weakly()
    second = SecondReader(r.detections(), confidence=0.97, with_probs=True)
    obs = TableReader(r.layout, second, card=CARD).read(r.image, det)
    assert not obs.zones["P1-B"].uncertain
    assert flags_of(obs, "wrong_rack") == ["P1-B"] and flags_of(obs, "unreadable") == []
    # the weak rack's tiles read again once: to vouch, and that reading checks the call too
    assert second.asked[1:] == [sum(t.zone == "P1-B" for t in r.tiles)]


@pytest.mark.parametrize("confidence, misread", [(0.97, {"2C": "8C"}), (0.85, {}), (0.97, {"2C": "3C"})])
def test_a_second_reading_that_differs_or_is_not_sure_vouches_for_nothing(
        confidence: float, misread: dict[str, str]) -> None:
    r, det = dead_table_read_weakly()
    assert confidence >= VOUCH_CONFIDENCE or not misread
    obs = TableReader(r.layout, SecondReader(r.detections(), misread, confidence, with_probs=True), card=CARD).read(r.image, det)
    assert obs.zones["P1-B"].uncertain
    assert flags_of(obs, "wrong_rack") == [] and flags_of(obs, "unreadable") == ["P1-B"]


def test_a_sure_table_is_not_read_again() -> None:
    r = table(player("P1", exps("N N N N"), exps("F F F", "8C 8C 8C 8C")))
    second = SecondReader(r.detections(), confidence=0.97, with_probs=True)
    obs = TableReader(r.layout, second, card=CARD).read(r.image, r.detections())
    assert flags_of(obs, "wrong_rack") == [] and flags_of(obs, "unreadable") == []
    assert second.asked == [0]


def test_vouched_fuses_only_the_rows_read_alike_surely() -> None:
    q = np.tile(np.array([[0, 0], [10, 0], [10, 14], [0, 14]], np.float32), (4, 1, 1))
    mine = probs({"5D": 0.6, "N": 0.3}, {"N": 0.6, "W": 0.3}, {"E": 0.6, "S": 0.3}, {"RD": 0.99}).astype(np.float32)
    det = Detections.from_quads(q, ["5D", "N", "E", "RD"], mine.max(axis=1), probs=mine, classes=CLASSES)
    # row 0 read alike surely; row 1 read otherwise surely; row 2 alike, not surely; row 3 not asked
    theirs = probs({"5D": 0.95}, {"W": 0.95}, {"E": 0.85}, {"GD": 0.99}).astype(np.float32)
    other = Detections.from_quads(q, ["5D", "W", "E", "GD"], theirs.max(axis=1), probs=theirs, classes=CLASSES)
    out, n = vouched(det, np.array([0, 1, 2]), other)
    assert n == 1 and out.probs is not None
    assert out.confidence[0] > 0.99 and out.probs[0].sum() == pytest.approx(1.0)
    assert CLASSES[int(out.probs[0].argmax())] == "5D"
    assert out.confidence[1:].tolist() == pytest.approx([0.6, 0.6, 0.99])
    assert np.array_equal(out.probs[1:], mine[1:]) and list(out.codes) == list(det.codes)
    assert vouched(det, np.array([0, 1, 2]), other, bar=0.8)[1] == 2  # row 2 too at a lower bar
    plain = Detections.from_quads(q, ["5D", "W", "E", "GD"], theirs.max(axis=1))
    assert vouched(det, np.array([0]), plain) == (det, 0)  # no probabilities: nothing to weigh
