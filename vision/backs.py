"""Plain faces on a photo: backs the localiser missed, the table seen between tiles, coloured blanks.

- Backs no localiser peak finds are looked for as plain patches among the tiles
  (:func:`plain_patches`).
- A back of the table's own colour is a gap between tiles, unless it is a panel of its own
  (:func:`table_gaps`, :func:`own_panel`).
- A plain face with colour is no white dragon (:func:`not_white`, :func:`without_class`); the
  converse, a back of the faces' white that is a blank face, is :mod:`vision.blanks`.

:class:`vision.pipeline.TileRecognizer` applies them (docs/recognition.md, "Backs the localiser
misses, found as plain patches", "Backs the colour of the table, tiles boxed in two halves,
coloured faces").
"""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import numpy.typing as npt

from companion.rules.tiles import BACK
from vision.detect import quad_params, shrink
from vision.mend import BACK_NEIGHBOURS, MIN_SCORE
from vision.types import Detections

WHITE_DRAGON = "WD"
WHITE_CHROMA = 30.0
"""A white dragon (or soap) is a white face: the median colour of its middle lies under this
(CIELAB a, b, 8-bit units) from grey or from the picture's white (thirty-ninth session: from
grey at most 17.3 over valid's 277 white dragons read right and 13.2 over 310 on twelve American
seeds; from the faces' white at most 21.5 on valid's photos under a warm lamp left in); a plain
face of a stronger colour read as one is a coloured back (47-79 from grey; :func:`not_white`)."""


WHITE_FACES = 3
"""The picture's white is measured on the face-up tiles' margins when this many or more are read
surely (:data:`PLAIN_BACK_SURE`); else it is taken to be grey."""


def _median_ab(image_bgr: npt.NDArray[np.uint8], quad: npt.NDArray[np.float32], outer: float, inner: float) -> npt.NDArray[np.float32] | None:
    """The median CIELAB a, b of ``quad``'s band between ``inner`` and ``outer`` times its size
    about its centre (``inner`` 0: the whole middle), or None when it holds no pixel."""
    lab = _median_lab(image_bgr, quad, outer, inner)
    return None if lab is None else lab[1:]


def _median_lab(image_bgr: npt.NDArray[np.uint8], quad: npt.NDArray[np.float32], outer: float, inner: float) -> npt.NDArray[np.float32] | None:
    """The median CIELAB L, a, b of ``quad``'s band (as :func:`_median_ab`), or None."""
    h, w = image_bgr.shape[:2]
    c = quad.mean(axis=0)
    out_q = np.round(c + (quad - c) * outer).astype(np.int32)
    x0, y0 = np.clip(out_q.min(axis=0), 0, None)
    x1, y1 = np.minimum(out_q.max(axis=0) + 1, [w, h])
    if x1 <= x0 or y1 <= y0:
        return None
    shift = np.array([x0, y0], np.int32)
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillConvexPoly(mask, out_q - shift, 1)
    if inner > 0:
        cv2.fillConvexPoly(mask, np.round(c + (quad - c) * inner).astype(np.int32) - shift, 0)
    lab = cv2.cvtColor(np.ascontiguousarray(image_bgr[y0:y1, x0:x1]), cv2.COLOR_BGR2LAB)[mask == 1]
    return np.median(lab.astype(np.float32), axis=0) if len(lab) else None


def not_white(image_bgr: npt.NDArray[np.uint8], det: Detections) -> npt.NDArray[np.bool_]:
    """``(N,)``: which tiles read as white dragons are no white face: the median colour of each
    quad's middle (shrunk to 0.6) lies :data:`WHITE_CHROMA` or more (CIELAB a, b) both from grey
    and from the picture's white, the median of the face-up tiles' margins (the band between 0.8
    and 0.95 of each quad, on tiles read surely, :data:`WHITE_FACES`), so that a lamp's tint left
    in the picture tints the faces and the dragon alike.  The photo classifier reads some plain
    orange and red backs as white dragons (0.6-0.75 sure), the plain face being what they share."""
    out = np.zeros(len(det), bool)
    grey = np.array([128.0, 128.0], np.float32)
    white: npt.NDArray[np.float32] | None = None
    for i in np.flatnonzero(det.codes == WHITE_DRAGON):
        middle = _median_ab(image_bgr, det.quads[i], 0.6, 0.0)
        if middle is None or float(np.linalg.norm(middle - grey)) < WHITE_CHROMA:
            continue  # white, or near enough (most are: the picture's white is then not measured)
        if white is None:
            white = picture_white(image_bgr, det)
        out[i] = float(np.linalg.norm(middle - white)) >= WHITE_CHROMA
    return out


def picture_white(image_bgr: npt.NDArray[np.uint8], det: Detections) -> npt.NDArray[np.float32]:
    """CIELAB ``(a, b)`` of the picture's white: the median over the face-up tiles read surely
    (:data:`PLAIN_BACK_SURE`; 24 at most, spread over them) of their margins' median colour (the
    band between 0.8 and 0.95 of each quad); grey (128, 128) when fewer than :data:`WHITE_FACES`."""
    faces = faces_lab(image_bgr, det)
    return np.array([128.0, 128.0], np.float32) if faces is None else faces[1:]


def faces_lab(image_bgr: npt.NDArray[np.uint8], det: Detections) -> npt.NDArray[np.float32] | None:
    """CIELAB ``(L, a, b)`` of the faces' margins, as :func:`picture_white` measures it; None when
    fewer than :data:`WHITE_FACES` faces are read surely."""
    faces = np.flatnonzero((det.codes != WHITE_DRAGON) & (det.codes != BACK) & (det.confidence >= PLAIN_BACK_SURE))
    if len(faces) >= WHITE_FACES:
        faces = faces[np.linspace(0, len(faces) - 1, min(len(faces), 24)).round().astype(int)]
        margins = [m for m in (_median_lab(image_bgr, det.quads[i], 0.95, 0.8) for i in faces) if m is not None]
        if len(margins) >= WHITE_FACES:
            return np.asarray(np.median(np.array(margins, np.float32), axis=0), np.float32)
    return None


def without_class(det: Detections, rows: npt.NDArray[np.int64], code: str) -> Detections:
    """``det`` with the tiles at ``rows`` read as the classifier's next choice after ``code``, sure
    as the classifier is given that it is not ``code`` (its probability over all but ``code``'s);
    ``det`` itself when it has no probabilities to choose from."""
    if not len(rows) or det.probs is None or code not in det.classes:
        return det
    probs = det.probs.copy()
    probs[rows, det.classes.index(code)] = 0.0
    rest = probs[rows].sum(axis=1)
    pick = probs[rows].argmax(axis=1)
    codes = det.codes.astype(object)
    conf = det.confidence.copy()
    codes[rows] = [det.classes[k] for k in pick]
    conf[rows] = probs[rows, pick] / np.maximum(rest, 1e-6)
    probs[rows] /= np.maximum(rest, 1e-6)[:, None]
    return replace(det, codes=np.array([str(c) for c in codes]), confidence=conf.astype(np.float32),
                   probs=probs.astype(np.float32))


PLAIN_BACKS = True
"""Whether a photo is searched for the backs its localiser missed (:func:`plain_patches`); a
switch for measuring the rule."""
PLAIN_COLOURED = True
"""Whether a plain patch that the classifier reads as a white dragon, and is sure is a plain face
(a back or a white dragon, :data:`PLAIN_BACK_SURE` together), is returned as a back when its face
is coloured (:func:`not_white`)."""
PLAIN_BACK_SURE = 0.8
"""A plain patch (:func:`plain_patches`) is returned as a face-down tile (``BK``) when the
classifier reads it as one this surely; its objectness is then 1."""
PLAIN_PATCH_PX = 16.0
"""The tiles' median short side, in pixels, at which :func:`plain_patches` looks (larger
pictures are shrunk to it by area, smaller ones are not grown)."""
PLAIN_PATCH_FILL = 0.8
"""How much of its smallest enclosing rectangle a plain patch fills, at least."""
PLAIN_PATCH_AREA = (0.3, 1.1)
"""A plain patch's area, against the median area of the tiles found."""
PLAIN_PATCH_CORNERS = 0.04
"""A plain patch's outline, simplified to within this share of its perimeter
(``cv2.approxPolyDP`` of its convex hull), has four corners."""
PLAIN_PATCH_ASPECT = (1.05, 1.8)
"""Its enclosing rectangle's long side over its short side (a tile's face is about 1.3)."""
PLAIN_PATCH_EDGES = (30.0, 90.0)
"""Canny's thresholds on each CIELAB channel: the edges that bound a patch."""


def plain_patches(
    image_bgr: npt.NDArray[np.uint8], det: Detections, objectness: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    """``(M, 4, 2)`` quads, each tile-sized, about a plain patch of the picture that no tile found
    covers: a region that the edges of every CIELAB channel enclose, of a tile's area
    (:data:`PLAIN_PATCH_AREA`) and shape (:data:`PLAIN_PATCH_ASPECT`), filling its rectangle
    (:data:`PLAIN_PATCH_FILL`) with four corners (:data:`PLAIN_PATCH_CORNERS`).  Such a patch is
    where a face-down tile the localiser missed lies: a back is a plain coloured panel inside a
    rim, and the photo localiser misses green backs most, perhaps taking them for the green felt
    of its photos (thirty-fifth session: 22 of the 32 backs that no box came near over six
    American scene seeds were green).  Each quad is grown about its centre to the median area of
    the tiles found, since the panel lies inside the tile's rim.  None is looked for among fewer
    than :data:`BACK_NEIGHBOURS` tiles scoring :data:`MIN_SCORE`, whose size it is measured by."""
    none = np.zeros((0, 4, 2), np.float32)
    sure = np.asarray(det.confidence, np.float32) * np.asarray(objectness, np.float32) >= MIN_SCORE
    if sure.sum() < BACK_NEIGHBOURS:
        return none
    p = quad_params(det.quads[sure])
    area = float(np.median(p[:, 2] * p[:, 3]))
    k = min(1.0, PLAIN_PATCH_PX / max(float(np.median(p[:, 2])), 1.0))
    h, w = image_bgr.shape[:2]
    small, part = image_bgr, (w, h)
    if k < 1.0:
        small, part = shrink(image_bgr, max(1, round(w * k)), max(1, round(h * k)))
    to_small = np.array([small.shape[1] / part[0], small.shape[0] / part[1]], np.float32)
    edges = np.zeros(small.shape[:2], np.uint8)
    for channel in cv2.split(cv2.cvtColor(small, cv2.COLOR_BGR2LAB)):
        edges = np.maximum(edges, np.asarray(cv2.Canny(channel, *PLAIN_PATCH_EDGES), np.uint8))
    free = (edges == 0).astype(np.uint8)
    for q in det.quads * to_small:
        cv2.fillConvexPoly(free, np.round(q).astype(np.int32), 0)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(free, connectivity=4)
    small_area = area * float(to_small[0] * to_small[1])
    lo, hi = (a * small_area for a in PLAIN_PATCH_AREA)
    out = []
    for j in np.flatnonzero((stats[:, cv2.CC_STAT_AREA] >= lo) & (stats[:, cv2.CC_STAT_AREA] <= hi)):
        if j == 0:
            continue
        x, y, bw, bh, size = (int(v) for v in stats[j])
        ys, xs = np.nonzero(labels[y : y + bh, x : x + bw] == j)
        hull = cv2.convexHull(np.stack([xs + x, ys + y], axis=1).astype(np.float32))
        rect = cv2.minAreaRect(hull)
        rw, rh = rect[1]
        if rw * rh <= 0 or size / (rw * rh) < PLAIN_PATCH_FILL:
            continue
        if len(cv2.approxPolyDP(hull, PLAIN_PATCH_CORNERS * cv2.arcLength(hull, True), True)) != 4:
            continue  # four corners: a disc (a scoring chip) or a blob is no tile
        if not PLAIN_PATCH_ASPECT[0] <= max(rw, rh) / min(rw, rh) <= PLAIN_PATCH_ASPECT[1]:
            continue
        quad = cv2.boxPoints(rect) / to_small
        centre = quad.mean(axis=0)
        grow = max(1.0, float(np.sqrt(small_area / (rw * rh))))
        out.append(centre + (quad - centre) * grow)
    return np.asarray(out, np.float32).reshape(-1, 4, 2) if out else none


GAP_SHARE = 0.1
"""A tile read as a back (``BK``) whose face matches this share or more of the table's own
pixels (:data:`GAP_COLOUR`) is the table showing through a gap between tiles, not a face-down tile,
and is dropped (:func:`table_gaps`)."""
GAP_COLOUR = 12.0
"""How near in CIELAB (8-bit OpenCV units) a table pixel must be to a back's median colour to
match it."""
GAP_WORK_SIDE = 320
"""The long side the picture is shrunk to (by area) for :func:`table_gaps`."""
GAP_SAMPLE = 8192
"""At most about this many of the table's pixels (every n-th) are matched against each back: a
share is measured as well on them (a valid photo with seven backs: 17.7 ms -> 4.5 ms, with each
face cut from its own box; the same readings on valid and six American seeds)."""


PANEL_TEXTURE = 0.7
"""A back that matches the table's colour (:data:`GAP_SHARE`) is still a face-down tile when its
face is this much smoother than the table around it, or more (median absolute Laplacian of
CIELAB lightness, face over table; :func:`own_panel`)."""
PANEL_HUE = 8.0
"""... and its hue (CIELAB a, b; 8-bit OpenCV units) lies this far or more from the table's
around it."""
PANEL_LIGHT = 30.0
"""... and its lightness (CIELAB L, 8-bit units) lies within this of the table's around it: a
patch of the table's colour much darker or lighter than the table beside it is the table in a
shadow or a lamp's spot, whose hue moves with its light (thirty-ninth session: a cast shadow
85 darker, a lit gap 48 lighter; the backs kept 15 at most)."""
PANEL_REACH = 4.0
"""The table around a back: within this many times its quad's half-diagonal of its centre."""


def own_panel(image_bgr: npt.NDArray[np.uint8], det: Detections, i: int) -> bool:
    """Whether back ``i`` of ``det``, whose colour the table matches (:func:`table_gaps`), is a
    panel of its own: a face-down tile of nearly the table's colour (a green back on green felt).
    The table seen through a gap has the table's own grain and hue; a tile's back is smoother
    plastic (:data:`PANEL_TEXTURE`) of a hue of its own (:data:`PANEL_HUE`) in the same light
    (:data:`PANEL_LIGHT`), measured against the table within :data:`PANEL_REACH` of it (what no
    quad, grown by a third, covers), not against the whole table, whose light varies.  Too little
    table near it to tell: False (a gap).  Thirty-ninth session: over 18 seeds of 40 American
    scenes, 11 backs kept that the gap rule dropped, and no gap; docs/recognition.md."""
    h, w = image_bgr.shape[:2]
    q = det.quads[i].astype(np.float32)
    c = q.mean(axis=0)
    reach = float(np.abs(q - c).max()) * PANEL_REACH
    x0, y0 = (max(0, int(v - reach) - 2) for v in c)
    x1, y1 = min(w, int(c[0] + reach) + 3), min(h, int(c[1] + reach) + 3)
    if x1 - x0 < 8 or y1 - y0 < 8:
        return False
    shift = np.array([x0, y0], np.float32)
    lab = cv2.cvtColor(np.ascontiguousarray(image_bgr[y0:y1, x0:x1]), cv2.COLOR_BGR2LAB).astype(np.float32)
    grain = np.abs(cv2.Laplacian(cv2.GaussianBlur(lab[..., 0], (3, 3), 0), cv2.CV_32F))
    cover = np.zeros(lab.shape[:2], np.uint8)
    for other in det.quads - shift:
        oc = other.mean(axis=0)
        cv2.fillConvexPoly(cover, np.round(oc + (other - oc) * 1.3).astype(np.int32), 1)
    near = np.zeros(lab.shape[:2], np.uint8)
    cv2.circle(near, (int(c[0] - x0), int(c[1] - y0)), int(reach), 1, -1)
    table = (cover == 0) & (near == 1)
    face = np.zeros(lab.shape[:2], np.uint8)
    cv2.fillConvexPoly(face, np.round(c - shift + (q - c) * 0.7).astype(np.int32), 1)
    on_face = face == 1
    if table.sum() < 20 or not on_face.any():
        return False
    smooth = float(np.median(grain[on_face])) / max(float(np.median(grain[table])), 1e-3)
    shift_lab = np.median(lab[on_face], axis=0) - np.median(lab[table], axis=0)
    hue, light = float(np.linalg.norm(shift_lab[1:])), abs(float(shift_lab[0]))
    return smooth < PANEL_TEXTURE and hue >= PANEL_HUE and light <= PANEL_LIGHT


def table_gaps(
    image_bgr: npt.NDArray[np.uint8], det: Detections, shrunk: npt.NDArray[np.uint8] | None = None
) -> npt.NDArray[np.bool_]:
    """``(N,)``: which tiles read as backs are the table seen through a gap in a row or grid of
    tiles.  The localiser finds a back as a plain patch the size of a tile among tiles, and the
    classifier, which knows no "no tile", reads a patch of bare table there as a back as surely
    as a back.  The table is what no quad covers (each grown by a third about its centre); a back's
    face is its quad's middle (shrunk to 0.7).  A face-down tile's colour is its own: over six
    American scene seeds 2 of 146 backs matched a tenth of the table's pixels, and 18 of the 20
    backs returned on no tile did (thirty-fourth session; docs/recognition.md).  A back that
    matches it but is a smoother panel of its own hue than the table around it is kept
    (:func:`own_panel`: a green back on green felt).  ``shrunk``: the picture already shrunk by area
    to :data:`GAP_WORK_SIDE` pixels long (the lamp's sample, :func:`vision.light.light_corrections`),
    used where it is of that size: the same pixels, without shrinking a 1280x720 frame again (1.6 ms;
    fortieth session)."""
    out = np.zeros(len(det), bool)
    backs = np.flatnonzero(det.codes == BACK)
    if not len(backs):
        return out
    h, w = image_bgr.shape[:2]
    k = min(1.0, GAP_WORK_SIDE / max(h, w))
    size = (max(1, round(w * k)), max(1, round(h * k)))
    if k >= 1.0:
        small = image_bgr
    elif shrunk is not None and shrunk.shape[:2] == (size[1], size[0]):
        small = shrunk
    else:
        small = np.asarray(cv2.resize(image_bgr, size, interpolation=cv2.INTER_AREA), np.uint8)
    lab = cv2.cvtColor(cv2.GaussianBlur(small, (3, 3), 0), cv2.COLOR_BGR2LAB)
    quads = det.quads * np.float32(k)
    centres = quads.mean(axis=1, keepdims=True)
    cover = np.zeros(lab.shape[:2], np.uint8)
    for q in centres + (quads - centres) * 1.3:
        cv2.fillConvexPoly(cover, np.round(q).astype(np.int32), 1)
    table = lab[cover == 0]
    if len(table) < 0.05 * cover.size:  # too little table seen to tell
        return out
    table = table[:: max(1, len(table) // GAP_SAMPLE)].astype(np.float32)
    for i in backs:
        face_quad = np.round(centres[i] + (quads[i] - centres[i]) * 0.7).astype(np.int32)
        x0, y0 = np.clip(face_quad.min(axis=0), 0, None)
        x1, y1 = face_quad.max(axis=0) + 1
        face = np.zeros((max(0, y1 - y0), max(0, x1 - x0)), np.uint8)
        if not face.size:
            continue
        cv2.fillConvexPoly(face, face_quad - np.array([x0, y0], np.int32), 1)
        pixels = lab[y0:y1, x0:x1][face[: lab.shape[0] - y0, : lab.shape[1] - x0] == 1]
        if not len(pixels):
            continue
        near = np.linalg.norm(table - np.median(pixels.astype(np.float32), axis=0), axis=1) < GAP_COLOUR
        out[i] = float(near.mean()) >= GAP_SHARE and not own_panel(image_bgr, det, int(i))
    return out
