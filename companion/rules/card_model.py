"""The compiled card as values: :class:`Card`, :class:`Hand`, :class:`Group`, and load errors.

A card file (rules-spec section 4) compiles to a :class:`Card` whose hands each hold a finite
tuple of concrete *instances*; an instance is a tuple of :class:`Group` (tile codes plus whether
jokers may stand in it).  Errors are :class:`CardIssue` values, raised together as
:class:`CardError` with ``FILE:LINE:COL: message`` lines.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

JokerlessMode = Literal["auto", "yes", "no"]


@dataclass(frozen=True, slots=True)
class CardIssue:
    """One problem in a card file, at a 1-based line and column."""

    file: str
    line: int
    col: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}: {self.message}"


class CardError(ValueError):
    """A card that does not load; ``issues`` lists every problem found, in file order."""

    def __init__(self, issues: list[CardIssue]) -> None:
        self.issues = sorted(issues, key=lambda i: (i.line, i.col))
        super().__init__("\n".join(str(i) for i in self.issues))


@dataclass(frozen=True, slots=True)
class Group:
    """One group of a concrete instance: its tile codes (``0`` is ``WD``) and joker eligibility."""

    tiles: tuple[str, ...]
    joker_ok: bool

    @property
    def identical(self) -> bool:
        """True for a single, pair, pung, kong, quint or sextet (all tiles the same)."""
        return all(t == self.tiles[0] for t in self.tiles)

    @property
    def kind(self) -> str | None:
        """The one tile code of an identical group, else None (a cluster)."""
        return self.tiles[0] if self.identical else None

    def __str__(self) -> str:
        return " ".join(self.tiles) + ("" if self.joker_ok else "!")


Instance = tuple[Group, ...]


def group_counts(groups: Iterable[Group]) -> tuple[Counter[str], Counter[str]]:
    """Per tile kind: the naturals that no-joker groups need, and all tiles the groups hold.

    A joker can stand for any tile of a joker-eligible group, so a kind's naturals must lie
    between the first count and the second (rules-spec 4.6's count test).
    """
    nat: Counter[str] = Counter()
    tot: Counter[str] = Counter()
    for g in groups:
        tot.update(g.tiles)
        if not g.joker_ok:
            nat.update(g.tiles)
    return nat, tot


@dataclass(frozen=True)
class Hand:
    """One card line: its id, name, section, printed value and every concrete instance."""

    id: str
    name: str
    section: str
    value: int
    concealed: bool
    jokerless_mode: JokerlessMode
    instances: tuple[Instance, ...]
    note: str = ""
    line: int = 0
    source: str = ""


@dataclass(frozen=True)
class Card:
    """A loaded card: name, natural copies per kind (4, or 8 for Royale), hands and warnings."""

    name: str
    copies: int
    hands: tuple[Hand, ...]
    warnings: tuple[str, ...] = field(default=())

    @property
    def jokers(self) -> int:
        """Jokers in the set the card is played with (8 per American set)."""
        return 2 * self.copies

    @property
    def flowers(self) -> int:
        """Flowers in the set (8 per American set)."""
        return 2 * self.copies

    def hand(self, hand_id: str) -> Hand:
        for h in self.hands:
            if h.id == hand_id:
                return h
        raise KeyError(f"no hand {hand_id!r} on card {self.name!r}")
