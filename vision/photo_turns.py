"""Which way a photo's tiles lie: each quad turned to its tile's edges, a doubtful turn read both
ways (:class:`vision.pipeline.TileRecognizer` reads photos through these)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from vision.detect import ANGLE_COHERENCE, as_rects, drop_covered, edge_turns, quad_params
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


def turned(
    image_bgr: npt.NDArray[np.uint8], quads: npt.NDArray[np.float32], score: npt.NDArray[np.float32]
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """A photo's quads turned to their tiles' edges, a second box on one tile dropped:
    ``(quads, score, alt)``.

    A quad is turned where the edges around it agree (:data:`vision.detect.ANGLE_COHERENCE`).
    Where they agree only weakly (:data:`WEAK_COHERENCE`) and would turn it by at least
    :data:`DOUBT_TURN`, the turn is a doubt: ``alt`` holds the turned quad (NaN elsewhere) and
    :func:`read_turns` keeps whichever reads surer.
    """
    by_edges, strength = edge_turns(image_bgr, quads)
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
