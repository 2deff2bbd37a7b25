"""The table benchmark (scripts/bench_table.py): its account of a missed exposure, other faces, enrollment."""

from __future__ import annotations

from pathlib import Path

import pytest
from table_helpers import exps

from companion.table import ZoneReading
from scripts.bench_table import _why_missed


def _rack(*groups: str) -> ZoneReading:
    e = exps(*groups)
    return ZoneReading("P1-A", "rack", tuple(c for g in e for c in g), e)


def test_a_missed_exposure_is_put_down_to_count_misread_or_grouping() -> None:
    truth = _rack("6B 6B 6B", "N N N N")
    assert _why_missed(truth, _rack("6B 6B", "N N N N")) == "tile count off"
    assert _why_missed(truth, None) == "tile count off"
    assert _why_missed(truth, _rack("8B 6B 6B", "N N N N")) == "tile misread"
    assert _why_missed(truth, _rack("6B 6B", "6B N N N N")) == "grouped otherwise"


def test_discards_are_scored_as_a_multiset() -> None:
    from types import SimpleNamespace

    from scripts.bench_table import _score_frame

    truth = {"discards": ZoneReading("discards", "discards", ("1B", "1B", "5D", "N"), ())}
    read = ZoneReading("discards", "discards", ("N", "1B", "5C", "1B", "J"), ())
    stats: dict[str, object] = {"flags": {}}
    _score_frame(stats, SimpleNamespace(zones={"discards": read}, flags=()), truth, set())
    assert (stats["discards"], stats["discards_ok"], stats["discards_read"]) == (4, 3, 5)
    _score_frame(stats, SimpleNamespace(zones={}, flags=()), truth, set())  # the zone not read at all
    assert (stats["discards"], stats["discards_ok"], stats["discards_read"]) == (8, 3, 5)


def test_other_faces_and_their_enrollment(tmp_path: Path) -> None:
    """``--faces american:STYLE`` draws an American set over that style (jokers, flowers, soaps,
    backs and the style's own numbers); ``--enroll`` enrolls it from one tile of each, as
    ``companion enroll`` would, into a set the recogniser loads."""
    from scripts.bench_table import REPO, enrolled, table_faces
    from vision.artwork import HOLDOUT_STYLE
    from vision.tileset import load_tileset

    faces = table_faces(f"american:{HOLDOUT_STYLE}")
    assert {"J", "F", "BK", "WD", "5C", "8B", "RD"} <= set(faces)
    assert not {"FL1", "SE1"} & set(faces)
    assert table_faces("km-jade").keys() != faces.keys()
    folder = enrolled(faces, REPO / "models", tmp_path)
    ts = load_tileset(folder)
    assert ts.layout == "american" and len(ts.codes) == 37 and "J" in ts.codes
    # a plain style has no American backs or flowers to lay out: said, not a KeyError
    with pytest.raises(SystemExit, match="no BK, F.*american:STYLE"):
        enrolled(table_faces("km-jade"), REPO / "models", tmp_path / "plain")


def test_misses_and_false_flags_are_listed_with_their_table() -> None:
    """``--misses``: each missed exposure and each false flag, named by table seed and rack."""
    from types import SimpleNamespace

    from companion.table import Flag
    from scripts.bench_table import _score_frame

    truth = {"P1-A": _rack("6B 6B 6B", "N N N N")}
    read = _rack("8B 6B 6B", "N N N N")
    flags = (Flag("tile_count", "P1-A", "P1-A: too many"), Flag("wrong_rack", "P1-A", "P1-A: dead"),
             Flag("unreadable", "P1-A", "P1-A: weak"))
    stats: dict[str, object] = {"exposures": 0, "exposures_ok": 0, "flags": {}}
    _score_frame(stats, SimpleNamespace(zones={"P1-A": read}, flags=flags), truth, {("wrong_rack", "P1-A")}, 7)
    assert stats["missed_list"] == ["table 7 P1-A: 6B 6B 6B missed (tile misread); read 8B 6B 6B | N N N N"]
    assert stats["false_flags"] == ["table 7: false tile_count: P1-A: too many"]  # the true call and perception flags are not


def test_a_dead_hand_not_called_is_listed_with_what_the_reader_said() -> None:
    """``--misses`` also lists each true ``wrong_rack`` the reader did not call, with the flags it
    raised on that rack instead (an ``unreadable`` one with its cause and its message)."""
    from types import SimpleNamespace

    from companion.table import Flag
    from scripts.bench_table import _score_frame

    truth = {"P1-A": _rack("6B 6B 6B", "N N N N"), "P1-B": _rack("1C 1C 1C")}
    flags = (Flag("unreadable", "P1-A", "P1-A: tile(s) #2 (read 6B) too uncertain"), Flag("wrong_rack", "P1-B", "P1-B: dead"))
    stats: dict[str, object] = {"exposures": 0, "exposures_ok": 0, "flags": {}}
    obs = SimpleNamespace(zones={"P1-A": truth["P1-A"], "P1-B": truth["P1-B"]}, flags=flags)
    _score_frame(stats, obs, truth, {("wrong_rack", "P1-A"), ("wrong_rack", "P1-B")}, 3)
    assert stats["uncalled_list"] == [
        "table 3 P1-A: dead hand not called (unreadable (weak tiles: P1-A: tile(s) #2 (read 6B) too uncertain)); truth 6B 6B 6B | N N N N; read 6B 6B 6B | N N N N"]
    _score_frame(stats, SimpleNamespace(zones={}, flags=()), truth, {("wrong_rack", "P1-B")}, 4)
    assert stats["uncalled_list"][-1] == "table 4 P1-B: dead hand not called (no flag); truth 1C 1C 1C; read nothing"


def test_a_racks_backs_are_counted_right_only_when_read_as_many() -> None:
    """The benchmark's "backs counted right": a rack's face-down count read as it lies."""
    from dataclasses import replace
    from types import SimpleNamespace

    from scripts.bench_table import _score_frame

    truth = {"P1-A": replace(_rack("6B 6B 6B"), face_down=11), "P1-B": replace(_rack("N N N"), face_down=13)}
    read = {"P1-A": truth["P1-A"], "P1-B": replace(truth["P1-B"], face_down=14)}  # a phantom back
    stats: dict[str, object] = {"exposures": 0, "exposures_ok": 0, "flags": {}}
    _score_frame(stats, SimpleNamespace(zones=read, flags=()), truth, set())
    assert (stats["backs_ok"], stats["racks"]) == (1, 2)
    _score_frame(stats, SimpleNamespace(zones={}, flags=()), truth, set())  # neither rack read
    assert (stats["backs_ok"], stats["racks"]) == (1, 4)


def test_a_display_scored_as_another_hand_is_counted_wrong_and_one_not_scored_is_not() -> None:
    from types import SimpleNamespace

    from scripts.bench_table import _score_mahjong

    truth = {"P1-A": {"hand": "ev1", "value": 50, "jokerless": True}, "P1-B": None}
    stats: dict[str, object] = {}
    other = {"hand": "sx2", "value": 60, "jokerless": False}
    _score_mahjong(stats, SimpleNamespace(mahjong={"P1-A": other}), truth, 14)
    _score_mahjong(stats, SimpleNamespace(mahjong={}), truth, 15)
    _score_mahjong(stats, SimpleNamespace(mahjong={"P1-A": dict(truth["P1-A"])}), truth, 16)
    assert (stats["mj"], stats["mj_ok"], stats["mj_wrong"]) == (3, 1, 1)
    assert stats["missed_list"][0] == f"table 14 P1-A: Mah Jongg ev1 (50) scored as {other}"
