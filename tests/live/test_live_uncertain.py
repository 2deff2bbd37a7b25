"""Never a dead hand on an uncertain reading; a player's correction makes the rack judgeable again."""

from __future__ import annotations

from dataclasses import replace

from companion.live_game import LiveGame
from companion.live_rules import DEFAULT_CARD, RackRules
from companion.table import Flag, TableObservation, ZoneReading

# a kong of East and a pung of red dragons: on the shipped card, no hand uses both
DEAD = (("E", "E", "E", "E"), ("RD", "RD", "RD"))


def _rack(exposures: tuple[tuple[str, ...], ...], uncertain: tuple[int, ...] = ()) -> TableObservation:
    tiles = tuple(t for e in exposures for t in e)
    zone = ZoneReading("P1-A", "rack", tiles, exposures, face_down=20, player=1, hand="A",
                       uncertain=uncertain)
    flags = (Flag("unreadable", "P1-A", "too uncertain"),) if uncertain else ()
    return TableObservation({"P1-A": zone}, "fresh", flags)


def _kinds(obs: TableObservation) -> list[str]:
    return sorted(f.kind for f in obs.flags)


def test_dead_exposure_is_flagged_when_read_with_confidence() -> None:
    rules = RackRules.load(DEFAULT_CARD)
    assert rules is not None
    assert _kinds(rules.flags(_rack(DEAD))) == ["wrong_rack"]


def test_uncertain_rack_is_never_called_dead() -> None:
    rules = RackRules.load(DEFAULT_CARD)
    assert rules is not None
    assert _kinds(rules.flags(_rack(DEAD, uncertain=(5,)))) == ["unreadable"]


def test_correcting_the_uncertain_tile_lets_the_rules_judge() -> None:
    rules = RackRules.load(DEFAULT_CARD)
    assert rules is not None
    game = LiveGame(checker=rules.flags)
    game.observe(_rack((DEAD[0], ("RD", "GD", "RD")), uncertain=(5,)))
    assert game.last is not None and _kinds(game.last) == ["unreadable"]
    game.correct("P1-A", 5, "RD")
    game.reapply()
    assert game.last.zones["P1-A"].uncertain == ()
    assert _kinds(game.last) == ["wrong_rack"]


def test_a_correction_does_not_judge_a_player_whose_count_is_off() -> None:
    """The reader held the rack back because the player's tiles do not add up (a tile missed):
    correcting the uncertain tile must not let the rules call the hand dead."""
    rules = RackRules.load(DEFAULT_CARD)
    assert rules is not None
    game = LiveGame(checker=rules.flags)
    obs = _rack((DEAD[0], ("RD", "GD", "RD")), uncertain=(5,))
    zone = replace(obs.zones["P1-A"], confidence=(0.9,) * 5 + (0.4, 0.9), own_confidence=(0.9,) * 5 + (0.3, 0.9))
    count = Flag("unreadable", "P1-A", "P1-A: not called dead while player 1 shows 25 tiles", cause="count")
    game.observe(TableObservation({"P1-A": zone}, "fresh", obs.flags + (count,)))
    game.correct("P1-A", 5, "RD")
    game.reapply()
    assert game.last is not None and game.last.zones["P1-A"].uncertain == ()
    assert _kinds(game.last) == ["unreadable"] and "25 tiles" in game.last.flags[0].message
    assert game.last.zones["P1-A"].confidence[5] == 1.0  # the player's word is certain
    assert game.last.zones["P1-A"].own_confidence == (0.9,) * 5 + (1.0, 0.9)  # also for a copy count


def test_a_dead_call_on_every_reading_is_judged_again_after_a_correction() -> None:
    """The reader called a doubtful rack dead because each plausible reading of its uncertain
    tile was dead.  Once the player corrects a tile of it the call is void: a rack still holding
    an uncertain tile is left unjudged, and a rack the player has made certain is judged again."""
    rules = RackRules.load(DEFAULT_CARD)
    assert rules is not None
    game = LiveGame(checker=rules.flags)
    obs = _rack(DEAD, uncertain=(5,))
    other = (DEAD[0], ("RD", "GD", "RD"))
    zone = replace(obs.zones["P1-A"], readings=(DEAD, other))
    called = Flag("wrong_rack", "P1-A", "P1-A: hand is dead on every reading")
    game.observe(TableObservation({"P1-A": zone}, "fresh", (called,)))
    assert game.last is not None and _kinds(game.last) == ["wrong_rack"]
    game.correct("P1-A", 3, "E")  # the player confirms a sure tile: the doubtful one is left
    game.reapply()
    assert _kinds(game.last) == ["unreadable"] and "#6 (read RD)" in game.last.flags[0].message
    assert game.last.zones["P1-A"].readings == (DEAD, other)  # both read tile 3 as E
    game.correct("P1-A", 5, "RD")
    game.reapply()
    assert game.last.zones["P1-A"].readings == (DEAD,) and game.last.zones["P1-A"].uncertain == ()
    assert _kinds(game.last) == ["wrong_rack"] and game.last.flags[0].message != called.message


def test_a_rack_held_back_for_a_weak_frame_is_judged_once_its_weak_tiles_are_corrected() -> None:
    """The reader held every rack back because most of the frame read weakly: the rules do not
    judge the rack, until the player has corrected each weak tile of it."""
    rules = RackRules.load(DEFAULT_CARD)
    assert rules is not None
    game = LiveGame(checker=rules.flags)
    obs = _rack((DEAD[0], ("RD", "GD", "RD")), uncertain=(5,))
    frame = Flag("unreadable", "P1-A", "P1-A: 9 of the 16 face-up tiles in view read weakly", cause="frame")
    game.observe(TableObservation(obs.zones, "fresh", obs.flags + (frame,)))
    assert game.last is not None and _kinds(game.last) == ["unreadable", "unreadable"]
    game.correct("P1-A", 5, "RD")
    game.reapply()
    assert _kinds(game.last) == ["wrong_rack"]


def test_a_correction_to_a_tile_a_reading_held_as_any_tile_keeps_that_reading() -> None:
    """A tile read as almost anything appears in the readings as WILD ("some other tile"): a
    player's correction to a code no reading names keeps those readings, with the code put in;
    to a code one names, only the readings that name it."""
    from companion.table_decode import WILD

    obs = _rack(DEAD, uncertain=(5,))
    wild = (DEAD[0], ("RD", WILD, "RD"))
    other = (DEAD[0], ("RD", "J", "RD"))
    zone = replace(obs.zones["P1-A"], readings=(DEAD, wild, other))
    for code, kept in (("N", ((DEAD[0], ("RD", "N", "RD")),)), ("J", (other,))):
        game = LiveGame()
        game.observe(TableObservation({"P1-A": zone}, "fresh", ()))
        game.correct("P1-A", 5, code)
        game.reapply()
        assert game.last is not None and game.last.zones["P1-A"].readings == kept


def test_a_rack_the_second_reading_held_back_is_judged_on_the_players_word() -> None:
    """The second table classifier did not find a sure rack dead (cause ``check``): once the
    player corrects a tile of it, their word stands for both readings and the rules judge it."""
    rules = RackRules.load(DEFAULT_CARD)
    assert rules is not None
    game = LiveGame(checker=rules.flags)
    doubt = Flag("unreadable", "P1-A", "P1-A: not judged: a second reading of its tiles does not find the hand dead",
                 cause="check")
    game.observe(TableObservation(_rack(DEAD).zones, "fresh", (doubt,)))
    assert game.last is not None and _kinds(game.last) == ["unreadable"]
    game.correct("P1-A", 4, "RD")  # the player confirms the pung of red dragons
    game.reapply()
    assert _kinds(game.last) == ["wrong_rack"]
