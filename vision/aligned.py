"""A photo's tiles read again where the enrolled set's own crops lie best on them.

Under an enrolled set the models do not know, the localiser outlines some tiles off their faces:
on the held-out Symbola scenes the misread tiles' quads are a median 0.89 of the face and 9 % of
its height off it, and a 7 Dots boxed on its four lower dots reads as a 4 Dots (read at their true
outlines, the same tiles read 0.9946; docs/tilesets.md, "What a set the models do not know still
misses").  The set's enrollment crops show each face as a whole, cut on its rims, so they can
find it: :func:`aligned_quads` slides the crops of each tile's likeliest codes over the picture
around its quad (normalised cross-correlation, ``cv2.matchTemplate``, at :data:`ALIGN_SCALES`,
either way up) and returns the quad where the best of them lies; :func:`read_aligned` reads the
tiles there and keeps that reading where it is surer than the tile's own.  The tile's quad and
box stay as they were (boxed at the aligned quads, the held-out scenes read worse).
:class:`vision.pipeline.TileRecognizer` applies it to a photo under such a set.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

import cv2
import numpy as np
import numpy.typing as npt

from vision.classify import CROP_H, CROP_W
from vision.types import Detections

Image = npt.NDArray[np.uint8]
FloatArray = npt.NDArray[np.float32]

ALIGN_CODES = 3
"""The likeliest codes (the tile's fused probabilities) whose crops are tried on each tile: a 7
Dots read as a 4 Dots is found only where the 7 Dots' crop is tried (Symbola's held-out scenes,
seed 21, at full size in colour: 0.9559 / 0.9605 / 0.9612 with one / two / three codes)."""
ALIGN_MARGIN = 1.4
"""The picture is searched over the tile's quad scaled by this about its centre."""
ALIGN_SCALES = tuple(round(0.8 + 0.05 * k, 2) for k in range(9))
"""The crop's sizes tried, as shares of the tile's quad: 0.80-1.20."""
ALIGN_RES = 0.5
"""The search runs at this share of the classifier's crop size (a 24 x 32 pixel face): at full
size, in colour, it cost 19 ms a tile."""
ALIGN_GREY = True
"""The crops are matched in grey levels: a third of the work of colour, and as good.  Forty-seventh
session, the held-out scenes enrolled from the flat grid (60 at seed 21 / 60 at seed 7): Symbola
0.9553 / 0.9478 before, 0.9579 / 0.9570 in grey, 0.9592 / 0.9570 in colour; ``xm-dorothys``
0.9757 / 0.9775 before, 0.9783 / 0.9775 in grey, 0.9776 / 0.9788 in colour.  A scene of about 25
tiles took 64 ms before, about 60 ms more in grey and 135 ms more in colour.  At full size in
colour (seed 21): 0.9612 and 0.9770; five sizes instead of nine, in grey: 0.9559 and 0.9783."""


Template = tuple[bool, Image]
"""One enrolled crop as :func:`aligned_quads` slides it: whether it is turned half round, and the
crop sized (and greyed, :data:`ALIGN_GREY`) for the search."""


def templates(crop: Image) -> list[Template]:
    """``crop`` (``CROP_H x CROP_W``, upright) at each of :data:`ALIGN_SCALES`, upright and turned
    half round, as the search sees it: made once, when a set is loaded."""
    cw, ch = _search_size()
    out: list[Template] = []
    for s in ALIGN_SCALES:
        sized = np.asarray(cv2.resize(crop, (round(cw * s / ALIGN_MARGIN), round(ch * s / ALIGN_MARGIN)),
                                      interpolation=cv2.INTER_AREA), np.uint8)
        if ALIGN_GREY:
            sized = np.asarray(cv2.cvtColor(sized, cv2.COLOR_BGR2GRAY), np.uint8)
        out += [(False, sized), (True, np.ascontiguousarray(sized[::-1, ::-1]))]
    return out


def _search_size() -> tuple[int, int]:
    """The picture around a tile is searched at this size (width, height)."""
    return round(CROP_W * ALIGN_MARGIN * ALIGN_RES), round(CROP_H * ALIGN_MARGIN * ALIGN_RES)


def aligned_quads(image: Image, quads: FloatArray, candidates: list[list[Template]]) -> FloatArray:
    """``(N, 4, 2)``: each of ``quads`` moved to where the best of its ``candidates``
    (:func:`templates`) matches the picture; a quad with no candidate is left as it is."""
    out = np.asarray(quads, np.float32).reshape(-1, 4, 2).copy()
    cw, ch = _search_size()
    frame = np.array([[0, 0], [cw, 0], [cw, ch], [0, ch]], np.float32)
    for i, tried in enumerate(candidates):
        if not tried:
            continue
        c = out[i].mean(axis=0)
        m = cv2.getPerspectiveTransform(c + (out[i] - c) * ALIGN_MARGIN, frame)
        around = np.asarray(cv2.warpPerspective(image, m, (cw, ch), flags=cv2.INTER_AREA,
                                                borderMode=cv2.BORDER_REPLICATE), np.uint8)
        if ALIGN_GREY:
            around = np.asarray(cv2.cvtColor(around, cv2.COLOR_BGR2GRAY), np.uint8)
        out[i] = cv2.perspectiveTransform(_best_place(around, tried)[None], np.linalg.inv(m))[0]
    return out


def _best_place(around: Image, tried: list[Template]) -> FloatArray:
    """The outline, in ``around``'s pixels (corners from the face's top-left), where the best of
    ``tried`` matches."""
    best, place = -2.0, np.zeros((4, 2), np.float32)
    for turned, t in tried:
        _, v, _, (x, y) = cv2.minMaxLoc(cv2.matchTemplate(around, t, cv2.TM_CCOEFF_NORMED))
        if v > best:
            th, tw = t.shape[:2]
            box = np.array([[x, y], [x + tw, y], [x + tw, y + th], [x, y + th]], np.float32)
            best, place = v, np.roll(box, 2, axis=0) if turned else box
    return place


def read_aligned(
    image: Image, tiles: Detections, classify: Callable[[Image, FloatArray], Detections],
    enrolled: Mapping[str, list[Template]],
) -> Detections:
    """``tiles`` (with their probabilities) each read again by ``classify`` at :func:`aligned_quads`
    over the ``enrolled`` templates of its :data:`ALIGN_CODES` likeliest codes, and that reading
    kept where it is surer; quads, boxes and every other field as they were."""
    if not len(tiles) or tiles.probs is None:
        return tiles
    top = np.argsort(-tiles.probs, axis=1)[:, :ALIGN_CODES]
    candidates = [[t for k in row for t in enrolled.get(tiles.classes[k], [])] for row in top]
    read = classify(image, aligned_quads(image, tiles.quads, candidates))
    surer = np.flatnonzero(read.confidence > tiles.confidence)
    if not len(surer):
        return tiles
    codes, confidence = tiles.codes.copy(), tiles.confidence.copy()
    codes[surer], confidence[surer] = read.codes[surer], read.confidence[surer]
    fields: dict[str, object] = {"codes": codes, "confidence": confidence}
    if read.probs is not None and read.classes == tiles.classes:
        probs = tiles.probs.copy()
        probs[surer] = read.probs[surer]
        fields["probs"] = probs
    if tiles.embeddings is not None and read.embeddings is not None:
        embeddings = tiles.embeddings.copy()
        embeddings[surer] = read.embeddings[surer]
        fields["embeddings"] = embeddings
    return replace(tiles, **fields)  # type: ignore[arg-type]


def enrolled_templates(name: str) -> dict[str, list[Template]]:
    """The enrolled set ``name``'s crops by code (the first of a code's) as :func:`templates`;
    empty when its crops are gone."""
    from vision.tileset import load_tileset, stored_crops

    crops = stored_crops(name)
    codes = load_tileset(name).codes
    if crops is None or len(crops) != len(codes):
        return {}
    out: dict[str, list[Template]] = {}
    for code, crop in zip(codes, crops, strict=True):
        if str(code) not in out:
            out[str(code)] = templates(np.asarray(crop, np.uint8))
    return out
