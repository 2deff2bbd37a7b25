"""Scoring the followed game through the variant's settlement."""

from __future__ import annotations

from companion.live_game import LiveGame
from companion.live_score import mahjong_record, score
from companion.table import Flag, TableObservation, ZoneReading

HAND = ("1B",) * 14


def table(p1a: tuple[str, ...], disc: tuple[str, ...], mj: dict | None = None,
          flags: tuple[Flag, ...] = ()) -> TableObservation:
    zones = {
        "P1-A": ZoneReading("P1-A", "rack", p1a, (p1a,) if p1a else (), player=1),
        "P1-B": ZoneReading("P1-B", "rack", (), (), face_down=13, player=1),
        "P2-A": ZoneReading("P2-A", "rack", (), (), face_down=27, player=2),
        "discards": ZoneReading("discards", "discards", disc),
    }
    return TableObservation(zones, "fresh", flags, {"P1-A": mj} if mj else {})


def test_mahjong_is_scored_by_the_variant() -> None:
    g = LiveGame("grad")
    g.observe(table((), ("3C",)))
    g.observe(table((), ("3C", "W")))
    entry = {"hand": "x1", "value": 60, "card_value": 30, "jokerless": True}
    ev = g.observe(table(HAND, ("3C", "W"), entry))
    assert [e.kind for e in ev] == ["exposure", "mahjong"]
    assert g.scores == {"1": 60, "2": 0}  # 30 x 2 jokerless, first Mah Jongg
    assert g.record[0]["player"] == "1" and g.record[0]["value"] == 30


def test_second_mahjong_doubles_and_the_discarder_pays_the_penalty() -> None:
    rec = [{"type": "mahjong", "player": "1", "value": 25, "jokerless": False},
           {"type": "mahjong", "player": "1", "value": 35, "jokerless": True, "claimed_from": "2"}]
    result = score("grad", ["1", "2"], rec)  # rules-spec 3.1 G1 without P2's own hand
    assert result["totals"] == {"1": 25 + 140, "2": -20}


def test_confirmed_wrong_rack_is_a_dead_hand_once() -> None:
    g = LiveGame("mjm")
    g.observe(table(("N", "N", "N"), (), flags=(Flag("wrong_rack", "P1-A", "no hand"),)))
    fid = g.flags[0]["id"]
    g.set_flag_status(fid, "confirmed")
    g.set_flag_status(fid, "confirmed")
    assert g.record == [{"type": "dead", "player": "1", "rack": "P1-A"}]
    assert LiveGame.from_json(g.to_json()).record == g.record


def test_unmatched_display_is_not_scored() -> None:
    assert mahjong_record(1, None, 2) is None
    assert mahjong_record(1, {"value": 25, "hand": "h"}, 1) == {
        "type": "mahjong", "player": "1", "value": 25, "jokerless": False, "hand": "h"}
