"""A still photo of a wide part of the table read in overlapping windows, each as a photo.

A phone's still of a whole table (or a wide part of it) holds tiles of many sizes: near racks
large, far ones small.  Read whole, its every scale suits some of them and not the others, and
the largest scale that keeps its time bounded still shrinks the tiles.  Read in windows of
:data:`WINDOW` pixels, each as a 640-pixel photo is read (:func:`vision.scales.read_photo`: its
own scales, chosen by how its own tiles read), each part of the picture is read at the scale that
suits its tiles.  The picture is first shrunk so that its tiles measure at most
:data:`STILL_TILE_PX` (a photo's tiles measure 40-98 px at 640 pixels), which bounds the windows
of a 12-megapixel still (and :data:`MAX_SIDE` those of any still).  A tile two windows both see
is kept once (:func:`vision.detect.drop_covered`): the reading the classifier and the localiser
are surest of, a tile cut by a window's inner edge counting half.
Forty-eighth session (docs/recognition.md, "A still read in windows").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import cv2
import numpy as np
import numpy.typing as npt

from vision.detect import drop_covered
from vision.scales import Reading
from vision.types import Detections

Image = npt.NDArray[np.uint8]
ReadWindow = Callable[[Image], Reading]
"""Reads one window as a photo: ``(tiles, objectness)`` in the window's pixels."""

WINDOW = 768
"""A window's side in pixels: read as a photo, at half size (384 px, the localiser's input for a
640-pixel photo is 320).  Laid 3x3 / 4x4 from valid's photos (1920 / 2560 px), windows of 768
read F1 0.946 / 0.963 at a median 350 ms / 1.4 s (:data:`STRIDE` 0.75), windows of 640 0.940 at
690 ms (``/tmp`` scripts)."""
STRIDE = 0.8
"""Windows start at most this share of their side apart, overlapping by 154 px: a tile of
:data:`STILL_TILE_PX` by 107 px turned 45 degrees (132 px across) lies whole in one of them.  At
0.75 the valid photos laid 4x4 read 0.963 at a median 1.4 s (25 windows), at 0.85 0.965 at
0.7 s (16, as at 0.8; both judged by this session's first same-tile rule, :data:`SAME_TILE_SHARE`); laid 3x3, 0.946 either way (9)."""
STILL_TILE_PX = 80.0
"""A still whose tiles' median short side measures more than this is shrunk to it before it is
cut into windows.  At 45 the valid photos laid 3x3 read 0.931 (60: 0.944, 80: 0.946)."""
MAX_SIDE = 4096
"""A still is shrunk to at most this long a side before it is cut, whatever its tiles measure:
at most 7 x 7 windows, a few seconds on two cores (a phone's 4032x3024 still: 7 x 5)."""
EDGE_PX = 2.0
"""A tile boxed within this of a window's inner edge is cut by it: its score counts half."""
SAME_TILE_SHARE = 0.5
"""A reading is dropped as a second reading of a surer one when that covers more than this share
of its area (:func:`vision.detect.drop_covered`): the same tile seen by two windows, or half of
it read in one.  Judged by this session's own rule instead (one tile when they overlap by half of
the smaller, or 0.3 of their union), the valid photos laid 3x3 / 4x4 read 0.946 / 0.965 against
0.946 / 0.964."""


def starts(length: int, window: int = WINDOW) -> list[int]:
    """Where the windows along a side of ``length`` start: evenly, from 0 to ``length - window``,
    at most :data:`STRIDE` of a window apart; one window at 0 for a side no longer than it."""
    if length <= window:
        return [0]
    k = int(np.ceil((length - window) / (STRIDE * window))) + 1
    return [int(round(i * (length - window) / (k - 1))) for i in range(k)]


def read_in_windows(image: Image, tile_px: float, read_window: ReadWindow) -> Reading | None:
    """``image`` (a still whose tiles' median short side measures ``tile_px``) read in windows by
    ``read_window``, its tiles in ``image``'s pixels and each one once (:data:`SAME_TILE_SHARE`),
    ``meta['windows']`` the count of windows read; None when no window finds a tile."""
    r = min(1.0, STILL_TILE_PX / tile_px if tile_px > 0 else 1.0, MAX_SIDE / max(image.shape[:2]))
    work = np.asarray(cv2.resize(image, None, fx=r, fy=r, interpolation=cv2.INTER_AREA), np.uint8) if r < 1 else image
    h, w = work.shape[:2]
    parts: list[tuple[Detections, npt.NDArray[np.float32], npt.NDArray[np.bool_]]] = []
    for y in starts(h):
        for x in starts(w):
            crop = np.ascontiguousarray(work[y : y + WINDOW, x : x + WINDOW])
            det, obj = read_window(crop)
            if not len(det):
                continue
            b, (ch, cw) = det.boxes, crop.shape[:2]
            cut = (((b[:, 0] < EDGE_PX) & (x > 0)) | ((b[:, 1] < EDGE_PX) & (y > 0))
                   | ((b[:, 2] > cw - EDGE_PX) & (x + cw < w)) | ((b[:, 3] > ch - EDGE_PX) & (y + ch < h)))
            quads = (det.quads + np.array([x, y], np.float32)) / r
            moved = Detections.from_quads(quads, list(det.codes), det.confidence, embeddings=det.embeddings,
                                          probs=det.probs, classes=det.classes)
            parts.append((moved, np.asarray(obj, np.float32), cut))
    if not parts:
        return None
    det = parts[0][0]
    for other in parts[1:]:
        det = det.joined(other[0])
    obj = np.concatenate([p[1] for p in parts])
    cut = np.concatenate([p[2] for p in parts])
    keep = drop_covered(det.quads, det.confidence * obj * np.where(cut, 0.5, 1.0), SAME_TILE_SHARE)
    kept, obj = det[keep], obj[keep]
    return replace(kept, meta={**kept.meta, "objectness": obj, "windows": len(starts(h)) * len(starts(w))}), obj
