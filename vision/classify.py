"""Tile crop classification: quads -> 64 x 48 portrait crops -> tile codes, confidences, embeddings.

:func:`extract_crops` rectifies each tile quad (clockwise from the face's top-left) into a
``CROP_H x CROP_W`` portrait crop.  :class:`TileClassifier` runs ``models/classifier.onnx``
(class list and input spec in ``models/classifier.json``).  The model averages its logits and
embeddings over the crop and the crop turned half round, so a tile reads the same upside down;
with :func:`extract_crops` turning landscape quads upright, a tile reads the same at 0, 90, 180
and 270 degrees.  An enrolled tile set (:class:`vision.prototypes.TileSetPrototypes`) refines the
reading by its nearest prototypes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

CROP_H, CROP_W = 64, 48
REPO = Path(__file__).resolve().parents[1]
INT8_MODEL = "classifier-int8.onnx"
"""The photo classifier quantized to 8 bits (``scripts/quantize_model.py``): read in its place
wherever it sits beside ``classifier.onnx`` (:func:`photo_classifier`).  Twenty-second session:
tile F1 on valid 0.946 -> 0.944, the photo path 15 % faster (models/MODEL_CARD.md)."""


def photo_classifier(models: Path) -> Path:
    """The photo classifier a models folder holds: ``classifier-int8.onnx`` where present, else
    ``classifier.onnx`` (the float master, which training fine-tunes from)."""
    quantized = Path(models) / INT8_MODEL
    return quantized if quantized.is_file() else Path(models) / "classifier.onnx"


DEFAULT_MODEL = photo_classifier(REPO / "models")

Image = npt.NDArray[np.uint8]
FloatArray = npt.NDArray[np.float32]


PORTRAIT_ASPECT = 1.0001
"""A quad whose first edge is longer than its second by more than this factor is turned a
quarter, so that its first edge (the crop's top) is a short side."""


def portrait_quads(quads: npt.ArrayLike, turn: bool = False) -> FloatArray:
    """``(N, 4, 2)`` quads each reordered so that its first edge (top) is a short side
    (:data:`PORTRAIT_ASPECT`); ``turn``: each then begun one corner later (its long side on top).
    All quads at once: 40 crops cut in 2.0 ms against 2.9 ms quad by quad (fifty-second session,
    a slow 2-core machine; the same crops, and the same tiles on all 296 valid photos)."""
    q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    top = np.linalg.norm(q[:, 1] - q[:, 0], axis=1)
    side = np.linalg.norm(q[:, 2] - q[:, 1], axis=1)
    shift = (top > side * PORTRAIT_ASPECT).astype(np.int64) + int(turn)
    order = (np.arange(4)[None, :] + shift[:, None]) % 4
    return np.asarray(np.take_along_axis(q, order[:, :, None], axis=1), np.float32)


def extract_crops(image: Image, quads: npt.ArrayLike, turn: bool = False) -> Image:
    """``(N, 4, 2)`` quads in ``image`` -> ``(N, CROP_H, CROP_W, 3)`` uint8 portrait crops.

    ``turn``: cut each quad a quarter turn the other way (its long side across the crop): the
    reading of a tile whose quad has its sides the wrong way round (:func:`quad_aspect`).

    Bilinear, as the training crops are cut (``scripts/crops.py``).  Until the fifty-fifth
    session this asked for ``INTER_AREA``, which OpenCV's warps take as ``INTER_LINEAR``: the
    same crops to the bit (every tile of 356 pictures read the same), and no faster.
    """
    if not isinstance(image, np.ndarray) or image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(
            f"image must be an (H, W, 3) BGR array, got {getattr(image, 'shape', type(image))}"
        )
    q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    out = np.empty((len(q), CROP_H, CROP_W, 3), np.uint8)
    dst = np.array([[0, 0], [CROP_W, 0], [CROP_W, CROP_H], [0, CROP_H]], np.float32)
    for i, src in enumerate(portrait_quads(q, turn)):
        m = cv2.getPerspectiveTransform(src, dst)
        out[i] = cv2.warpPerspective(
            image, m, (CROP_W, CROP_H), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        )
    return out


def quad_width_px(quads: npt.ArrayLike) -> FloatArray:
    """``(N,)`` how many pixels wide each quad's tile looks in its crop: its shorter pair of
    opposite sides, or its longer pair scaled by the crop's aspect, whichever is less."""
    q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    side = np.linalg.norm(np.roll(q, -1, axis=1) - q, axis=2)
    a, b = (side[:, 0] + side[:, 2]) / 2, (side[:, 1] + side[:, 3]) / 2
    return np.asarray(np.minimum(np.minimum(a, b), np.maximum(a, b) * CROP_W / CROP_H), np.float32)


def quad_aspect(quads: npt.ArrayLike) -> FloatArray:
    """``(N,)`` long side over short side of each quad (its first two edges)."""
    q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    e1 = np.linalg.norm(q[:, 1] - q[:, 0], axis=1)
    e2 = np.linalg.norm(q[:, 2] - q[:, 1], axis=1)
    return np.asarray(np.maximum(e1, e2) / np.maximum(np.minimum(e1, e2), 1e-6), np.float32)


def softmax(logits: FloatArray) -> FloatArray:
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    return np.asarray(e / e.sum(axis=1, keepdims=True), np.float32)


def l2_normalise(x: FloatArray) -> FloatArray:
    return np.asarray(x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-8), np.float32)


@dataclass(frozen=True)
class Classified:
    """N crops read: codes, the probability of each code, (N, C) probabilities, (N, D) embeddings."""

    codes: list[str]
    confidence: FloatArray
    probs: FloatArray
    embeddings: FloatArray


TURN_ASPECT = 1.3
"""A quad whose long side is under this many times its short side is read both ways round
(:meth:`TileClassifier.classify_quads`): the localiser's quad on a tile seen nearly square (a tile
tilted towards the camera, a photo squeezed or unsqueezed by a misjudged factor) may have its
sides the wrong way round, and the crop then shows the face a quarter turned and squashed."""
TURN_MARGIN = 0.2
"""The quarter-turned reading is kept when its confidence beats the upright one's by this much."""
SPLIT_CROPS = 12
"""A classifier given two threads or more reads a batch of this many crops or more as two halves
at once, each cut and read by its own single-threaded session, one half on a worker thread
(onnxruntime and OpenCV's warps let go of Python's lock): onnxruntime's own two threads share one
batch's layers less well than two batches share two cores (64 crops: 10.4 ms on one session's two
threads, 7.7-8.0 ms as two halves).  The readings are the same to the bit.  Fortieth session,
paired end to end in one process (docs/recognition.md, "Two halves at once"): a 1280x720 frame
3.2-4.0 ms faster, a valid photo 1.0 ms and an American scene 1.2 ms, every tile the same."""


class TileClassifier:
    """``models/classifier.onnx`` on the CPU; ``classify(crops) -> (codes, confidence, embeddings)``."""

    def __init__(self, path: str | Path = DEFAULT_MODEL, threads: int = 1, batch: int = 64) -> None:
        from vision.runtime import OnnxModel

        self.path = Path(path)
        spec_path = self.path.with_suffix(".json")
        if not spec_path.is_file():
            raise ValueError(f"classifier spec not found beside the model: {str(spec_path)!r}")
        self.spec: dict[str, Any] = json.loads(spec_path.read_text())
        self.classes: list[str] = list(self.spec["classes"])
        self.batch = batch
        warmup = (1, 3, CROP_H, CROP_W)
        self.model = OnnxModel(self.path, threads=threads, warmup_shape=warmup)
        # two single-threaded sessions for a large batch's two halves (SPLIT_CROPS)
        self._halves = None
        self._worker = None
        if threads >= 2:
            self._halves = tuple(OnnxModel(self.path, threads=1, warmup_shape=warmup) for _ in range(2))
            self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="classifier")
        self._pid = os.getpid()  # a process forked from this one has no worker thread

    def preprocess(self, crops: Image) -> FloatArray:
        x = np.asarray(crops, np.float32) * np.float32(self.spec.get("scale", 1 / 255))
        return np.ascontiguousarray(x.transpose(0, 3, 1, 2))

    def run(self, crops: Image) -> Classified:
        """Every output for a ``(N, 64, 48, 3)`` uint8 batch of BGR crops."""
        crops = np.asarray(crops)
        if crops.ndim != 4 or crops.shape[1:] != (CROP_H, CROP_W, 3):
            raise ValueError(f"crops must be (N, {CROP_H}, {CROP_W}, 3), got {crops.shape}")
        return self._read(len(crops), lambda model, part: self._outputs(model, crops[part]))

    def _read(self, n: int, outputs: Any) -> Classified:
        """``n`` crops read: ``outputs(model, slice)`` gives the logits and embeddings of the
        crops in ``slice`` by ``model``; a large batch is read as two halves at once
        (:data:`SPLIT_CROPS`)."""
        forked = os.getpid() != self._pid
        if self._halves is None or self._worker is None or n < SPLIT_CROPS or forked:
            logits, embs = outputs(self.model, slice(0, n))
        else:
            half = (n + 1) // 2
            first = self._worker.submit(outputs, self._halves[0], slice(0, half))
            second = outputs(self._halves[1], slice(half, n))
            pairs = zip(first.result(), second, strict=True)
            logits, embs = (np.concatenate([a, b]) for a, b in pairs)
        probs = softmax(logits.astype(np.float32))
        best = probs.argmax(axis=1)
        return Classified(
            codes=[self.classes[int(k)] for k in best],
            confidence=probs[np.arange(len(best)), best].astype(np.float32),
            probs=probs,
            embeddings=l2_normalise(embs.astype(np.float32)),
        )

    def _outputs(self, model: Any, crops: Image) -> tuple[FloatArray, FloatArray]:
        """``(logits, embeddings)`` of a batch of crops by one session, :attr:`batch` at a time."""
        logits, embs = [], []
        for i in range(0, len(crops), self.batch):
            lg, em = model.run(self.preprocess(crops[i : i + self.batch]))
            logits.append(lg)
            embs.append(em)
        if not logits:
            dim = int(self.spec.get("embedding_dim", 64))
            return np.zeros((0, len(self.classes)), np.float32), np.zeros((0, dim), np.float32)
        return np.concatenate(logits), np.concatenate(embs)

    def _read_quads(self, image: Image, quads: FloatArray, turn: bool = False) -> Classified:
        """The tiles at ``quads`` cut (:func:`extract_crops`) and read, a large batch as two halves
        at once, each half cut on the thread that reads it."""
        def outputs(model: Any, part: slice) -> tuple[FloatArray, FloatArray]:
            return self._outputs(model, extract_crops(image, quads[part], turn))

        return self._read(len(quads), outputs)

    def classify(self, crops: Image) -> tuple[list[str], FloatArray, FloatArray]:
        """``(codes, confidence, embeddings)`` for a batch of crops."""
        res = self.run(crops)
        return res.codes, res.confidence, res.embeddings

    def classify_quads(
        self, image: Image, quads: Sequence[Any] | FloatArray, turn_below: float | None = None
    ) -> Classified:
        """The tiles at ``quads`` read.  ``turn_below``: a quad with a smaller aspect
        (:func:`quad_aspect`) is also read a quarter turned, and that reading is kept when it is
        :data:`TURN_MARGIN` more confident (the photo pipeline passes :data:`TURN_ASPECT`)."""
        q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
        res = self._read_quads(image, q)
        if turn_below is None or len(q) == 0:
            return res
        # a reading already surer than 1 - TURN_MARGIN cannot be beaten: only the others are cut again
        near = np.flatnonzero((quad_aspect(q) < turn_below) & (res.confidence < 1 - TURN_MARGIN))
        if len(near) == 0:
            return res
        turned = self._read_quads(image, q[near], turn=True)
        better = turned.confidence > res.confidence[near] + TURN_MARGIN
        if not better.any():
            return res
        full = Classified(
            list(res.codes), res.confidence.copy(), res.probs.copy(), res.embeddings.copy()
        )
        for k in np.flatnonzero(better):
            i = int(near[k])
            full.codes[i] = turned.codes[k]
            full.confidence[i] = turned.confidence[k]
            full.probs[i] = turned.probs[k]
            full.embeddings[i] = turned.embeddings[k]
        return full
