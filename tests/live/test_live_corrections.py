"""A tile the camera missed added by the player, and one it made up taken out: the rack is judged
again on its tiles, its player's count too, and a Mah Jongg display so put right is scored."""

from __future__ import annotations

from dataclasses import replace

from companion.live_corrections import ZoneEdit, edit_zone
from companion.live_game import LiveGame
from companion.live_rules import DEFAULT_CARD, RackRules
from companion.rules.tiles import AMERICAN
from companion.rules.variants import get_variant
from companion.table import Flag, TableObservation, ZoneReading
from companion.table_flags import RuleContext, evaluate
from companion.table_guards import guard_dead_calls

# "Tea Garden" (ev1) of the shipped card: FFF 22g 444g 66r 8888r
TEA = (("F", "F", "F"), ("2B", "2B"), ("4B", "4B", "4B"), ("6C", "6C"), ("8C", "8C", "8C", "8C"))
SHORT = (*TEA[:4], ("8C", "8C", "8C"))  # the kong's last tile missed


def _rules() -> RackRules:
    rules = RackRules.load(DEFAULT_CARD)
    assert rules is not None
    return rules


def _seen(p1a: tuple[tuple[str, ...], ...], p1b_down: int = 13, p2a: tuple[tuple[str, ...], ...] = (),
          p2a_down: int | None = None) -> TableObservation:
    """A frame as the table reader judges it (rules, then its count guard)."""
    def rack(name: str, exps: tuple[tuple[str, ...], ...], down: int, player: int) -> ZoneReading:
        tiles = tuple(t for e in exps for t in e)
        conf = (0.99,) * len(tiles)
        return ZoneReading(name, "rack", tiles, exps, down, player, name[-1], confidence=conf, own_confidence=conf)
    zones = {"P1-A": rack("P1-A", p1a, 0, 1), "P1-B": rack("P1-B", (), p1b_down, 1),
             "P2-A": rack("P2-A", p2a, 14 - sum(map(len, p2a)) if p2a_down is None else p2a_down, 2),
             "P2-B": rack("P2-B", (), 13, 2)}
    ctx = RuleContext(get_variant("mjm"), AMERICAN, _rules().card)
    flags, mahjong = evaluate(zones, ctx)
    return TableObservation(zones, "fresh", tuple(guard_dead_calls(zones, flags, ctx)),
                            {n: e for n, e in mahjong.items() if e})


def _game(seen: TableObservation) -> LiveGame:
    game = LiveGame("mjm", _rules().flags)
    game.observe(seen)
    return game


def _flags(game: LiveGame, zone: str = "P1-A") -> list[tuple[str, str]]:
    assert game.last is not None
    return sorted((f.kind, f.cause) for f in game.last.flags if f.zone == zone)


def test_an_edit_adds_a_tile_to_the_exposure_it_follows_and_takes_one_out() -> None:
    tiles = tuple(t for e in SHORT for t in e)
    z = ZoneReading("P1-A", "rack", tiles, SHORT, uncertain=(12,), confidence=(0.9,) * 12 + (0.6,),
                    readings=(SHORT, (*SHORT[:4], ("8C", "8C", "9C"))))
    got = edit_zone(z, ZoneEdit(tiles, frozenset({0}), ((12, "8C", False), (-1, "J", False))))
    assert got.exposures == (("J", "F", "F"), ("2B", "2B"), ("4B", "4B", "4B"), ("6C", "6C"), ("8C", "8C", "8C", "8C"))
    assert got.uncertain == (12,)  # the weak tile keeps its place among the tiles
    assert got.confidence[0] == 1.0 and got.confidence[12] == 0.6 and got.confidence[13] == 1.0
    assert [r[-1] for r in got.readings] == [("8C", "8C", "8C", "8C"), ("8C", "8C", "9C", "8C")]
    pair = edit_zone(z, ZoneEdit(tiles, frozenset({3, 4})))
    assert pair.exposures == (("F", "F", "F"), ("4B", "4B", "4B"), ("6C", "6C"), ("8C", "8C", "8C"))


def test_an_added_tile_may_start_an_exposure_which_the_tiles_added_after_it_join() -> None:
    tiles = tuple(t for e in SHORT for t in e)
    z = ZoneReading("P1-A", "rack", tiles, SHORT, readings=(SHORT,))
    two = ((4, "5D", True), (4, "5D", False), (12, "J", True))
    got = edit_zone(z, ZoneEdit(tiles, frozenset(), two))
    assert got.exposures == (("F", "F", "F"), ("2B", "2B"), ("5D", "5D"), ("4B", "4B", "4B"), ("6C", "6C"),
                             ("8C", "8C", "8C"), ("J",))
    assert got.readings == (got.exposures,)
    # one put first, before the camera's first tile, is an exposure of its own too
    first = edit_zone(z, ZoneEdit(tiles, frozenset(), ((-1, "J", True),)))
    assert first.exposures[:2] == (("J",), ("F", "F", "F"))


def test_a_rack_missing_a_whole_exposure_is_judged_once_the_player_adds_it_as_one() -> None:
    """P2-A read ``F F F`` with the pung of 4 Bams beside it missed: its player three tiles short
    (a count hold).  Added after the flowers in their exposure, the six tiles make no group;
    added as an exposure of their own, the rack is judged alive (the Tea Garden's start), through a
    save and load.  A game saved before a tile could start an exposure loads as before."""
    game = _game(_seen(SHORT, p2a=(TEA[0],), p2a_down=8))
    assert ("unreadable", "count") in _flags(game, "P2-A")
    game.act("add", "P2-A", 2, "4B")
    for k in (3, 4):
        game.add_tile("P2-A", k, "4B")
    game.reapply()
    assert game.last is not None and game.last.zones["P2-A"].exposures == (("F", "F", "F", "4B", "4B", "4B"),)
    assert _flags(game, "P2-A") == [("unreadable", "")]  # a group of six: no exposure
    game.restore("P2-A")
    game.act("add_new", "P2-A", 2, "4B")
    for k in (3, 4):
        game.act("add", "P2-A", k, "4B")
    game.reapply()
    assert game.last.zones["P2-A"].exposures == (TEA[0], TEA[2]) and _flags(game, "P2-A") == []
    saved = game.to_json()
    again = LiveGame.from_json(saved, checker=_rules().flags)
    again.reapply()
    assert again.last is not None and again.last.zones["P2-A"].exposures == (TEA[0], TEA[2])
    old = [item[:4] + [[a[:2] for a in item[4]]] if item[1:2] == ["edit"] else item for item in saved["corrections"]]
    assert old != saved["corrections"]
    before = LiveGame.from_json({**saved, "corrections": old}, checker=_rules().flags)
    before.reapply()
    assert before.last is not None and before.last.zones["P2-A"].exposures == (("F", "F", "F", "4B", "4B", "4B"),)


def test_a_display_read_short_of_a_tile_is_scored_once_the_player_adds_it() -> None:
    """13 tiles read: a rack in play with two pairs exposed (two rule flags) and its player one
    tile short (a count flag, which holds it).  The player adds the missing 8 Crak after the last:
    the Tea Garden is scored on their word, and the count and pair flags go with the tile."""
    game = _game(_seen(SHORT))
    assert ("tile_count", "total") in _flags(game) and ("unreadable", "count") in _flags(game)
    assert game.last is not None and not game.last.mahjong.get("P1-A")
    game.add_tile("P1-A", 12, "8C")
    events = game.reapply()
    assert _flags(game) == []
    assert game.last.zones["P1-A"].exposures == TEA
    assert game.last.mahjong["P1-A"] is not None and game.last.mahjong["P1-A"]["hand"] == "ev1"
    assert [(r["hand"], r["rack"]) for r in game.record] == [("ev1", "P1-A")]
    assert [e.kind for e in events] == ["mahjong"]
    view = game.view()["racks"][0]
    assert [(t["code"], t["added"], t["raw"]) for t in view["tiles"][-2:]] == [("8C", False, "8C"), ("8C", True, None)]
    # saved and loaded, the edit holds; taken back, the rack is as the camera read it
    again = LiveGame.from_json(game.to_json(), checker=_rules().flags)
    again.reapply()
    assert again.last is not None and again.last.mahjong["P1-A"] is not None
    game.remove_tile("P1-A", 13)
    game.reapply()
    assert ("unreadable", "count") in _flags(game) and game.record == [] and len(game.corrections) == 0


def test_a_tile_the_camera_made_up_taken_out_of_a_display_scores_it() -> None:
    """A phantom joker after the kong makes 15 tiles: too many for a display (a count flag on the
    rack).  Taken out, the display is the Tea Garden."""
    game = _game(_seen((*TEA[:4], ("8C", "8C", "8C", "8C", "J"))))
    assert ("tile_count", "") in _flags(game)
    game.remove_tile("P1-A", 14)
    game.reapply()
    assert _flags(game) == [] and game.last is not None and game.last.mahjong["P1-A"]["hand"] == "ev1"
    assert game.view()["racks"][0]["removed"] == ["J"]
    game.restore("P1-A")
    game.reapply()
    assert ("tile_count", "") in _flags(game) and game.record == []
    # a phantom fifth 8 Crak: five in view, a copies flag too, which goes with it
    fifth = _game(_seen((*TEA[:4], ("8C",) * 5)))
    assert ("tile_count", "copies") in _flags(fifth)
    fifth.remove_tile("P1-A", 14)
    fifth.reapply()
    assert _flags(fifth) == [] and fifth.last is not None and fifth.last.mahjong["P1-A"]["hand"] == "ev1"


def test_a_rack_in_play_given_its_missed_tile_is_judged_again() -> None:
    """P2-A read ``5D J``: a joker in a pair, flagged, and a player short.  The player adds the 5 Dot
    the camera missed: a pung with a joker, no flag; a tile added that makes it dead is called dead."""
    seen = _seen(SHORT, p2a=(("5D", "J"),))
    game = _game(seen)
    assert ("joker", "small") in _flags(game, "P2-A")
    game.add_tile("P2-A", 1, "5D")
    game.reapply()
    assert _flags(game, "P2-A") == []
    assert game.last is not None and game.last.zones["P2-A"].exposures == (("5D", "J", "5D"),)
    game.correct("P2-A", 2, "5C")  # the added tile is put right as any other: now a pung of no suit
    game.reapply()
    assert game.last.zones["P2-A"].tiles == ("5D", "J", "5C") and _flags(game, "P2-A") != []


def test_a_rack_in_play_edited_in_a_frame_held_whole_stays_held() -> None:
    """Most of the frame read weakly (cause ``frame``): a tile the player takes out of a rack in
    play lifts no hold and raises no rule flag there, since the rest of its tiles are the camera's
    weak reading (a display, judged on the player's word, is another matter: the sixty-second
    session).  The same edit in a frame judged raises the flag."""
    seen = _seen(SHORT, p2a=(("5D", "J", "5D"),))
    hold = tuple(Flag("unreadable", n, f"{n}: 20 of the 40 face-up tiles in view read weakly", cause="frame")
                 for n in ("P1-A", "P2-A"))
    for frame, want in ((replace(seen, flags=hold, mahjong={}), [("unreadable", "frame")]), (seen, [("joker", "small")])):
        game = _game(frame)
        game.remove_tile("P2-A", 2)  # a joker in a pair left
        game.reapply()
        assert game.last is not None and game.last.zones["P2-A"].exposures == (("5D", "J"),)
        assert [k for k in _flags(game, "P2-A") if k[1] not in ("count", "total")] == want


def test_the_player_s_edit_is_forgotten_once_the_camera_reads_the_rack_otherwise() -> None:
    """The camera later sees the tile it had missed: the player's addition is not added twice,
    and the display, scored once, stays scored once."""
    game = _game(_seen(SHORT))
    game.add_tile("P1-A", 12, "8C")
    game.reapply()
    game.observe(_seen(TEA, p1b_down=13))
    assert game.last is not None and game.last.zones["P1-A"].exposures == TEA
    assert len(game.corrections) == 0 and [r["hand"] for r in game.record] == ["ev1"]


def test_bad_edits_are_refused_by_name() -> None:
    game = _game(_seen(SHORT))
    for bad in (lambda: game.add_tile("P1-A", 13, "8C"), lambda: game.remove_tile("P9-A", 0),
                lambda: game.act("remove", "P1-A", 40)):
        try:
            bad()
        except KeyError as exc:
            assert "P1-A" in str(exc) or "P9-A" in str(exc)
        else:
            raise AssertionError("an edit of no tile was taken")
    for bad_value in (lambda: game.add_tile("P1-A", 0, "ZZ"), lambda: game.act("swap", "P1-A", 0)):
        try:
            bad_value()
        except ValueError:
            pass
        else:
            raise AssertionError("a bad code or action was taken")
    assert len(game.corrections) == 0


def test_a_count_hold_says_what_it_withholds_on_a_display_and_on_a_rack_in_play() -> None:
    """A player's count off: a display is still scored, so its hold says a call in error waits,
    not that the rack is not judged; a rack in play's hold says a dead call waits."""
    seen = _seen(TEA, p1b_down=16, p2a=(("5D", "5D", "5D"),), p2a_down=9)
    why = {f.zone: f.message for f in seen.flags if f.cause == "count"}
    assert seen.mahjong["P1-A"] is not None and seen.mahjong["P1-A"]["hand"] == "ev1"
    assert why == {"P1-A": "P1-A: a Mah Jongg here is not called in error while player 1 shows 30 tiles, not 27 or 28 "
                           "(a tile may be hidden or misread)",
                   "P2-A": "P2-A: not called dead while player 2 shows 25 tiles, not 27 or 28 "
                           "(a tile may be hidden or misread)"}
