"""The one meeting point between perception and rules: what the camera saw, per table zone.

A :class:`TableObservation` holds tile codes per zone (racks, discards) for one frame; it is
what ``companion.live`` turns into game events and what ``python -m companion analyze`` prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

HomographyState = Literal["fresh", "stale", "missing"]


@dataclass(frozen=True)
class ZoneReading:
    """The face-up tiles of one zone, grouped into exposures on a rack."""

    name: str
    kind: str  # "rack" | "discards" | other layout kinds
    tiles: tuple[str, ...]
    exposures: tuple[tuple[str, ...], ...] = ()
    face_down: int = 0
    player: int | None = None
    hand: str | None = None
    uncertain: tuple[int, ...] = ()  # indexes into ``tiles`` read with low confidence


@dataclass(frozen=True)
class Flag:
    """Something the rules say about the table: ``wrong_rack``, ``tile_count``, ``joker``, ``unreadable``."""

    kind: str
    zone: str | None
    message: str


@dataclass(frozen=True)
class TableObservation:
    zones: dict[str, ZoneReading]
    homography: HomographyState = "missing"
    flags: tuple[Flag, ...] = ()
    mahjong: dict[str, dict[str, object] | None] = field(default_factory=dict)
