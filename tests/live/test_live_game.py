"""The followed game: corrections, flags, discarder attribution, persistence round trip."""

from __future__ import annotations

import pytest

from companion.live_game import LiveGame, observation_from_json, observation_to_json
from companion.table import Flag, TableObservation, ZoneReading


def obs(p1: tuple[str, ...] = (), disc: tuple[str, ...] = (), down: tuple[int, int] = (27, 27),
        flags: tuple[Flag, ...] = ()) -> TableObservation:
    zones = {
        "P1-A": ZoneReading("P1-A", "rack", p1, (p1,) if p1 else (), face_down=down[0], player=1),
        "P2-A": ZoneReading("P2-A", "rack", (), (), face_down=down[1], player=2),
        "discards": ZoneReading("discards", "discards", disc),
    }
    return TableObservation(zones, "fresh", flags)


def test_correction_is_applied_and_forgotten_when_the_tile_moves() -> None:
    g = LiveGame()
    g.observe(obs(("N", "N", "W")))
    g.correct("P1-A", 2, "n")
    g.reapply()
    assert g.last is not None and g.last.zones["P1-A"].tiles == ("N", "N", "N")
    assert g.last.zones["P1-A"].exposures == (("N", "N", "N"),)
    assert [e.kind for e in g.log] == ["exposure"]  # a correction makes up no table event
    view = g.view()["racks"][0]["tiles"][2]
    assert view == {"index": 2, "code": "N", "raw": "W", "added": False, "corrected": True, "uncertain": False}
    g.observe(obs(("N", "N", "S")))  # a different tile now lies there
    assert g.last.zones["P1-A"].tiles == ("N", "N", "S") and len(g.corrections) == 0


def test_correction_rejects_bad_codes_and_places() -> None:
    g = LiveGame()
    g.observe(obs(("N", "N", "N")))
    with pytest.raises(ValueError, match="XX"):
        g.correct("P1-A", 0, "XX")
    with pytest.raises(KeyError):
        g.correct("P1-A", 9, "N")
    with pytest.raises(KeyError):
        g.correct("nowhere", 0, "N")


def test_discarder_is_the_player_whose_tiles_went_down() -> None:
    g = LiveGame()
    g.observe(obs(down=(28, 27)))
    ev = g.observe(obs(disc=("3C",), down=(27, 27)))
    assert [(e.kind, e.player) for e in ev] == [("discard", 1)]
    ev = g.observe(obs(disc=("3C", "W"), down=(27, 27)))  # unseen draw: the other player
    assert ev[0].player == 2 and ev[0].message == "player 2 discarded W"


def test_rules_see_corrected_readings() -> None:
    def checker(o: TableObservation) -> TableObservation:
        bad = [n for n, z in o.zones.items() if "W" in z.tiles]
        return TableObservation(o.zones, o.homography, tuple(Flag("wrong_rack", n, "W seen") for n in bad))

    g = LiveGame(checker=checker)
    g.observe(obs(("N", "N", "W")))
    assert g.view()["racks"][0]["status"] == "dead"
    g.correct("P1-A", 2, "N")
    g.reapply()
    assert g.view()["racks"][0]["status"] == "alive"
    assert not g.view()["flags"][0]["active"]


def test_flags_keep_time_and_status_and_kill_the_rack() -> None:
    g = LiveGame()
    f = Flag("wrong_rack", "P1-A", "no hand fits")
    g.observe(obs(("N", "N", "N"), flags=(f,)), t=100.0)
    v = g.view()
    assert v["flags"][0]["t"] == 100.0 and v["flags"][0]["status"] == "open"
    assert v["racks"][0]["status"] == "dead"
    g.set_flag_status(v["flags"][0]["id"], "dismissed")
    assert g.view()["racks"][0]["status"] == "alive"
    with pytest.raises(ValueError):
        g.set_flag_status(1, "maybe")
    with pytest.raises(KeyError):
        g.set_flag_status(99, "confirmed")


def test_json_round_trip_resumes_the_same_view() -> None:
    g = LiveGame("grad")
    g.observe(obs(("N", "N", "W"), flags=(Flag("wrong_rack", "P1-A", "x"),)), t=5.0)
    g.correct("P1-A", 2, "N")
    g.reapply()
    h = LiveGame.from_json(g.to_json(), g.log)
    assert h.view() == g.view()
    o = obs(("1B", "1B", "1B"), disc=("9C",))
    assert observation_from_json(observation_to_json(o)) == o


def test_a_rack_left_for_its_weak_jokers_is_judged_again_on_the_players_word() -> None:
    """``J J J J`` read at 0.85 is not flagged as an exposure of only jokers but left to check
    (cause ``joker``); the player putting a tile right as a flower clears it, and confirming each
    tile a joker raises the joker flag the reader withheld."""
    from companion.table_exposures import exposure_flags

    tiles = ("J", "J", "J", "J")
    rack = ZoneReading("P1-A", "rack", tiles, (tiles,), face_down=23, player=1,
                       confidence=(0.95,) * 4, own_confidence=(0.85,) * 4)
    flags = tuple(exposure_flags(rack, chows=False))
    assert [(f.kind, f.cause) for f in flags] == [("unreadable", "joker")]
    seen = TableObservation({**obs().zones, "P1-A": rack}, "fresh", flags)

    def kinds(g: LiveGame) -> list[tuple[str, str]]:
        assert g.last is not None
        return [(f.kind, f.cause) for f in g.last.flags if f.zone == "P1-A"]

    flowers = LiveGame()
    flowers.observe(seen)
    flowers.correct("P1-A", 0, "F")
    flowers.reapply()
    assert kinds(flowers) == []  # F J J J: a flower group with jokers
    jokers = LiveGame()
    jokers.observe(seen)
    for i in range(3):
        jokers.correct("P1-A", i, "J")
        jokers.reapply()
        assert kinds(jokers) == [("unreadable", "joker")]  # one joker still read weakly
    jokers.correct("P1-A", 3, "J")
    jokers.reapply()
    assert [k for k, _ in kinds(jokers)] == ["joker"]
