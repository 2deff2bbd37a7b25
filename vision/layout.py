"""Table layouts: which polygon of the table (in millimetres) is which rack or the discard area.

A layout file is JSON::

    {"table_mm": [W, H], "marker_mm": 50,
     "zones": [{"name": "P1-A", "kind": "rack", "player": 1, "hand": "A", "polygon_mm": [[x, y], ...]},
               {"name": "discards", "kind": "discards", "polygon_mm": [...]}]}

The table frame has its origin at ArUco marker 0, x to the right, y towards player 1 (the bottom
edge).  :func:`load_layout` validates everything (unknown keys, bad polygons, zones outside the
table or overlapping each other) and names the file and the zone in every error.
:meth:`Layout.assign` maps points in table millimetres to zone indexes, vectorised.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

ZONE_KINDS = ("rack", "discards", "wall", "other")
_LAYOUT_KEYS = {"table_mm", "zones", "marker_mm", "name", "description"}
_ZONE_KEYS = {"name", "kind", "player", "hand", "polygon_mm"}
LAYOUTS_DIR = Path(__file__).resolve().parents[1] / "calibration" / "layouts"


class LayoutError(ValueError):
    """A layout that does not parse or does not make sense; the message names the file and zone."""


@dataclass(frozen=True)
class Zone:
    """One named polygon of the table, in table millimetres."""

    name: str
    kind: str
    polygon_mm: tuple[tuple[float, float], ...]
    player: int | None = None
    hand: str | None = None

    @property
    def polygon(self) -> npt.NDArray[np.float32]:
        return np.asarray(self.polygon_mm, np.float32)


@dataclass(frozen=True)
class Layout:
    """A validated table layout."""

    table_mm: tuple[float, float]
    zones: tuple[Zone, ...]
    marker_mm: float = 50.0
    name: str = ""

    def zone(self, name: str) -> Zone:
        for z in self.zones:
            if z.name == name:
                return z
        raise KeyError(f"no zone named {name!r} in layout {self.name!r}")

    @property
    def racks(self) -> tuple[Zone, ...]:
        return tuple(z for z in self.zones if z.kind == "rack")

    @property
    def players(self) -> tuple[int, ...]:
        return tuple(sorted({z.player for z in self.zones if z.player is not None}))

    def reading_axes(self, zone: Zone) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """(right, up) unit vectors of a zone as its owner sees it from the nearest table edge.

        ``up`` points from the owner's edge into the table (the top of an upright tile face) and
        ``right`` is the owner's left-to-right reading direction.
        """
        cx, cy = np.asarray(zone.polygon_mm, np.float64).mean(axis=0)
        w, h = self.table_mm
        dists = {(0.0, -1.0): h - cy, (0.0, 1.0): cy, (-1.0, 0.0): w - cx, (1.0, 0.0): cx}
        up = np.asarray(min(dists, key=lambda k: dists[k]), np.float32)
        return np.array([-up[1], up[0]], np.float32), up

    def assign(self, points_mm: npt.ArrayLike) -> npt.NDArray[np.int32]:
        """Index into :attr:`zones` of the zone holding each point, or -1 for none."""
        pts = np.asarray(points_mm, np.float64).reshape(-1, 2)
        out = np.full(len(pts), -1, np.int32)
        for i, zone in enumerate(self.zones):
            inside = _points_in_polygon(pts, np.asarray(zone.polygon_mm, np.float64))
            out[(out < 0) & inside] = i
        return out

    def to_json(self) -> dict[str, Any]:
        zones = []
        for z in self.zones:
            d: dict[str, Any] = {"name": z.name, "kind": z.kind}
            if z.player is not None:
                d["player"] = z.player
            if z.hand is not None:
                d["hand"] = z.hand
            d["polygon_mm"] = [[x, y] for x, y in z.polygon_mm]
            zones.append(d)
        return {"name": self.name, "table_mm": list(self.table_mm), "marker_mm": self.marker_mm, "zones": zones}


def _points_in_polygon(pts: npt.NDArray[np.float64], poly: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
    """Even-odd ray casting for many points at once."""
    x, y = pts[:, 0:1], pts[:, 1:2]
    x1, y1 = poly[:, 0], poly[:, 1]
    x2, y2 = np.roll(x1, -1), np.roll(y1, -1)
    crosses = (y1 > y) != (y2 > y)
    with np.errstate(divide="ignore", invalid="ignore"):
        xint = x1 + (y - y1) * (x2 - x1) / (y2 - y1)
    hits = crosses & (x < xint)
    return np.asarray(hits.sum(axis=1) % 2 == 1)


def _segments_cross(a: tuple[float, float], b: tuple[float, float], c: tuple[float, float], d: tuple[float, float]) -> bool:
    def orient(p: tuple[float, float], q: tuple[float, float], r: tuple[float, float]) -> float:
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])

    o1, o2, o3, o4 = orient(a, b, c), orient(a, b, d), orient(c, d, a), orient(c, d, b)
    return o1 * o2 < 0 and o3 * o4 < 0


def _check_polygon(poly: tuple[tuple[float, float], ...], where: str, table: tuple[float, float]) -> None:
    if len(poly) < 3:
        raise LayoutError(f"{where}: polygon_mm needs at least 3 points, got {len(poly)}")
    n = len(poly)
    for i in range(n):
        for j in range(i + 2, n):
            if i == 0 and j == n - 1:
                continue
            if _segments_cross(poly[i], poly[(i + 1) % n], poly[j], poly[(j + 1) % n]):
                raise LayoutError(f"{where}: polygon_mm crosses itself (edges {i} and {j})")
    if abs(cv2.contourArea(np.asarray(poly, np.float32))) <= 1.0:
        raise LayoutError(f"{where}: polygon_mm has no area (points in a line?)")
    w, h = table
    for x, y in poly:
        if not (-1e-6 <= x <= w + 1e-6 and -1e-6 <= y <= h + 1e-6):
            raise LayoutError(f"{where}: point [{x}, {y}] lies outside the table [0..{w}] x [0..{h}] mm")


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise LayoutError(f"{where}: expected a number, got {value!r}")
    return float(value)


def _parse_zone(raw: Any, where: str, table: tuple[float, float]) -> Zone:
    if not isinstance(raw, dict):
        raise LayoutError(f"{where}: a zone must be an object, got {type(raw).__name__}")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise LayoutError(f"{where}: zone needs a non-empty string 'name'")
    where = f"{where} ({name!r})"
    unknown = sorted(set(raw) - _ZONE_KEYS)
    if unknown:
        raise LayoutError(f"{where}: unknown key(s) {unknown}; allowed: {sorted(_ZONE_KEYS)}")
    kind = raw.get("kind")
    if kind not in ZONE_KINDS:
        raise LayoutError(f"{where}: kind must be one of {list(ZONE_KINDS)}, got {kind!r}")
    player = raw.get("player")
    if player is not None and (isinstance(player, bool) or not isinstance(player, int) or player < 1):
        raise LayoutError(f"{where}: player must be a positive integer, got {player!r}")
    if kind == "rack" and player is None:
        raise LayoutError(f"{where}: a rack zone needs a 'player'")
    hand = raw.get("hand")
    if hand is not None and not isinstance(hand, str):
        raise LayoutError(f"{where}: hand must be a string, got {hand!r}")
    pts = raw.get("polygon_mm")
    if not isinstance(pts, list):
        raise LayoutError(f"{where}: polygon_mm must be a list of [x, y] points")
    poly: list[tuple[float, float]] = []
    for k, p in enumerate(pts):
        if not isinstance(p, list) or len(p) != 2:
            raise LayoutError(f"{where}: polygon_mm[{k}] must be [x, y], got {p!r}")
        poly.append((_number(p[0], f"{where} polygon_mm[{k}]"), _number(p[1], f"{where} polygon_mm[{k}]")))
    _check_polygon(tuple(poly), where, table)
    return Zone(name=name, kind=kind, polygon_mm=tuple(poly), player=player, hand=hand)


def _check_overlaps(zones: tuple[Zone, ...], source: str, table: tuple[float, float]) -> None:
    """Zones may share an edge but not overlap: rasterise at 2 px/mm and compare eroded masks."""
    scale = 2.0
    size = (int(table[1] * scale) + 3, int(table[0] * scale) + 3)
    kernel = np.ones((3, 3), np.uint8)
    masks = []
    for z in zones:
        m = np.zeros(size, np.uint8)
        cv2.fillPoly(m, [np.round(np.asarray(z.polygon_mm) * scale).astype(np.int32)], 1)
        masks.append(np.asarray(cv2.erode(m, kernel), np.uint8))
    for i in range(len(zones)):
        for j in range(i + 1, len(zones)):
            overlap = int(np.count_nonzero(masks[i] & masks[j]))
            if overlap:
                area = overlap / scale**2
                raise LayoutError(
                    f"{source}: zones {zones[i].name!r} and {zones[j].name!r} overlap (about {area:.0f} mm^2)"
                )


def parse_layout(raw: Any, source: str = "<layout>") -> Layout:
    """Validate a decoded layout JSON value; ``source`` names it in errors."""
    if not isinstance(raw, dict):
        raise LayoutError(f"{source}: a layout must be a JSON object")
    unknown = sorted(set(raw) - _LAYOUT_KEYS)
    if unknown:
        raise LayoutError(f"{source}: unknown key(s) {unknown}; allowed: {sorted(_LAYOUT_KEYS)}")
    tm = raw.get("table_mm")
    if not isinstance(tm, list) or len(tm) != 2:
        raise LayoutError(f"{source}: table_mm must be [width, height] in millimetres")
    table = (_number(tm[0], f"{source}: table_mm[0]"), _number(tm[1], f"{source}: table_mm[1]"))
    if min(table) <= 0:
        raise LayoutError(f"{source}: table_mm must be positive, got {tm!r}")
    marker = _number(raw.get("marker_mm", 50), f"{source}: marker_mm")
    zones_raw = raw.get("zones")
    if not isinstance(zones_raw, list) or not zones_raw:
        raise LayoutError(f"{source}: zones must be a non-empty list")
    zones = tuple(_parse_zone(z, f"{source}: zones[{i}]", table) for i, z in enumerate(zones_raw))
    names = [z.name for z in zones]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise LayoutError(f"{source}: duplicate zone name(s) {dupes}")
    _check_overlaps(zones, source, table)
    name = raw.get("name", Path(source).stem)
    return Layout(table_mm=table, zones=zones, marker_mm=marker, name=str(name))


def resolve_layout_path(name_or_path: str | Path) -> Path:
    """A layout file path, or the name of a shipped layout (``siamese-2``, ``royale-4``...)."""
    p = Path(name_or_path)
    if p.is_file():
        return p
    shipped = LAYOUTS_DIR / f"{name_or_path}.json"
    if shipped.is_file():
        return shipped
    available = sorted(f.stem for f in LAYOUTS_DIR.glob("*.json"))
    raise LayoutError(f"layout file not found: {str(name_or_path)!r} (shipped layouts: {available})")


def load_layout(name_or_path: str | Path) -> Layout:
    """Read and validate a layout file (or a shipped layout by name)."""
    path = resolve_layout_path(name_or_path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise LayoutError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from exc
    return parse_layout(raw, str(path))
