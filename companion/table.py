"""The one meeting point between perception and rules: what the camera saw, per table zone.

A :class:`TableObservation` holds tile codes per zone (racks, discards) for one frame; it is
what ``companion.live`` turns into game events and what ``python -m companion analyze`` prints.
:class:`TableReader` makes one from a frame: calibrate (markers, or a fixed calibration), detect
tiles on the original frame, map their centres to table millimetres, assign them to layout
zones, group rack tiles into exposures (:mod:`companion.table_group`) and ask the rules
(:mod:`companion.table_flags`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from dataclasses import replace
from typing import Any, Protocol

import cv2
import numpy as np
import numpy.typing as npt

from companion.rules.card_model import Card
from companion.rules.tiles import BACK, CHINESE_FLOWERS, FLOWER, JOKER, SEASONS, TILE_SETS, sort_key
from companion.rules.variants import get_variant
from companion.table_decode import ALT_FLOOR, SHORT, plausible_readings, read_run
from companion.table_extents import refit_racks
from companion.table_flags import MJ_SIZE, RuleContext, evaluate, player_totals, rack_flags
from companion.table_group import (
    SeenTile,
    grouping_options,
    open_ends,
    order_rows,
    thin_row,
    touching_runs,
)
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
from vision.calibrate import Calibration, Calibrator
from vision.layout import Layout, Zone
from vision.light import OVEREXPOSED, TABLE_LEVELS, clipped_share, without_light
from vision.types import Detections

__all__ = [
    "FLAG_KINDS", "MIN_CONFIDENCE", "MIN_PITCH", "TILE_MM", "Flag", "HomographyState", "Recognizer",
    "TableObservation", "TableReader", "ZoneReading", "read_zones", "refit_racks", "turn_loose_tiles",
]
RECTIFIED_PX_PER_MM = 20.0 / 24.0
"""Scale of the top-down view the table reader localises tiles on: a 24 mm tile 20 px wide, the
size the table localiser sees best (``vision.scales.TARGET_TILE_PX``)."""
LOOSE_TILE_SHRINK = 2
""":func:`turn_loose_tiles` measures a loose tile's edges on the top-down view shrunk by this
factor (0.42 px/mm, a 24 mm tile 10 px wide), where the face's own strokes blur away and its
outline stays (on 30 rendered tables its discards read better than at the view's full 0.83
px/mm)."""
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


class Recognizer(Protocol):
    def detect(self, image: npt.NDArray[np.uint8]) -> Detections: ...


Chooser = Callable[[list[ZoneReading]], ZoneReading]


def fold_to_set(det: Detections, codes: set[str]) -> Detections:
    """Detections read within the codes a tile set holds (backs always): an American set's flowers
    are all ``F``, so the Chinese flower and season classes fold into it; a code the set lacks
    (a joker in a Chinese set, an ``F`` there) gets no probability.  Codes and confidences follow
    the folded probabilities; detections without probabilities are returned as they are."""
    if det.probs is None or not det.classes or not len(det):
        return det
    classes = list(det.classes)
    probs = np.asarray(det.probs, np.float32).copy()
    if FLOWER in codes and FLOWER in classes:
        flowers = [classes.index(c) for c in CHINESE_FLOWERS + SEASONS if c in classes and c not in codes]
        if flowers:
            f = classes.index(FLOWER)
            probs[:, f] = np.maximum(probs[:, f], probs[:, flowers].max(axis=1))
    allowed = np.array([c in codes or c == BACK for c in classes])
    if allowed.all():
        return det
    probs[:, ~allowed] = 0.0
    total = probs.sum(axis=1, keepdims=True)
    probs = np.where(total > 0, probs / np.maximum(total, 1e-12), np.asarray(det.probs, np.float32))
    best = probs.argmax(axis=1)
    return replace(det, codes=np.array([classes[k] for k in best]),
                   confidence=probs[np.arange(len(best)), best].astype(np.float32), probs=probs)


def with_rows(det: Detections, rows: npt.NDArray[np.intp], other: Detections) -> Detections:
    """``det`` with the readings (codes, confidences, probabilities) of ``rows`` taken from
    ``other``, which read those tiles (in that order) at the same outlines; ``other``'s
    probabilities are laid into ``det``'s class columns by name (a class ``det`` lacks is dropped
    and the row renormalised).  Boxes, quads, embeddings and meta stay ``det``'s."""
    codes = det.codes.astype(object).copy()
    conf = np.asarray(det.confidence, np.float32).copy()
    codes[rows] = [str(c) for c in other.codes]
    conf[rows] = other.confidence
    probs = None  # without the other's probabilities, the runs are read from the codes
    if det.probs is not None and other.probs is not None:
        probs = np.asarray(det.probs, np.float32).copy()
        col = {c: k for k, c in enumerate(other.classes)}
        laid = np.zeros((len(rows), len(det.classes)), np.float32)
        for k, c in enumerate(det.classes):
            if c in col:
                laid[:, k] = other.probs[:, col[c]]
        total = laid.sum(axis=1, keepdims=True)
        probs[rows] = np.where(total > 0, laid / np.maximum(total, 1e-12), probs[rows])
    return replace(det, codes=np.array([str(c) for c in codes]), confidence=conf, probs=probs)


def _first(options: list[ZoneReading]) -> ZoneReading:
    return options[0]


MAX_READINGS = 64
"""At most this many plausible readings of a rack's uncertain tiles are judged; a rack with more
is left unjudged (``unreadable``)."""


WEAK_FRAME_SHARE = 0.40
"""A frame in which this share of the face-up tiles read weakly (under the reader's minimum
confidence) is not judged at all: a classifier unsure of two tiles in five is out of its depth (an
unfamiliar tile set, glare, a blurred frame), and its sure readings there are no safer.  On 50
rendered tables of the held-out artwork style at 1280x720 (tenth session) the two false rule flags
(a dead hand from three 8 Craks read as 5 Craks, a fifth 6 Dot) came in frames with 0.50 and 0.58
of the tiles weak; in the eleventh session, a Mah Jongg called in error (four red Souths read as
red dragons at 0.79-0.94) in a frame with 0.41 weak, and with the Noto glyphs a dead hand (two
1 Craks read as Souths at 0.78-0.80) with 0.44 (0.45 until then).  Of the tables in the
benchmark's own style, no frame with a true flag had over 0.36 (0.33 in the eleventh session)."""

WEAK_FRAME_MIN_TILES = 12
"""The share above is taken only in a frame with at least this many face-up tiles."""

OVEREXPOSED_WEAK = 0.25
"""An over-exposed frame (:data:`vision.light.OVEREXPOSED`) is not judged when this share of its
face-up tiles read weakly, however few they are (:meth:`TableReader._guard_overexposed`).  White
faces that read surely are judged as usual: a set drawn pure white is no over-exposed picture."""

BACK_LIKENESS = 0.96
"""A back whose classifier embedding has a cosine under this to the median of the frame's
backs is in doubt (:func:`_unlike_backs`).  Every back of a set is the same tile, so backs look
alike; a phantom (the bare rack past a row's end, a gap, a misread face) reads as a back surely
enough but looks unlike the real ones.  On 50 rendered tables at 1280x720 and 1920x1080
(twelfth session), with the committed table classifier, `km-jade` and `american-synth` faces: 23
of 5,788 real backs and 24 of 34 phantoms under 0.96.  With the eleventh session's classifier
and four face sets (each back against the median of the others), all but 10 of 10,134 real
backs had 0.955 or more (median 0.99), and 41 of 47 phantoms fell under 0.96."""

BACK_AS_FACE = 0.5
"""A tile read as a plain back at under this, in a row of face-up tiles, is read as a face
(:func:`_faces_for_weak_backs`): the faces together are then likelier than the back.  A rack's
backs stand in their own row, so a face-up tile of an exposure that the classifier reads a little
more like a back than like its own face is the usual cause of such a reading (twenty-sixth session:
a far rack's ``9D 9D 9D J`` read ``9D 9D BK J``, the back at 0.32 and the 9 Dot at 0.24, and the
exposure looked a tile short; two such exposures in the 50 tables of ``bench_table`` at 1280x720).
The localiser's phantom in a gap between two exposures reads as a back surer than that (0.88-0.91
in the eleventh session; one at 0.72 with the ``km-jade`` faces, its likeliest face 0.06) and is
left a back, still counted (:func:`_backs_among_faces`)."""

BACK_LIKENESS_MIN = 3
""":func:`_unlike_backs` judges only in a frame with at least this many backs."""


Run = tuple[list[int], list[tuple[tuple[str, ...], float]] | None]
"""A doubtful run: its tile indexes and its plausible readings (None: too many to enumerate)."""


def _decode_runs(seen: list[SeenTile], probs: npt.NDArray[np.float32], classes: tuple[str, ...], jokers: bool,
                 chows: bool, min_conf: float, short: float = SHORT) -> tuple[list[SeenTile], list[Run], list[float]]:
    """Each touching run of a rack read jointly (:func:`companion.table_decode.read_run`);
    also, for each run holding a tile read below ``min_conf``, the run's plausible readings
    (:func:`companion.table_decode.plausible_readings`; None when too many to enumerate), and
    each tile's own probability for the code the run gave it.

    The joint reading lifts a weak tile's confidence when its neighbours agree; it may not lift
    it over ``min_conf`` when the run's own evidence is weak too (the mean of each natural
    tile's own probability for its code under ``min_conf``): then the tile keeps that mean, and
    the run's plausible readings are weighed like any doubtful run's.  The tiles of one exposure
    are one face under one light, so they are misread alike; the chain counts them as several
    witnesses.  Twelfth session: four 6 Bams of an enrolled unfamiliar set, each read
    9 Bam at 0.49-0.71 (6 Bam 0.24-0.44), came out of the chain at 0.78-0.83 and made a Mah
    Jongg "in error" (1920x1080, `bench_table --faces american:xm-dorothys --enroll`); with the
    new table classifier they read 0.60-0.78, and the run's sure joker must not vouch for them.

    ``short``: the odds of an exposure of one or two tiles (:data:`companion.table_decode.SHORT`;
    1.0 on a Mah Jongg display); a run's ends are open where the next run lies near
    (:func:`companion.table_group.open_ends`)."""
    out = list(seen)
    doubtful: list[Run] = []
    owns = [t.confidence for t in seen]
    for row in order_rows(seen):
        # runs cut at TOUCH_RATIO, not at the grouping's soft-gap default (run_options): reading
        # the wider runs jointly measured worse (50 tables: 91.2 % / 96.8 % against 91.8 % / 97.7 %)
        runs = touching_runs(seen, row)
        for run, ends in zip(runs, open_ends(seen, runs), strict=True):
            reading = read_run(probs[run], classes, jokers=jokers, chows=chows, short=short, open_ends=ends)
            own = [float(probs[i, classes.index(code)]) for i, code in zip(run, reading.codes, strict=True)]
            kind = [o for o, code in zip(own, reading.codes, strict=True) if code != JOKER]
            whole = float(np.mean(kind)) if kind else 1.0  # a sure joker says nothing of the kind
            conf = [min(c, whole) if whole < min_conf and o < min_conf else c  # the run is unsure of it too
                    for c, o in zip(reading.confidence, own, strict=True)]
            for i, code, c, o in zip(run, reading.codes, conf, own, strict=True):
                out[i] = replace(seen[i], code=code, confidence=c)
                owns[i] = o
            if min(conf) < min_conf:
                # a tile read as almost anything may be any code (WILD) before a Mah Jongg
                # display, where a rack is judged dead only on exposures that hold none
                doubtful.append((list(run), plausible_readings(reading, wild=short < 1.0 and not chows)))
    return out, doubtful, owns


def rack_readings(seen: list[SeenTile], doubtful: list[Run], chows: bool,
                       floor: float = ALT_FLOOR, limit: int = MAX_READINGS) -> tuple[tuple[tuple[str, ...], ...], ...]:
    """Every grouping of the rack under each plausible reading of its doubtful runs together (a
    code can change where an exposure ends, so each combination is grouped again); empty when a
    run has too many readings to enumerate or their combinations exceed ``limit``."""
    if not doubtful or any(r is None for _, r in doubtful):
        return ()
    combos: list[tuple[list[tuple[list[int], tuple[str, ...]]], float]] = [([], 1.0)]
    for run, readings in doubtful:
        assert readings is not None
        combos = [(chosen + [(run, codes)], p * q) for chosen, p in combos for codes, q in readings if p * q >= floor]
        if len(combos) > limit:
            return ()
    found: dict[tuple[tuple[str, ...], ...], None] = {}
    for chosen, _ in combos:
        tiles = list(seen)
        for run, codes in chosen:
            for i, code in zip(run, codes, strict=True):
                tiles[i] = replace(seen[i], code=code)
        for groups in grouping_options(tiles, chows=chows):
            found[tuple(tuple(tiles[i].code for i in g) for g in groups)] = None
    return tuple(found)


def _thin(along: npt.NDArray[np.float32], across: npt.NDArray[np.float32],
          weight: npt.NDArray[np.float32]) -> npt.NDArray[np.int64]:
    """Indexes of a rack's detections left once each row is thinned to one tile per pitch."""
    rows = order_rows([SeenTile("", float(a), float(c), TILE_MM[0], TILE_MM[1]) for a, c in zip(along, across, strict=True)])
    keep: list[int] = []
    for row in rows:
        kept = thin_row([float(along[i]) for i in row], [max(float(weight[i]), 1e-3) for i in row], MIN_PITCH * TILE_MM[0])
        keep += [row[k] for k in kept]
    return np.asarray(sorted(keep), np.int64)


def turn_loose_tiles(
    layout: Layout,
    top: npt.NDArray[np.uint8],
    quads_top: npt.NDArray[np.float32],
    quads_mm: npt.NDArray[np.float32],
    to_table: npt.NDArray[np.float64],
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Quads off the racks (discards lie any way) turned to their tiles' edges in the top-down
    image ``top`` (:func:`vision.detect.refine_angles`); ``(quads in top, quads in mm)``.

    The localiser returns tilted tiles nearly upright, and :meth:`TableReader.snap_quads` lays a
    loose tile along the detected long axis, so its crop cut the face's corners.  Rack tiles are
    left alone: snapping lays them square to their rack.  Gradients are taken over the loose
    tiles' bounding box only, shrunk by :data:`LOOSE_TILE_SHRINK`.
    """
    from vision.detect import ANGLE_REACH, refine_angles  # vision.detect loads onnxruntime

    if len(quads_top) == 0:
        return quads_top, quads_mm
    where = layout.assign(quads_mm.mean(axis=1))
    loose = np.array([k < 0 or layout.zones[k].kind != "rack" for k in where], bool)
    if not loose.any():
        return quads_top, quads_mm
    q = quads_top[loose]
    pad = ANGLE_REACH * float(np.linalg.norm(q[:, 0] - q[:, 2], axis=1).max()) / 2
    h, w = top.shape[:2]
    x0, y0 = (int(max(v, 0)) for v in q.reshape(-1, 2).min(axis=0) - pad)
    x1, y1 = int(min(q[..., 0].max() + pad + 1, w)), int(min(q[..., 1].max() + pad + 1, h))
    if x1 - x0 < 8 or y1 - y0 < 8:
        return quads_top, quads_mm
    shift = np.array([x0, y0], np.float32)
    long_side = max(x1 - x0, y1 - y0) // LOOSE_TILE_SHRINK  # refine_angles shrinks by that factor
    turned = refine_angles(top[y0:y1, x0:x1], q - shift, work_long_side=long_side) + shift
    out_top, out_mm = quads_top.copy(), quads_mm.copy()
    out_top[loose] = turned
    out_mm[loose] = cv2.perspectiveTransform(turned.reshape(-1, 1, 2), to_table).reshape(turned.shape)
    return out_top, out_mm


def _rack_reading(layout: Layout, zone: Zone, det: Detections, centres: npt.NDArray[np.float32],
                  quads: npt.NDArray[np.float32], min_conf: float, chows: bool, choose: Chooser,
                  jokers: bool = True, weight: npt.NDArray[np.float32] | None = None,
                  unlike: npt.NDArray[np.bool_] | None = None) -> ZoneReading:
    axis, perp = layout.reading_axes(zone)
    keep = _thin(centres @ axis, centres @ perp, det.confidence if weight is None else weight)
    det, centres, quads = det[keep], centres[keep], quads[keep]
    doubt = _backs_among_faces(det, centres, perp)
    det = _faces_for_weak_backs(det, doubt)
    doubt = doubt & (det.codes == BACK)
    up = [i for i in range(len(det)) if str(det.codes[i]) != BACK]
    seen = [
        SeenTile(str(det.codes[i]), float(centres[i] @ axis), float(centres[i] @ perp),
                 float(np.ptp(quads[i] @ axis)), float(np.ptp(quads[i] @ perp)), float(det.confidence[i]))
        for i in up
    ]
    readings: tuple[tuple[tuple[str, ...], ...], ...] = ()
    own = [t.confidence for t in seen]  # each tile's own reading, before its run vouched for it
    if det.probs is not None and len(seen) > 0:
        # a rack showing a Mah Jongg holds real singles and pairs: its exposures' lengths are not
        # weighed (nor at one tile short of a display, where one may lie unseen)
        short = 1.0 if len(seen) >= MJ_SIZE - 1 else SHORT
        seen, doubtful, own = _decode_runs(seen, det.probs[up], det.classes, jokers, chows, min_conf, short)
        readings = rack_readings(seen, doubtful, chows)
    weak_backs = _weak_backs(det, min_conf, doubt if unlike is None else doubt | unlike[keep])
    options = []
    for groups in grouping_options(seen, chows=chows):
        order = [i for g in groups for i in g]
        tiles = tuple(seen[i].code for i in order)
        uncertain = tuple(k for k, i in enumerate(order) if seen[i].confidence < min_conf)
        exposures = tuple(tuple(seen[i].code for i in g) for g in groups)
        options.append(ZoneReading(zone.name, zone.kind, tiles, exposures, len(det) - len(up), zone.player,
                                   zone.hand, uncertain, tuple(seen[i].confidence for i in order), readings,
                                   weak_backs, tuple(own[i] for i in order)))
    return choose(options) if len(options) > 1 else options[0]


def _faces_for_weak_backs(det: Detections, doubt: npt.NDArray[np.bool_]) -> Detections:
    """A tile read as a back at under :data:`BACK_AS_FACE` in a row of face-up tiles (``doubt``:
    :func:`_backs_among_faces`) is read as a face: its likeliest code but the back, at that code's
    own probability (so it stays uncertain), for the run it lies in to read jointly."""
    if det.probs is None or BACK not in det.classes:
        return det
    turn = doubt & (det.codes == BACK) & (det.confidence < BACK_AS_FACE)
    if not turn.any():
        return det
    p = np.asarray(det.probs, np.float32)[turn]
    p[:, det.classes.index(BACK)] = 0.0
    best = p.argmax(axis=1)
    codes = det.codes.astype(object)
    codes[turn] = [det.classes[k] for k in best]
    conf = np.asarray(det.confidence, np.float32).copy()
    conf[turn] = p[np.arange(len(best)), best]
    return replace(det, codes=np.array([str(c) for c in codes]), confidence=conf)


def _loose_reading(zone: Zone, det: Detections, min_conf: float,
                   unlike: npt.NDArray[np.bool_] | None = None) -> ZoneReading:
    up = [i for i in range(len(det)) if str(det.codes[i]) != BACK]
    order = sorted(up, key=lambda i: (sort_key(str(det.codes[i])), i))
    tiles = tuple(str(det.codes[i]) for i in order)
    uncertain = tuple(k for k, i in enumerate(order) if float(det.confidence[i]) < min_conf)
    return ZoneReading(zone.name, zone.kind, tiles, (), len(det) - len(up), zone.player, zone.hand, uncertain,
                       tuple(float(det.confidence[i]) for i in order), weak_backs=_weak_backs(det, min_conf, unlike))


def _unlike_backs(det: Detections) -> npt.NDArray[np.bool_]:
    """Per detection, True for a back that looks unlike the frame's other backs (its embedding's
    cosine to the backs' median under :data:`BACK_LIKENESS`); all False without embeddings or with
    fewer than :data:`BACK_LIKENESS_MIN` backs.  Such a back still counts, but like a weak one it
    cannot make a count too many."""
    out = np.zeros(len(det), bool)
    backs = np.flatnonzero(np.asarray([str(c) == BACK for c in det.codes], bool))
    if det.embeddings is None or len(backs) < BACK_LIKENESS_MIN:
        return out
    e = np.asarray(det.embeddings, np.float64)[backs]
    e = e / np.maximum(np.linalg.norm(e, axis=1, keepdims=True), 1e-12)
    med = np.median(e, axis=0)  # with 3 or more backs, one phantom hardly moves it
    out[backs] = e @ med / max(float(np.linalg.norm(med)), 1e-12) < BACK_LIKENESS
    return out


def _weak_backs(det: Detections, min_conf: float, doubtful: npt.NDArray[np.bool_] | None = None) -> int:
    """Backs that may be phantoms: read weakly, or marked in ``doubtful`` (per detection:
    :func:`_backs_among_faces`, :func:`_unlike_backs`)."""
    weak = np.asarray(det.confidence) < min_conf
    if doubtful is not None:
        weak = weak | doubtful
    return int(sum(1 for i in np.flatnonzero(weak) if str(det.codes[i]) == BACK))


def _backs_among_faces(det: Detections, centres: npt.NDArray[np.float32],
                       perp: npt.NDArray[np.float32]) -> npt.NDArray[np.bool_]:
    """Per detection, True for a back read in a row of face-up tiles (a row, across the rack, holding no fewer face-up
    tiles than backs).

    A rack's backs stand in their own row; a "back" beside or between the face-up tiles of an
    exposure row is most likely the gap between two exposures, or the rack past a row's end, that
    the localiser took for a tile and the classifier for a plain back, however surely (eleventh
    session: false "player 1 shows 29 tiles" flags at 0.88-0.91).  Such a back still counts, but
    like a weak one it cannot make a count too many (:func:`companion.table_flags.totals_flags`)."""
    h = TILE_MM[1]
    across = centres @ perp
    backs = np.array([str(c) == BACK for c in det.codes], bool)
    out = np.zeros(len(det), bool)
    for i in np.flatnonzero(backs):
        row = np.abs(across - across[i]) < 0.5 * h
        out[i] = int((row & ~backs).sum()) >= int((row & backs).sum())
    return out


def read_zones(layout: Layout, det: Detections, calibration: Calibration, min_confidence: float = MIN_CONFIDENCE,
               chows: bool = False, choose: Chooser = _first, jokers: bool = True,
               only: Collection[str] | None = None) -> dict[str, ZoneReading]:
    """Every layout zone's reading from detections in image pixels (centres mapped to table mm);
    with ``only``, the readings of those zones alone.

    Detections that carry class probabilities have each touching run of a rack read jointly
    (:mod:`companion.table_decode`; ``jokers``: whether the set has any).

    Where a rack's grouping is ambiguous (jokers between two kinds in a touching run), ``choose``
    picks among the readings; the default takes the first.
    """
    wanted = [z for z in layout.zones if only is None or z.name in only]
    if len(det) == 0:
        return {z.name: ZoneReading(z.name, z.kind, (), (), 0, z.player, z.hand) for z in wanted}
    centres = calibration.to_table(det.centres)
    quads = calibration.to_table(det.quads)
    where = layout.assign(centres)
    obj = det.meta.get("objectness")
    weight = np.asarray(obj, np.float32) if obj is not None and len(obj) == len(det) else det.confidence
    unlike = _unlike_backs(det)
    zones: dict[str, ZoneReading] = {}
    for k, zone in enumerate(layout.zones):
        if only is not None and zone.name not in only:
            continue
        mask = where == k
        sub = det[mask]
        if zone.kind == "rack":
            zones[zone.name] = _rack_reading(layout, zone, sub, centres[mask], quads[mask], min_confidence, chows,
                                              choose, jokers, weight[mask], unlike[mask])
        else:
            zones[zone.name] = _loose_reading(zone, sub, min_confidence, unlike[mask])
    return zones


def _withheld(zones: dict[str, ZoneReading], flags: list[Flag], why: str, cause: str) -> list[Flag]:
    """``flags`` without the rule flags (``wrong_rack``, ``tile_count``, ``joker``), and an
    ``unreadable`` flag of ``cause`` saying ``why`` on each rack with face-up tiles that has none:
    a frame the reader should not judge."""
    out = [f for f in flags if f.kind not in ("wrong_rack", "tile_count", "joker")]
    have = {(f.kind, f.zone) for f in out}
    for z in zones.values():
        if z.kind == "rack" and z.tiles and ("unreadable", z.name) not in have:
            out.append(Flag("unreadable", z.name, f"{z.name}: {why}", cause=cause))
    return out


class TableReader:
    """Frame -> :class:`TableObservation`, called by the live loop on every stable frame.

    ``recognizer`` is anything with ``detect(image) -> Detections`` (``vision.pipeline.TileRecognizer``);
    ``tile_set`` names the physical set whose copies are counted (default: the variant's);
    ``calibration`` fixes the homography (clicked corners), otherwise markers are found in every
    frame and the last good homography is kept (``"stale"``) while a hand covers one.
    """

    def __init__(self, layout: Layout, recognizer: Recognizer | None = None, card: Card | None = None,
                 variant: str = "mjm", calibration: Calibration | None = None, tile_set: str | None = None,
                 min_confidence: float = MIN_CONFIDENCE, count_backs: bool = True, lamp: bool = True) -> None:
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
            det = classify(frame, snapped, tile_px=self.tile_px(calibration))
            meta = {"ms": round((time.perf_counter() - t0) * 1000, 2), "objectness": objectness,
                    "crop": [x0, y0, x1, y1]}
            return Detections(det.boxes, det.quads, det.codes, det.confidence, det.embeddings, meta, det.probs,
                              det.classes)
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
        zones = self._zones(detections, calibration)
        flags, mahjong = evaluate(zones, self.ctx)
        flags = self._guard_dead_calls(zones, flags)
        if frame is not None:
            flags = self._check_dead_calls(frame, detections, calibration, zones, flags)
        flags, mahjong = self._guard_weak_frame(zones, flags, mahjong)
        if frame is not None:
            flags, mahjong = self._guard_overexposed(frame, detections, zones, flags, mahjong)
        flags += self._exchange_flags(zones)
        flags += self._view_flags(calibration)
        return TableObservation(zones, state, tuple(flags), dict(mahjong))

    def _zones(self, detections: Detections, calibration: Calibration,
               only: Collection[str] | None = None) -> dict[str, ZoneReading]:
        return read_zones(self.layout, detections, calibration, self.min_confidence, self.ctx.chows,
                          self._choose, jokers=self.ctx.tileset.counts.get(JOKER, 0) > 0, only=only)

    def _check_dead_calls(self, frame: npt.NDArray[np.uint8], det: Detections, calibration: Calibration,
                          zones: dict[str, ZoneReading], flags: list[Flag]) -> list[Flag]:
        """A dead-hand call kept only when a second classifier's reading of the rack calls it too.

        The tiles of each rack called dead are read again, at the same outlines, by the
        recogniser's ``check`` (``vision.pipeline.TABLE_CHECK_CLASSIFIER``: a table classifier
        trained apart from the first), those racks alone are read again from it (the other zones
        keep ``zones``, their first reading), and the table is judged again, by the same rules and
        guards.  Where the second reading does not find the hand dead, the call is
        replaced by an ``unreadable`` flag of cause ``"check"`` that says what the second reading
        saw (a player's correction of a tile clears it, and the rack is judged).  Two readers
        confidently wrong the same dead way are rarer than one: the table classifier committed in
        the twenty-second session reads a displayed ``6B 6B 6B 6B J`` of a set no model trained on
        as four 9 Bams at 0.95-0.99 and alone calls the Mah Jongg in error; the second reads them
        as 9 Bams too, but three of them weakly, so the call is withheld.
        Without a second reader, or without the frame, the call rests on the one reading."""
        check = getattr(self.recognizer, "check", None)
        dead = sorted({f.zone for f in flags if f.kind == "wrong_rack" and f.zone is not None})
        if not dead or not callable(check) or not len(det):
            return flags
        names = np.array([z.name for z in self.layout.zones] + [""])
        rows = np.flatnonzero(np.isin(names[self.layout.assign(calibration.to_table(det.centres))], dead))
        second = check(self._without_lamp(frame), det.quads[rows]) if len(rows) else None
        if second is None:
            return flags
        again = fold_to_set(with_rows(det, rows, second), set(self.ctx.tileset.counts))
        zones = {**zones, **self._zones(again, calibration, only=dead)}
        confirmed = {f.zone for f in self._guard_dead_calls(zones, evaluate(zones, self.ctx)[0])
                     if f.kind == "wrong_rack"}
        out = [f for f in flags if not (f.kind == "wrong_rack" and f.zone not in confirmed)]
        for name in dead:
            if name not in confirmed:
                z = zones[name]
                seen = " | ".join(" ".join(e) for e in z.exposures) or "no exposure"
                weak = f", {len(z.uncertain)} of them read weakly" if z.uncertain else ""
                out.append(Flag("unreadable", name, f"{name}: not judged: a second reading of its tiles ({seen}{weak}) "
                                                    "does not find the hand dead", cause="check"))
        return out

    def _guard_dead_calls(self, zones: dict[str, ZoneReading], flags: list[Flag]) -> list[Flag]:
        """No dead-hand call on a player whose tile count the camera did not see add up.

        A tile the camera missed, or a phantom it added, changes a group's size, and a group of
        the wrong size can make a live hand look dead.  Where backs are countable and a player's
        visible total is off, that player's racks with exposures are not judged: an ``unreadable``
        flag of cause ``"count"`` (which a player's correction of a tile does not clear) replaces
        any ``wrong_rack``; the ``tile_count`` flag still says what is off, so a true count error
        is flagged either way.  (A rack with an uncertain tile is judged only when every plausible
        reading of it is dead: :func:`companion.table_flags.rack_flags`.)
        """
        if not self.ctx.count_backs:
            return flags
        off: dict[str, str] = {}
        for p, (total, expected, racks) in player_totals(zones, self.ctx).items():
            if total not in (expected, expected + 1):
                for z in racks:
                    if z.exposures:
                        off[z.name] = f"player {p} shows {total} tiles, not {expected} or {expected + 1}"
        out = [f for f in flags if not (f.kind == "wrong_rack" and f.zone in off)]
        for name, why in off.items():
            out.append(Flag("unreadable", name, f"{name}: not judged while {why} (a tile may be hidden or misread)",
                            cause="count"))
        return out

    def _guard_weak_frame(
        self, zones: dict[str, ZoneReading], flags: list[Flag], mahjong: dict[str, dict[str, Any] | None]
    ) -> tuple[list[Flag], dict[str, dict[str, Any] | None]]:
        """No rule flag and no score from a frame whose tiles mostly read weakly (:data:`WEAK_FRAME_SHARE`).

        The rule flags (``wrong_rack``, ``tile_count``, ``joker``) are withheld and every rack with
        face-up tiles gets an ``unreadable`` flag of cause ``"frame"`` that says why and what helps;
        displayed Mah Jonggs are not scored.
        """
        n = sum(len(z.tiles) for z in zones.values())
        weak = sum(len(z.uncertain) for z in zones.values())
        if n < WEAK_FRAME_MIN_TILES or weak < WEAK_FRAME_SHARE * n:
            return flags, mahjong
        why = (f"{weak} of the {n} face-up tiles in view read weakly, so this frame is not judged "
               "(an unfamiliar tile set reads better once enrolled: `companion enroll`; a closer, "
               "steadier camera or less glare also helps)")
        return _withheld(zones, flags, why, "frame"), {name: None for name in mahjong}

    def _guard_overexposed(
        self, frame: npt.NDArray[np.uint8], det: Detections, zones: dict[str, ZoneReading], flags: list[Flag],
        mahjong: dict[str, dict[str, Any] | None],
    ) -> tuple[list[Flag], dict[str, dict[str, Any] | None]]:
        """No rule flag and no score from an over-exposed frame (:data:`vision.light.OVEREXPOSED`
        of its face-up tiles' pixels clipped white) in which :data:`OVEREXPOSED_WEAK` of the
        face-up tiles read weakly, as from a frame read weakly (:meth:`_guard_weak_frame`), each
        rack's ``unreadable`` flag of cause ``"picture"`` saying what helps.  Burnt-out faces are
        misread surely beside the weak ones: on 25 rendered tables over-exposed (``bench_table
        --poor over``, twenty-ninth session) the reader raised 2 false flags of 6 at 1280x720 and 1
        of 2 at 1920x1080 (a joker alone, a tile count), none in daylight; those frames had 0.75
        (of 8 tiles, too few for the weak-frame guard) and 0.39 of their tiles weak."""
        n = sum(len(z.tiles) for z in zones.values())
        if not n or sum(len(z.uncertain) for z in zones.values()) < OVEREXPOSED_WEAK * n:
            return flags, mahjong
        faces = det.quads[np.array([str(c) != BACK for c in det.codes], bool)] if len(det) else det.quads
        share = clipped_share(frame, faces)  # as the camera took it: a lamp's gains cannot unclip a pixel
        if share < OVEREXPOSED:
            return flags, mahjong
        why = (f"the picture is over-exposed ({share:.0%} of the tile faces' pixels are pure white), so this "
               "frame is not judged: turn the lamp away from the table or lower the camera's exposure")
        return _withheld(zones, flags, why, "picture"), {name: None for name in mahjong}

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
                                                 "(its jokers are frozen)"))
            if len(z.tiles) >= 14 and not z.uncertain:
                self._mj_jokers[name] = jokers if before is None else max(jokers, before)
            elif len(z.tiles) < 13:
                self._mj_jokers.pop(name, None)
        return flags

    def describe(self) -> dict[str, Any]:
        return {"variant": self.ctx.rules.name, "tileset": self.ctx.tileset.name, "layout": self.layout.name}
