"""A photo's tiles mended once the localiser's finds are read (:meth:`vision.pipeline.TileRecognizer.detect`).

- :func:`with_missed_backs`: face-down tiles the localiser missed, found as plain patches the
  classifier reads surely as backs (:func:`vision.backs.plain_patches`), added;
- :func:`mended`: a tile boxed in half grown to its rim, one boxed in two halves joined, one boxed
  across its length read whole (the rules of :mod:`vision.mend`), each read again where it moved.

``classify`` is the recogniser's :meth:`~vision.pipeline.TileRecognizer.classify`: the tiles at
some quads of the picture read.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from companion.rules.tiles import BACK
from vision import backs, mend
from vision.types import Detections

Image = npt.NDArray[np.uint8]
FloatArray = npt.NDArray[np.float32]
Classify = Callable[[Image, npt.ArrayLike], Detections]


def with_missed_backs(
    classify: Classify, img: Image, out: Detections, objectness: FloatArray
) -> tuple[Detections, FloatArray]:
    """``(tiles, objectness)`` with the face-down tiles the localiser missed: plain patches read as
    backs (:data:`vision.backs.PLAIN_BACK_SURE`), or as a plain face, back or white dragon, whose
    face is coloured (:data:`vision.backs.PLAIN_COLOURED`).  Each added tile's objectness is 1."""
    patches = backs.plain_patches(img, out, objectness) if backs.PLAIN_BACKS else np.zeros((0, 4, 2), np.float32)
    if not len(patches):
        return out, objectness
    read = classify(img, patches)
    sure_back = (read.codes == BACK) & (read.confidence >= backs.PLAIN_BACK_SURE)
    if backs.WHITE_CHROMA > 0 and backs.PLAIN_COLOURED and read.probs is not None and backs.WHITE_DRAGON in read.classes:
        # a plain face the classifier is sure of, back or white dragon, and no white one: a back
        plain = read.probs[:, read.classes.index(BACK)] + read.probs[:, read.classes.index(backs.WHITE_DRAGON)]
        coloured = np.flatnonzero((read.codes == backs.WHITE_DRAGON) & (plain >= backs.PLAIN_BACK_SURE) & backs.not_white(img, read))
        read = backs.without_class(read, coloured, backs.WHITE_DRAGON)
        sure_back[coloured] = read.codes[coloured] == BACK
    sure = np.flatnonzero(sure_back)
    if not len(sure):
        return out, objectness
    read = read[sure]
    read.meta["objectness"] = np.ones(len(read), np.float32)
    return out.joined(read), np.concatenate([objectness, np.ones(len(read), np.float32)])


def mended(
    classify: Classify, img: Image, out: Detections, objectness: FloatArray
) -> tuple[Detections, FloatArray]:
    """``(tiles, objectness)``: half a tile boxed grown to the whole tile (:func:`vision.mend.rim_grown`),
    one tile boxed in two halves read whole (:func:`vision.mend.halves_of_tiles`), and a tile boxed
    across its length read whole (:func:`vision.mend.across_tiles`); each read again there."""
    known: tuple[mend.NeighbourSizes | None] | None = (mend.neighbour_sizes(out, objectness),)  # while no tile moves
    out, moved = _rim_grown(classify, img, out, objectness, known)
    known = None if moved else known
    out, objectness, joined = _halves_joined(classify, img, out, objectness, known)
    known = None if joined else known
    return _across_read(classify, img, out, objectness, known), objectness


def _rim_grown(
    classify: Classify, img: Image, out: Detections, objectness: FloatArray,
    known: tuple[mend.NeighbourSizes | None] | None,
) -> tuple[Detections, bool]:
    """Half a tile boxed: the whole tile, read again; ``(tiles, whether any moved)``."""
    quads = mend.rim_grown(img, out, objectness, known)
    moved = np.flatnonzero(np.any(quads != out.quads, axis=(1, 2)))
    if not len(moved):
        return out, False
    read = classify(img, quads[moved])
    if isinstance(out.meta.get("objectness"), np.ndarray):
        read.meta["objectness"] = out.meta["objectness"][moved]
    return in_place(out, moved, read)[0], True


def _halves_joined(
    classify: Classify, img: Image, out: Detections, objectness: FloatArray,
    known: tuple[mend.NeighbourSizes | None] | None,
) -> tuple[Detections, FloatArray, bool]:
    """One tile boxed in two halves: read whole where it reads about as surely as either half
    (:data:`vision.mend.HALF_TIE`); ``(tiles, objectness, whether any were joined)``."""
    pairs = mend.halves_of_tiles(out, objectness, known) if mend.HALVES_JOINED else []
    if not pairs:
        return out, objectness, False
    read = classify(img, np.stack([q for _, _, q in pairs]))
    win = [k for k, (i, j, _) in enumerate(pairs) if read.confidence[k] >= max(out.confidence[i], out.confidence[j]) - mend.HALF_TIE]
    if not win:
        return out, objectness, False
    first = np.array([pairs[k][0] for k in win])
    second = np.array([pairs[k][1] for k in win])
    whole = np.maximum(objectness[first], objectness[second])
    read = read[np.array(win)]
    if isinstance(out.meta.get("objectness"), np.ndarray):
        read.meta["objectness"] = whole
    out, keep, order = in_place(out, first, read, dropped=second)
    return out, np.concatenate([objectness[keep], whole])[order], True


def _across_read(
    classify: Classify, img: Image, out: Detections, objectness: FloatArray,
    known: tuple[mend.NeighbourSizes | None] | None,
) -> Detections:
    """A tile boxed across its length: read whole, kept where that names another tile more surely."""
    across = mend.across_tiles(img, out, objectness, known) if mend.ACROSS_TURNED else []
    if not across:
        return out
    rows = np.array([i for i, _ in across])
    read = classify(img, np.stack([q for _, q in across]))
    named = np.flatnonzero((read.codes != out.codes[rows]) & (read.confidence > out.confidence[rows]))
    if not len(named):
        return out
    read = read[named]
    if isinstance(out.meta.get("objectness"), np.ndarray):
        read.meta["objectness"] = out.meta["objectness"][rows[named]]
    return in_place(out, rows[named], read)[0]


def in_place(
    det: Detections, rows: npt.NDArray[np.int64], read: Detections, dropped: npt.NDArray[np.int64] | None = None
) -> tuple[Detections, npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """``(tiles, keep, order)``: ``det`` with its tiles at ``rows`` replaced by ``read`` (one a
    row, in that order) and those at ``dropped`` left out, every other tile where it was; ``keep``
    are the rows kept as they were, and ``order`` puts ``keep`` then ``rows`` back in place (for
    arrays that follow the tiles)."""
    gone = rows if dropped is None else np.concatenate([rows, dropped])
    keep = np.setdiff1d(np.arange(len(det)), gone)
    order = np.argsort(np.concatenate([keep, rows]), kind="stable")
    return det[keep].joined(read)[order], keep, order
