"""Limit hands by seed 004's formula: 14 tiles split into groups, at least one from block A, any
number from block B, at most one from block C.  Starred groups may repeat one of their tiles.
Seven (plain) pairs earn half the limit; a fully concealed limit hand earns twice.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import permutations

from companion.rules.tiles import DRAGONS, SUITS, WINDS, Suit, is_major, sort_key

HALF = "seven_pairs"


@dataclass(frozen=True)
class Group:
    """One concrete limit group: its block (A, B, C), name and tiles (sorted)."""

    block: str
    name: str
    tiles: tuple[str, ...]


def _n(rank: int, suit: Suit) -> str:
    return f"{rank}{suit.value}"


def _chow(rank: int, suit: Suit) -> list[str]:
    return [_n(rank + i, suit) for i in range(3)]


def _starred(block: str, name: str, tiles: list[str]) -> list[Group]:
    base = [Group(block, name, tuple(sorted(tiles, key=sort_key)))]
    extra = {tuple(sorted([*tiles, t], key=sort_key)) for t in set(tiles)}
    return base + [Group(block, name, ts) for ts in sorted(extra)]


def _block_a() -> list[Group]:
    groups: list[Group] = []
    for s in SUITS:
        for r in range(1, 8):
            groups.append(Group("A", "four_identical_chows", tuple(sorted(_chow(r, s) * 4, key=sort_key))))
        ends = [_n(1, s), _n(9, s)]
        groups.append(Group("A", "one_one_to_nine_nine_one_suit",
                            tuple(sorted(ends + [_n(r, s) for r in range(1, 10)], key=sort_key))))
        groups += _starred("A", "one_to_nine_one_suit", [_n(r, s) for r in range(1, 10)])
        groups += _starred("A", "two_to_eight_one_suit", [_n(r, s) for r in range(2, 9)])
    for r in range(1, 8):
        groups += _starred("A", "three_chows_same_sequence", [t for s in SUITS for t in _chow(r, s)])
    for a, b, c in permutations(SUITS):
        groups += _starred("A", "chows_123_456_789", _chow(1, a) + _chow(4, b) + _chow(7, c))
    groups += _starred("A", "pair_of_each_wind", [w for w in WINDS for _ in range(2)])
    groups += _starred("A", "one_of_each_wind_and_dragon", list(WINDS + DRAGONS))
    return groups


def _block_bc() -> list[Group]:
    groups = _starred("B", "one_of_each_terminal", [_n(r, s) for s in SUITS for r in (1, 9)])
    groups += _starred("B", "one_of_each_wind", list(WINDS))
    groups += _starred("B", "one_of_each_dragon", list(DRAGONS))
    majors = [_n(r, s) for s in SUITS for r in (1, 9)] + list(WINDS + DRAGONS)
    groups += [Group("B", "pung_of_major", (t, t, t)) for t in majors]
    groups += [Group("B", f"the_{r}_of_each_suit", tuple(_n(r, s) for s in SUITS)) for r in (1, 9)]
    groups += [Group("C", "pair_of_major", (t, t)) for t in majors]
    return groups


@lru_cache(maxsize=1)
def catalogue() -> tuple[Group, ...]:
    """Every concrete group of blocks A, B and C."""
    return tuple(_block_a() + _block_bc())


def _partitions(left: Counter[str], c_used: bool) -> Iterator[list[Group]]:
    remaining = sorted((t for t in left if left[t] > 0), key=sort_key)
    if not remaining:
        yield []
        return
    first = remaining[0]
    for g in catalogue():
        if first not in g.tiles or (g.block == "C" and c_used):
            continue
        need = Counter(g.tiles)
        if any(left[t] < n for t, n in need.items()):
            continue
        left.subtract(need)
        for rest in _partitions(left, c_used or g.block == "C"):
            yield [g, *rest]
        left.update(need)


def _seven_pairs(tiles: list[str], allow_repeat: bool) -> str | None:
    counts = Counter(tiles)
    if len(tiles) != 14 or any(n % 2 for n in counts.values()):
        return None
    if not allow_repeat and len(counts) != 7:
        return None
    if all(is_major(t) for t in tiles):
        return "seven_major_pairs"
    if not any(is_major(t) for t in tiles):
        return "seven_minor_pairs"
    return HALF


def limit_hand(tiles: list[str], allow_repeat_pairs: bool = False) -> tuple[str, float] | None:
    """The best limit reading of 14 tiles as (name, fraction of the limit), or None."""
    if len(tiles) != 14:
        return None
    best: tuple[str, float] | None = None
    pairs = _seven_pairs(tiles, allow_repeat_pairs)
    if pairs:
        best = (pairs, 0.5 if pairs == HALF else 1.0)
        if best[1] == 1.0:
            return best
    for parts in _partitions(Counter(tiles), False):
        if any(g.block == "A" for g in parts):
            ordered = sorted(parts, key=lambda g: (g.block, g.name))
            return (" + ".join(g.name for g in ordered), 1.0)
    return best
