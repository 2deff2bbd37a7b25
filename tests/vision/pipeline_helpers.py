"""Shared helpers of the pipeline tests (``test_pipeline*.py``): the test photos and their labels,
the committed-model skip mark, scoring and scene helpers (the ``recognizer`` fixture is in conftest.py)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.detect import quad_iou_boxes
from vision.io import load_image
from vision.types import Detections

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).resolve().parents[2]
PHOTOS = json.loads((DATA / "photos.json").read_text())

# every pipeline test module sets ``pytestmark = NEEDS_CLASSIFIER``
NEEDS_CLASSIFIER = pytest.mark.skipif(
    not (REPO / "models" / "classifier.onnx").is_file(), reason="classifier model not committed yet"
)


def f1_with_codes(d: Detections, tiles: list[dict[str, object]]) -> float:
    truth = np.array([t["box"] for t in tiles], np.float32)
    codes = [str(t["code"]) for t in tiles]
    iou = quad_iou_boxes(d.boxes, truth)
    used = np.zeros(len(codes), bool)
    tp = 0
    for i in np.argsort(-d.confidence):
        ok = np.array([c == d.codes[i] for c in codes]) & ~used & (iou[i] >= 0.5)
        if ok.any():
            used[int(np.argmax(np.where(ok, iou[i], -1)))] = True
            tp += 1
    p, r = tp / max(len(d), 1), tp / max(len(codes), 1)
    return 2 * p * r / max(p + r, 1e-9)


def blurred_photo1() -> np.ndarray:
    return np.asarray(cv2.GaussianBlur(load_image(DATA / "photo1.jpg"), (0, 0), 5), np.uint8)


def american_scenes(seed: int, n: int, **kw: float) -> list:  # type: ignore[type-arg]
    """The first ``n`` of the bench's synthetic American scenes of ``seed`` (640x480; ``kw`` for
    :class:`scripts.synth_scenes.SceneMaker`, e.g. ``back_share``)."""
    from scripts.bench_vision_scenes import bench_scenes

    return list(bench_scenes((640, 480), n, seed, True, **kw))


def truth_bounds(scene) -> np.ndarray:  # type: ignore[no-untyped-def]
    """A synthetic scene's true tiles as upright boxes."""
    return np.concatenate([scene.quads.min(axis=1), scene.quads.max(axis=1)], axis=1).astype(np.float32)


def centred_quad(cx: float, cy: float, w: float, h: float) -> list[list[float]]:
    return [[cx - w / 2, cy - h / 2], [cx + w / 2, cy - h / 2], [cx + w / 2, cy + h / 2], [cx - w / 2, cy + h / 2]]
