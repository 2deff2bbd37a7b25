"""The one meeting point between perception and rules: what the camera saw, per table zone.

A :class:`TableObservation` holds tile codes per zone (racks, discards) for one frame; it is
what ``companion.live`` turns into game events and what ``python -m companion analyze`` prints.
:class:`TableReader` makes one from a frame: calibrate (markers, or a fixed calibration), detect
tiles on the original frame, map their centres to table millimetres, assign them to layout
zones, group rack tiles into exposures (:mod:`companion.table_group`) and ask the rules
(:mod:`companion.table_flags`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from companion.rules.card_model import Card
from companion.rules.tiles import BACK, JOKER, TILE_SETS, sort_key
from companion.rules.variants import get_variant
from companion.table_flags import RuleContext, evaluate, rack_flags
from companion.table_group import SeenTile, grouping_options
from companion.table_types import FLAG_KINDS, Flag, HomographyState, TableObservation, ZoneReading
from vision.calibrate import Calibration, Calibrator
from vision.layout import Layout, Zone
from vision.types import Detections

__all__ = [
    "FLAG_KINDS", "Flag", "HomographyState", "Recognizer", "TableObservation", "TableReader", "ZoneReading",
    "read_zones",
]
MIN_CONFIDENCE = 0.6
"""Reads below this confidence are ``uncertain``: shown, never used to call a hand dead."""
TILE_MM = (24.0, 32.0)
"""A tile's face, width x height in table millimetres (the recogniser is told its size in pixels)."""


class Recognizer(Protocol):
    def detect(self, image: npt.NDArray[np.uint8]) -> Detections: ...


Chooser = Callable[[list[ZoneReading]], ZoneReading]


def _first(options: list[ZoneReading]) -> ZoneReading:
    return options[0]


def _rack_reading(layout: Layout, zone: Zone, det: Detections, centres: npt.NDArray[np.float32],
                  quads: npt.NDArray[np.float32], min_conf: float, chows: bool, choose: Chooser) -> ZoneReading:
    axis, perp = layout.reading_axes(zone)
    up = [i for i in range(len(det)) if str(det.codes[i]) != BACK]
    seen = [
        SeenTile(str(det.codes[i]), float(centres[i] @ axis), float(centres[i] @ perp),
                 float(np.ptp(quads[i] @ axis)), float(np.ptp(quads[i] @ perp)), float(det.confidence[i]))
        for i in up
    ]
    options = []
    for groups in grouping_options(seen, chows=chows):
        order = [i for g in groups for i in g]
        tiles = tuple(seen[i].code for i in order)
        uncertain = tuple(k for k, i in enumerate(order) if seen[i].confidence < min_conf)
        exposures = tuple(tuple(seen[i].code for i in g) for g in groups)
        options.append(ZoneReading(zone.name, zone.kind, tiles, exposures, len(det) - len(up), zone.player,
                                   zone.hand, uncertain))
    return choose(options) if len(options) > 1 else options[0]


def _loose_reading(zone: Zone, det: Detections, min_conf: float) -> ZoneReading:
    up = [i for i in range(len(det)) if str(det.codes[i]) != BACK]
    order = sorted(up, key=lambda i: (sort_key(str(det.codes[i])), i))
    tiles = tuple(str(det.codes[i]) for i in order)
    uncertain = tuple(k for k, i in enumerate(order) if float(det.confidence[i]) < min_conf)
    return ZoneReading(zone.name, zone.kind, tiles, (), len(det) - len(up), zone.player, zone.hand, uncertain)


def read_zones(layout: Layout, det: Detections, calibration: Calibration, min_confidence: float = MIN_CONFIDENCE,
               chows: bool = False, choose: Chooser = _first) -> dict[str, ZoneReading]:
    """Every layout zone's reading from detections in image pixels (centres mapped to table mm).

    Where a rack's grouping is ambiguous (jokers between two kinds in a touching run), ``choose``
    picks among the readings; the default takes the first.
    """
    if len(det) == 0:
        return {z.name: ZoneReading(z.name, z.kind, (), (), 0, z.player, z.hand) for z in layout.zones}
    centres = calibration.to_table(det.centres)
    quads = calibration.to_table(det.quads)
    where = layout.assign(centres)
    zones: dict[str, ZoneReading] = {}
    for k, zone in enumerate(layout.zones):
        mask = where == k
        sub = det[mask]
        if zone.kind == "rack":
            zones[zone.name] = _rack_reading(layout, zone, sub, centres[mask], quads[mask], min_confidence, chows,
                                              choose)
        else:
            zones[zone.name] = _loose_reading(zone, sub, min_confidence)
    return zones


class TableReader:
    """Frame -> :class:`TableObservation`, called by the live loop on every stable frame.

    ``recognizer`` is anything with ``detect(image) -> Detections`` (``vision.pipeline.TileRecognizer``);
    ``tile_set`` names the physical set whose copies are counted (default: the variant's);
    ``calibration`` fixes the homography (clicked corners), otherwise markers are found in every
    frame and the last good homography is kept (``"stale"``) while a hand covers one.
    """

    def __init__(self, layout: Layout, recognizer: Recognizer | None = None, card: Card | None = None,
                 variant: str = "mjm", calibration: Calibration | None = None, tile_set: str | None = None,
                 min_confidence: float = MIN_CONFIDENCE, count_backs: bool = True) -> None:
        rules = get_variant(variant)
        if tile_set is not None and tile_set not in TILE_SETS:
            raise ValueError(f"unknown tile set: {tile_set!r} (known: {', '.join(sorted(TILE_SETS))})")
        tiles = TILE_SETS[tile_set] if tile_set else rules.tiles
        self.layout = layout
        self.recognizer = recognizer
        self.ctx = RuleContext(rules, tiles, card, count_backs)
        self.calibrator = Calibrator.for_layout(layout, fixed=calibration)
        self.min_confidence = min_confidence
        self._mj_jokers: dict[str, int] = {}
        self._takes_tile_px: bool | None = None

    def read(self, frame: npt.NDArray[np.uint8], detections: Detections | None = None) -> TableObservation:
        """Read one frame; ``detections`` skips the recogniser (already run, or replayed)."""
        calibration, state = self.calibrator.update(frame)
        if calibration is None:
            msg = "table not calibrated: ArUco markers 0-3 not found and no clicked corners"
            return TableObservation({}, "missing", (Flag("unreadable", None, msg),), {})
        if detections is None:
            if self.recognizer is None:
                raise ValueError("TableReader has no recognizer: pass detections= or a recognizer")
            detections = self._detect_in_zones(frame, calibration)
        return self.observe(detections, calibration, state)

    def zones_box(self, calibration: Calibration, shape: tuple[int, ...], margin_mm: float = 40.0) -> tuple[int, int, int, int]:
        """The image rectangle ``(x0, y0, x1, y1)`` holding every zone (plus a margin)."""
        pts = np.concatenate([np.asarray(z.polygon_mm, np.float32) for z in self.layout.zones])
        lo, hi = pts.min(axis=0) - margin_mm, pts.max(axis=0) + margin_mm
        corners = np.array([[lo[0], lo[1]], [hi[0], lo[1]], [hi[0], hi[1]], [lo[0], hi[1]]], np.float32)
        img = calibration.to_image(corners)
        x0, y0 = np.floor(img.min(axis=0)).astype(int)
        x1, y1 = np.ceil(img.max(axis=0)).astype(int)
        return max(0, x0), max(0, y0), min(int(shape[1]), x1), min(int(shape[0]), y1)

    def tile_px(self, calibration: Calibration) -> float:
        """The expected tile width in image pixels at the zones (geometric mean over the zones).

        A tile's face (:data:`TILE_MM`) at each zone's centre is mapped to the image; its width is
        the square root of its image area over the face's aspect, so a tile seen in perspective
        or turned still counts by its size.
        """
        w, h = TILE_MM
        sizes = []
        for z in self.layout.zones:
            c = np.asarray(z.polygon_mm, np.float64).mean(axis=0)
            face = c + np.array([[-w, -h], [w, -h], [w, h], [-w, h]], np.float64) / 2
            q = calibration.to_image(face.astype(np.float32)).astype(np.float64)
            x, y = q[:, 0], q[:, 1]
            area = 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))
            sizes.append(np.sqrt(area * w / h))
        return float(np.exp(np.mean(np.log(np.maximum(sizes, 1e-3)))))

    def _detect(self, image: npt.NDArray[np.uint8], tile_px: float) -> Detections:
        assert self.recognizer is not None
        if self._takes_tile_px is None:
            import inspect

            try:
                params = inspect.signature(self.recognizer.detect).parameters
                self._takes_tile_px = "tile_px" in params
            except (TypeError, ValueError):
                self._takes_tile_px = False
        if self._takes_tile_px:
            return self.recognizer.detect(image, tile_px=tile_px)  # type: ignore[call-arg]
        return self.recognizer.detect(image)

    def recognize(self, frame: npt.NDArray[np.uint8], calibration: Calibration) -> Detections:
        """The recogniser's detections in the zones of ``frame``, at the table's tile scale."""
        if self.recognizer is None:
            raise ValueError("TableReader has no recognizer: pass detections= or a recognizer")
        return self._detect_in_zones(frame, calibration)

    def _detect_in_zones(self, frame: npt.NDArray[np.uint8], calibration: Calibration) -> Detections:
        """Recognition on the part of the frame that holds the zones only; quads in frame pixels.

        A recogniser whose ``detect`` takes ``tile_px`` is told the expected tile width there.
        """
        assert self.recognizer is not None
        x0, y0, x1, y1 = self.zones_box(calibration, frame.shape)
        if x1 - x0 < 32 or y1 - y0 < 32:
            return Detections.empty()
        tile_px = self.tile_px(calibration)
        if (x0, y0, x1, y1) == (0, 0, frame.shape[1], frame.shape[0]):
            return self._detect(frame, tile_px)
        det = self._detect(np.ascontiguousarray(frame[y0:y1, x0:x1]), tile_px)
        shift = np.array([x0, y0], np.float32)
        return Detections(det.boxes + np.tile(shift, 2), det.quads + shift, det.codes, det.confidence,
                          det.embeddings, dict(det.meta, crop=[x0, y0, x1, y1]))

    def observe(self, detections: Detections, calibration: Calibration,
                state: HomographyState = "fresh") -> TableObservation:
        """The observation for detections already made in this calibration's image."""
        zones = read_zones(self.layout, detections, calibration, self.min_confidence, self.ctx.chows,
                           self._choose)
        flags, mahjong = evaluate(zones, self.ctx)
        flags += self._exchange_flags(zones)
        return TableObservation(zones, state, tuple(flags), dict(mahjong))

    def _choose(self, options: list[ZoneReading]) -> ZoneReading:
        """The grouping the rules like best: fewest flags (a reading that is alive and well formed
        beats one calling the hand dead), ties to the default grouping."""
        def cost(k: int) -> tuple[int, int]:
            return (len(rack_flags(options[k], self.ctx)[0]), k)

        return options[min(range(len(options)), key=cost)]

    def _exchange_flags(self, zones: dict[str, ZoneReading]) -> list[Flag]:
        """A joker leaving a declared Mah Jongg display between two frames (never allowed)."""
        flags = []
        for name, z in zones.items():
            if z.kind != "rack":
                continue
            jokers = z.tiles.count(JOKER)
            before = self._mj_jokers.get(name)
            if before is not None and len(z.tiles) >= 13 and jokers < before and not z.uncertain:
                flags.append(Flag("joker", name, f"{name}: a joker is being taken from a declared Mah Jongg "
                                                 "(its jokers are frozen)"))
            if len(z.tiles) >= 14 and not z.uncertain:
                self._mj_jokers[name] = jokers if before is None else max(jokers, before)
            elif len(z.tiles) < 13:
                self._mj_jokers.pop(name, None)
        return flags

    def describe(self) -> dict[str, Any]:
        return {"variant": self.ctx.rules.name, "tileset": self.ctx.tileset.name, "layout": self.layout.name}
