"""The rows of a laid-out grid of tiles: which way they run and which tile lies where in them.

:func:`layout_tilt` finds the angle at which a layout's rows run; :func:`row_groups` groups tiles
into rows across it; :func:`fit_rows` fits the localiser's tiles of an enrollment photo taken at a
table to the layout's rows, leaving out a tile found twice or on the cloth and filling in one
missed.  :mod:`vision.enroll_grid` finds the tiles and orders them with these.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]


def layout_tilt(centres: FloatArray) -> float:
    """The angle (radians, within +-45 degrees of the image's x axis) at which a laid-out grid's
    rows run: the median direction from each tile to its nearest neighbour (mostly the next in its
    row, tiles being taller than wide; a neighbour in its column gives the same angle a quarter
    turn round).  0 for fewer than three tiles."""
    c = np.asarray(centres, np.float64).reshape(-1, 2)
    if len(c) < 3:
        return 0.0
    d = np.linalg.norm(c[:, None] - c[None], axis=2)
    np.fill_diagonal(d, np.inf)
    v = c[np.argmin(d, axis=1)] - c
    ang = np.arctan2(v[:, 1], v[:, 0])
    ang = (ang + np.pi / 4) % (np.pi / 2) - np.pi / 4  # rows and columns alike, either way round
    return float(np.median(ang))



FIT_MISSING = 4
"""At most this many tiles of a layout are filled in where the localiser found none of its usual
sureness (:func:`fit_rows`)."""
FIT_EVIDENCE = 0.1
"""The objectness down to which the localiser's peaks count as a sign of a tile at a row's end
(:func:`fit_rows`): on five rendered table photos, the tiles missed at a row's end (at the 0.3 the
localiser keeps, or left out for their size) peaked at 0.23-0.55 where they lay."""
FIT_NEAR = 0.35
"""...when centred within this share of a step of the place."""


def fit_rows(
    quads: FloatArray, scores: FloatArray, rows: list[int], weak: FloatArray | None = None
) -> FloatArray:
    """The localiser's tiles fitted to the layout's rows, in layout order; empty when they do not fit.

    On a photo of a table, the localiser often finds a layout's tiles with one found twice or
    boxed on the cloth, or one missed (34-40 of 37 on rendered table photos).  Tiles far from the median size are left out; the rest are grouped into
    rows along the layout's own direction (:func:`layout_tilt`; a group of one or two off every
    row is left out where there are more groups than rows), and each tile given its place in its
    row from the median step between neighbours.  Of two in one place the surer is kept.  A row
    with more places than the layout asks fails; a place missing inside a row is filled with its
    neighbour's quad moved one step, and places missing at a row's ends are filled one at a time,
    each at whichever end the localiser saw a tile at all (a peak of ``weak``, the centres of its
    finds down to :data:`FIT_EVIDENCE`, within :data:`FIT_NEAR` of a step) where it saw none at
    the other; where it saw one at both or neither, nothing fits.  At most :data:`FIT_MISSING`
    are filled."""
    empty = np.zeros((0, 4, 2), np.float32)
    q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    if not rows or not 0.8 * sum(rows) <= len(q) <= 1.3 * sum(rows):
        return empty
    found = _in_rows(q, np.asarray(scores, np.float32), len(rows))
    if found is None:
        return empty
    q, sc, u, groups, pitch, along = found
    seen = np.asarray(weak if weak is not None else q.mean(axis=1), np.float32).reshape(-1, 2)
    out: list[FloatArray] = []
    filled = 0
    for n, g in zip(rows, groups, strict=True):
        row = _placed(u, sc, g, pitch)
        if max(row) - min(row) + 1 > n:
            return empty
        tiles = _row_filled({k: q[i] for k, i in row.items()}, n, pitch * along, seen, FIT_NEAR * pitch)
        if tiles is None:
            return empty
        filled += n - len(row)
        out.extend(tiles[k] for k in sorted(tiles))
    if filled > FIT_MISSING:
        return empty
    return np.stack(out).astype(np.float32)


def _in_rows(
    q: FloatArray, sc: FloatArray, n_rows: int
) -> tuple[FloatArray, FloatArray, npt.NDArray[np.float64], list[list[int]], float, npt.NDArray[np.float64]] | None:
    """:func:`fit_rows`' tiles of about the median size grouped into ``n_rows`` rows along the
    layout's direction: ``(quads, scores, place along the rows, groups, pitch, the rows'
    direction)``, or None when they do not make that many rows with a step between neighbours."""
    from vision.detect import quad_params

    p = quad_params(q)
    area = p[:, 2] * p[:, 3]
    keep = (area > 0.45 * np.median(area)) & (area < 2.2 * np.median(area))
    q, sc, p = q[keep], sc[keep], p[keep]
    tilt = layout_tilt(p[:, :2])
    along = np.array([np.cos(tilt), np.sin(tilt)])
    uv = p[:, :2] @ np.stack([along, [-along[1], along[0]]], axis=1)
    groups = row_groups(uv[:, 1], 0.5 * float(np.median(p[:, 3])))
    while len(groups) > n_rows and min(len(g) for g in groups) <= 2:
        groups.remove(min(groups, key=len))
    if len(groups) != n_rows:
        return None
    diffs = np.concatenate([np.diff(np.sort(uv[g, 0])) for g in groups if len(g) > 1])
    pitch = float(np.median(diffs)) if len(diffs) else 0.0
    pitch = float(np.median(diffs[diffs < 1.5 * pitch])) if pitch > 0 else 0.0
    if pitch <= 0:
        return None
    return q, sc, uv[:, 0], groups, pitch, along


def _row_filled(
    tiles: dict[int, FloatArray], n: int, step: npt.NDArray[np.float64], seen: FloatArray, near: float
) -> dict[int, FloatArray] | None:
    """One row's ``tiles`` (by place) made ``n`` long, as :func:`fit_rows` fills it: a place
    missing at an end is filled at the end where the localiser saw a tile (a point of ``seen``
    within ``near`` of it) and not at the other, one at a time; a place missing inside, with its
    left neighbour moved a ``step``.  None where an end cannot be told."""
    while max(tiles) - min(tiles) + 1 < n:  # missing at an end: the end where the localiser saw a tile
        lo, hi = min(tiles), max(tiles)
        ends = {lo - 1: _moved(tiles[lo], -step), hi + 1: _moved(tiles[hi], step)}
        shown = [k for k, v in ends.items()
                 if len(seen) and float(np.min(np.linalg.norm(seen - v.mean(axis=0), axis=1))) < near]
        if len(shown) != 1:
            return None
        tiles[shown[0]] = ends[shown[0]]
    first = min(tiles)
    for k in range(first, first + n):
        if k not in tiles:  # a place missing inside the row: its left neighbour moved a step
            tiles[k] = _moved(tiles[k - 1], step)
    return tiles


def row_groups(v: npt.NDArray[np.float64], gap: float) -> list[list[int]]:
    """Indices grouped into rows: sorted across the rows, a new row wherever the next lies more
    than ``gap`` beyond the mean of the row so far."""
    order = np.argsort(v)
    groups: list[list[int]] = [[int(order[0])]] if len(order) else []
    for i in order[1:]:
        if v[i] - float(np.mean(v[groups[-1]])) > gap:
            groups.append([])
        groups[-1].append(int(i))
    return groups


def _placed(u: npt.NDArray[np.float64], sc: FloatArray, group: list[int], pitch: float) -> dict[int, int]:
    """``{place in the row: index}`` for one row's tiles (``group``), places counted in steps of
    ``pitch`` along the row (``u``) from its first tile; of two in one place the surer kept."""
    places = np.rint((u[group] - u[group].min()) / pitch).astype(int)
    row: dict[int, int] = {}
    for k, i in zip(places.tolist(), group, strict=True):
        if k not in row or sc[i] > sc[row[k]]:
            row[k] = i
    return row


def _moved(quad: FloatArray, by: npt.NDArray[np.float64]) -> FloatArray:
    return (np.asarray(quad, np.float32) + np.asarray(by, np.float32)).astype(np.float32)
