"""Blank faces read as backs: a "back" of the faces' white, unlike the frame's backs, is a face.

Every back of a set is the same tile; the table classifier reads a white dragon drawn as a bare
frame (the Symbola font's) as a plain back.  :func:`white_backs` finds such tiles and
:func:`blank_faces` reads them as the classifier's next choice; ``companion.table.TableReader``
applies it to the table classifier's reading (docs/table.md, "A white face read as a back").
The converse, a coloured plain face read as a white dragon, is :func:`vision.backs.not_white`.
"""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import numpy.typing as npt

from companion.rules.tiles import BACK
from vision.backs import faces_lab, table_gaps, without_class
from vision.types import Detections

BACKS_APART = 25.0
"""A back whose middle's median colour (CIELAB a, b, 8-bit units) lies this far or more from the
median of the frame's backs, while those lie as far from the faces' white, is unlike the set's
backs (:func:`white_backs`)."""

BACKS_ALIKE = 10.0
"""... in a frame whose other backs lie within this of their median: one set's backs, all the same
tile.  A frame of backs of many colours (the benchmark's ``american-synth`` faces draw each back
in its own) tells no set's back from a face (:func:`white_backs`)."""

BACK_WHITE = 15.0
"""... and one lying under this from the faces' white (:func:`vision.backs.picture_white`), and
as light (:data:`BACK_LIGHT`), is a face: a blank white dragon, or a soap drawn as a bare
frame (:func:`white_backs`)."""

BACK_LIGHT = 40.0
"""CIELAB lightness (8-bit units): a back no darker than this under the faces' margins may be a
face (a blank middle is lighter than a margin: Symbola's white dragon 248 against 212); grey felt
is as neutral as a white face but darker (127 against 216: a box on the bare grey table of the
demo's set at 2560x1440, read as a back, would otherwise have been read as a 7 Dots and counted;
sixty-third session)."""


def _middles_lab(image_bgr: npt.NDArray[np.uint8], quads: npt.NDArray[np.float32], steps: int = 5) -> npt.NDArray[np.float32]:
    """``(N, 3)``: each quad's median CIELAB L, a, b over a ``steps`` x ``steps`` grid of points
    across its middle (0.2-0.8 of each side, as a quad shrunk to 0.6): one colour conversion for
    all of them, a fraction of a millisecond for a frame's backs."""
    t = np.linspace(0.2, 0.8, steps, dtype=np.float32)
    u, v = (g.reshape(-1, 1) for g in np.meshgrid(t, t))
    q = quads.astype(np.float32)
    pts = ((1 - u) * (1 - v))[None] * q[:, None, 0] + (u * (1 - v))[None] * q[:, None, 1] \
        + (u * v)[None] * q[:, None, 2] + ((1 - u) * v)[None] * q[:, None, 3]
    h, w = image_bgr.shape[:2]
    x = np.clip(np.round(pts[..., 0]).astype(np.int64), 0, w - 1)
    y = np.clip(np.round(pts[..., 1]).astype(np.int64), 0, h - 1)
    lab = cv2.cvtColor(np.ascontiguousarray(image_bgr[y, x]), cv2.COLOR_BGR2LAB).astype(np.float32)
    return np.asarray(np.median(lab, axis=1), np.float32)


def white_backs(image_bgr: npt.NDArray[np.uint8], det: Detections) -> npt.NDArray[np.int64]:
    """The rows of ``det`` read as backs that are white faces: of the faces' white (within
    :data:`BACK_WHITE`) and as light (:data:`BACK_LIGHT`), unlike the frame's backs (as far from
    their median colour), which are three or more, alike (:data:`BACKS_ALIKE`) and coloured (their
    median :data:`BACKS_APART` or more from the faces' white).  Every back of a set is the same
    tile, so a back unlike the others in the faces' colour is a blank face; the table classifier
    reads a white dragon drawn as a bare frame (the Symbola font's) as a plain back at 0.85-0.91,
    the white dragon next (sixty-third session).  A set whose backs are white or cream is left as
    read: its backs are the faces' colour; so is a back that shows the bare table, where the table
    is of the faces' colour (:func:`vision.backs.table_gaps`: a box on light beige felt among
    cream faces)."""
    none = np.zeros(0, np.int64)
    rows = np.flatnonzero(det.codes == BACK)
    if len(rows) < 3:
        return none
    seen = dict(zip(rows.tolist(), _middles_lab(image_bgr, det.quads[rows]), strict=True))
    median = np.median(np.array([v[1:] for v in seen.values()], np.float32), axis=0)
    apart = {i: float(np.linalg.norm(v[1:] - median)) for i, v in seen.items()}
    far = [i for i, d in apart.items() if d >= BACKS_APART]
    if not far or max((d for d in apart.values() if d < BACKS_APART), default=BACKS_ALIKE) >= BACKS_ALIKE:
        return none  # every back alike (the usual frame), or backs of many colours
    faces = faces_lab(image_bgr, det)
    if faces is None or float(np.linalg.norm(median - faces[1:])) < BACKS_APART:
        return none
    white = [i for i in far if float(np.linalg.norm(seen[i][1:] - faces[1:])) < BACK_WHITE
             and float(seen[i][0]) > float(faces[0]) - BACK_LIGHT]
    if not white:
        return none
    # nor the bare table where the table is the faces' colour (a light beige felt, km-jade's cream
    # faces): the box then holds table, as a gap between tiles does (table_gaps)
    probe = replace(det, codes=np.array([BACK if i in white else "" for i in range(len(det))]))
    table = table_gaps(image_bgr, probe)
    return np.array([i for i in white if not table[i]], np.int64)


def blank_faces(image_bgr: npt.NDArray[np.uint8], det: Detections) -> Detections:
    """``det`` with its backs that are white faces (:func:`white_backs`) read as the classifier's
    next choice, as sure as it is given that they are no back (:func:`vision.backs.without_class`);
    ``meta["blank"]`` marks them (one bool a tile), for the weak-frame guard
    (:func:`companion.table_guards.guard_weak_frame`)."""
    rows = white_backs(image_bgr, det)
    out = without_class(det, rows, BACK)
    blank = np.zeros(len(det), bool)
    blank[rows] = True
    return replace(out, meta={**out.meta, "blank": blank})
