"""Tiles the photo localiser boxed wrongly, mended from their neighbours.

- A back boxed smaller than the face-up tiles beside it is grown to their size (:func:`grown_backs`).
- A tile boxed in part is moved to where a quad of its neighbours' size lies on its rim
  (:func:`rim_grown`).
- Two halves of one tile are joined (:func:`halves_of_tiles`).
- A tile boxed across its length is boxed again along it (:func:`across_tiles`).

:class:`vision.pipeline.TileRecognizer` reads the mended quads again. A tile grown to its rim keeps
its new reading. Two halves are joined where the whole reads about as surely as either half. A
tile boxed across its length takes the new reading where it names another tile more surely. The
neighbours are the tiles that score :data:`MIN_SCORE`, the photo's own bar
for a tile (docs/recognition.md, "Backs boxed whole", "Part of a tile boxed, grown to its rim", "A
tile boxed across its length").
"""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import numpy.typing as npt

from companion.rules.tiles import BACK
from vision.detect import quad_params, rect_quads
from vision.rims import rim_contrast
from vision.types import Detections

MIN_SCORE = 0.2
"""On a photo (no ``tile_px``), :meth:`vision.pipeline.TileRecognizer.detect` keeps a tile when its localiser
objectness times its classifier confidence reaches this: a box the localiser is unsure is a tile
and the classifier unsure what it shows is more often a false box or a misread than a tile.  Ninth
session, tile F1 at 0 / 0.1 / 0.15 / **0.2** / 0.25 / 0.3: valid photos 0.927 / 0.928 / 0.930 /
**0.931** / 0.930 / 0.930, 1280x720 frames 0.881 / 0.886 / 0.895 / **0.901** / 0.905 / 0.907,
American scenes 0.942 / 0.945 / 0.946 / **0.949** / 0.949 / 0.947 (their recall, the bench's
per-tile accuracy, 0.933 -> 0.931).  The table reader reads its own way and keeps every tile
(its uncertain tiles are flagged, never dropped)."""


SMALL_BACK_AREA = 0.6
"""A tile read as a back (``BK``) whose quad covers less than this share of the median area of
its face-up neighbours (:data:`BACK_NEIGHBOURS`, each scoring :data:`MIN_SCORE` or more) is grown
about its centre to that area (:func:`grown_backs`)."""
BACK_NEIGHBOURS = 6
"""How many of the nearest face-up tiles a back is measured against; none is grown among fewer."""


def grown_backs(det: Detections, objectness: npt.NDArray[np.float32]) -> Detections:
    """``det`` with each back boxed much smaller than the face-up tiles beside it grown to their
    size (:data:`SMALL_BACK_AREA`).  A back is a plain coloured face: the localiser often boxes
    only its coloured panel, inside the tile's rim, where a face-up tile's print gives it no such
    choice; a tile of the same set is the same size as its neighbours."""
    back = det.codes == BACK
    face = ~back & (np.asarray(det.confidence, np.float32) * np.asarray(objectness, np.float32) >= MIN_SCORE)
    if not back.any() or face.sum() < BACK_NEIGHBOURS:
        return det
    p = quad_params(det.quads)
    area = p[:, 2] * p[:, 3]
    faces = np.flatnonzero(face)
    quads = det.quads.copy()
    grown = False
    for i in np.flatnonzero(back):
        dist = np.hypot(p[faces, 0] - p[i, 0], p[faces, 1] - p[i, 1])
        near = faces[np.argsort(dist)[:BACK_NEIGHBOURS]]
        target = float(np.median(area[near]))
        if area[i] < SMALL_BACK_AREA * target:
            centre = quads[i].mean(axis=0)
            quads[i] = centre + (quads[i] - centre) * np.sqrt(target / max(float(area[i]), 1e-6))
            grown = True
    if not grown:
        return det
    boxes = np.concatenate([quads.min(axis=1), quads.max(axis=1)], axis=1).astype(np.float32)
    return replace(det, boxes=boxes, quads=quads.astype(np.float32))


SMALL_QUAD_AREA = 0.75
"""A photo's tile whose quad covers less than this share of its neighbours' size (the median short
side times the median long side of the :data:`BACK_NEIGHBOURS` nearest tiles scoring
:data:`MIN_SCORE`) may be boxed in part: :func:`rim_grown` tries it at their size."""
RIM_GAIN = 1.6
""":func:`rim_grown` moves a quad to its neighbours' size when the tile's rim is at least this many
times as sharp there (:func:`vision.rims.rim_contrast`) as on the quad the localiser gave."""
RIM_OVERLAP = 0.1
"""... and when the grown quad takes in at most this share of its area from another tile's quad
(in a pile, a tile partly under another is rightly boxed small)."""


NeighbourSizes = tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_], npt.NDArray[np.float32], npt.NDArray[np.float32]]
""":func:`neighbour_sizes`' answer."""


def neighbour_sizes(
    det: Detections, objectness: npt.NDArray[np.float32], known: tuple[NeighbourSizes | None] | None = None
) -> NeighbourSizes | None:
    """``(params, sure, short, long)``: each tile's :func:`vision.detect.quad_params`, whether it
    scores :data:`MIN_SCORE`, and the median short and long side of the :data:`BACK_NEIGHBOURS`
    nearest other tiles that do; None when no more than that many do.  ``known``: that answer
    already measured on the same tiles, as a 1-tuple (a photo's rules share it while no tile moves)."""
    if known is not None:
        return known[0]
    sure = np.asarray(det.confidence, np.float32) * np.asarray(objectness, np.float32) >= MIN_SCORE
    if sure.sum() <= BACK_NEIGHBOURS:
        return None
    p = quad_params(np.asarray(det.quads, np.float32))
    dist = np.hypot(p[:, None, 0] - p[None, :, 0], p[:, None, 1] - p[None, :, 1])
    dist[:, ~sure] = np.inf
    np.fill_diagonal(dist, np.inf)
    near = np.argsort(dist, axis=1)[:, :BACK_NEIGHBOURS]
    return p, sure, np.median(p[near, 2], axis=1), np.median(p[near, 3], axis=1)


def takes_in_another(
    quad: npt.NDArray[np.float32],
    i: int,
    given: npt.NDArray[np.float32],
    bounds: tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]],
    sure: npt.NDArray[np.bool_],
    most: float,
) -> bool:
    """Whether ``quad``, tried in place of tile ``i``'s quad, takes in more than ``most`` square
    pixels of another tile's quad among ``given`` that scores :data:`MIN_SCORE` (``sure``);
    ``bounds``: the ``given`` quads' corner-wise minima and maxima."""
    lo, hi = bounds
    q_lo, q_hi = quad.min(axis=0), quad.max(axis=0)
    beside = np.flatnonzero(sure & np.all(hi > q_lo, axis=1) & np.all(lo < q_hi, axis=1))
    return any(cv2.intersectConvexConvex(quad, given[j])[0] > most for j in beside if j != i)


def rim_grown(
    image_bgr: npt.NDArray[np.uint8],
    det: Detections,
    objectness: npt.NDArray[np.float32],
    known: tuple[NeighbourSizes | None] | None = None,
) -> npt.NDArray[np.float32]:
    """``(N, 4, 2)``: ``det``'s quads, each one boxed much smaller than the tiles around it
    (:data:`SMALL_QUAD_AREA`) moved to where a quad of their size lies on the tile's rim.

    The localiser sometimes boxes half a tile: a face's half with the print, a crak's character
    without its numeral.  A tile of the same set is the size of its neighbours, so a small quad is
    tried at their size, turned as it is, in nine places: about its centre, or grown from any one
    of its sides or corners.  The place whose weakest side parts two colours most sharply
    (:func:`vision.rims.rim_contrast`) is kept when it is :data:`RIM_GAIN` times as sharp as
    the quad given, and takes in little of another tile (:data:`RIM_OVERLAP`).  A tile seen whole
    keeps its quad: each side already lies on its rim.
    """
    given = np.asarray(det.quads, np.float32)
    quads = given.copy()
    sizes = neighbour_sizes(det, objectness, known)
    if sizes is None:
        return quads
    p, sure, size_s, size_l = sizes
    size_s, size_l = np.maximum(size_s, p[:, 2]), np.maximum(size_l, p[:, 3])
    lo, hi = given.min(axis=1), given.max(axis=1)
    h, w = image_bgr.shape[:2]
    for i in np.flatnonzero(p[:, 2] * p[:, 3] < SMALL_QUAD_AREA * size_s * size_l):
        cx, cy, short, long, theta = (float(v) for v in p[i])
        along = np.array([np.sin(theta), -np.cos(theta)]) * (size_l[i] - long) / 2
        across = np.array([np.cos(theta), np.sin(theta)]) * (size_s[i] - short) / 2
        centres = np.array([[cx, cy] + along * dl + across * ds for dl in (0, 1, -1) for ds in (0, 1, -1)])
        k = len(centres)
        tries = rect_quads(centres[:, 0], centres[:, 1], np.full(k, size_s[i]), np.full(k, size_l[i]), np.full(k, theta))
        both = np.concatenate([given[i : i + 1], tries])
        # the colours around these quads alone, in CIELAB (the whole picture costs 1-2 ms)
        margin = 0.1 * float(size_s[i]) + 3.0
        x0, y0 = (max(0, int(np.floor(v - margin))) for v in both.reshape(-1, 2).min(axis=0))
        x1, y1 = (int(np.ceil(v + margin)) + 1 for v in both.reshape(-1, 2).max(axis=0))
        x1, y1 = min(w, x1), min(h, y1)
        if x1 - x0 < 2 or y1 - y0 < 2:
            continue
        lab = np.asarray(cv2.cvtColor(image_bgr[y0:y1, x0:x1], cv2.COLOR_BGR2LAB), np.float32)
        score = rim_contrast(lab, both - np.array([x0, y0], np.float32))
        most = RIM_OVERLAP * size_s[i] * size_l[i]
        # the sharpest try that takes in no other tile, best first: most tiles stop at the first look
        for t in np.argsort(-score[1:], kind="stable"):
            if not score[t + 1] > RIM_GAIN * score[0]:
                break
            if not takes_in_another(tries[t], int(i), given, (lo, hi), sure, most):
                quads[i] = tries[t]
                break
    return quads


HALVES_JOINED = True
"""Whether two small quads that together make one tile are read as that tile
(:func:`halves_of_tiles`); the whole is kept where it reads at most :data:`HALF_TIE` less surely
than the surer half (thirty-ninth session: valid +1 tile, six American seeds +1 tile and 2 false
tiles fewer, 1280x720 frames +2 and 6 fewer; docs/recognition.md)."""
HALF_FILL = 0.75
"""Two halves fill at least this share of the rectangle about both."""
HALF_SIZE = (0.8, 1.25)
"""That rectangle's area against their neighbours' size."""
HALF_TURN = float(np.radians(12.0))
"""The two halves' long axes (or one's long and the other's short) lie within this of parallel."""
HALF_TIE = 0.02
"""A half is as sure of itself as the whole tile is: a 4-dot's half is a perfect 2-dot (0.96 and
0.95 against 0.949 for the whole, in one of the bench's scenes)."""


def halves_of_tiles(
    det: Detections, objectness: npt.NDArray[np.float32], known: tuple[NeighbourSizes | None] | None = None
) -> list[tuple[int, int, npt.NDArray[np.float32]]]:
    """``[(i, j, quad)]``: pairs of tiles each boxed much smaller than their neighbours
    (:data:`SMALL_QUAD_AREA`) that lie side by side and together make one tile of their
    neighbours' size: ``quad`` is the rectangle about both (:data:`HALF_FILL`, :data:`HALF_SIZE`,
    :data:`HALF_TURN`).  The localiser sometimes boxes each half of one tile, and each half reads
    as a tile of its own (a 4-dot's halves as two 2-dots).  Each tile is in one pair at most, the
    best filled first."""
    sizes = neighbour_sizes(det, objectness, known)
    if sizes is None:
        return []
    p, _, size_s, size_l = sizes
    area = p[:, 2] * p[:, 3]
    small = np.flatnonzero(area < SMALL_QUAD_AREA * size_s * size_l)
    if len(small) < 2:
        return []
    q = p[small]
    dist = np.hypot(q[:, None, 0] - q[None, :, 0], q[:, None, 1] - q[None, :, 1])
    turn = np.abs(q[:, None, 4] - q[None, :, 4]) % (np.pi / 2)
    reach = 0.5 * (size_l[small][:, None] + size_l[small][None, :])  # their centres within a tile's length
    near = (dist <= reach) & (np.minimum(turn, np.pi / 2 - turn) <= HALF_TURN)
    found = []
    for a, b in zip(*np.nonzero(np.triu(near, 1)), strict=True):
        i, j = int(small[a]), int(small[b])
        rect = cv2.minAreaRect(np.concatenate([det.quads[i], det.quads[j]]).astype(np.float32))
        whole = float(rect[1][0] * rect[1][1])
        target = float(size_s[i] * size_l[i] + size_s[j] * size_l[j]) / 2
        if whole <= 0 or not HALF_SIZE[0] <= whole / target <= HALF_SIZE[1]:
            continue
        if (area[i] + area[j]) / whole < HALF_FILL:
            continue
        found.append((float(area[i] + area[j]) / whole, i, j, cv2.boxPoints(rect).astype(np.float32)))
    used: set[int] = set()
    out = []
    for _, i, j, quad in sorted(found, key=lambda f: -f[0]):
        if i not in used and j not in used:
            used.update((i, j))
            out.append((i, j, quad))
    return out


ACROSS_TURNED = True
"""Whether a photo's tile the localiser may have boxed across its length is read whole where that
names another tile more surely (:func:`across_tiles`; forty-first session: the six American seeds
+2 tiles, seeds 1-12 +1, the 1280x720 frames +1, valid +1, no tile lost; docs/recognition.md)."""
ACROSS_ASPECT = 1.35
"""A quad is nearly square when its long side over its short is under this, and under its
neighbours' (:func:`neighbour_sizes`)."""
ACROSS_FIT = (0.82, 0.9)
"""... its short side under the first share of its neighbours' long side, its long side at least
the second share of their short side: it spans a tile's width and falls short of its length."""
ACROSS_READ = 0.9
"""... and it reads under this surely (a back, a plain face, is left: any part of it reads as the whole)."""
ACROSS_GAIN = 1.1
"""The tile turned a quarter is read where its rim (:func:`vision.rims.rim_contrast`) is at
least this many times as sharp as the box's."""


def across_tiles(
    image_bgr: npt.NDArray[np.uint8],
    det: Detections,
    objectness: npt.NDArray[np.float32],
    known: tuple[NeighbourSizes | None] | None = None,
) -> list[tuple[int, npt.NDArray[np.float32]]]:
    """``[(i, quad)]``: tiles the localiser may have boxed across their length, each with the quad
    of the whole tile where it may lie.  Such a box spans the tile's width and about two thirds of
    its length, its long side across the tile, and its crop shows part of the face: a 4 Dots boxed
    on two of its dots reads as a 2 Dots.  A quad nearly square (:data:`ACROSS_ASPECT`) that spans
    a tile's width but not its length (:data:`ACROSS_FIT`), read weakly (:data:`ACROSS_READ`) and
    not as a back, is turned a quarter and grown to its neighbours' length (its width kept), about
    its centre and from either end; the place whose rim is sharpest of those that lie within the
    picture, are :data:`ACROSS_GAIN` times as sharp as the box and take in little of another tile
    (:data:`RIM_OVERLAP`) is returned.  The rims are measured on the picture's own pixels
    (``rim_contrast(..., bgr=True)``), all in one call."""
    sizes = neighbour_sizes(det, objectness, known)
    if sizes is None:
        return []
    p, sure, size_s, size_l = sizes
    aspect = p[:, 3] / np.maximum(p[:, 2], 1e-6)
    cand = np.flatnonzero(
        (aspect < np.minimum(ACROSS_ASPECT, size_l / np.maximum(size_s, 1e-6)))
        & (p[:, 2] < ACROSS_FIT[0] * size_l)
        & (p[:, 3] >= ACROSS_FIT[1] * size_s)
        & (np.asarray(det.confidence) < ACROSS_READ)
        & (det.codes != BACK)
    )
    if not len(cand):
        return []
    given = np.asarray(det.quads, np.float32)
    n = len(cand)
    tries = _turned_tries(p[cand], size_l[cand])
    h, w = image_bgr.shape[:2]
    inside = np.all((tries >= 0) & (tries <= np.array([w, h], np.float32)), axis=(2, 3))
    score = rim_contrast(image_bgr, np.concatenate([given[cand][:, None], tries], axis=1).reshape(-1, 4, 2), bgr=True).reshape(n, 4)
    gain = np.where(inside, score[:, 1:], -1.0) > ACROSS_GAIN * score[:, :1]
    lo, hi = given.min(axis=1), given.max(axis=1)
    out = []
    for k in np.flatnonzero(gain.any(axis=1)):
        i = int(cand[k])
        most = RIM_OVERLAP * float(size_s[i] * size_l[i])
        for t in np.argsort(-score[k, 1:], kind="stable"):
            if not gain[k, t]:
                continue
            if not takes_in_another(tries[k, t], i, given, (lo, hi), sure, most):
                out.append((i, tries[k, t]))
                break
    return out


def _turned_tries(c: npt.NDArray[np.float32], size_l: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """``(n, 3, 4, 2)``: each of :func:`across_tiles`' boxes (``c``, :func:`vision.detect.quad_params`
    rows) turned a quarter and grown to its neighbours' length ``size_l`` (its width kept), about
    its centre and from either end."""
    n = len(c)
    length = np.maximum(size_l, c[:, 2])
    turned = c[:, 4] + np.pi / 2
    shift = (length - c[:, 2]) / 2
    ds = np.array([0.0, 1.0, -1.0], np.float32)
    cx = c[:, 0, None] + np.sin(turned)[:, None] * shift[:, None] * ds
    cy = c[:, 1, None] - np.cos(turned)[:, None] * shift[:, None] * ds
    quads = rect_quads(cx.ravel(), cy.ravel(), np.repeat(c[:, 3], 3), np.repeat(length, 3), np.repeat(turned, 3))
    return np.asarray(quads, np.float32).reshape(n, 3, 4, 2)
