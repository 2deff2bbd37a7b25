"""Tile notation and the physical sets (rules-spec 1.1-1.2)."""

from __future__ import annotations

import pytest

from companion.rules.tiles import (
    ALL_CODES,
    AMERICAN,
    CHINESE,
    CHINESE_136,
    ROYALE_3,
    ROYALE_4,
    InvalidTileCode,
    Suit,
    Tile,
    format_tiles,
    is_major,
    parse_tiles,
    rank_of,
    sort_tiles,
    suit_of,
)


@pytest.mark.parametrize(
    ("tile_set", "total", "jokers", "flowers"),
    [(AMERICAN, 152, 8, 8), (ROYALE_4, 304, 16, 16), (ROYALE_3, 296, 12, 12), (CHINESE, 144, 0, 0), (CHINESE_136, 136, 0, 0)],
)
def test_set_sizes(tile_set, total, jokers, flowers) -> None:
    assert tile_set.total == total
    assert tile_set.copies_of("J") == jokers
    assert tile_set.copies_of("F") == flowers


def test_chinese_set_has_one_of_each_flower_and_season() -> None:
    assert [CHINESE.copies_of(c) for c in ("FL1", "FL4", "SE1", "SE4")] == [1, 1, 1, 1]


def test_parse_is_case_insensitive_and_canonical() -> None:
    assert parse_tiles("5d j n rd fl2 bk") == ["5D", "J", "N", "RD", "FL2", "BK"]
    assert format_tiles(parse_tiles("5d  gd\tse4")) == "5D GD SE4"


@pytest.mark.parametrize("bad", ["0B", "10C", "X", "FL5", "JJ", "5"])
def test_invalid_codes_name_the_input(bad: str) -> None:
    with pytest.raises(InvalidTileCode, match=repr(bad)):
        parse_tiles(f"1B {bad} 2B")


def test_tile_properties() -> None:
    assert suit_of("7C") is Suit.CRAKS and rank_of("7C") == 7
    assert suit_of("RD") is None and rank_of("N") is None
    assert Suit.DOTS.dragon == "WD" and Suit.CRAKS.dragon == "RD" and Suit.BAMS.dragon == "GD"
    assert is_major("9B") and is_major("E") and not is_major("5D")
    assert Tile.parse("gd").code == "GD"
    with pytest.raises(InvalidTileCode):
        Tile("ZZ")


def test_sort_order_is_the_notation_order() -> None:
    assert sort_tiles(["J", "N", "1D", "9B", "1B", "RD"]) == ["1B", "9B", "1D", "N", "RD", "J"]
    assert len(set(ALL_CODES)) == len(ALL_CODES) == 34 + 1 + 8 + 2


def test_over_limit_counts_only_excess() -> None:
    assert AMERICAN.over_limit(["5D"] * 5 + ["J"] * 8 + ["BK"] * 40) == {"5D": 5}
    assert AMERICAN.over_limit(["5D"] * 4) == {}
