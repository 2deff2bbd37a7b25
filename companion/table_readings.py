"""A frame's tile readings re-read for the table: within the codes the game's tile set holds
(:func:`fold_to_set`), some tiles' readings taken from another reading of them
(:func:`with_rows`: a second classifier's reading of the racks called dead), or made surer where
that other reading agrees surely (:func:`vouched`: the weak tiles of a rack left unjudged).
:class:`companion.table.TableReader` calls all three.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import numpy.typing as npt

from companion.rules.tiles import BACK, CHINESE_FLOWERS, FLOWER, SEASONS
from vision.types import Detections


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


VOUCH_CONFIDENCE = 0.9
"""A tile the table classifier reads weakly is vouched for (:func:`vouched`) where the second
table classifier reads it as the same code at this or surer.  Fifty-eighth session, ``bench_table
--tables 50`` over six face sets at 1280x720 and 1920x1080 (docs/table.md, "Weak tiles vouched
for by the second reader"): 7 more true flags and 1 more Mah Jongg display scored right, no
false flag more; at 0.8, 5 more true flags still and 2 false joker flags more."""


def vouched(det: Detections, rows: npt.NDArray[np.intp], other: Detections,
            bar: float = VOUCH_CONFIDENCE) -> tuple[Detections, int]:
    """``det`` with each tile of ``rows`` that ``other`` reads as ``det`` does, at ``bar`` or
    surer, read from both: its probabilities the two readings' product, renormalised (two
    classifiers trained apart, taken as independent witnesses), and its confidence their top.
    ``other`` is ``det`` with those rows' readings taken from the second reading
    (:func:`with_rows`, within the set's codes); the other rows are ``det``'s own.  Also returns
    how many tiles were vouched for.  Without probabilities on either side nothing changes."""
    if det.probs is None or other.probs is None or not len(rows):
        return det, 0
    p1 = np.asarray(det.probs, np.float32)[rows]
    p2 = np.asarray(other.probs, np.float32)[rows]
    agree = (p1.argmax(axis=1) == p2.argmax(axis=1)) & (p2.max(axis=1) >= bar)
    if not agree.any():
        return det, 0
    both = p1[agree] * p2[agree]
    both /= np.maximum(both.sum(axis=1, keepdims=True), 1e-12)
    probs = np.asarray(det.probs, np.float32).copy()
    conf = np.asarray(det.confidence, np.float32).copy()
    probs[rows[agree]] = both
    conf[rows[agree]] = both.max(axis=1)
    return replace(det, probs=probs, confidence=conf), int(agree.sum())
