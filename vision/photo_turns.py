"""Which way a photo's tiles lie: each quad turned to its tile's edges, a doubtful turn read both
ways (:class:`vision.pipeline.TileRecognizer` reads photos through these)."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
import numpy.typing as npt

from vision.detect import (
    ANGLE_COHERENCE,
    EdgeField,
    as_rects,
    drop_covered,
    edge_field,
    edge_turns,
    quad_params,
)
from vision.types import Detections

WEAK_COHERENCE = 0.12
"""Where this share of the gradient energy around a photo's quad (but less than
:data:`vision.detect.ANGLE_COHERENCE`) agrees on a turn, the quad is read both ways and keeps the
surer reading (:func:`turned`): a tile at 30-60 degrees among busy print, shadow
edges and neighbours came back upright, its box about 0.65 of its bounds on each side."""
DOUBT_TURN = float(np.radians(10.0))
"""... when the turn would move the quad by at least this much."""
TURN_TIE = 0.05
"""A doubtful turn that reads the same code as the quad unturned is kept unless it reads this much
less surely (:func:`read_turns`): read right either way, the tile is boxed where
its edges lie (thirty-fourth session: the American scenes' six-seed mean 0.9830 -> 0.9842, 300
train photos 0.7646 -> 0.7704, valid 0.9581 -> 0.9585; 0.02 and 0.1 measure alike, while keeping
every same-code turn read valid at 0.9577)."""


class EdgeFields:
    """Each picture's edge field (:func:`vision.detect.edge_field`), made once for every scale a
    photo is read at, and begun (:meth:`start`) on a worker thread of its own, with ``threads`` of
    2 or more, while the localiser runs: onnxruntime's two threads leave part of the second core
    idle (the localiser 7.8 ms alone, 9.9 ms with the field beside it, which takes 4.2 ms alone).
    Fifty-third session, paired in one process against the field made at each scale (the 296
    valid photos twice each way): a median 3.0 ms a photo less (the mean 4.8 ms: a third of the
    photos are read at three scales), a synthetic 1280x720 frame 1.7 ms less; again with the exact
    sum below, a median 2.3 ms less (the mean 3.5 ms); against 78bc868, the
    same tiles and codes on 332 pictures, 13 of them with quads moved by under 0.0001 px and
    confidences by up to 0.013, as the field's energy is now summed exactly
    (:func:`vision.detect.edge_field`; docs/recognition.md).

    A field is held for the very array it was made from (its identity, the array kept alive so
    that no other can take its id) until :meth:`clear`, which the recogniser calls as each
    photo's reading begins: a caller may change a picture in place between two readings."""

    def __init__(self, threads: int) -> None:
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="edges") if threads >= 2 else None
        self._pid = os.getpid()  # a process forked from this one has no worker thread
        self._held: dict[int, tuple[npt.NDArray[np.uint8], Future[EdgeField]]] = {}

    def clear(self) -> None:
        """Let go of every field held (and of its picture)."""
        self._held = {}

    def start(self, image_bgr: npt.NDArray[np.uint8]) -> None:
        """Begin ``image_bgr``'s field on the worker thread, unless it is held already (or there
        is no worker: :meth:`get` then makes it)."""
        held = self._held.get(id(image_bgr))
        if (held is None or held[0] is not image_bgr) and self._worker is not None and os.getpid() == self._pid:
            self._held[id(image_bgr)] = (image_bgr, self._worker.submit(edge_field, image_bgr))

    def get(self, image_bgr: npt.NDArray[np.uint8]) -> EdgeField:
        """``image_bgr``'s field: the one held for it, else made now and held."""
        held = self._held.get(id(image_bgr))
        if held is not None and held[0] is image_bgr:
            return held[1].result()
        done: Future[EdgeField] = Future()
        done.set_result(edge_field(image_bgr))
        self._held[id(image_bgr)] = (image_bgr, done)
        return done.result()


def turned(
    image_bgr: npt.NDArray[np.uint8],
    quads: npt.NDArray[np.float32],
    score: npt.NDArray[np.float32],
    field: EdgeField | None = None,
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """A photo's quads turned to their tiles' edges, a second box on one tile dropped:
    ``(quads, score, alt)``.

    A quad is turned where the edges around it agree (:data:`vision.detect.ANGLE_COHERENCE`).
    Where they agree only weakly (:data:`WEAK_COHERENCE`) and would turn it by at least
    :data:`DOUBT_TURN`, the turn is a doubt: ``alt`` holds the turned quad (NaN elsewhere) and
    :func:`read_turns` keeps whichever reads surer.  ``field``: ``image_bgr``'s edge field, if made
    (:class:`EdgeFields`).
    """
    by_edges, strength = edge_turns(image_bgr, quads, field=field)
    sure = strength >= ANGLE_COHERENCE
    out = np.where(sure[:, None, None], by_edges, as_rects(quads)).astype(np.float32)
    swing = np.abs(quad_params(by_edges)[:, 4] - quad_params(quads)[:, 4])
    swing = np.minimum(swing, np.pi - swing)
    doubt = ~sure & (strength >= WEAK_COHERENCE) & (swing >= DOUBT_TURN)
    alt = np.where(doubt[:, None, None], by_edges, np.nan).astype(np.float32)
    keep = drop_covered(out, score)  # a second box on one tile, seen once turned
    return out[keep], score[keep], alt[keep]


def read_turns(
    classify: Callable[..., Detections],
    image_bgr: npt.NDArray[np.uint8],
    quads: npt.NDArray[np.float32],
    alt: npt.NDArray[np.float32] | None,
    tile_px: float | None = None,
) -> Detections:
    """The tiles at ``quads`` read by ``classify`` (:meth:`vision.pipeline.TileRecognizer.classify`),
    each doubtfully turned one (``alt``, :func:`turned`; NaN rows elsewhere) read turned too, in the
    same batch, and the turn kept where that reading is surer, or reads the same code at most
    :data:`TURN_TIE` less surely."""
    idx = np.array([], np.int64) if alt is None else np.flatnonzero(~np.isnan(alt[:, 0, 0]))
    if not len(idx):
        return classify(image_bgr, quads, tile_px)
    assert alt is not None
    n = len(quads)
    both = classify(image_bgr, np.concatenate([quads, alt[idx]]), tile_px)
    sure_turned, upright = both.confidence[n:], both.confidence[idx]
    win = (sure_turned > upright) | ((both.codes[n:] == both.codes[idx]) & (sure_turned >= upright - TURN_TIE))
    pick = np.arange(n)
    pick[idx[win]] = n + np.flatnonzero(win)  # every field of a winning turn follows it
    return both[pick]


def turns(prototypes: Any) -> bool:
    """Whether a photo's nearly square quads are read both ways round (a quad's sides may be the
    wrong way round, :data:`vision.classify.TURN_ASPECT`), the base classifier's surer reading
    kept: not under an enrolled set it does not know (:attr:`vision.prototypes.TileSetPrototypes.known`).
    Its confidence then says little of the set's faces, and a face read a quarter turned, which
    it is surer of, is then matched with the set's upright prototypes: over the held-out style's
    60 scenes (``bench_vision --held-out``), a 2 or a 4 Bams read as a joker 9-11 times a seed.
    Forty-fourth session, enrolled, those scenes read with the turn / without it: ``xm-dorothys``
    0.9480 / 0.9553 (another scene seed 0.9343 / 0.9430; another draw of the set's jittered
    copies 0.9500 / 0.9553), Symbola 0.9322 / 0.9362 (another scene seed and draw 0.9202 /
    0.9249).  Letting the fused reading choose instead read 0.9513, 0.9390 and 0.9316.  Under a
    set it knows (valid's real set, ``bench_vision``'s "a real set enrolled") the turn stays:
    without it those photos read 2591 / 2677 of their boxed tiles right against 2613 / 2691.
    A table reader lays its quads square to the table (its sides are known) and never turns."""
    return prototypes is None or bool(prototypes.known)
