"""Where a rack row's tiles begin and end, measured on the table's top-down view.

The localiser can miss a tile at a run's end or box two as one. :func:`row_extents` samples a
rack row along its middle and finds the stretches of tile against the table's colour
(:func:`zone_background`); :func:`refit_racks` lays the detections of each run again, evenly, over
the stretch it covers, so the run's tile count follows the picture (docs/table.md, "Runs
recounted from their length" and "Runs counted on the picture").  :class:`companion.table.TableReader`
runs it before cutting the tiles.
"""

from __future__ import annotations

from typing import NamedTuple

import cv2
import numpy as np
import numpy.typing as npt

from companion.table_group import SeenTile, order_rows
from companion.table_runs import RUN_JOINT_MM, RUN_SLACK, refit_extents, refit_runs
from companion.table_types import MIN_PITCH, TILE_MM
from vision.layout import Layout, Zone

EXTENT_BAND = 0.3
""":func:`row_extents` samples a rack row across its middle, this share of a tile's height either
side of the row's centre line (clear of the tile's edges and of the next row)."""
EXTENT_CLOSE_MM = 3.0
"""Gaps in a row's tile-versus-table profile up to this long are closed (a bamboo stick's gap, a
dark print on a face the table's colour): two exposures lie 6-20 mm apart."""
EXTENT_TILE = 0.4
"""A sample of a rack row is tile where its CIELAB distance from the table's colour passes this
share of the row's tiles' (median over its detections) ..."""
EXTENT_TABLE = 0.2
"""... and a stretch under that parts two runs only where :data:`EXTENT_GAP_MM` of it come under
this share: the seams between touching tiles, a dark face or a bamboo's stick come to 0.15-0.4 of
the tiles' distance, a gap between exposures to under 0.1."""
EXTENT_GAP_MM = 4
"""Millimetres of table (samples under :data:`EXTENT_TABLE`) that part two stretches of tile: two
exposures lie 6-20 mm apart; a dark print inside a face showed 2-3 (1920x1080, table 13)."""
EXTENT_NOISE = 10.0
"""... or under this distance, whatever the tiles' contrast (the table's own texture and light)."""
EXTENT_REACH = 4.0
"""A row is sampled this many tile widths past its first and last detections: the localiser can
miss the last two tiles of a run (1280x720, table 7: `1C 1C J` found as one box)."""
EXTENT_FAR_REACH = 14.0
"""... and where a stretch of tile runs out of that span, sampled again this far past (within
the rack's zone): a long row of backs on a far rack, where the localiser found 2 of 8 tiles at
one end (Royale 4-handed, 1280x720, table 3; sixty-second session)."""
ROW_PITCH_MM = TILE_MM[1] + 2.0
"""A rack's two rows (its exposures and its face-down tiles) lie this far apart, middle to middle,
across the rack (:func:`missed_row`)."""
MISSED_ROW_CONTRAST = 0.7
"""A stretch of a rack row the localiser found nothing on is laid as tiles only where its samples'
median distance from the table's colour is this share of the rack's other row's tiles' or more
(:func:`missed_row`): real rows the localiser missed measured 0.85-1.5 of it, the felt's own
texture on a light set's table 0.44-0.48 (Royale 4-handed, sixty-fourth session)."""
EXTENT_MIN_CONTRAST = 30.0
"""A row whose tiles differ from the table by less than this (CIELAB distance, 8-bit scale,
median over the detections) is not measured: tiles and table too alike to find the tiles' ends."""


def zone_background(top: npt.NDArray[np.uint8], to_top: npt.NDArray[np.float64], zone: Zone,
                    quads_mm: npt.NDArray[np.float64], clear_mm: float = 4.0) -> npt.NDArray[np.float32] | None:
    """The table's colour in a zone (CIELAB median of the top-down view ``top`` over the zone's
    polygon, less every detection grown by ``clear_mm`` all round, sampled at every other pixel),
    or None where under 100 samples remain."""
    half = np.diag([0.5, 0.5, 1.0]) @ to_top  # the mask is drawn at half the view's scale
    poly = cv2.perspectiveTransform(np.asarray(zone.polygon_mm, np.float32).reshape(-1, 1, 2), half).reshape(-1, 2)
    x0, y0 = (max(0, int(v)) for v in np.floor(poly.min(axis=0)))
    x1 = int(min(np.ceil(poly[:, 0].max()) + 1, top.shape[1] // 2))
    y1 = int(min(np.ceil(poly[:, 1].max()) + 1, top.shape[0] // 2))
    if x1 - x0 < 2 or y1 - y0 < 2:
        return None
    shift = np.array([x0, y0], np.float32)
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)  # the zone's bounding box only
    cv2.fillPoly(mask, [np.round(poly - shift).astype(np.int32)], 255)
    if len(quads_mm):
        q = np.asarray(quads_mm, np.float64)
        mid = q.mean(axis=1, keepdims=True)
        grown = mid + (q - mid) * (1 + 2 * clear_mm / np.linalg.norm(q[:, :1] - q[:, 2:3], axis=2, keepdims=True))
        g = cv2.perspectiveTransform(grown.astype(np.float32).reshape(-1, 1, 2), half).reshape(-1, 4, 2)
        cv2.fillPoly(mask, list(np.round(g - shift).astype(np.int32)), 0)
    ys, xs = np.nonzero(mask)
    if len(ys) < 100:
        return None
    step = max(1, len(ys) // 2000)  # a few thousand pixels tell the table's colour
    pixels = np.ascontiguousarray(top[2 * (y0 + ys[::step]), 2 * (x0 + xs[::step])].reshape(-1, 1, 3))
    lab = cv2.cvtColor(pixels, cv2.COLOR_BGR2LAB).reshape(-1, 3)
    return np.asarray(np.median(lab.astype(np.float32), axis=0), np.float32)


class RowProfile(NamedTuple):
    """What the picture shows along one rack row (:func:`row_profile`), in mm along the row."""

    extents: list[tuple[float, float, bool]]
    """Stretches of tile, ``(start, stop, closed)``: closed where table shows at both ends."""
    table: list[tuple[float, float]]
    """Stretches of bare table: samples as near the table's colour as the gaps between two
    exposures (:data:`EXTENT_TABLE`, :data:`EXTENT_NOISE`; in a row too like the table to be
    measured, :data:`EXTENT_NOISE` alone)."""


def row_extents(top: npt.NDArray[np.uint8], to_top: npt.NDArray[np.float64], axis: npt.NDArray[np.float64],
                perp: npt.NDArray[np.float64], across: float, lo: npt.NDArray[np.float64],
                hi: npt.NDArray[np.float64], background: npt.NDArray[np.float32],
                bounds: tuple[float, float] | None = None) -> list[tuple[float, float, bool]]:
    """The stretches of tile of :func:`row_profile`."""
    return row_profile(top, to_top, axis, perp, across, lo, hi, background, bounds).extents


def row_profile(top: npt.NDArray[np.uint8], to_top: npt.NDArray[np.float64], axis: npt.NDArray[np.float64],
                perp: npt.NDArray[np.float64], across: float, lo: npt.NDArray[np.float64],
                hi: npt.NDArray[np.float64], background: npt.NDArray[np.float32],
                bounds: tuple[float, float] | None = None) -> RowProfile:
    """Stretches along one rack row where the top-down view ``top`` shows tile, not table:
    ``(start, stop, closed)``, in mm along the row, closed where table shows at both ends; and
    the stretches where it shows bare table.

    The row is sampled every millimetre from :data:`EXTENT_REACH` tiles before its first
    detection (``lo``/``hi``: each detection's extent along the row) to as many after its last,
    across its middle
    (:data:`EXTENT_BAND`); a sample is tile where its CIELAB distance from ``background`` passes
    :data:`EXTENT_TILE` of the detections' median distance.  Gaps up to :data:`EXTENT_CLOSE_MM`
    are closed, and so are gaps with less table in them than :data:`EXTENT_GAP_MM`
    (:data:`EXTENT_TABLE`, :data:`EXTENT_NOISE`); a stretch that reaches either end of the
    sampled span is not ``closed``.  A row whose tiles are too like the table
    (:data:`EXTENT_MIN_CONTRAST`) gives none.  Given the rack zone's ``bounds`` along the row
    (mm), a stretch that reaches an end of the sampled span is sampled again, that end moved out
    to :data:`EXTENT_FAR_REACH` tiles past the detections or the zone's bound, whichever is nearer.
    """
    w = TILE_MM[0]
    first, last = float(lo.min()) - EXTENT_REACH * w, float(hi.max()) + EXTENT_REACH * w
    us, dist = _sample_row(top, to_top, axis, perp, across, first, last, background)
    spans, table = _stretches(us, dist, lo, hi)
    if bounds is not None:
        far_first = max(min(bounds), float(lo.min()) - EXTENT_FAR_REACH * w)
        far_last = min(max(bounds), float(hi.max()) + EXTENT_FAR_REACH * w)
        if spans and ((spans[0][0] == 0 and far_first < first) or (spans[-1][1] == len(us) and far_last > last)):
            first = min(first, far_first) if spans[0][0] == 0 else first
            last = max(last, far_last) if spans[-1][1] == len(us) else last
            us, dist = _sample_row(top, to_top, axis, perp, across, first, last, background)
            spans, table = _stretches(us, dist, lo, hi)
    edges = np.flatnonzero(np.diff(np.concatenate([[0], table.astype(np.int8), [0]])))
    return RowProfile([(float(us[s]) - 0.5, float(us[e - 1]) + 0.5, s > 0 and e < len(us)) for s, e in spans],
                      [(float(us[s]) - 0.5, float(us[e - 1]) + 0.5) for s, e in zip(edges[::2], edges[1::2], strict=True)])


def _sample_row(top: npt.NDArray[np.uint8], to_top: npt.NDArray[np.float64], axis: npt.NDArray[np.float64],
                perp: npt.NDArray[np.float64], across: float, first: float, last: float,
                background: npt.NDArray[np.float32]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float32]]:
    """A rack row sampled every millimetre along it from ``first`` to ``last`` (mm), across its
    middle: the places and each one's CIELAB distance from the table's colour ``background``."""
    h = TILE_MM[1]
    us = np.arange(first, last, 1.0)
    vs = across + np.linspace(-EXTENT_BAND * h, EXTENT_BAND * h, 7)
    grid = us[None, :, None] * axis + vs[:, None, None] * perp
    px = cv2.perspectiveTransform(grid.reshape(-1, 1, 2).astype(np.float32), to_top).reshape(len(vs), len(us), 2)
    sampled = cv2.remap(top, px[..., 0], px[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    lab = cv2.cvtColor(sampled, cv2.COLOR_BGR2LAB).astype(np.float32)
    return us, np.median(np.linalg.norm(lab - background, axis=2), axis=0).astype(np.float32)


def _stretches(us: npt.NDArray[np.float64], dist: npt.NDArray[np.float32], lo: npt.NDArray[np.float64],
               hi: npt.NDArray[np.float64], contrast: float | None = None) -> tuple[list[list[int]], npt.NDArray[np.bool_]]:
    """The stretches of tile in a row's profile (:func:`row_profile`), as ``[start, stop)``
    sample indexes (none where the row's tiles are too like the table), and which samples are
    bare table.  The tiles' ``contrast`` is measured where the detections lie (``lo``/``hi``)
    unless given."""
    if contrast is None:
        covered = ((us[:, None] >= lo[None, :]) & (us[:, None] <= hi[None, :])).any(axis=1)
        contrast = float(np.median(dist[covered])) if covered.any() else 0.0
    if contrast < EXTENT_MIN_CONTRAST:
        return [], dist < EXTENT_NOISE
    tile = dist > EXTENT_TILE * contrast
    table = dist < max(EXTENT_TABLE * contrast, EXTENT_NOISE)
    edges = np.flatnonzero(np.diff(np.concatenate([[0], tile.astype(np.int8), [0]])))
    spans = [[int(s), int(e)] for s, e in zip(edges[::2], edges[1::2], strict=True)]  # [start, stop)
    merged: list[list[int]] = []
    for s, e in spans:
        gap = table[merged[-1][1]:s] if merged else table[:0]
        if merged and (s - merged[-1][1] <= EXTENT_CLOSE_MM or np.count_nonzero(gap) < EXTENT_GAP_MM):
            merged[-1][1] = e
        else:
            merged.append([s, e])
    return merged, table


def missed_row(top: npt.NDArray[np.uint8], to_top: npt.NDArray[np.float64], axis: npt.NDArray[np.float64],
               perp: npt.NDArray[np.float64], line: float, bounds: tuple[float, float],
               background: npt.NDArray[np.float32], contrast: float) -> list[float]:
    """Where along a rack row that the localiser found no tile on (``line``, mm across the rack)
    tiles lie all the same: the row sampled across the zone (``bounds``, mm along it), its
    stretches of tile against the table's colour (as :func:`row_profile`, at the ``contrast`` of
    the rack's other row, and as far from the table as :data:`MISSED_ROW_CONTRAST` of it) that
    end on table and are a whole number of tiles long (within
    :data:`~companion.table_runs.RUN_SLACK` of one, touching
    :data:`~companion.table_runs.RUN_JOINT_MM` apart, as a run is recounted from its extent);
    those tiles' centres, laid evenly over each.  Royale 4-handed with the demo's set,
    1920x1080, table 1: a rack's 12 backs beside its exposure, none found, and its player called
    12 tiles short (sixty-fourth session)."""
    if contrast < EXTENT_MIN_CONTRAST:
        return []
    us, dist = _sample_row(top, to_top, axis, perp, line, bounds[0], bounds[1], background)
    spans, _ = _stretches(us, dist, us[:0], us[:0], contrast)
    pitch, out = TILE_MM[0] + RUN_JOINT_MM, []
    for s, e in spans:
        length = float(us[e - 1] - us[s]) + 1.0 + RUN_JOINT_MM  # n tiles and the n - 1 joints between
        n = round(length / pitch)
        if s > 0 and e < len(us) and n >= 1 and abs(length / pitch - n) <= RUN_SLACK \
                and float(np.median(dist[s:e])) >= MISSED_ROW_CONTRAST * contrast:
            out += [float(us[s]) - 0.5 + (k + 0.5) * length / n for k in range(n)]
    return out


def _row_fits(
    lo: npt.NDArray[np.float64], hi: npt.NDArray[np.float64], weight: npt.NDArray[np.float32],
    profile: RowProfile | None,
) -> list[tuple[list[int], list[float]]]:
    """One rack row's runs to lay again, as :func:`refit_racks` lays them: ``(the row's tiles,
    their new centres along the rack)``, from the stretches of tile and of table measured on the
    picture (``profile``; None: not measured) and, for the tiles those leave, from the boxes'
    lengths."""
    w = TILE_MM[0]
    fits: list[tuple[list[int], list[float]]] = []
    if profile is not None:
        fits = refit_extents([float(v) for v in lo], [float(v) for v in hi], [float(v) for v in weight],
                             profile.extents, w, MIN_PITCH * w, table=profile.table)
    done = {i for run, _ in fits for i in run}
    rest = [i for i in range(len(lo)) if i not in done]
    more = refit_runs([float(lo[i]) for i in rest], [float(hi[i]) for i in rest], w, MIN_PITCH * w)
    return fits + [([rest[i] for i in run], placed) for run, placed in more]


def refit_racks(layout: Layout, quads_mm: npt.NDArray[np.float64], weight: npt.NDArray[np.float32],
                top: npt.NDArray[np.uint8] | None = None, to_table: npt.NDArray[np.float64] | None = None,
                ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float32]]:
    """Localised quads (table mm) with each rack run that the localiser miscounted laid again.

    Tiles on a rack touch edge to edge, so a touching run's length says how many tiles it holds.
    Given the top-down view (``top``, and ``to_table`` from its pixels to table mm), each rack
    row's runs are measured on the picture (:func:`row_extents`), and a run whose detections
    disagree with its length is laid again (:func:`companion.table_runs.refit_extents`).  Of the
    rest, where the localiser found one tile twice, or two as one, and the length of its boxes
    says so (:func:`companion.table_runs.refit_runs`), the run is laid again too.  A run laid
    again is that many :data:`TILE_MM` tiles evenly over its length (weight: the mean of the
    detections it replaces).  Other quads are kept as they are; new ones come after them.
    """
    if len(quads_mm) == 0:
        return quads_mm, weight
    centres = quads_mm.mean(axis=1)
    where = layout.assign(centres)
    keep = np.ones(len(quads_mm), bool)
    new_q: list[npt.NDArray[np.float64]] = []
    new_w: list[float] = []
    w, h = TILE_MM
    to_top = None if top is None or to_table is None else np.asarray(np.linalg.inv(to_table), np.float64)
    for k, zone in enumerate(layout.zones):
        idx = np.flatnonzero(where == k)
        if zone.kind != "rack" or len(idx) == 0:
            continue
        axis, perp = (v.astype(np.float64) for v in layout.reading_axes(zone))
        r, t = axis * (w / 2), perp * (h / 2)
        corners = np.stack([-r - t, r - t, r + t, t - r])  # a tile's outline about its centre
        along = quads_mm[idx] @ axis
        lo, hi = along.min(axis=1), along.max(axis=1)
        across = centres[idx] @ perp
        seen = [SeenTile("", float(a + b) / 2, float(c), w, h) for a, b, c in zip(lo, hi, across, strict=True)]
        background = None
        if top is not None and to_top is not None:
            background = zone_background(top, to_top, zone, quads_mm[idx])
        reach = np.asarray(zone.polygon_mm, np.float64) @ axis
        bounds = (float(reach.min()), float(reach.max()))
        rows = order_rows(seen)
        for row in rows:
            profile = None
            if background is not None and top is not None and to_top is not None:
                mid = float(np.median(across[row]))
                profile = row_profile(top, to_top, axis, perp, mid, lo[row], hi[row], background, bounds)
            for run, placed in _row_fits(lo[row], hi[row], weight[idx[row]], profile):
                members = idx[[row[i] for i in run]]
                keep[members] = False
                mid = float(np.median(across[[row[i] for i in run]]))
                new_q += [axis * u + perp * mid + corners for u in placed]
                new_w += [float(np.mean(weight[members]))] * len(placed)
        if len(rows) == 1 and background is not None and top is not None and to_top is not None:
            # the rack's other row, where the localiser found nothing: its tiles found on the picture
            mid, side = float(np.median(across[rows[0]])), np.asarray(zone.polygon_mm, np.float64) @ perp
            _, dist = _sample_row(top, to_top, axis, perp, mid, float(lo.min()), float(hi.max()), background)
            for line in (mid - ROW_PITCH_MM, mid + ROW_PITCH_MM):
                if side.min() <= line - h / 2 + 2 and line + h / 2 - 2 <= side.max():
                    placed = missed_row(top, to_top, axis, perp, line, bounds, background, float(np.median(dist)))
                    new_q += [axis * u + perp * line + corners for u in placed]
                    new_w += [float(np.median(weight[idx]))] * len(placed)
    if not new_q:  # nothing laid again; phantoms, if any, dropped
        return quads_mm[keep], weight[keep]
    return (np.concatenate([quads_mm[keep], np.asarray(new_q, np.float64)]),
            np.concatenate([weight[keep], np.asarray(new_w, np.float32)]).astype(np.float32))
