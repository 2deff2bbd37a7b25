"""Grouping rack tiles into exposures: pure cases, then rendered racks with gaps and touching runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from table_helpers import exps, flags_of, player, read, table

from companion.rules.card import load_card
from companion.rules.tiles import parse_tiles
from companion.table_group import (
    SeenTile,
    group_exposures,
    grouping_options,
    merge_chows,
    split_kinds,
)
from vision.render import RackScene


@pytest.mark.parametrize(
    ("codes", "groups"),
    [
        ("5D 5D 5D", [[0, 1, 2]]),
        ("5D 5D 5D 8C 8C", [[0, 1, 2], [3, 4]]),
        ("5D 5D J 8C 8C 8C", [[0, 1, 2], [3, 4, 5]]),  # the short group keeps the joker
        ("5D 5D 5D J 8C 8C", [[0, 1, 2], [3, 4, 5]]),  # a full pung passes it on
        ("J J 5D", [[0, 1, 2]]),
        ("5D J J", [[0, 1, 2]]),
        ("J", [[0]]),
    ],
)
def test_split_kinds(codes: str, groups: list[list[int]]) -> None:
    assert split_kinds(parse_tiles(codes)) == groups


def test_chows_merge_only_sequences_of_one_suit() -> None:
    codes = parse_tiles("1B 2B 3B 4C 5D 6D")
    assert merge_chows(codes, split_kinds(codes)) == [[0, 1, 2], [3], [4], [5]]


def _row(codes: str, gaps: list[float]) -> list[SeenTile]:
    out, x = [], 0.0
    for code, gap in zip(parse_tiles(codes), [0.0, *gaps], strict=True):
        x += gap + 24.0
        out.append(SeenTile(code, x, 0.0, 24.0, 32.0))
    return out


def test_gap_splits_same_kind_and_order_follows_the_rack() -> None:
    tiles = _row("2C 2C 2C 2C J J", [1, 1, 12, 1, 1])
    assert group_exposures(tiles) == [[0, 1, 2], [3, 4, 5]]
    assert group_exposures(list(reversed(tiles))) == [[5, 4, 3], [2, 1, 0]]


@pytest.mark.parametrize(
    ("codes", "gaps", "options"),
    [
        # a kong whose middle gap measured 7 mm (the localiser's error): one kind, one exposure,
        # and the cut reading is kept as an option for the rules to weigh
        ("6B 6B 6B 6B", [1, 7, 1], [[[0, 1, 2, 3]], [[0, 1], [2, 3]]]),
        ("5B 5B 5B J", [1, 1, 7], [[[0, 1, 2, 3]], [[0, 1, 2], [3]]]),  # a joker alone is no exposure
        ("5B 5B 5B 7D 7D 7D", [1, 1, 7, 1, 1], [[[0, 1, 2], [3, 4, 5]]]),  # a change of kind cuts
        ("6B 6B 6B 6B", [1, 20, 1], [[[0, 1], [2, 3]]]),  # past 1.6 widths: apart, whatever the kinds
        # 1.5 widths (a 12 mm gap): apart, unless a side is too short to be an exposure alone
        ("6B 6B 6B 6B", [1, 1, 12], [[[0, 1, 2, 3]], [[0, 1, 2], [3]]]),
        ("5B 5B 5B 5B J J", [1, 1, 12, 1, 1], [[[0, 1, 2], [3, 4, 5]]]),
        ("6B 6B 6B 6B", [1, 2, 1], [[[0, 1, 2, 3]]]),  # below it: touching
    ],
)
def test_a_gap_in_the_soft_band_is_read_both_ways(codes: str, gaps: list[float], options: list[list[list[int]]]) -> None:
    assert grouping_options(_row(codes, gaps)) == options


def test_two_rows_are_read_separately() -> None:
    front = _row("N N N", [1, 1])
    back = [SeenTile(t.code, t.along, 34.0, 24.0, 32.0) for t in _row("E E E", [1, 1])]
    assert group_exposures(front + back) == [[0, 1, 2], [3, 4, 5]]


def test_rendered_gaps_and_touching_runs() -> None:
    p1 = {"P1-A": RackScene(exps("2C 2C 2C", "2C J J"), 5), "P1-B": RackScene(exps("5D 5D 5D", "J 8C 8C", "N N N N"), 5, touching=True)}
    obs = read(table(p1, player("P2", exps("W W W"), exps("6B 6B 6B 6B"))), count_backs=False)
    assert obs.zones["P1-A"].exposures == exps("2C 2C 2C", "2C J J")
    assert obs.zones["P1-B"].exposures == exps("5D 5D 5D", "J 8C 8C", "N N N N")
    # player 2 faces player 1: their reading order runs the other way across the image
    assert obs.zones["P2-A"].exposures == exps("W W W")
    assert obs.zones["P2-B"].exposures == exps("6B 6B 6B 6B")


def test_a_joker_at_the_seam_of_touching_exposures_goes_where_more_hands_can_use_it(tmp_path: Path) -> None:
    """``F F F F J 2B 2B 2B 2B`` laid touching: by default the joker joins the later group (the
    flowers already make a kong), but two hands of this card take a flower quint with a kong of
    2s and only one a flower kong with a quint of 2s, so the reader reads the quint of flowers."""
    card = tmp_path / "seam.mjcard"
    card.write_text('card "seam" copies=4\n'
                    'hand a1 "A1" : FFFFF 2222g 333r NN ; exposed ; 25\n'
                    'hand a2 "A2" : FFFFF 2222g 444r SS ; exposed ; 25\n'
                    'hand b1 "B1" : FFFF 22222g 333r NN ; exposed ; 25\n')
    rack = RackScene(exps("F F F F J", "2B 2B 2B 2B"), 5, touching=True)
    obs = read(table({"P1-A": rack, "P1-B": RackScene((), 13)}), card=load_card(card), count_backs=False)
    assert obs.zones["P1-A"].exposures == exps("F F F F J", "2B 2B 2B 2B")
    assert not flags_of(obs, "wrong_rack")
