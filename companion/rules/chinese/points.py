"""The points table of seed 004 as a catalogue of small rules, plus :func:`set_points`.

Every player's points: pungs/kongs (base 2, x2 major, x2 concealed, x4 kong), one qualifying
pair, 4 per flower or season.  The winner adds 20 for winning, 2 self-drawn, 2 only possible
tile, 10 no scoring combinations.
"""

from __future__ import annotations

from collections.abc import Callable

from companion.rules.chinese.arrangement import Arrangement, Item
from companion.rules.chinese.hand import Meld
from companion.rules.tiles import DRAGONS

PointRule = Callable[[Arrangement], list[Item]]


def set_points(meld: Meld) -> int:
    """Points of one set: chow 0; pung/kong 2 x2 major x2 concealed x4 kong (x1 pair: 0)."""
    if not meld.is_set:
        return 0
    points = 2
    if meld.major:
        points *= 2
    if meld.concealed:
        points *= 2
    if meld.kind == "kong":
        points *= 4
    return points


def pair_points(meld: Meld, seat: str, prevailing: str) -> int:
    """Pair of dragons 2, own wind 2, prevailing wind 2; own = prevailing counts 4."""
    t = meld.tile
    if t in DRAGONS:
        return 2
    return 2 * (t == seat) + 2 * (t == prevailing)


def sets(arr: Arrangement) -> list[Item]:
    return [Item(str(m), set_points(m)) for m in arr.sets if set_points(m)]


def pair(arr: Arrangement) -> list[Item]:
    """Only one pair counts per player: the best one."""
    scored = [(pair_points(m, arr.hand.seat, arr.hand.prevailing), m) for m in arr.pairs]
    best = max(scored, default=(0, None), key=lambda x: x[0])
    return [Item(f"pair {best[1].tile}", best[0])] if best[0] and best[1] else []


def flowers(arr: Arrangement) -> list[Item]:
    return [Item(f"flower {f}", 4) for f in arr.hand.flowers]


PLAYER_RULES: tuple[PointRule, ...] = (sets, pair, flowers)
"""Points every player counts (losers too)."""


def mah_jong(arr: Arrangement) -> list[Item]:
    return [Item("mah jong", 20)]


def self_drawn(arr: Arrangement) -> list[Item]:
    return [Item("self-drawn winning tile", 2)] if arr.hand.self_drawn else []


def no_scoring_combinations(arr: Arrangement) -> list[Item]:
    """[interp] no set or pair scores points; flowers do not spoil it."""
    return [] if sets(arr) or pair(arr) else [Item("no scoring combinations", 10)]


WINNER_RULES: tuple[PointRule, ...] = (mah_jong, self_drawn, no_scoring_combinations)
"""Winner-only points; the 'only possible tile' bonus is added by the scorer (it needs waits)."""


def total_points(arr: Arrangement, rules: tuple[PointRule, ...]) -> list[Item]:
    return [item for rule in rules for item in rule(arr)]
