"""Each table zone read from the tiles found in it: a rack's exposures, backs and doubtful runs,
and the loose tiles off the racks.

:func:`read_zones` assigns a frame's detections to the layout's zones and reads each: on a rack,
rows ordered and thinned, runs grouped into exposures (:mod:`companion.table_group`) and decoded
jointly where their tiles read weakly (:mod:`companion.table_decode`), backs told from faces;
elsewhere, the tiles as read.  :func:`turn_loose_tiles` turns the discards to their own edges.
:class:`companion.table.TableReader` calls both.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import replace

import cv2
import numpy as np
import numpy.typing as npt

from companion.rules.tiles import BACK, JOKER, sort_key
from companion.table_decode import ALT_FLOOR, SHORT, plausible_readings, read_run
from companion.table_flags import MJ_SIZE
from companion.table_group import (
    SeenTile,
    grouping_options,
    open_ends,
    order_rows,
    thin_row,
    touching_runs,
)
from companion.table_types import (
    MIN_CONFIDENCE,
    MIN_PITCH,
    TILE_MM,
    ZoneReading,
)
from vision.calibrate import Calibration
from vision.layout import Layout, Zone
from vision.types import Detections

Chooser = Callable[[list[ZoneReading]], ZoneReading]
"""Picks one of a rack's plausible readings (:meth:`companion.table.TableReader._choose`)."""

LOOSE_TILE_SHRINK = 2
""":func:`turn_loose_tiles` measures a loose tile's edges on the top-down view shrunk by this
factor (0.42 px/mm, a 24 mm tile 10 px wide), where the face's own strokes blur away and its
outline stays (on 30 rendered tables its discards read better than at the view's full 0.83
px/mm)."""

LOOSE_TILE_COHERENCE = 0.15
""":func:`turn_loose_tiles` turns a loose tile where this share of the gradient energy around it
agrees on one square orientation; half :data:`vision.detect.ANGLE_COHERENCE`, the photos' bar.  A
dark face on a busy table cloth (`km-jade`'s dark red tiles) has a faint outline, and at 0.3 a
discard lying at 20 degrees was often left upright and cut across a row of its dots (fifty-ninth
session, 50 rendered tables of six face sets: `km-jade`'s discards 90.0 / 94.7 % -> 92.0 / 96.3 %
read right at 1280x720 / 1920x1080, 92.9 / 91.6 % -> 97.3 / 95.1 % on 20 tables at 2560x1440 /
3840x2160, `american-synth`'s 96.7 -> 96.9 % at 1280x720, the other four sets' the same)."""


def _first(options: list[ZoneReading]) -> ZoneReading:
    return options[0]


MAX_READINGS = 64
"""At most this many plausible readings of a rack's uncertain tiles are judged; a rack with more
is left unjudged (``unreadable``)."""


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

STRAY_GAP = 1.15
"""A back in a row of face-up tiles, past the row's end and this many tile widths or more from its
nearest face-up tile (centre to centre; touching tiles lie about 1.0 apart), alone past that end,
is the bare rack the localiser took for a tile, not a tile (:func:`_stray_backs`).  In 2560x1440
and 3840x2160 frames it is found past an exposure row at 1.2-1.4 widths (one at 3.0), read as a
back at 0.84-0.92: on 20 rendered tables at 3840x2160 of the demo's set, 8 of the 15 racks showing
one back too many (and 3 of 3 at 1920x1080), and no such back on a rack whose count was right
(sixty-first session, docs/table.md, "A back past an exposure row")."""


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

    The localiser returns tilted tiles nearly upright, and :meth:`companion.table.TableReader.snap_quads` lays a
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
    turned = refine_angles(top[y0:y1, x0:x1], q - shift, coherence=LOOSE_TILE_COHERENCE, work_long_side=long_side) + shift
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
    stray = _stray_backs(det, centres @ axis, centres @ perp, doubt)
    if stray.any():  # not counted: the bare rack past a row's end
        keep = keep[~stray]
        det, centres, quads, doubt = det[~stray], centres[~stray], quads[~stray], doubt[~stray]
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
                                   weak_backs, tuple(own[i] for i in order), int(stray.sum())))
    return choose(options) if len(options) > 1 else options[0]


def _stray_backs(det: Detections, along: npt.NDArray[np.float32], across: npt.NDArray[np.float32],
                 doubt: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """Per detection, True for a back in a row of face-up tiles (``doubt``: :func:`_backs_among_faces`)
    that lies past the row's end, :data:`STRAY_GAP` tile widths or more from the row's face-up
    tiles, and alone past that end.  A rack's backs stand in their own row; backs between an
    exposure's faces (a Chinese concealed kong) or touching its end are counted as before."""
    out = np.zeros(len(det), bool)
    backs = det.codes == BACK
    for i in np.flatnonzero(doubt):
        row = np.abs(across - across[i]) < 0.5 * TILE_MM[1]
        faces = along[row & ~backs]
        if not len(faces) or faces.min() < along[i] < faces.max():
            continue
        beyond = along[row & backs] > faces.max() if along[i] > faces.max() else along[row & backs] < faces.min()
        out[i] = float(np.abs(faces - along[i]).min()) >= STRAY_GAP * TILE_MM[0] and int(beyond.sum()) == 1
    return out


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


def zone_names(layout: Layout, det: Detections, calibration: Calibration) -> npt.NDArray[np.str_]:
    """The name of the layout zone each detection lies in ("" for none)."""
    return np.array([z.name for z in layout.zones] + [""])[layout.assign(calibration.to_table(det.centres))]


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
