"""One way of reading a winning hand: its 4 sets and pair, with the hand's context."""

from __future__ import annotations

from dataclasses import dataclass

from companion.rules.chinese.hand import ChineseHand, Meld


@dataclass(frozen=True)
class Arrangement:
    """The melds (exposed, concealed kongs, then the concealed decomposition) of one reading."""

    hand: ChineseHand
    melds: tuple[Meld, ...]

    @property
    def sets(self) -> tuple[Meld, ...]:
        return tuple(m for m in self.melds if m.kind != "pair")

    @property
    def pairs(self) -> tuple[Meld, ...]:
        return tuple(m for m in self.melds if m.kind == "pair")

    @property
    def tiles(self) -> tuple[str, ...]:
        return tuple(t for m in self.melds for t in m.tiles)


@dataclass(frozen=True)
class Item:
    """One scored line: ``name`` and its points (points rules) or factor (doubles)."""

    name: str
    value: int
