"""A dead-hand call stands only when a second classifier's reading calls it too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from table_helpers import CARD, SecondReader, exps, flags_of, player, probs, table, with_probs

from companion.rules.tiles import ALL_CODES
from companion.table import TableReader
from companion.table_readings import with_rows
from vision.types import Detections

REPO = Path(__file__).resolve().parents[2]


def dead_table() -> Any:
    return table(player("P1", exps("N N N N"), exps("F F F", "2C 2C 2C 2C")))


def test_a_dead_call_stands_when_the_second_reading_finds_it_dead_too() -> None:
    r = dead_table()
    second = SecondReader(r.detections())
    obs = TableReader(r.layout, second, card=CARD).read(r.image, r.detections())
    assert flags_of(obs, "wrong_rack") == ["P1-B"]
    # the tiles of the rack called dead (its backs too) are read again, and no others
    assert second.asked[1:] == [sum(t.zone == "P1-B" for t in r.tiles)] and second.asked[1] < len(r.tiles) / 2
    assert flags_of(obs, "unreadable") == []


def test_a_dead_call_the_second_reading_does_not_make_is_withheld() -> None:
    r = dead_table()
    second = SecondReader(r.detections(), {"2C": "8C"})  # F F F with 8C x 4: a live hand on this card
    obs = TableReader(r.layout, second, card=CARD).read(r.image, r.detections())
    assert flags_of(obs, "wrong_rack") == []
    withheld = [f for f in obs.flags if f.kind == "unreadable"]
    assert [(f.zone, f.cause) for f in withheld] == [("P1-B", "check")]
    assert "(F F F | 8C 8C 8C 8C)" in withheld[0].message
    assert obs.zones["P1-B"].exposures == exps("F F F", "2C 2C 2C 2C")  # the first reading is what is shown


def test_a_second_reading_of_the_same_tiles_too_weak_to_judge_withholds_the_call() -> None:
    """The twenty-second session's case: both classifiers read the same dead tiles, the second weakly."""
    r = dead_table()
    obs = TableReader(r.layout, SecondReader(r.detections(), confidence=0.5), card=CARD).read(r.image, r.detections())
    assert flags_of(obs, "wrong_rack") == []
    withheld = next(f for f in obs.flags if f.kind == "unreadable")
    assert withheld.cause == "check" and "(F F F | 2C 2C 2C 2C, 7 of them read weakly)" in withheld.message


def test_a_live_rack_is_not_read_again() -> None:
    r = table(player("P1", exps("N N N N"), exps("F F F", "8C 8C 8C 8C")))
    second = SecondReader(r.detections(), {"8C": "2C"})
    obs = TableReader(r.layout, second, card=CARD).read(r.image, r.detections())
    assert flags_of(obs, "wrong_rack") == [] and flags_of(obs, "unreadable") == []
    assert second.asked == [0]


def test_without_the_frame_the_call_rests_on_one_reading() -> None:
    r = dead_table()
    reader = TableReader(r.layout, SecondReader(r.detections(), {"2C": "8C"}), card=CARD)
    calibration, state = reader.calibrator.update(r.image)
    assert calibration is not None
    assert flags_of(reader.observe(r.detections(), calibration, state), "wrong_rack") == ["P1-B"]
    assert flags_of(reader.observe(r.detections(), calibration, state, r.image), "wrong_rack") == []


def test_with_rows_lays_the_other_readings_into_its_own_class_columns() -> None:
    classes = tuple(ALL_CODES)
    q = np.tile(np.array([[0, 0], [10, 0], [10, 14], [0, 14]], np.float32), (3, 1, 1)) + np.arange(3)[:, None, None] * 20
    p = np.full((3, len(classes)), 0.0, np.float32)
    p[:, classes.index("5D")] = 1.0
    det = Detections.from_quads(q, ["5D"] * 3, np.ones(3, np.float32), probs=p, classes=classes)
    other_classes = ("N", "W", "5D")  # another order, and fewer classes
    other = Detections.from_quads(q[[2]], ["W"], np.array([0.7], np.float32),
                                  probs=np.array([[0.1, 0.7, 0.2]], np.float32), classes=other_classes)
    out = with_rows(det, np.array([2]), other)
    assert list(out.codes) == ["5D", "5D", "W"]
    assert out.confidence.tolist() == pytest.approx([1.0, 1.0, 0.7])
    assert out.probs is not None
    assert out.probs[2, classes.index("W")] == pytest.approx(0.7)
    assert out.probs[2, classes.index("N")] == pytest.approx(0.1)
    assert out.probs[0, classes.index("5D")] == 1.0 and out.probs[2].sum() == pytest.approx(1.0)
    assert np.array_equal(out.quads, det.quads)


def test_the_committed_second_table_classifier_reads_the_table_tiles() -> None:
    """The real file: loaded beside the table classifier, it reads a near rack's tiles right."""
    from vision.pipeline import TABLE_CHECK_CLASSIFIER, TileRecognizer

    assert (REPO / "models" / TABLE_CHECK_CLASSIFIER).is_file()
    from vision.artwork import tile_faces
    from vision.render import View

    rec = TileRecognizer(threads=1)
    assert rec.check_classifier is not None
    r = table(player("P1", exps("N N N N"), exps("F F F", "2C 2C 2C 2C")), faces=tile_faces("american-synth"),
              view=View("bottom", 40.0, (1920, 1080)))
    det = r.detections()
    near = np.array([(t.zone or "").startswith("P1") and t.code != "BK" for t in r.tiles])
    second = rec.check(r.image, det.quads[near])
    assert second is not None and second.probs is not None
    assert list(second.classes) == list(rec.table_classifier.classes)
    assert list(second.codes) == [str(c) for c in det.codes[near]]


def test_read_zones_only_reads_the_zones_asked_and_reads_them_as_the_whole_table_does() -> None:
    from companion.table import read_zones

    r = dead_table()
    reader = TableReader(r.layout, card=CARD)
    calibration, _ = reader.calibrator.update(r.image)
    assert calibration is not None
    whole = read_zones(r.layout, r.detections(), calibration)
    some = read_zones(r.layout, r.detections(), calibration, only={"P1-B", "discards"})
    assert set(some) == {"P1-B", "discards"} and len(whole) > 2
    assert some["P1-B"] == whole["P1-B"] and some["P1-B"].exposures == exps("F F F", "2C 2C 2C 2C")


@pytest.mark.parametrize("alone", [0.9, 0.7])
def test_a_mah_jongg_in_error_stands_only_on_a_second_reading_sure_tile_by_tile(alone: float) -> None:
    """A display matching no hand, which a misread of any one tile would make: the second reader
    reads the same codes, one 3 Dots at ``alone`` on its own, which its run's sure neighbours lift
    over the bar.  At 0.7 alone the call is withheld, and says so."""
    display = exps("1B 1B 1B", "2C 2C 2C", "3D 3D 3D", "4B 4B 4B", "N N")
    r = table(player("P1", display, (), total=27))

    class OneWeak(SecondReader):
        def check(self, frame: Any, quads: Any) -> Detections:
            det = super().check(frame, quads)
            k = list(det.codes).index("3D")
            p = np.array(det.probs)
            p[k] = probs({"3D": alone})[0]
            return Detections.from_quads(det.quads, list(det.codes), p.max(axis=1), probs=p, classes=det.classes)

    first = with_probs(r, "P1-A", "3D", {"3D": 0.97})  # the first reading sure, with probabilities
    obs = TableReader(r.layout, OneWeak(r.detections(), with_probs=True), card=CARD).read(r.image, first)
    assert obs.mahjong["P1-A"] is None
    if alone >= 0.75:
        assert flags_of(obs, "wrong_rack") == ["P1-A"] and flags_of(obs, "unreadable") == []
    else:
        assert flags_of(obs, "wrong_rack") == []
        withheld = next(f for f in obs.flags if f.kind == "unreadable")
        assert withheld.zone == "P1-A" and withheld.cause == "check"
        assert "1 of them read weakly" in withheld.message
