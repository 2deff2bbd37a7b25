"""Tile recognition end to end: a BGR frame -> :class:`vision.types.Detections`.

:class:`TileRecognizer` chains the localiser (:mod:`vision.detect`), crop extraction and the crop
classifier (:mod:`vision.classify`), optionally refined by an enrolled tile set
(``calibration/tilesets/NAME/``).  Models are loaded and warmed up on construction.  Input
images are validated by :func:`vision.io.check_image`; a bad input raises
:class:`vision.io.ImageLoadError` (a ``ValueError``) and never crashes the caller's loop.

Its rules for photos live beside it:

- :mod:`vision.scales`: the sizes and scales a picture is read at;
- :mod:`vision.mend`: boxes mended from their neighbours;
- :mod:`vision.photo_tiles`: a photo's tiles mended once read (missed backs added, the
  :mod:`vision.mend` rules applied and the tiles they move read again);
- :mod:`vision.backs`: plain faces (backs, the table between tiles, coloured blanks);
- :mod:`vision.photo_turns`: which way a photo's tiles lie, a doubtful turn read both ways;
- :mod:`vision.rims`: a photo's tiles framed on their rims under a set the models do not know;
- :mod:`vision.piles`: the face-up tiles heaped beside a photo's rows, read on request (``piles``).
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from vision import backs, mend, photo_tiles, photo_turns, piles, rims, scales, windows
from vision.detect import TileLocalizer
from vision.io import check_image
from vision.light import LEVELS, light_corrections, without_light
from vision.mend import MIN_SCORE
from vision.types import Detections

REPO = Path(__file__).resolve().parents[1]
Image = npt.NDArray[np.uint8]
Floats = npt.NDArray[np.float32]


PHOTO_BOX_SCALE = 0.95
"""On a photo (no ``tile_px``), each reported ``box`` is the quad's bounds scaled by this about
its centre (the quad, which the classifier reads, is left as it is).  ``tiles-photos-v4/valid``
holds unaugmented photos labelled tight around each tile's face; ``train/`` only the export's
augmented copies (turned, rotated up to 45 degrees, sheared), whose labels are the bounds of the
turned boxes, looser than the tiles: the localiser learned the looser size.  On valid our boxes'
area is a median 1.6x the label's on the 94 tray photos (``IMG_2023...``, 3,293 of its 6,613
tiles), 1.1-1.35x on most others.  At 0.95, tile F1 0.931 -> 0.943 on valid (fifteenth session);
chosen on valid, in a plateau (0.94-0.96) that its two halves (even and odd photos) each find on
their own (0.924 -> 0.936, 0.938 -> 0.951).  Our synthetic scenes, whose truth is the tile's exact
outline, pay for it (docs/recognition.md, "Boxes drawn in to the face").  Not under an enrolled set
the models do not know (:attr:`vision.prototypes.TileSetPrototypes.known`): the localiser frames
such a set's tiles its own way (a face's print alone, inside the edge its artwork draws), so each
tile is boxed where its quad lies once all of them are moved onto the tiles' rims
(:func:`vision.rims.rim_framed`; forty-sixth session: the held-out style's scenes, enrolled, 0.9612
-> 0.9757 per tile)."""
TABLE_LOCALIZER = "localizer-table.onnx"
"""The localiser fine-tuned on rendered whole-table frames: used when ``detect`` gets ``tile_px``
(a table reader), the photo localiser ``localizer.onnx`` otherwise (close-up photos)."""
TABLE_CLASSIFIER = "classifier-table.onnx"
"""The classifier kept for the table reader (``classify``/``detect`` with ``tile_px``): the eighth
session's ``classifier.onnx`` reads photos, scenes and American tiles better but rendered table
frames worse (docs/recognition.md, "Two classifiers"); ``classifier.onnx`` when absent."""
TABLE_CHECK_CLASSIFIER = "classifier-table-check.onnx"
"""A second table classifier, trained apart from :data:`TABLE_CLASSIFIER`, that the table reader
asks before it calls a hand dead (:meth:`TileRecognizer.check`;
``companion.table.TableReader``): a call stands only when this reading finds the hand dead too.
Optional: without it a call rests on the one reading."""


class TileRecognizer:
    """Localise, crop, classify: ``TileRecognizer().detect(image_bgr) -> Detections``.

    ``tileset``: the name of an enrolled set under ``calibration/tilesets/`` whose prototypes
    refine the classifier's reading.  ``input_long_side``: force the localiser's input size
    (default: :func:`vision.scales.auto_long_side`, or from ``detect``'s ``tile_px``: tiles are then resized
    to ``target_tile_px`` wide).  ``min_objectness``: drop weaker localiser peaks.  ``min_score``:
    on a photo, drop tiles whose objectness times confidence is lower (:data:`MIN_SCORE`; 0 keeps
    every tile the localiser found).  ``lamp``: take a lamp's colour out of each picture
    :meth:`detect` reads (:func:`vision.light.without_lamp`); the table reader does it for the
    frames it reads through :meth:`localize` and :meth:`classify`.  ``piles``: on a photo, also read
    the face-up tiles heaped beside its rows (:func:`vision.piles.with_piles`; not by default).
    """

    def __init__(
        self,
        models_dir: str | Path = REPO / "models",
        tileset: str | None = None,
        input_long_side: int | None = None,
        min_objectness: float = 0.3,
        threads: int = 2,  # both cores (pool threads do not spin: vision/runtime.py); 12 vs 18 ms per photo
        target_tile_px: float = scales.TARGET_TILE_PX,
        min_score: float = MIN_SCORE,
        lamp: bool = True,
        piles: bool = False,
    ) -> None:
        from vision.classify import TileClassifier, photo_classifier

        models = Path(models_dir)
        self.localizer = TileLocalizer(
            models / "localizer.onnx", threshold=min_objectness, threads=threads
        )
        table = models / TABLE_LOCALIZER
        self.table_localizer = (
            TileLocalizer(table, threshold=min_objectness, threads=threads)
            if table.is_file()
            else self.localizer
        )
        self.classifier = TileClassifier(photo_classifier(models), threads=threads)
        table_clf = models / TABLE_CLASSIFIER
        self.table_classifier = (
            TileClassifier(table_clf, threads=threads) if table_clf.is_file() else self.classifier
        )
        check_clf = models / TABLE_CHECK_CLASSIFIER
        self.check_classifier = TileClassifier(check_clf, threads=threads) if check_clf.is_file() else None
        self.tileset = tileset
        self.prototypes: Any = None
        self.table_prototypes: Any = None
        self.check_prototypes: Any = None
        if tileset is not None:
            from vision.prototypes import recognizer_prototypes

            self.prototypes, self.table_prototypes, self.check_prototypes = recognizer_prototypes(
                tileset, self.classifier, self.table_classifier, self.check_classifier
            )
        self.input_long_side = input_long_side
        self.target_tile_px = target_tile_px
        self.min_score = min_score
        self.lamp, self.piles = lamp, piles
        self.edge_fields = photo_turns.EdgeFields(threads)  # made beside the localiser, once a picture
        self.detect(np.full((320, 320, 3), 90, np.uint8))  # warm-up of every stage
        # OpenCV builds its CIELAB tables on first use (0.12-0.14 s), which a picture of no tiles
        # does not reach (plain_patches, table_gaps): the first photo should not pay for it
        cv2.cvtColor(np.zeros((8, 8, 3), np.uint8), cv2.COLOR_BGR2LAB)
        self.check(np.full((64, 48, 3), 90, np.uint8), [[0, 0], [47, 0], [47, 63], [0, 63]])

    def detect(
        self, image_bgr: npt.NDArray[np.uint8], name: str = "<frame>", tile_px: float | None = None
    ) -> Detections:
        """Every tile in one BGR image, in its pixel coordinates; ``meta['ms']`` is the time.

        ``tile_px``: the expected tile width in image pixels (a table reader knows it from its
        homography); the localiser's input is then scaled to suit it (:func:`vision.scales.scale_for_tile`)
        unless ``input_long_side`` was forced, and the table localiser and classifier
        (``models/localizer-table.onnx``, ``models/classifier-table.onnx``, chosen for rendered
        table frames) run if present, and every tile found is returned.  Without ``tile_px`` (a
        photo) a tile is returned when its objectness times confidence reaches ``min_score``;
        ``meta['objectness']`` holds each returned tile's objectness.  A lamp's tint is taken out
        first (``lamp``); ``meta['lamp_gains']`` then holds the factors applied to B, G and R.
        A washed-out photo's grey levels are stretched too (``lamp``, photos only:
        :func:`vision.light.levels_gains`); ``meta['levels']`` then holds ``[gain, offset]``.
        Every box lies within the image (:func:`clip_boxes`): a tile the picture's edge cuts is
        boxed as far as it is seen, as photo labels box it, while its quad keeps the whole tile.
        """
        t0 = time.perf_counter()
        img = check_image(image_bgr, name)
        gains, levels, shrunk = None, None, None
        if self.lamp:  # a washed-out photo is stretched too, never a table frame (its own target)
            img, gains, levels, shrunk = light_corrections(img, LEVELS if tile_px is None else None)
        if tile_px is None:
            out, objectness = self._photo_tiles(img, shrunk)
            if self.min_score > 0 and len(out):
                out = out[out.confidence * objectness >= self.min_score]
            if len(out) and self.prototypes is not None and not self.prototypes.known:
                out = rims.rim_framed(img, out)  # a set the localiser does not know: framed on its rims
            elif len(out):
                out = replace(out, boxes=scale_boxes(out.boxes, PHOTO_BOX_SCALE))
        else:
            out, _ = self._read_at(img, tile_px, None)
        if len(out):  # a tile the picture's edge cuts is boxed where it is seen; its quad stays whole
            out = replace(out, boxes=clip_boxes(out.boxes, img.shape))
        if gains is not None:
            out.meta["lamp_gains"] = [round(float(g), 3) for g in gains]
        if levels is not None:
            out.meta["levels"] = [round(float(v), 3) for v in levels]
        out.meta["ms"] = _ms(t0)
        return out

    def _photo_tiles(
        self, img: npt.NDArray[np.uint8], shrunk: npt.NDArray[np.uint8] | None = None
    ) -> tuple[Detections, npt.NDArray[np.float32]]:
        """Every tile of a photo (:meth:`_read_photo`) and the face-down tiles that the localiser
        missed, found as plain patches that the classifier reads as backs surely
        (:func:`vision.backs.plain_patches`, :data:`vision.backs.PLAIN_BACK_SURE`), less the backs that are the table seen
        through a gap (:func:`vision.backs.table_gaps`), each back boxed small grown (:func:`vision.mend.grown_backs`):
        ``(tiles, objectness)``.  ``shrunk``: ``img`` already shrunk by area to
        :data:`vision.backs.GAP_WORK_SIDE` pixels long, if at hand (:func:`vision.light.light_corrections`)."""
        self.edge_fields.clear()  # a picture may have been changed in place since the last reading
        out, objectness = self._read_photo(img)
        if self.piles and self.input_long_side is None and "windows" not in out.meta:  # windows read their own
            out, objectness = piles.with_piles(lambda f: self._read_at(img, None, f), img.shape, out, objectness)
        out, objectness = photo_tiles.with_missed_backs(self.classify, img, out, objectness)
        if len(out):  # the table seen through a gap is no face-down tile
            real = ~backs.table_gaps(img, out, shrunk)
            out, objectness = out[real], objectness[real]
        out = mend.grown_backs(out, objectness)
        out, objectness = photo_tiles.mended(self.classify, img, out, objectness)
        if backs.WHITE_CHROMA > 0 and len(out):  # a coloured plain face is no white dragon
            out = backs.without_class(out, np.flatnonzero(backs.not_white(img, out)), backs.WHITE_DRAGON)
        return out, objectness

    def _read_photo(self, img: npt.NDArray[np.uint8]) -> tuple[Detections, npt.NDArray[np.float32]]:
        """A photo read at the scales :func:`vision.scales.read_photo` chooses: ``(tiles,
        objectness)``, every tile found (the caller drops the weak ones); a still photo of small
        tiles in windows (:mod:`vision.windows`).  A forced ``input_long_side`` reads at one scale."""
        if self.input_long_side is not None:
            return self._read_at(img, None, None)
        return scales.read_photo(lambda factor: self._read_at(img, None, factor), img.shape,
                                 lambda tile_px: windows.read_in_windows(img, tile_px, self._read_window))

    def _read_window(self, crop: npt.NDArray[np.uint8]) -> tuple[Detections, npt.NDArray[np.float32]]:
        """One window of a still photo read as a photo (:func:`vision.windows.read_in_windows`),
        its heaps too where asked (``piles``)."""
        det, obj = scales.read_photo(lambda factor: self._read_at(crop, None, factor), crop.shape)
        if self.piles:
            det, obj = piles.with_piles(lambda f: self._read_at(crop, None, f), crop.shape, det, obj)
        return det, obj

    def _read_at(
        self, img: npt.NDArray[np.uint8], tile_px: float | None, factor: float | None
    ) -> tuple[Detections, npt.NDArray[np.float32]]:
        """Every tile found in ``img`` at one localiser scale (``factor`` times
        :func:`vision.scales.auto_long_side`'s; None: the default), read: ``(tiles, objectness)``, with
        ``meta['objectness']`` too."""
        work, quads, objectness, back, det, alt = self._localize(img, tile_px, factor)
        if det is None:  # crops from the unsqueezed image when there is one
            det = photo_turns.read_turns(self.classify, work, quads, alt, tile_px)
        if back is not None:
            det = Detections.from_quads(
                det.quads * back,
                list(det.codes),
                det.confidence,
                embeddings=det.embeddings,
                probs=det.probs,
                classes=det.classes,
            )
        obj = np.asarray(objectness, np.float32)
        out = Detections(det.boxes, det.quads, det.codes, det.confidence, det.embeddings,
                         {"objectness": objectness}, det.probs, det.classes)
        return out, obj

    def localize(
        self, image_bgr: npt.NDArray[np.uint8], tile_px: float | None = None
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """Where the tiles are: ``(quads (N, 4, 2), objectness (N,))`` in image pixels, every tile
        found (none dropped by ``min_score``).

        ``tile_px`` as for :meth:`detect`; with it, the localiser's stage alone.  On a photo (no
        ``tile_px``) each quad is turned to its tile's edges (:func:`vision.detect.refine_angles`),
        a photo squeezed along one axis is localised again unsqueezed (:data:`vision.scales.SQUEEZED_ASPECT`),
        and the scale is chosen by how the tiles read (:data:`vision.scales.PHOTO_SCALES`), so the tiles are
        classified too, as :meth:`detect` does: backs the localiser missed are added
        (:func:`vision.backs.plain_patches`), a back that is the table seen through a gap is dropped
        (:func:`vision.backs.table_gaps`) and a back boxed small is grown (:func:`vision.mend.grown_backs`).  The
        image is not validated here.
        """
        if tile_px is None:
            det, score = self._photo_tiles(without_light(image_bgr) if self.lamp else image_bgr)
            return det.quads, score
        _, quads, score, _, _, _ = self._localize(image_bgr, tile_px, None)
        return quads, score

    def _localize(
        self, image_bgr: npt.NDArray[np.uint8], tile_px: float | None, factor: float | None
    ) -> tuple[Image, Floats, Floats, Floats | None, Detections | None, Floats | None]:
        """``(image, quads, objectness, back, read, alt)``: quads in ``image``, which is
        ``image_bgr`` or, for a squeezed photo, ``image_bgr`` unsqueezed; ``back`` (x, y factors)
        maps them back; ``read``: the tiles already classified in ``image`` (a squeezed photo),
        else None; ``alt``: each quad's doubtful turn (:func:`vision.photo_turns.turned`), to be read too.
        ``factor``: the localiser's scale, relative to its default (a photo's, :data:`vision.scales.PHOTO_SCALES`)."""
        if tile_px is not None:  # a table reader lays its own outlines (snap_quads)
            quads, score = self._localize_once(image_bgr, tile_px, factor=factor)
            return image_bgr, quads, score, None, None, None
        self.edge_fields.start(image_bgr)  # made beside the localiser
        quads, score = self._localize_once(image_bgr, None, factor=factor)
        aspect, axis = scales.squeeze_of(quads)
        if self.input_long_side is None and aspect > scales.SQUEEZED_ASPECT:
            return (*self._unsqueezed(image_bgr, aspect, axis, factor), None)
        quads, score, alt = photo_turns.turned(image_bgr, quads, score, self.edge_fields.get(image_bgr))
        return image_bgr, quads, score, None, None, alt

    def _unsqueezed(
        self, image_bgr: npt.NDArray[np.uint8], aspect: float, axis: int, factor: float | None = None
    ) -> tuple[Image, Floats, Floats, Floats, Detections]:
        """A squeezed photo localised and read at each of :data:`vision.scales.UNSQUEEZE_ASPECTS`; the one whose
        tiles read surest (mean classifier confidence; the first on a tie) is kept."""
        h, w = image_bgr.shape[:2]
        best: Any = None
        for target in scales.UNSQUEEZE_ASPECTS:
            k = aspect / target
            size = (w, max(8, round(h / k))) if axis == 1 else (max(8, round(w / k)), h)
            work = np.asarray(cv2.resize(image_bgr, size, interpolation=cv2.INTER_AREA), np.uint8)
            quads, score = self._localize_once(work, None, exact=True, factor=factor)
            quads, score, alt = photo_turns.turned(work, quads, score)
            det = photo_turns.read_turns(self.classify, work, quads, alt)
            sure = float(det.confidence.mean()) if len(det) else 0.0
            if best is None or sure > best[0]:
                back = np.array([w / work.shape[1], h / work.shape[0]], np.float32)
                best = (sure, work, det.quads, score, back, det)
        return best[1], best[2], best[3], best[4], best[5]

    def _localize_once(
        self,
        image_bgr: npt.NDArray[np.uint8],
        tile_px: float | None,
        exact: bool = False,
        factor: float | None = None,
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """Quads and objectness; ``exact``: the image shrunk by area averaging all the way
        (:func:`vision.detect.prepare`); ``factor``: times the default scale (a photo's)."""
        localizer = self.localizer if tile_px is None else self.table_localizer
        if self.input_long_side is None and tile_px is not None:
            scale = scales.scale_for_tile(tile_px, image_bgr.shape, self.target_tile_px)
        elif self.input_long_side is not None:
            scale = self.input_long_side / max(image_bgr.shape[:2])
        else:
            scale = scales.auto_long_side(image_bgr.shape) / max(image_bgr.shape[:2]) * (factor or 1.0)
        loc = localizer.localize(image_bgr, scale=scale, exact=exact)
        return loc.quads, loc.score

    def classify(
        self, image_bgr: npt.NDArray[np.uint8], quads: npt.ArrayLike, tile_px: float | None = None
    ) -> Detections:
        """The classifier's stage alone: the tiles at ``quads`` (N, 4, 2) read, with probabilities.

        A table reader calls it with quads it has refined (snapped to the table's perspective) and
        with ``tile_px`` (its tiles' width), which picks the table classifier
        (:data:`TABLE_CLASSIFIER`) as ``tile_px`` picks the table localiser.
        """
        q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
        if len(q) == 0:
            return Detections.empty()
        table = tile_px is not None
        clf = self.table_classifier if table else self.classifier
        prototypes = self.table_prototypes if table else self.prototypes
        return self._read_quads(image_bgr, q, clf, prototypes, table)

    def check(
        self, image_bgr: npt.NDArray[np.uint8], quads: npt.ArrayLike
    ) -> Detections | None:
        """The table tiles at ``quads`` read again by the second table classifier
        (:data:`TABLE_CHECK_CLASSIFIER`, with the enrolled set's prototypes made for it), as
        :meth:`classify` reads them with ``tile_px``; None when there is no such model."""
        if self.check_classifier is None:
            return None
        q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
        if len(q) == 0:
            return Detections.empty()
        return self._read_quads(image_bgr, q, self.check_classifier, self.check_prototypes, True)

    def _read_quads(
        self, image_bgr: npt.NDArray[np.uint8], q: npt.NDArray[np.float32], clf: Any, prototypes: Any, table: bool
    ) -> Detections:
        from vision.classify import TURN_ASPECT, quad_width_px

        turn_below = TURN_ASPECT if not table and photo_turns.turns(prototypes) else None
        res = clf.classify_quads(image_bgr, q, turn_below=turn_below)
        if prototypes is not None:
            res = prototypes.apply(res, tile_px=quad_width_px(q) if table else None)
        return Detections.from_quads(
            q,
            list(res.codes),
            res.confidence,
            embeddings=res.embeddings,
            probs=res.probs.astype(np.float32),
            classes=tuple(clf.classes),
        )


def scale_boxes(boxes: npt.NDArray[np.float32], scale: float) -> npt.NDArray[np.float32]:
    """Axis-aligned ``x1, y1, x2, y2`` boxes (N, 4) scaled by ``scale`` about their centres."""
    b = np.asarray(boxes, np.float32).reshape(-1, 4)
    centre, half = (b[:, :2] + b[:, 2:]) / 2, (b[:, 2:] - b[:, :2]) / 2 * scale
    return np.concatenate([centre - half, centre + half], axis=1).astype(np.float32)


def clip_boxes(boxes: npt.NDArray[np.float32], shape: tuple[int, ...]) -> npt.NDArray[np.float32]:
    """Axis-aligned ``x1, y1, x2, y2`` boxes (N, 4) clipped to an image of ``shape`` (``h, w, ...``)."""
    b = np.asarray(boxes, np.float32).reshape(-1, 4).copy()
    b[:, 0::2] = b[:, 0::2].clip(0, shape[1])
    b[:, 1::2] = b[:, 1::2].clip(0, shape[0])
    return b


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 2)
