"""Events from differences between stable observations."""

from __future__ import annotations

from companion.live_events import GameEvent, diff
from companion.table import Flag, TableObservation, ZoneReading


def rack(name: str, *exposures: tuple[str, ...], player: int = 1) -> ZoneReading:
    tiles = tuple(t for e in exposures for t in e)
    return ZoneReading(name, "rack", tiles, tuple(exposures), player=player)


def table(*zones: ZoneReading, flags: tuple[Flag, ...] = (), mahjong: dict | None = None) -> TableObservation:
    return TableObservation({z.name: z for z in zones}, "fresh", flags, mahjong or {})


def kinds(events: list[GameEvent]) -> list[tuple[str, tuple[str, ...]]]:
    return [(e.kind, e.tiles) for e in events]


def test_new_discards_are_a_multiset_difference() -> None:
    a = table(ZoneReading("discards", "discards", ("3C", "W")))
    b = table(ZoneReading("discards", "discards", ("W", "3C", "3C")))
    assert kinds(diff(a, b)) == [("discard", ("3C",))]
    assert diff(b, b) == []


def test_exposure_joker_exchange_and_removal() -> None:
    pung, kong = ("N", "N", "N"), ("5D", "J", "5D", "5D")
    a = table(rack("P1-A", pung))
    b = table(rack("P1-A", pung, kong))
    assert kinds(diff(a, b)) == [("exposure", kong)]
    c = table(rack("P1-A", pung, ("5D", "5D", "5D", "5D")))
    ev = diff(b, c)
    assert kinds(ev) == [("joker_exchange", ("5D", "5D", "5D", "5D"))]
    assert "5D" in ev[0].message
    d = table(rack("P1-A", ("5D", "5D", "5D", "5D")))
    assert kinds(diff(c, d)) == [("tile_removed", pung)]


def test_first_view_reports_what_is_already_there() -> None:
    ev = diff(None, table(rack("P2-B", ("E", "E", "E"), player=2)))
    assert [(e.kind, e.player, e.zone) for e in ev] == [("exposure", 2, "P2-B")]


def test_mahjong_and_new_flags() -> None:
    hand = ("1B",) * 14
    a = table(rack("P1-A", hand))
    b = table(rack("P1-A", hand), flags=(Flag("wrong_rack", "P1-A", "no hand"),),
              mahjong={"P1-A": {"hand": "ln5", "value": 25}})
    ev = diff(a, b)
    assert [e.kind for e in ev] == ["mahjong", "flag"]
    assert "ln5" in ev[0].message and ev[1].message.startswith("wrong_rack")
    assert diff(b, b) == []


def test_event_json_round_trip() -> None:
    e = GameEvent("discard", "discards", 2, ("9C",), "player 2 discarded 9C", 12.5)
    assert GameEvent.from_json(e.to_json()) == e
