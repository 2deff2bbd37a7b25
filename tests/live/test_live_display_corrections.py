"""A Mah Jongg display the player corrects is judged again as the table reader judges one: scored
on their word, or called in error, never called dead by its exposures' pairs; the score follows."""

from __future__ import annotations

from dataclasses import replace

from companion.live_game import LiveGame
from companion.live_rules import DEFAULT_CARD, RackRules
from companion.rules.tiles import AMERICAN
from companion.rules.variants import get_variant
from companion.table import Flag, TableObservation, ZoneReading
from companion.table_flags import RuleContext, evaluate

# "Tea Garden" (ev1) of the shipped card: FFF 22g 444g 66r 8888r
TEA = (("F", "F", "F"), ("2B", "2B"), ("4B", "4B", "4B"), ("6C", "6C"), ("8C", "8C", "8C", "8C"))
# "Even Ladder" (ev3): 222g 444g 666r 888r FF
LADDER = (("2B", "2B", "2B"), ("4B", "4B", "4B"), ("6C", "6C", "6C"), ("8C", "8C", "8C"), ("F", "F"))


def _rules() -> RackRules:
    rules = RackRules.load(DEFAULT_CARD)
    assert rules is not None
    return rules


def _table(display: ZoneReading, hold: tuple[Flag, ...] = ()) -> TableObservation:
    """The frame as the table reader judges it: ``display`` on P1-A, the rest of the racks bare."""
    zones = {"P1-A": display,
             "P1-B": ZoneReading("P1-B", "rack", (), (), face_down=13, player=1, hand="B"),
             "P2-A": ZoneReading("P2-A", "rack", (), (), face_down=14, player=2, hand="A"),
             "P2-B": ZoneReading("P2-B", "rack", (), (), face_down=13, player=2, hand="B")}
    ctx = RuleContext(get_variant("mjm"), AMERICAN, _rules().card)
    flags, mahjong = evaluate(zones, ctx)
    return TableObservation(zones, "fresh", tuple(flags) + hold, {n: e for n, e in mahjong.items() if e})


def _display(exposures: tuple[tuple[str, ...], ...], weak: dict[int, float],
             readings: tuple[tuple[tuple[str, ...], ...], ...] = ()) -> ZoneReading:
    tiles = tuple(t for e in exposures for t in e)
    conf = tuple(weak.get(i, 0.99) for i in range(len(tiles)))
    return ZoneReading("P1-A", "rack", tiles, exposures, player=1, hand="A",
                       uncertain=tuple(i for i, c in sorted(weak.items()) if c < 0.75),
                       confidence=conf, readings=readings, own_confidence=conf)


def _game(seen: TableObservation) -> LiveGame:
    game = LiveGame("mjm", _rules().flags)
    game.observe(seen)
    assert game.last is not None and not game.last.mahjong.get("P1-A")
    return game


def _kinds(game: LiveGame) -> list[str]:
    assert game.last is not None
    return sorted(f.kind for f in game.last.flags if f.zone == "P1-A")


def test_a_display_read_with_a_weak_tile_is_scored_once_the_player_puts_it_right() -> None:
    """``2B`` read weakly as ``3B``: the display matches no hand as read and is left to check.
    Corrected, it is the Tea Garden, scored and logged; not called dead for holding pairs."""
    read = (TEA[0], ("2B", "3B"), *TEA[2:])
    game = _game(_table(_display(read, {4: 0.6})))
    assert _kinds(game) == ["unreadable"]
    game.correct("P1-A", 4, "2B")
    events = game.reapply()
    assert _kinds(game) == []
    assert game.last is not None and game.last.mahjong["P1-A"] == {
        "hand": "ev1", "value": 50, "jokerless": True, "card_value": 25}
    assert [(r["type"], r["hand"], r["rack"]) for r in game.record] == [("mahjong", "ev1", "P1-A")]
    assert game.scores["1"] > 0
    assert [e.kind for e in events] == ["mahjong"] and game.log[-1] == events[0]
    assert game.reapply() == []  # scored once: judging again changes nothing


def test_a_display_whose_weak_tile_the_player_confirms_is_a_mahjong_in_error() -> None:
    read = (TEA[0], ("2B", "3B"), *TEA[2:])
    game = _game(_table(_display(read, {4: 0.6})))
    game.correct("P1-A", 4, "3B")
    game.reapply()
    assert _kinds(game) == ["wrong_rack"]
    assert game.last is not None and "Mah Jongg in error" in game.last.flags[0].message
    assert game.record == []


def test_a_scored_display_corrected_to_no_hand_takes_its_score_back() -> None:
    """Scored although a tile read weakly (its other reading makes no hand); the player says that
    tile is the other one: the Mah Jongg is in error and its score leaves the record."""
    other = (TEA[0], ("2B", "3B"), *TEA[2:])
    seen = _table(_display(TEA, {4: 0.6}, readings=(TEA, other)))
    assert seen.mahjong["P1-A"] is not None and seen.mahjong["P1-A"]["hand"] == "ev1"
    game = LiveGame("mjm", _rules().flags)
    game.observe(seen)
    assert [r["hand"] for r in game.record] == ["ev1"] and game.scores["1"] > 0
    game.correct("P1-A", 4, "3B")
    game.reapply()
    assert _kinds(game) == ["wrong_rack"] and game.record == [] and game.scores["1"] == 0


def test_a_display_left_for_weak_jokers_is_scored_when_the_player_makes_them_flowers() -> None:
    """The flower pair of the Even Ladder read as ``J J`` at 0.8: no hand as read, left to check
    (cause ``joker``), not called in error.  Put right as flowers, it is scored."""
    read = (*LADDER[:4], ("J", "J"))
    game = _game(_table(_display(read, {12: 0.8, 13: 0.8})))
    assert game.last is not None
    assert [(f.kind, f.cause) for f in game.last.flags] == [("unreadable", "joker")]
    game.correct("P1-A", 12, "F")
    game.correct("P1-A", 13, "F")
    game.reapply()
    assert _kinds(game) == [] and game.last.mahjong["P1-A"] is not None
    assert game.last.mahjong["P1-A"]["hand"] == "ev3"
    confirmed = _game(_table(_display(read, {12: 0.8, 13: 0.8})))
    confirmed.correct("P1-A", 12, "J")
    confirmed.correct("P1-A", 13, "J")
    confirmed.reapply()
    assert _kinds(confirmed) == ["joker", "wrong_rack"]  # a joker pair, and no hand


def test_a_display_held_for_its_players_count_is_scored_but_never_called_in_error() -> None:
    """A player's count off (cause ``count``) withholds a Mah Jongg-in-error call, as the table
    reader withholds it (a missed or phantom tile changes a group), but not a score: put right,
    the display is scored on the player's word, as the reader scores one read right under such a
    hold; confirmed as read, it makes no hand and is left unjudged.  The hold stays, and its cause
    survives the game being saved and loaded."""
    read = (TEA[0], ("2B", "3B"), *TEA[2:])
    hold = (Flag("unreadable", "P1-A", "P1-A: a Mah Jongg here is not called in error while player 1 shows 31 tiles", cause="count"),)
    game = _game(_table(_display(read, {4: 0.6}), hold))
    again = LiveGame.from_json(game.to_json(), checker=_rules().flags)
    for g in (game, again):
        g.correct("P1-A", 4, "2B")
        g.reapply()
        assert g.last is not None and [(f.kind, f.cause) for f in g.last.flags] == [("unreadable", "count")]
        assert g.last.mahjong["P1-A"] is not None and g.last.mahjong["P1-A"]["hand"] == "ev1"
        assert [(r["hand"], r["rack"]) for r in g.record] == [("ev1", "P1-A")]
    as_read = _game(_table(_display(read, {4: 0.6}), hold))
    as_read.correct("P1-A", 4, "3B")
    as_read.reapply()
    assert as_read.last is not None and [(f.kind, f.cause) for f in as_read.last.flags] == [("unreadable", "count")]
    assert not as_read.last.mahjong.get("P1-A") and as_read.record == []


def test_a_scored_display_corrected_to_another_score_is_scored_again_in_its_place() -> None:
    """The Tea Garden scored with a joker in its 444 pung (read weakly); the player says that tile
    is a 4 Bam: the same hand, now jokerless, for twice the points, in the same place of the record."""
    read = (TEA[0], TEA[1], ("4B", "4B", "J"), *TEA[3:])
    game = LiveGame("mjm", _rules().flags)
    game.observe(_table(_display(read, {7: 0.6})))
    assert [(r["hand"], r["jokerless"]) for r in game.record] == [("ev1", False)]
    before = game.scores["1"]
    game.correct("P1-A", 7, "4B")
    assert game.reapply() == []  # scored again, not a new Mah Jongg
    assert [(r["hand"], r["jokerless"], r["rack"]) for r in game.record] == [("ev1", True, "P1-A")]
    assert game.scores["1"] > before


def test_a_display_held_for_a_weak_frame_is_scored_once_the_player_confirms_a_tile() -> None:
    """Most of the frame's tiles read weakly, so nothing in it is judged (cause ``frame``) and the
    display, read right, is not scored.  The player confirms one of its tiles as read: it is judged
    on their word and scored; the frame's hold on the other racks stays."""
    why = "22 of the 44 face-up tiles in view read weakly, so this frame is not judged"
    hold = tuple(Flag("unreadable", n, f"{n}: {why}", cause="frame") for n in ("P1-A", "P2-A"))
    game = _game(replace(_table(_display(TEA, {})), flags=hold, mahjong={}))
    game.correct("P1-A", 0, "F")
    game.reapply()
    assert game.last is not None and game.last.mahjong["P1-A"] is not None
    assert game.last.mahjong["P1-A"]["hand"] == "ev1"
    assert [(f.zone, f.cause) for f in game.last.flags] == [("P2-A", "frame")]
    assert [(r["hand"], r["rack"]) for r in game.record] == [("ev1", "P1-A")]
