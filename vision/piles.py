"""Face-up tiles heaped in a pile beside the rows (the discards), read on request: ``detect --piles``.

Many of ``tiles-photos-v4``'s photos label a rack's row and leave the heap of discards beside it
unlabelled, in ``train/`` as in ``valid/``, so the photo localiser learned a heap as background: at
the scale a photo is read at, it returns the row and none of the 30-odd face-up tiles beside it
(docs/recognition.md, Known gaps, "Face-up discards heaped beside a rack"). Shown the same photo
larger, it finds them. :func:`with_piles` reads the photo once more at the scale where its tiles
measure :data:`PILE_TILE_PX` at the localiser's input and adds the face-up tiles that reading is
sure of (:data:`PILE_SURE`) where no tile was found (:data:`PILE_OVERLAP`); a still read in
windows (:mod:`vision.windows`), each of its windows.

It is not the default. Read so, valid's photos return 212 tiles more, nearly all where their labels
leave a heap out, so the labels' tile F1 (without the seven mislabelled photos) falls from 0.9755
to 0.9611, as it would on any photos labelled as these are; on synthetic scenes whose every tile
is labelled it adds 12 over 160 scenes, all right. A pile's tiles lie at any angle, on and against each
other, and some are boxed across two of them or on part of one. A valid photo takes a median
43.6 ms against 17.6 (fifty-first session, docs/recognition.md, "Tiles heaped in a pile, on
request").
"""

from __future__ import annotations

from collections.abc import Callable

import cv2
import numpy as np
import numpy.typing as npt

from companion.rules.tiles import BACK
from vision.detect import drop_covered, quad_params
from vision.mend import MIN_SCORE
from vision.scales import auto_long_side
from vision.types import Detections

FloatArray = npt.NDArray[np.float32]
Reading = tuple[Detections, FloatArray]
ReadAt = Callable[[float], Reading]

PILE_TILE_PX = 40.0
"""The tiles' short side at the localiser's input for the pile's reading: about 1.8 times what a
640x640 photo's tiles measure at its first scale (22 px on ``tests/vision/data/photo1.jpg``), the
scale at which the thirty-eighth session found its heap (15 tiles read, 45 at 1.8)."""
PILE_FACTORS = (1.2, 3.0)
"""The pile's reading is made at this range of factors of the photo's default input
(:func:`vision.scales.auto_long_side`), whatever its tiles measure."""
PILE_SURE = 0.8
"""A tile of the pile's reading is added when the classifier reads it this surely, as a face: below
it, the thirty-eighth session's trial added a tile's side or the table's wooden edge read as a
white dragon."""
PILE_OVERLAP = 0.1
"""...and where it covers no tile already found, nor is covered by one, by more than this share of
the smaller's area (turned quads as polygons)."""


def pile_factor(det: Detections, shape: tuple[int, ...]) -> float:
    """The factor of the default input (:func:`vision.scales.auto_long_side`) at which the tiles
    of ``det``, found in a picture of ``shape``, measure :data:`PILE_TILE_PX` (1.8 when none was
    found), within :data:`PILE_FACTORS`."""
    if not len(det):
        return 1.8
    tile = float(np.median(quad_params(det.quads)[:, 2])) * auto_long_side(shape) / max(shape[:2])
    lo, hi = PILE_FACTORS
    return float(min(max(PILE_TILE_PX / max(tile, 1e-3), lo), hi))


def covered(quad: FloatArray, quads: FloatArray, share: float = PILE_OVERLAP) -> bool:
    """Whether ``quad`` and any of ``quads`` overlap by more than ``share`` of the smaller's area."""
    area = max(float(cv2.contourArea(quad)), 1e-6)
    for other in quads:
        inter, _ = cv2.intersectConvexConvex(quad, other)
        if inter > share * min(area, max(float(cv2.contourArea(other)), 1e-6)):
            return True
    return False


def with_piles(read_at: ReadAt, shape: tuple[int, ...], out: Detections, objectness: FloatArray) -> Reading:
    """``(tiles, objectness)``: ``out`` and the face-up tiles that ``read_at(factor)``, the photo
    read at :func:`pile_factor`, finds surely where ``out`` has none (:data:`PILE_SURE`,
    :data:`PILE_OVERLAP`, a score of :data:`vision.mend.MIN_SCORE`)."""
    pile, pile_obj = read_at(pile_factor(out, shape))
    if not len(pile):
        return out, objectness
    sure = (pile.confidence >= PILE_SURE) & (pile.confidence * pile_obj >= MIN_SCORE) & (pile.codes != BACK)
    new = [i for i in np.flatnonzero(sure) if not covered(pile.quads[i], out.quads)]
    if not new:
        return out, objectness
    pile, pile_obj = pile[np.asarray(new)], pile_obj[np.asarray(new)]
    kept = drop_covered(pile.quads, pile.confidence)  # a tile of the heap found twice
    pile, pile_obj = pile[kept], pile_obj[kept]
    return out.joined(pile), np.concatenate([objectness, pile_obj]).astype(np.float32)
