"""Table frames read with ``tile_px``: tiles found at the told tile size, read by the table classifier."""

from __future__ import annotations

import numpy as np
import pytest
from pipeline_helpers import DATA, NEEDS_CLASSIFIER, REPO

from vision.io import load_image

pytestmark = NEEDS_CLASSIFIER



def test_table_frame_tiles_are_found_at_the_told_tile_size(recognizer) -> None:  # type: ignore[no-untyped-def]
    from companion.table import TableReader
    from vision.layout import load_layout
    from vision.render import random_view, render_table
    from vision.render_scenes import random_scene

    layout = load_layout("siamese-2")
    r = render_table(layout, random_scene(layout, 3), seed=3, view=random_view(3, (1280, 720)))
    reader = TableReader(layout, recognizer)
    obs = reader.read(r.image)
    assert obs.homography == "fresh"
    cal = reader.calibrator.last
    assert cal is not None
    truth = np.array([t.quad_px for t in r.tiles], np.float32)
    width = np.linalg.norm(truth[:, 1] - truth[:, 0], axis=1)
    found = []
    for tile_px in (None, reader.tile_px(cal)):
        d = recognizer.detect(r.image) if tile_px is None else recognizer.detect(r.image, tile_px=tile_px)
        dist = np.linalg.norm(d.centres[None, :, :] - truth.mean(axis=1)[:, None, :], axis=2)
        found.append(float(np.mean(dist.min(axis=1) < 0.5 * width)) if len(d) else 0.0)
    # tiles 8-20 px wide: at the default half-size input most fall below the localiser's floor
    assert found[1] >= 0.85 and found[1] > found[0] + 0.2, found


def test_table_reader_gets_the_table_classifier(recognizer) -> None:  # type: ignore[no-untyped-def]
    """``tile_px`` (a table reader) picks ``classifier-table.onnx`` as it picks the table localiser;
    a photo is read by ``classifier.onnx``.  The two files are different models."""
    from vision.classify import extract_crops
    from vision.pipeline import TABLE_CLASSIFIER

    if not (REPO / "models" / TABLE_CLASSIFIER).is_file():
        pytest.skip("no table classifier committed")
    image = load_image(DATA / "photo1.jpg")
    quads, _ = recognizer.localize(image)
    crops = extract_crops(image, quads)
    photo_probs = recognizer.classifier.run(crops).probs
    table_probs = recognizer.table_classifier.run(crops).probs
    assert not np.allclose(photo_probs, table_probs, atol=1e-3)
    assert np.allclose(recognizer.classify(image, quads).probs, photo_probs, atol=1e-5)
    assert np.allclose(recognizer.classify(image, quads, tile_px=30.0).probs, table_probs, atol=1e-5)
