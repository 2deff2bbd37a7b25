"""Grouping rack tiles into exposures: pure cases, then rendered racks with gaps and touching runs."""

from __future__ import annotations

import pytest
from table_helpers import exps, player, read, table

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
        ("6B 6B 6B 6B", [1, 12, 1], [[[0, 1], [2, 3]]]),  # past the band: apart, whatever the kinds
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
