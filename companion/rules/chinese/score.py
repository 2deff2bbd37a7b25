"""The Chinese-style scorer: best reading of a winning hand (4 sets + pair, or a limit hand).

``score_hand`` reads as a list of steps: enumerate readings, score each with the points and
doubles catalogues, compare with the limit-hand reading, keep the best.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, replace
from math import prod
from typing import Any

from companion.rules.chinese.arrangement import Arrangement, Item
from companion.rules.chinese.doubles import doubles
from companion.rules.chinese.hand import ChineseHand, Meld, decompositions
from companion.rules.chinese.limit import limit_hand
from companion.rules.chinese.points import PLAYER_RULES, WINNER_RULES, total_points
from companion.rules.tiles import NATURAL_CODES


@dataclass(frozen=True)
class ChineseScore:
    """A scored hand; ``winning`` False (with ``reason``) when it is not a complete hand."""

    winning: bool
    points: int = 0
    point_items: tuple[Item, ...] = ()
    doubles: tuple[Item, ...] = ()
    score: int = 0
    raw_score: int = 0
    limit_hand: str | None = None
    melds: tuple[Meld, ...] = ()
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "points": self.points,
            "doubles": [{"name": i.name, "factor": i.value} for i in self.doubles],
            "score": self.score,
            "limit_hand": self.limit_hand,
            "point_items": [{"name": i.name, "points": i.value} for i in self.point_items],
            "raw_score": self.raw_score,
            "sets": [str(m) for m in self.melds],
        }
        if not self.winning:
            d["winning"] = False
            d["reason"] = self.reason
        return d


def arrangements(hand: ChineseHand) -> Iterator[Arrangement]:
    """Every reading; a claimed winning tile makes the concealed meld it completes exposed."""
    fixed = hand.exposed + hand.concealed_kongs
    if hand.sets_needed < 0 or len(hand.concealed) != 3 * hand.sets_needed + 2:
        return
    claimed = not hand.self_drawn and hand.winning_tile in hand.concealed
    for melds in decompositions(Counter(hand.concealed), hand.sets_needed):
        if not claimed:
            yield Arrangement(hand, fixed + tuple(melds))
            continue
        for i, m in enumerate(melds):
            if hand.winning_tile in m.tiles:
                opened = [*melds[:i], replace(m, concealed=False), *melds[i + 1:]]
                yield Arrangement(hand, fixed + tuple(opened))


def only_possible_tile(hand: ChineseHand) -> bool:
    """True when the hand without its winning tile waits on exactly one tile kind."""
    if hand.only_possible_tile is not None:
        return hand.only_possible_tile
    if hand.winning_tile is None or hand.winning_tile not in hand.concealed:
        return False
    rest = Counter(hand.concealed)
    rest[hand.winning_tile] -= 1
    seen = Counter(hand.all_tiles)
    waits = 0
    for kind in NATURAL_CODES:
        if seen[kind] - (kind == hand.winning_tile) >= 4:
            continue
        trial = rest.copy()
        trial[kind] += 1
        if next(decompositions(trial, hand.sets_needed), None) is not None:
            waits += 1
    return waits == 1


def score_arrangement(arr: Arrangement, limit: int, only_tile: bool) -> ChineseScore:
    """The winner's points x every double, capped at the limit."""
    items = total_points(arr, PLAYER_RULES + WINNER_RULES)
    if only_tile:
        items.append(Item("only possible tile", 2))
    points = sum(i.value for i in items)
    dbl = doubles(arr)
    raw = points * prod(d.value for d in dbl)
    return ChineseScore(True, points, tuple(items), tuple(dbl), min(raw, limit), raw, None, arr.melds)


def player_points(melds: tuple[Meld, ...], hand: ChineseHand) -> int:
    """A non-winner's points (no doubles, no winner bonuses) from their sets, pair and flowers."""
    return sum(i.value for i in total_points(Arrangement(hand, melds), PLAYER_RULES))


def _limit_reading(hand: ChineseHand, limit: int, repeat_pairs: bool) -> ChineseScore | None:
    concealed = not hand.has_exposed and hand.self_drawn
    if hand.heaven:
        factor = [Item("hand from heaven", 2)]
        return ChineseScore(True, limit, (), tuple(factor), 2 * limit, 2 * limit, "hand_from_heaven")
    if hand.concealed_kongs or any(m.kind == "kong" for m in hand.exposed):
        return None
    found = limit_hand(list(hand.all_tiles), repeat_pairs)
    if found is None:
        return None
    name, fraction = found
    base = int(limit * fraction)
    dbl = (Item("fully concealed limit hand", 2),) if concealed else ()
    total = base * (2 if concealed else 1)
    return ChineseScore(True, base, (Item(name, base),), dbl, total, total, name)


def score_hand(hand: ChineseHand, limit: int = 1000, repeat_pairs: bool = False) -> ChineseScore:
    """Best score of ``hand`` as the winner (rules-spec 3.6); ``repeat_pairs`` lets Seven Pairs
    use the same pair twice (option ``seven_pairs_repeat``)."""
    only_tile = only_possible_tile(hand)
    readings = [score_arrangement(a, limit, only_tile) for a in arrangements(hand)]
    special = _limit_reading(hand, limit, repeat_pairs)
    if special is not None:
        readings.append(special)
    if not readings:
        n = len(hand.concealed)
        reason = (f"not a winning hand: {n} concealed tiles with {len(hand.exposed)} exposed sets and "
                  f"{len(hand.concealed_kongs)} concealed kongs form neither 4 sets and a pair nor a limit hand")
        return ChineseScore(False, reason=reason)
    return max(readings, key=lambda s: (s.score, s.raw_score))
