"""The values of table understanding: what the camera saw per zone, and what the rules say.

:class:`ZoneReading` (one zone's tiles, exposures and backs), :class:`Flag` (a rule problem) and
:class:`TableObservation` (one frame).  Re-exported by :mod:`companion.table`, the one meeting
point between perception and rules; ``to_json`` gives the ``analyze --json`` shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

HomographyState = Literal["fresh", "stale", "missing"]
FLAG_KINDS = ("wrong_rack", "tile_count", "joker", "unreadable", "view")
MIN_CONFIDENCE = 0.75
"""Reads below this confidence are ``uncertain``: shown, never used to call a hand dead.  (0.6
until runs were read jointly: on 30 rendered tables, 0.75 left the dead-hand calls as they were,
6 right and none wrong, and removed 2 false joker and 1 false count flags, at the cost of 1 right
joker flag, 1 right count flag and 12 more racks left unjudged.)"""
TILE_MM = (24.0, 32.0)
"""A tile's face, width x height in table millimetres (the recogniser is told its size in pixels)."""
MIN_PITCH = 0.72
"""Two detections on one rack row closer than this many tile widths are one tile (or a phantom
between two): rows are thinned to the heaviest set that respects it (:func:`companion.table_group.thin_row`)."""


@dataclass(frozen=True)
class ZoneReading:
    """The face-up tiles of one zone, grouped into exposures on a rack.

    On a rack, ``tiles`` is the exposures laid end to end in reading order; ``uncertain`` holds
    indexes into ``tiles`` read with low confidence, ``confidence`` each tile's reading (empty for
    a zone not read by a camera).
    """

    name: str
    kind: str  # "rack" | "discards" | other layout kinds
    tiles: tuple[str, ...]
    exposures: tuple[tuple[str, ...], ...] = ()
    face_down: int = 0
    player: int | None = None
    hand: str | None = None
    uncertain: tuple[int, ...] = ()  # indexes into ``tiles`` read with low confidence
    confidence: tuple[float, ...] = field(default=(), compare=False)  # per tile of ``tiles``, when read
    # every plausible grouping of a rack that holds uncertain tiles (each uncertain tile read as
    # each of its plausible codes); empty when there are none, or too many to judge
    readings: tuple[tuple[tuple[str, ...], ...], ...] = field(default=(), compare=False)
    # backs (of ``face_down``) that may be phantoms, read with low confidence, in a row of
    # face-up tiles or unlike the frame's other backs: a "too many" count that hangs on them is
    # not judged
    weak_backs: int = field(default=0, compare=False)
    # per tile of ``tiles``, its own reading before the neighbours of its touching run vouched for
    # it (empty: the same as ``confidence``); a count of copies across the table rests on these
    own_confidence: tuple[float, ...] = field(default=(), compare=False)
    # backs seen past the end of a face-up row, apart and alone, not counted in ``face_down`` (the
    # bare rack past a row, taken for a tile): a "too few" count allows for them
    stray_backs: int = field(default=0, compare=False)


    def exposure_spans(self) -> list[range]:
        """Index ranges into ``tiles`` of each exposure."""
        spans, start = [], 0
        for e in self.exposures:
            spans.append(range(start, start + len(e)))
            start += len(e)
        return spans

    def to_json(self) -> dict[str, Any]:
        return {
            "tiles": list(self.tiles),
            "exposures": [list(e) for e in self.exposures],
            "face_down": self.face_down,
        }


@dataclass(frozen=True)
class Flag:
    """Something the rules say about the table: ``wrong_rack``, ``tile_count``, ``joker``, ``unreadable``;
    or about the camera: ``view`` (a zone's tiles too small in the picture to read reliably)."""

    kind: str
    zone: str | None
    message: str
    cause: str = field(default="", compare=False)  # why, where a flag's kind has several causes ("count")

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "zone": self.zone, "message": self.message}


@dataclass(frozen=True)
class TableObservation:
    zones: dict[str, ZoneReading]
    homography: HomographyState = "missing"
    flags: tuple[Flag, ...] = ()
    mahjong: dict[str, dict[str, object] | None] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "zones": {name: z.to_json() for name, z in self.zones.items()},
            "flags": [f.to_json() for f in self.flags],
            "mahjong": dict(self.mahjong),
            "homography": self.homography,
        }
