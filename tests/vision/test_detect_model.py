"""The committed localiser on real photos: it finds the labelled tiles, at any 90-degree turn."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vision.detect import Localized, TileLocalizer, quad_iou_boxes
from vision.io import load_image

DATA = Path(__file__).parent / "data"
MODEL = Path(__file__).resolve().parents[2] / "models" / "localizer.onnx"
PHOTOS = json.loads((DATA / "photos.json").read_text())


@pytest.fixture(scope="module")
def localizer() -> TileLocalizer:
    return TileLocalizer(MODEL)


def boxes_of(loc: Localized) -> np.ndarray:
    return np.concatenate([loc.quads.min(axis=1), loc.quads.max(axis=1)], axis=1)


def recall_precision(pred: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    iou = quad_iou_boxes(pred.astype(np.float32), truth.astype(np.float32))
    hit_truth = (iou.max(axis=0) >= 0.5).mean() if len(pred) else 0.0
    hit_pred = (iou.max(axis=1) >= 0.5).mean() if len(pred) else 1.0
    return float(hit_truth), float(hit_pred)


@pytest.mark.parametrize("photo", PHOTOS, ids=[p["file"] for p in PHOTOS])
def test_finds_the_labelled_tiles(localizer: TileLocalizer, photo: dict[str, object]) -> None:
    img = load_image(DATA / str(photo["file"]))
    truth = np.array([t["box"] for t in photo["tiles"]], np.float32)  # type: ignore[attr-defined]
    loc = localizer.localize(img)
    recall, precision = recall_precision(boxes_of(loc), truth)
    assert recall >= 0.6, f"recall {recall:.2f}"  # all 296 valid photos: 0.92 (bench)
    # photo3 (big tilted tiles, loose axis-aligned labels) and photo4 (squeezed from a panorama,
    # tiles 12x wider than tall) are the localiser's weak spots (known gap, docs/recognition.md)
    floor = {"photo3.jpg": 0.5, "photo4.jpg": 0.25}.get(str(photo["file"]), 0.7)
    assert precision >= floor, f"precision {precision:.2f}"
    assert np.all((loc.score >= 0) & (loc.score <= 1))


@pytest.mark.parametrize("k", [1, 2, 3])
def test_a_turned_photo_gives_the_same_tiles(localizer: TileLocalizer, k: int) -> None:
    img = load_image(DATA / "photo2.jpg")
    h, w = img.shape[:2]
    base = boxes_of(localizer.localize(img))
    turned = np.ascontiguousarray(np.rot90(img, k))  # counter-clockwise k x 90 degrees
    loc = localizer.localize(turned)
    back = undo_rot90(loc.quads, k, h, w)
    recall, precision = recall_precision(
        np.concatenate([back.min(axis=1), back.max(axis=1)], axis=1), base
    )
    assert recall >= 0.9 and precision >= 0.9, (recall, precision)


def undo_rot90(quads: np.ndarray, k: int, h: int, w: int) -> np.ndarray:
    """Points in ``np.rot90(img, k)`` -> points in ``img`` (h x w)."""
    pts = quads.reshape(-1, 2).astype(np.float64)
    for i in range(k, 0, -1):
        # image before the i-th turn has size (hh, ww); rot90 maps (x, y) -> (y, ww - 1 - x)
        hh, ww = (h, w) if (i - 1) % 2 == 0 else (w, h)
        x, y = pts[:, 0], pts[:, 1]
        pts = np.stack([ww - 1 - y, x], axis=1)
    return pts.reshape(-1, 4, 2)


def test_blank_and_tiny_images_give_no_tiles(localizer: TileLocalizer) -> None:
    assert len(localizer.localize(np.full((480, 640, 3), 120, np.uint8))) == 0
    assert len(localizer.localize(np.full((40, 30, 3), 200, np.uint8))) == 0


def test_any_input_size(localizer: TileLocalizer) -> None:
    img = load_image(DATA / "photo1.jpg")
    wide = np.zeros((480, 1000, 3), np.uint8)
    wide[:, 180:820] = img[80:560]
    loc = localizer.localize(wide, scale=0.5)
    assert len(loc) > 5
    assert loc.quads[..., 0].max() <= 1000 and loc.quads[..., 1].max() <= 480 + 20
