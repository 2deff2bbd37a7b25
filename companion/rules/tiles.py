"""Tile notation: the one set of tile codes used everywhere, and the physical tile sets.

Codes: ``1B``..``9B`` bams, ``1C``..``9C`` craks, ``1D``..``9D`` dots, ``N E S W`` winds,
``RD GD WD`` dragons (``WD`` is also the zero "soap"), ``F`` American flower, ``FL1``..``FL4``
flowers and ``SE1``..``SE4`` seasons, ``J`` joker, ``BK`` a face-down tile.  A tile string is
space-separated codes; :func:`parse_tiles` and :func:`format_tiles` round-trip.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum


class InvalidTileCode(ValueError):
    """A tile code that is not in the notation; the message carries the bad code."""

    def __init__(self, code: str, detail: str = "") -> None:
        self.code = code
        extra = f" ({detail})" if detail else ""
        super().__init__(f"invalid tile code: {code!r}{extra}")


class Suit(Enum):
    """The three number suits, by their letter in the notation."""

    BAMS = "B"
    CRAKS = "C"
    DOTS = "D"

    @property
    def dragon(self) -> str:
        """The American matching dragon: Craks-Red, Bams-Green, Dots-White (soap)."""
        return {Suit.CRAKS: "RD", Suit.BAMS: "GD", Suit.DOTS: "WD"}[self]


SUITS: tuple[Suit, ...] = (Suit.BAMS, Suit.CRAKS, Suit.DOTS)
WINDS: tuple[str, ...] = ("E", "S", "W", "N")
DRAGONS: tuple[str, ...] = ("RD", "GD", "WD")
CHINESE_FLOWERS: tuple[str, ...] = ("FL1", "FL2", "FL3", "FL4")
SEASONS: tuple[str, ...] = ("SE1", "SE2", "SE3", "SE4")
NUMBER_CODES: tuple[str, ...] = tuple(f"{n}{s.value}" for s in SUITS for n in range(1, 10))
NATURAL_CODES: tuple[str, ...] = NUMBER_CODES + WINDS + DRAGONS
"""The 34 kinds that every set holds in equal copies."""
ALL_CODES: tuple[str, ...] = NATURAL_CODES + ("F",) + CHINESE_FLOWERS + SEASONS + ("J", "BK")
"""Every code of the notation, in the canonical sort order."""
JOKER = "J"
BACK = "BK"
FLOWER = "F"

_ORDER = {code: i for i, code in enumerate(ALL_CODES)}


@dataclass(frozen=True, slots=True)
class Tile:
    """One tile kind, by its canonical code.  Build with :meth:`parse` to validate."""

    code: str

    def __post_init__(self) -> None:
        if self.code not in _ORDER:
            raise InvalidTileCode(self.code)

    @classmethod
    def parse(cls, text: str) -> Tile:
        code = text.strip().upper()
        if code not in _ORDER:
            raise InvalidTileCode(text)
        return cls(code)

    def __str__(self) -> str:
        return self.code

    def __lt__(self, other: Tile) -> bool:
        return _ORDER[self.code] < _ORDER[other.code]

    @property
    def suit(self) -> Suit | None:
        return suit_of(self.code)

    @property
    def rank(self) -> int | None:
        return rank_of(self.code)

    @property
    def is_joker(self) -> bool:
        return self.code == JOKER

    @property
    def is_flower(self) -> bool:
        return is_flower(self.code)


def suit_of(code: str) -> Suit | None:
    """The suit of a number tile, or None for honours, flowers, jokers and backs."""
    if code in NUMBER_CODES:
        return Suit(code[1])
    return None


def rank_of(code: str) -> int | None:
    """The number 1..9 of a number tile, else None."""
    if code in NUMBER_CODES:
        return int(code[0])
    return None


def is_flower(code: str) -> bool:
    return code == FLOWER or code in CHINESE_FLOWERS or code in SEASONS


def is_honour(code: str) -> bool:
    return code in WINDS or code in DRAGONS


def is_terminal(code: str) -> bool:
    return rank_of(code) in (1, 9)


def is_major(code: str) -> bool:
    """Terminals and honours (Chinese-style scoring's "major" tiles)."""
    return is_terminal(code) or is_honour(code)


def number_tile(rank: int, suit: Suit) -> str:
    if not 1 <= rank <= 9:
        raise ValueError(f"rank out of range 1..9: {rank!r}")
    return f"{rank}{suit.value}"


def validate_code(text: str) -> str:
    """The canonical code for ``text`` (case-insensitive); raises :class:`InvalidTileCode`."""
    code = text.strip().upper()
    if code not in _ORDER:
        raise InvalidTileCode(text)
    return code


def parse_tiles(text: str) -> list[str]:
    """Parse a space-separated tile string into canonical codes, in the given order."""
    return [validate_code(tok) for tok in text.split()]


def format_tiles(codes: Iterable[str]) -> str:
    """Space-separated codes; the inverse of :func:`parse_tiles`."""
    return " ".join(validate_code(c) for c in codes)


def sort_key(code: str) -> int:
    return _ORDER[code]


def sort_tiles(codes: Iterable[str]) -> list[str]:
    return sorted(codes, key=sort_key)


@dataclass(frozen=True)
class TileSet:
    """A physical set (or two sets together): how many copies of each code exist."""

    name: str
    copies: tuple[tuple[str, int], ...]

    @property
    def counts(self) -> dict[str, int]:
        return dict(self.copies)

    @property
    def total(self) -> int:
        return sum(n for _, n in self.copies)

    def copies_of(self, code: str) -> int:
        """Copies of one code; ``WD`` used as zero shares the ``WD`` copies."""
        return self.counts.get(code, 0)

    def over_limit(self, seen: Iterable[str]) -> dict[str, int]:
        """Codes seen more often than the set holds (backs ignored), with the seen count."""
        counts = Counter(c for c in seen if c != BACK)
        limits = self.counts
        return {c: n for c, n in counts.items() if n > limits.get(c, 0)}


def _set(name: str, natural: int, extra: dict[str, int]) -> TileSet:
    copies = [(c, natural) for c in NATURAL_CODES] + sorted(extra.items(), key=lambda kv: sort_key(kv[0]))
    return TileSet(name, tuple(copies))


AMERICAN = _set("american", 4, {"F": 8, "J": 8})
ROYALE_4 = _set("royale-4", 8, {"F": 16, "J": 16})
ROYALE_3 = _set("royale-3", 8, {"F": 12, "J": 12})
CHINESE = _set("chinese", 4, {**{c: 1 for c in CHINESE_FLOWERS}, **{c: 1 for c in SEASONS}})
CHINESE_136 = _set("chinese-136", 4, {})
TILE_SETS: dict[str, TileSet] = {s.name: s for s in (AMERICAN, ROYALE_4, ROYALE_3, CHINESE, CHINESE_136)}
