"""A Chinese-style hand as a value (:class:`ChineseHand`), melds, and the 4-sets-plus-pair
decompositions of its concealed tiles."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from companion.rules.tiles import (
    CHINESE_FLOWERS,
    NATURAL_CODES,
    SEASONS,
    WINDS,
    is_major,
    parse_tiles,
    rank_of,
    sort_key,
    sort_tiles,
    suit_of,
)

SEAT_NUMBER = {"E": 1, "S": 2, "W": 3, "N": 4}
"""Flower/season number <-> seat wind (1 East, 2 South, 3 West, 4 North) [interp]."""


class InvalidHand(ValueError):
    """A hand description that cannot be scored; the message names the bad part."""


@dataclass(frozen=True)
class Meld:
    """A pung, kong, chow or pair; ``concealed`` False when exposed or completed by a discard."""

    kind: str
    tiles: tuple[str, ...]
    concealed: bool

    @property
    def tile(self) -> str:
        return self.tiles[0]

    @property
    def is_set(self) -> bool:
        return self.kind in ("pung", "kong")

    @property
    def major(self) -> bool:
        return all(is_major(t) for t in self.tiles)

    def __str__(self) -> str:
        state = "concealed" if self.concealed else "exposed"
        return f"{state} {self.kind} {' '.join(self.tiles)}"


def classify(tiles: tuple[str, ...], concealed: bool) -> Meld:
    """The meld these 2-4 tiles form; InvalidHand naming them if none."""
    ts = tuple(sort_tiles(tiles))
    if len(set(ts)) == 1 and 2 <= len(ts) <= 4:
        return Meld({2: "pair", 3: "pung", 4: "kong"}[len(ts)], ts, concealed)
    if len(ts) == 3 and _is_chow(ts):
        return Meld("chow", ts, concealed)
    raise InvalidHand(f"not a pung, kong, chow or pair: {' '.join(tiles)!r}")


def _is_chow(ts: tuple[str, ...]) -> bool:
    suits = {suit_of(t) for t in ts}
    ranks = [rank_of(t) for t in ts]
    if len(suits) != 1 or None in suits or None in ranks:
        return False
    r = sorted(int(x) for x in ranks if x is not None)
    return r[1] == r[0] + 1 and r[2] == r[0] + 2


@dataclass(frozen=True)
class ChineseHand:
    """Everything the scorer needs about one player's winning hand."""

    concealed: tuple[str, ...]
    exposed: tuple[Meld, ...] = ()
    concealed_kongs: tuple[Meld, ...] = ()
    flowers: tuple[str, ...] = ()
    seat: str = "E"
    prevailing: str = "E"
    winning_tile: str | None = None
    self_drawn: bool = False
    loose_tile: bool = False
    last_tile: bool = False
    robbing_kong: bool = False
    only_possible_tile: bool | None = None
    heaven: bool = False

    @property
    def sets_needed(self) -> int:
        return 4 - len(self.exposed) - len(self.concealed_kongs)

    @property
    def has_exposed(self) -> bool:
        return bool(self.exposed)

    @property
    def all_tiles(self) -> tuple[str, ...]:
        fixed = [t for m in self.exposed + self.concealed_kongs for t in m.tiles]
        return tuple(self.concealed) + tuple(fixed)


def decompositions(tiles: Counter[str], sets: int, pair: bool = True) -> Iterator[list[Meld]]:
    """Every way to split ``tiles`` into ``sets`` concealed pungs/chows plus one pair."""
    remaining = [t for t in sorted(tiles, key=sort_key) if tiles[t] > 0]
    if not remaining:
        if sets == 0 and not pair:
            yield []
        return
    t = remaining[0]
    options: list[tuple[str, ...]] = []
    if pair and tiles[t] >= 2:
        options.append((t, t))
    if sets and tiles[t] >= 3:
        options.append((t, t, t))
    r, s = rank_of(t), suit_of(t)
    if sets and r is not None and s is not None and r <= 7:
        nxt = (f"{r + 1}{s.value}", f"{r + 2}{s.value}")
        if all(tiles[n] > 0 for n in nxt):
            options.append((t, *nxt))
    for group in options:
        tiles.subtract(group)
        is_pair = len(group) == 2
        for rest in decompositions(tiles, sets - (0 if is_pair else 1), pair and not is_pair):
            yield [classify(group, True), *rest]
        tiles.update(group)


def _codes(value: Any, field: str) -> tuple[str, ...]:
    if not isinstance(value, str):
        raise InvalidHand(f"field {field!r} must be a string of tile codes, got {value!r}")
    return tuple(parse_tiles(value))


def _code_list(data: Mapping[str, Any], field: str) -> list[tuple[str, ...]]:
    value = data.get(field, [])
    if not isinstance(value, list):
        raise InvalidHand(f"field {field!r} must be a list of tile strings, got {value!r}")
    return [_codes(v, field) for v in value]


def _flag(data: Mapping[str, Any], field: str, default: bool | None = False) -> bool | None:
    value = data.get(field, default)
    if value is not None and not isinstance(value, bool):
        raise InvalidHand(f"field {field!r} must be true or false, got {value!r}")
    return value


def _flowers(value: Any) -> tuple[str, ...]:
    """Flowers as a list of codes or one tile string."""
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(parse_tiles(" ".join(value)))
    return _codes(value, "flowers")


def _one_code(value: Any) -> str:
    codes = _codes(value, "winning_tile")
    if len(codes) != 1:
        raise InvalidHand(f"field 'winning_tile' must be one tile code, got {value!r}")
    return codes[0]


def _wind(data: Mapping[str, Any], field: str) -> str:
    value = data.get(field, "E")
    if value not in WINDS:
        raise InvalidHand(f"field {field!r} must be one of {list(WINDS)}, got {value!r}")
    return str(value)


def _check_tiles(hand: ChineseHand) -> None:
    bad = [t for t in hand.all_tiles if t not in NATURAL_CODES]
    if bad:
        raise InvalidHand(f"not a Chinese-style hand tile: {bad[0]!r} (flowers go in 'flowers')")
    odd = [f for f in hand.flowers if f not in CHINESE_FLOWERS + SEASONS]
    if odd:
        raise InvalidHand(f"not a flower or season: {odd[0]!r}")
    over = {t: n for t, n in Counter(hand.all_tiles).items() if n > 4}
    if over:
        raise InvalidHand(f"more than 4 copies of {sorted(over)[0]!r}")
    for kong in hand.concealed_kongs:
        if kong.kind != "kong":
            raise InvalidHand(f"concealed_kongs entry is not a kong: {' '.join(kong.tiles)!r}")
    if hand.winning_tile is not None and hand.winning_tile not in hand.all_tiles:
        raise InvalidHand(f"winning_tile {hand.winning_tile!r} is not in the hand")


def hand_from_dict(data: Mapping[str, Any]) -> ChineseHand:
    """Read the JSON hand of ``score --rules chinese``; InvalidHand naming the bad field."""
    win = data.get("winning_tile")
    if "concealed" not in data:
        raise InvalidHand("missing field 'concealed' (the concealed tiles, including the winning tile)")
    hand = ChineseHand(
        concealed=_codes(data.get("concealed", ""), "concealed"),
        exposed=tuple(classify(t, False) for t in _code_list(data, "exposed")),
        concealed_kongs=tuple(classify(t, True) for t in _code_list(data, "concealed_kongs")),
        flowers=_flowers(data.get("flowers", [])),
        seat=_wind(data, "seat"),
        prevailing=_wind(data, "prevailing"),
        winning_tile=None if win is None else _one_code(win),
        self_drawn=bool(_flag(data, "self_drawn")),
        loose_tile=bool(_flag(data, "loose_tile")),
        last_tile=bool(_flag(data, "last_tile")),
        robbing_kong=bool(_flag(data, "robbing_kong")),
        only_possible_tile=_flag(data, "only_possible_tile", None),
        heaven=bool(_flag(data, "heaven")),
    )
    _check_tiles(hand)
    return hand
