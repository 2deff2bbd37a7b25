"""The one meeting point between perception and rules: what the camera saw, per table zone.

A :class:`TableObservation` holds tile codes per zone (racks, discards) for one frame; it is
what ``companion.live`` turns into game events and what ``python -m companion analyze`` prints.
:class:`TableReader` makes one from a frame: calibrate (markers, or a fixed calibration), detect
tiles on the original frame, map their centres to table millimetres, assign them to layout
zones and read each (:mod:`companion.table_zones`; rack rows measured on the picture,
:mod:`companion.table_extents`), group rack tiles into exposures (:mod:`companion.table_group`)
and ask the rules (:mod:`companion.table_flags`), whose flags a frame it should not judge
withholds (:mod:`companion.table_guards`).
"""

from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import replace
from typing import Any, Protocol

import cv2
import numpy as np
import numpy.typing as npt

from companion.rules.card_model import Card
from companion.rules.tiles import JOKER, TILE_SETS
from companion.rules.variants import get_variant
from companion.table_extents import refit_racks
from companion.table_flags import RuleContext, evaluate, rack_flags
from companion.table_guards import (
    found_apart,
    guard_dead_calls,
    guard_overexposed,
    guard_weak_frame,
    second_reading_dead,
)
from companion.table_readings import VOUCH_CONFIDENCE, fold_to_set, vouched, with_rows
from companion.table_types import (
    FLAG_KINDS,
    MIN_CONFIDENCE,
    MIN_PITCH,
    TILE_MM,
    Flag,
    HomographyState,
    TableObservation,
    ZoneReading,
)
from companion.table_zones import read_zones, turn_loose_tiles, zone_names
from vision.blanks import blank_faces
from vision.calibrate import Calibration, Calibrator
from vision.layout import Layout
from vision.light import TABLE_LEVELS, without_light
from vision.types import Detections

__all__ = [
    "FLAG_KINDS", "MIN_CONFIDENCE", "MIN_PITCH", "TILE_MM", "Flag", "HomographyState", "Recognizer",
    "TableObservation", "TableReader", "ZoneReading", "read_zones", "refit_racks", "turn_loose_tiles",
]
RECTIFIED_PX_PER_MM = 20.0 / 24.0
"""Scale of the top-down view the table reader localises tiles on: a 24 mm tile 20 px wide, the
size the table localiser sees best (``vision.scales.TARGET_TILE_PX``)."""
MIN_VIEW_PX = 8.0
"""A zone whose tiles look narrower than this (pixels, their most foreshortened side scaled to a
tile's width: :meth:`TableReader.zone_tile_px`) gets a ``view`` flag asking for a better camera
placement.  On 50 rendered tables at 1280x720 (fifth session, the fourth session's classifier),
exposures on racks under 6 px were read right 71% of the time, 6-8 px 85%, 8 px and over
94-97%."""
VIEW_CLEAR_PX = 8.5
"""A zone flagged ``view`` keeps its flag until its tiles look at least this wide: a tile size
near :data:`MIN_VIEW_PX` that the homography's jitter moves across it from frame to frame does not
make the flag (and the live log's ``flag`` event) come and go."""


Known = tuple[set[str], Detections] | None  # racks the second reader read in this frame, and that reading


class Recognizer(Protocol):
    def detect(self, image: npt.NDArray[np.uint8]) -> Detections: ...


class TableReader:
    """Frame -> :class:`TableObservation`, called by the live loop on every stable frame.

    ``recognizer`` is anything with ``detect(image) -> Detections`` (``vision.pipeline.TileRecognizer``);
    ``tile_set`` names the physical set whose copies are counted (default: the variant's);
    ``calibration`` fixes the homography (clicked corners), otherwise markers are found in every
    frame and the last good homography is kept (``"stale"``) while a hand covers one.
    ``vouch``: the bar at which the second reader vouches for a weak tile (:meth:`_vouch_weak_racks`; None: never).
    """

    def __init__(self, layout: Layout, recognizer: Recognizer | None = None, card: Card | None = None,
                 variant: str = "mjm", calibration: Calibration | None = None, tile_set: str | None = None,
                 min_confidence: float = MIN_CONFIDENCE, count_backs: bool = True, lamp: bool = True,
                 vouch: float | None = VOUCH_CONFIDENCE) -> None:
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
        self._small_zones: set[str] = set()  # zones flagged ``view`` in the last frame
        self.lamp = lamp  # take a lamp's tint out of each frame before its tiles are read (vision.light)
        self.vouch = vouch  # a weak tile the second reader reads alike this surely is vouched for; None: never

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
        return self.observe(detections, calibration, state, frame)

    def zones_box(self, calibration: Calibration, shape: tuple[int, ...], margin_mm: float = 40.0) -> tuple[int, int, int, int]:
        """The image rectangle ``(x0, y0, x1, y1)`` holding every zone (plus a margin)."""
        pts = np.concatenate([np.asarray(z.polygon_mm, np.float32) for z in self.layout.zones])
        lo, hi = pts.min(axis=0) - margin_mm, pts.max(axis=0) + margin_mm
        corners = np.array([[lo[0], lo[1]], [hi[0], lo[1]], [hi[0], hi[1]], [lo[0], hi[1]]], np.float32)
        img = calibration.to_image(corners)
        x0, y0 = np.floor(img.min(axis=0)).astype(int)
        x1, y1 = np.ceil(img.max(axis=0)).astype(int)
        return max(0, x0), max(0, y0), min(int(shape[1]), x1), min(int(shape[0]), y1)

    def _zone_faces(self, calibration: Calibration) -> list[tuple[str, npt.NDArray[np.float64]]]:
        """Per zone, a tile's face (:data:`TILE_MM`, upright) at the zone's centre in image pixels."""
        w, h = TILE_MM
        out = []
        for z in self.layout.zones:
            c = np.asarray(z.polygon_mm, np.float64).mean(axis=0)
            face = c + np.array([[-w, -h], [w, -h], [w, h], [-w, h]], np.float64) / 2
            out.append((z.name, calibration.to_image(face.astype(np.float32)).astype(np.float64)))
        return out

    def tile_px(self, calibration: Calibration) -> float:
        """The expected tile width in image pixels at the zones (geometric mean over the zones).

        A tile's face (:data:`TILE_MM`) at each zone's centre is mapped to the image; its width is
        the square root of its image area over the face's aspect, so a tile seen in perspective
        or turned still counts by its size.
        """
        w, h = TILE_MM
        sizes = []
        for _, q in self._zone_faces(calibration):
            x, y = q[:, 0], q[:, 1]
            area = 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))
            sizes.append(np.sqrt(area * w / h))
        return float(np.exp(np.mean(np.log(np.maximum(sizes, 1e-3)))))

    def zone_tile_px(self, calibration: Calibration) -> dict[str, float]:
        """Per zone, how many pixels wide its tiles look: a :data:`TILE_MM` face at the zone's
        centre mapped to the image, its width and its height (scaled by the face's aspect to a
        width), whichever perspective shrinks more."""
        w, h = TILE_MM
        out = {}
        for name, q in self._zone_faces(calibration):
            side = np.linalg.norm(np.roll(q, -1, axis=0) - q, axis=1)
            out[name] = float(min((side[0] + side[2]) / 2, (side[1] + side[3]) / 2 * w / h))
        return out

    def _view_flags(self, calibration: Calibration) -> list[Flag]:
        """A ``view`` flag for each zone whose tiles look narrower than :data:`MIN_VIEW_PX` (kept
        until they look :data:`VIEW_CLEAR_PX` wide)."""
        px = self.zone_tile_px(calibration)
        self._small_zones = {name for name, p in px.items()
                             if p < MIN_VIEW_PX or (name in self._small_zones and p < VIEW_CLEAR_PX)}
        return [Flag("view", name, f"{name}: its tiles look under {MIN_VIEW_PX:g} px across in this picture, too small "
                                   "to read reliably: move the camera closer, face the table more squarely, or use a "
                                   "higher resolution")
                for name in px if name in self._small_zones]

    def _detect(self, image: npt.NDArray[np.uint8], tile_px: float) -> Detections:
        assert self.recognizer is not None
        if self._takes_tile_px is None:
            import inspect

            try:
                self._takes_tile_px = "tile_px" in inspect.signature(self.recognizer.detect).parameters
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

        A recogniser with separate ``localize`` and ``classify`` stages
        (``vision.pipeline.TileRecognizer``) localises on the zones rectified to a top-down view
        (:meth:`rectified_zones`: every tile the same size and square to the table, the far racks
        no smaller than the near ones), its quads are snapped to the table (:meth:`snap_quads`),
        and each tile is then cut from the original frame in true perspective and read.  Any
        other recogniser runs on the zones' crop of the frame, told the expected tile width if
        its ``detect`` takes ``tile_px``.
        """
        assert self.recognizer is not None
        x0, y0, x1, y1 = self.zones_box(calibration, frame.shape)
        if x1 - x0 < 32 or y1 - y0 < 32:
            return Detections.empty()
        frame = self._without_lamp(frame)
        localize, classify = getattr(self.recognizer, "localize", None), getattr(self.recognizer, "classify", None)
        if callable(localize) and callable(classify):
            t0 = time.perf_counter()
            top, to_table = self.rectified_zones(frame, calibration)
            quads, objectness = localize(top, tile_px=TILE_MM[0] * RECTIFIED_PX_PER_MM)
            q = np.asarray(quads, np.float32)
            in_mm = cv2.perspectiveTransform(q.reshape(-1, 1, 2), to_table).reshape(q.shape) if len(q) else q
            q, in_mm = turn_loose_tiles(self.layout, top, q, np.asarray(in_mm, np.float32), to_table)
            in_mm, objectness = refit_racks(self.layout, np.asarray(in_mm, np.float64),
                                            np.asarray(objectness, np.float32).reshape(-1), top, to_table)
            snapped = self.snap_quads(calibration.to_image(in_mm.astype(np.float32)), calibration)
            det = blank_faces(frame, classify(frame, snapped, tile_px=self.tile_px(calibration)))
            return replace(det, meta={"ms": round((time.perf_counter() - t0) * 1000, 2), "objectness": objectness,
                                      "crop": [x0, y0, x1, y1], "blank": det.meta["blank"]})
        tile_px = self.tile_px(calibration)
        shift = np.array([x0, y0], np.float32)
        det = self._detect(np.ascontiguousarray(frame[y0:y1, x0:x1]), tile_px)
        return Detections(det.boxes + np.tile(shift, 2), det.quads + shift, det.codes, det.confidence,
                          det.embeddings, dict(det.meta, crop=[x0, y0, x1, y1]), det.probs, det.classes)

    def _without_lamp(self, frame: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
        """``frame`` with a lamp's tint and dimness taken out before its tiles are read
        (``self.lamp``; :func:`vision.light.without_light`).  Twenty-eighth session, 50 tables at
        1280x720 / 1920x1080, exposures read (97.1 / 100 % in daylight): ``bench_table --lamp
        warm`` (a tungsten tint) 90.3 / 99.1 % kept, 95.0 / 100 % taken out; ``--lamp dim`` 80.6 /
        96.8 % kept, 97.7 / 99.4 % taken out.  A washed-out frame is stretched too
        (:data:`vision.light.TABLE_LEVELS`; twenty-ninth session, 25 tables: 89.3 / 99.4 % kept,
        98.9 / 100 % stretched).  Frames in daylight are left as they are."""
        return without_light(frame, TABLE_LEVELS) if self.lamp else frame

    def rectified_zones(self, frame: npt.NDArray[np.uint8], calibration: Calibration,
                        margin_mm: float = 20.0) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.float64]]:
        """The zones seen from straight above at :data:`RECTIFIED_PX_PER_MM`, and the homography
        from that image's pixels to table millimetres."""
        pts = np.concatenate([np.asarray(z.polygon_mm, np.float64) for z in self.layout.zones])
        lo, hi = pts.min(axis=0) - margin_mm, pts.max(axis=0) + margin_mm
        s = RECTIFIED_PX_PER_MM
        to_top = np.array([[s, 0, -lo[0] * s], [0, s, -lo[1] * s], [0, 0, 1]], np.float64)
        size = (max(32, int(np.ceil((hi[0] - lo[0]) * s))), max(32, int(np.ceil((hi[1] - lo[1]) * s))))
        top = cv2.warpPerspective(frame, to_top @ calibration.image_to_table, size, flags=cv2.INTER_LINEAR,
                                  borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0))
        return np.asarray(top, np.uint8), np.asarray(np.linalg.inv(to_top), np.float64)

    def snap_quads(self, quads: npt.ArrayLike, calibration: Calibration) -> npt.NDArray[np.float32]:
        """Detected quads (image pixels) -> the table's own tile outline at each centre, in pixels.

        A localiser's quad is a rotated rectangle in the image; a tile lies flat on the table and
        is seen in perspective.  Each centre is mapped to table millimetres and a :data:`TILE_MM`
        face is laid there, upright as its rack's owner reads it (in a rack) or along the detected
        long axis (discards, elsewhere), then mapped back to the image.
        """
        q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
        if len(q) == 0:
            return q
        qm = calibration.to_table(q).astype(np.float64)
        centres = qm.mean(axis=1)
        where = self.layout.assign(centres)
        e1, e2 = qm[:, 1] - qm[:, 0], qm[:, 2] - qm[:, 1]
        long_axis = np.where((np.linalg.norm(e2, axis=1) >= np.linalg.norm(e1, axis=1))[:, None], e2, e1)
        ups = -long_axis / np.maximum(np.linalg.norm(long_axis, axis=1, keepdims=True), 1e-9)
        for k, zone in enumerate(self.layout.zones):
            if zone.kind == "rack":
                ups[where == k] = self.layout.reading_axes(zone)[1]
        w, h = TILE_MM
        right = np.stack([-ups[:, 1], ups[:, 0]], axis=1)
        c, u, r = centres[:, None, :], ups[:, None, :] * (h / 2), right[:, None, :] * (w / 2)
        corners = np.concatenate([c + u - r, c + u + r, c - u + r, c - u - r], axis=1)
        return calibration.to_image(corners.astype(np.float32)).astype(np.float32)

    def observe(self, detections: Detections, calibration: Calibration,
                state: HomographyState = "fresh", frame: npt.NDArray[np.uint8] | None = None) -> TableObservation:
        """The observation for detections already made in this calibration's image, read within
        the codes of the set in play (:func:`fold_to_set`).  With the ``frame`` they were made
        in, and a recogniser that has a second reader (``check``), a dead-hand call stands only
        when that reading finds the hand dead too (:meth:`_check_dead_calls`)."""
        detections = fold_to_set(detections, set(self.ctx.tileset.counts))
        zones, known = self._zones(detections, calibration), None
        if frame is not None:
            detections, zones, known = self._vouch_weak_racks(frame, detections, calibration, zones)
        view = self._view_flags(calibration)  # a player's count is not judged on a rack too small to read
        flags, mahjong = evaluate(zones, self.ctx, self._small_zones)
        flags = guard_dead_calls(zones, flags, self.ctx)
        if frame is not None:
            flags = self._check_dead_calls(frame, detections, calibration, zones, flags, known)
        apart = found_apart(detections, lambda d: zone_names(self.layout, d, calibration))  # faces found among the backs
        flags, mahjong = guard_weak_frame(zones, flags, mahjong, apart)
        if frame is not None:
            flags, mahjong = guard_overexposed(frame, detections, zones, flags, mahjong)
        flags += self._exchange_flags(zones)
        flags += view
        return TableObservation(zones, state, tuple(flags), dict(mahjong))

    def _zones(self, detections: Detections, calibration: Calibration,
               only: Collection[str] | None = None) -> dict[str, ZoneReading]:
        return read_zones(self.layout, detections, calibration, self.min_confidence, self.ctx.chows,
                          self._choose, jokers=self.ctx.tileset.counts.get(JOKER, 0) > 0, only=only)

    def _second_reading(self, frame: npt.NDArray[np.uint8], det: Detections, calibration: Calibration,
                        racks: Collection[str]) -> tuple[npt.NDArray[np.intp], Detections | None]:
        """The detections lying in ``racks`` (their indexes) and ``det`` with their readings taken
        from the recogniser's second reader (``check``), within the set's codes; None without one."""
        check = getattr(self.recognizer, "check", None)
        rows = np.flatnonzero(np.isin(zone_names(self.layout, det, calibration), list(racks)))
        second = check(self._without_lamp(frame), det.quads[rows]) if len(rows) and callable(check) else None
        return rows, None if second is None else fold_to_set(with_rows(det, rows, second), set(self.ctx.tileset.counts))

    def _vouch_weak_racks(self, frame: npt.NDArray[np.uint8], det: Detections, calibration: Calibration,
                          zones: dict[str, ZoneReading]) -> tuple[Detections, dict[str, ZoneReading], Known]:
        """The racks holding a weak tile read again; their tiles the second reader reads alike at
        ``vouch`` or surer are read from both (:func:`~companion.table_readings.vouched`), so a weak
        tile vouched for leaves its rack judged (docs/table.md, "Weak tiles vouched for by the second
        reader").  A dead call is still checked (:meth:`_check_dead_calls`) on the reading returned."""
        weak = sorted(name for name, z in zones.items() if z.kind == "rack" and z.uncertain)
        if self.vouch is None or not weak or not len(det):
            return det, zones, None
        rows, again = self._second_reading(frame, det, calibration, weak)
        if again is None:
            return det, zones, None
        det, n = vouched(det, rows, again, self.vouch)
        return det, ({**zones, **self._zones(det, calibration, only=weak)} if n else zones), (set(weak), again)

    def _check_dead_calls(self, frame: npt.NDArray[np.uint8], det: Detections, calibration: Calibration,
                          zones: dict[str, ZoneReading], flags: list[Flag], known: Known = None) -> list[Flag]:
        """A dead-hand call kept only when a second classifier's reading of the rack calls it too.

        The tiles of each rack called dead are read again, at the same outlines, by the recogniser's
        ``check`` (``vision.pipeline.TABLE_CHECK_CLASSIFIER``, trained apart from the first), those
        racks alone are read again from it (``known``: racks it read already), and the table is judged
        again (:func:`~companion.table_guards.second_reading_dead`).  Where the second reading does not
        find the hand dead, the call becomes an ``unreadable`` flag of cause ``"check"`` that says what
        it saw (a player's correction of a tile clears it).  Two readers confidently wrong the same dead
        way are rarer than one (docs/table.md, "A second reader for dead-hand calls")."""
        dead = sorted({f.zone for f in flags if f.kind == "wrong_rack" and f.zone is not None})
        if not dead or not len(det):
            return flags
        racks, again = known or (set(), None)
        if again is None or not racks.issuperset(dead):  # read again where _vouch_weak_racks did not
            _, again = self._second_reading(frame, det, calibration, dead)
        if again is None:
            return flags
        zones = {**zones, **self._zones(again, calibration, only=dead)}
        confirmed = second_reading_dead(zones, self.ctx)
        out = [f for f in flags if not (f.kind == "wrong_rack" and f.zone not in confirmed)]
        for name in dead:
            if name not in confirmed:
                z = zones[name]
                seen = " | ".join(" ".join(e) for e in z.exposures) or "no exposure"
                n = len(set(z.uncertain) | {i for i, c in enumerate(z.own_confidence) if c < MIN_CONFIDENCE})
                weak = f", {n} of them read weakly" if n else ""
                out.append(Flag("unreadable", name, f"{name}: not judged: a second reading of its tiles ({seen}{weak}) "
                                                    "does not find the hand dead", cause="check"))
        return out

    def _choose(self, options: list[ZoneReading]) -> ZoneReading:
        """The grouping the rules like best: fewest flags (a reading that is alive and well formed
        beats one calling the hand dead), then the grouping rule's own reading (the first option:
        a joker at the seam of two touching exposures goes on with the group before it,
        :func:`companion.table_group.split_options`).

        Until the twenty-sixth session the card came between: the grouping more card hands could
        still use.  Where the flags tie, the rules judge the two readings alike, so the card only
        chose which of two physically alike readings to show, and could choose against the rule;
        on 200 rendered tables with true detections it never chose right where the rule was wrong
        and chose wrong twice (docs/table.md, "A back read weakly among faces; the card no longer
        chooses a seam")."""
        flags = [len(rack_flags(o, self.ctx)[0]) for o in options]
        return options[flags.index(min(flags))]

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
                                                 "(its jokers are frozen)", cause="exchange"))
            if len(z.tiles) >= 14 and not z.uncertain:
                self._mj_jokers[name] = jokers if before is None else max(jokers, before)
            elif len(z.tiles) < 13:
                self._mj_jokers.pop(name, None)
        return flags

    def describe(self) -> dict[str, Any]:
        return {"variant": self.ctx.rules.name, "tileset": self.ctx.tileset.name, "layout": self.layout.name}
