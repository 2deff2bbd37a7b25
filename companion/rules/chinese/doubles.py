"""The doubles table of seed 004 as a catalogue of small rules (winner only).

Each rule returns the doubles it earns as :class:`Item` values (name, factor); the scorer
multiplies the winner's points by every factor.
"""

from __future__ import annotations

from collections.abc import Callable

from companion.rules.chinese.arrangement import Arrangement, Item
from companion.rules.chinese.hand import SEAT_NUMBER
from companion.rules.tiles import (
    CHINESE_FLOWERS,
    DRAGONS,
    SEASONS,
    is_honour,
    is_major,
    is_terminal,
    suit_of,
)

DoubleRule = Callable[[Arrangement], list[Item]]


def dragon_sets(arr: Arrangement) -> list[Item]:
    return [Item(f"pung/kong of dragons {m.tile}", 2) for m in arr.sets if m.is_set and m.tile in DRAGONS]


def own_wind_sets(arr: Arrangement) -> list[Item]:
    return [Item(f"pung/kong of own wind {m.tile}", 2) for m in arr.sets
            if m.is_set and m.tile == arr.hand.seat]


def prevailing_wind_sets(arr: Arrangement) -> list[Item]:
    """[interp] stacks with the own-wind double when seat and prevailing wind are the same."""
    return [Item(f"pung/kong of prevailing wind {m.tile}", 2) for m in arr.sets
            if m.is_set and m.tile == arr.hand.prevailing]


def concealment(arr: Arrangement) -> list[Item]:
    """Fully concealed x4 (self-drawn), else all but the last tile concealed x2; exclusive."""
    if arr.hand.has_exposed:
        return []
    if arr.hand.self_drawn:
        return [Item("fully concealed", 4)]
    return [Item("all but last tile concealed", 2)]


def no_chows(arr: Arrangement) -> list[Item]:
    return [] if any(m.kind == "chow" for m in arr.sets) else [Item("no chows", 2)]


def _suits(arr: Arrangement) -> set[object]:
    return {suit_of(t) for t in arr.tiles if suit_of(t) is not None}


def _pure(arr: Arrangement) -> bool:
    honours = any(is_honour(t) for t in arr.tiles)
    suits = _suits(arr)
    one_suit = len(suits) == 1 and not honours
    return one_suit or not suits or all(is_terminal(t) for t in arr.tiles)


def one_suit_and_honours(arr: Arrangement) -> list[Item]:
    """[interp] exactly one suit and at least one honour."""
    if len(_suits(arr)) == 1 and any(is_honour(t) for t in arr.tiles):
        return [Item("one suit and honours", 2)]
    return []


def pure(arr: Arrangement) -> list[Item]:
    return [Item("only one suit, only honours or only terminals", 8)] if _pure(arr) else []


def only_major(arr: Arrangement) -> list[Item]:
    """Not cumulative with the x8 of the previous rule."""
    if all(is_major(t) for t in arr.tiles) and not _pure(arr):
        return [Item("only major tiles", 2)]
    return []


def only_minor(arr: Arrangement) -> list[Item]:
    return [Item("only minor tiles", 2)] if not any(is_major(t) for t in arr.tiles) else []


def _bouquets(arr: Arrangement) -> list[tuple[str, ...]]:
    return [group for group in (CHINESE_FLOWERS, SEASONS) if set(group) <= set(arr.hand.flowers)]


def bouquet(arr: Arrangement) -> list[Item]:
    return [Item(f"all four {'flowers' if g == CHINESE_FLOWERS else 'seasons'}", 16) for g in _bouquets(arr)]


def own_and_prevailing_flowers(arr: Arrangement) -> list[Item]:
    """[interp] x2 per qualifying tile; tiles inside a complete bouquet earn only the x16."""
    in_bouquet = {t for g in _bouquets(arr) for t in g}
    items: list[Item] = []
    for f in arr.hand.flowers:
        if f in in_bouquet:
            continue
        number = int(f[-1])
        if number == SEAT_NUMBER[arr.hand.seat]:
            items.append(Item(f"own flower or season {f}", 2))
        if number == SEAT_NUMBER[arr.hand.prevailing]:
            items.append(Item(f"prevailing flower or season {f}", 2))
    return items


def special_wins(arr: Arrangement) -> list[Item]:
    h = arr.hand
    wins = [(h.loose_tile, "going out on a loose tile"), (h.last_tile, "going out on the last tile"),
            (h.robbing_kong, "robbing a kong")]
    return [Item(name, 2) for flag, name in wins if flag]


CATALOGUE: tuple[DoubleRule, ...] = (
    dragon_sets, own_wind_sets, prevailing_wind_sets, concealment, no_chows, one_suit_and_honours,
    pure, only_major, only_minor, own_and_prevailing_flowers, bouquet, special_wins,
)


def doubles(arr: Arrangement) -> list[Item]:
    return [item for rule in CATALOGUE for item in rule(arr)]
