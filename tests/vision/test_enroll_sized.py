"""Far tiles under an enrolled set: copies shrunk to table size or to a width, sized prototypes
matched at a tile's own width by the table reader."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from enroll_helpers import holdout_grid

from companion.cli import main
from vision.artwork import HOLDOUT_STYLE, tile_faces
from vision.enroll import augment_crops
from vision.prototypes import TileSetPrototypes
from vision.tileset import TileSet


def test_small_copies_look_like_far_tiles() -> None:
    """``augment_crops(small=1)`` shrinks every copy to table size and back: fine detail is gone
    (much less edge energy), while ``small=0`` leaves the copies exactly as they always were."""
    faces = tile_faces(HOLDOUT_STYLE)
    crops = np.stack([cv2.resize(np.asarray(faces[c][0]), (48, 64)) for c in ("5C", "8B", "9D")])
    plain, again = augment_crops(crops, 4, seed=3), augment_crops(crops, 4, seed=3, small=0.0)
    tiny = augment_crops(crops, 4, seed=3, small=1.0)
    assert np.array_equal(plain, again)

    def edges(x: np.ndarray) -> float:
        return float(np.mean([np.abs(cv2.Laplacian(cv2.cvtColor(c, cv2.COLOR_BGR2GRAY), cv2.CV_32F)).mean() for c in x]))

    assert edges(tiny) < 0.6 * edges(plain)


def test_copies_at_a_width_look_that_wide() -> None:
    """``augment_crops(width=W)`` shrinks every copy to a tile W px wide and back: the narrower,
    the less fine detail is left; the copies are the same jitter as without ``width``."""
    faces = tile_faces(HOLDOUT_STYLE)
    crops = np.stack([cv2.resize(np.asarray(faces[c][0]), (48, 64)) for c in ("5C", "8B", "9D")])

    def edges(x: np.ndarray) -> float:
        return float(np.mean([np.abs(cv2.Laplacian(cv2.cvtColor(c, cv2.COLOR_BGR2GRAY), cv2.CV_32F)).mean() for c in x]))

    plain = augment_crops(crops, 4, seed=3)
    e8, e24 = edges(augment_crops(crops, 4, seed=3, width=8)), edges(augment_crops(crops, 4, seed=3, width=24))
    assert e8 < 0.8 * e24 < 0.8 * edges(plain)
    assert np.array_equal(augment_crops(crops, 4, seed=3, width=8), augment_crops(crops, 4, seed=3, width=8))


def test_a_far_tile_is_matched_at_its_own_width() -> None:
    """A code's sized prototype counts for a tile of about that width only: a tile whose
    embedding is the 8-px look of code A reads A when it is 9 px wide, and by the blended
    prototypes (where it is nearer B) when its width is unknown, nearer another width, or over
    SIZED_MAX_PX."""
    from vision.classify import Classified
    from vision.prototypes import SIZED_MAX_PX

    classes = ["1B", "2B", "BK"]
    blended = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], np.float32)
    at_8 = np.array([[0.0, 0.6, 0.8], [0.0, 1.0, 0.0]], np.float32)  # A seen 8 px wide
    sized = ((8, 12), np.stack([at_8, blended]))
    refiner = TileSetPrototypes(TileSet("toy", "chinese", ("1B", "2B"), blended), classes, weight=0.0, sized=sized)
    res = Classified(["1B"], np.ones(1, np.float32), np.full((1, 3), 1 / 3, np.float32),
                     np.array([[0.0, 0.6, 0.8]], np.float32))

    def read(px: float | None) -> str:
        return refiner.apply(res, tile_px=None if px is None else np.array([px], np.float32)).codes[0]

    assert read(9.0) == "1B"
    assert read(None) == read(11.5) == read(SIZED_MAX_PX + 1) == "2B"
    far = ((8, 12), np.stack([at_8, at_8]))
    wide = TileSetPrototypes(TileSet("toy", "chinese", ("1B", "2B"), blended), classes, weight=0.0, sized=far)
    assert wide.apply(res, tile_px=np.array([SIZED_MAX_PX], np.float32)).codes == ["1B"]
    assert wide.apply(res, tile_px=np.array([SIZED_MAX_PX + 1], np.float32)).codes == ["2B"]


def test_the_table_reader_matches_small_tiles_at_their_width(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An enrolled set gives the table classifier prototypes at the widths of far tiles, and with
    them small tiles of a style no model saw are read better than by the blended prototypes alone."""
    from vision.pipeline import TileRecognizer
    from vision.prototypes import SIZED_WIDTHS

    path, _, _ = holdout_grid(tmp_path, seed=4)
    root = tmp_path / "sets"
    assert main(["enroll", "--name", "unseen", str(path), "--layout", "chinese", "--root", str(root)]) == 0
    monkeypatch.setattr("vision.tileset.TILESETS_DIR", root)
    rec = TileRecognizer(tileset="unseen")
    refiner = rec.table_prototypes
    assert refiner.sized is not None and refiner.sized[0] == SIZED_WIDTHS
    assert refiner.sized[1].shape[:2] == (len(SIZED_WIDTHS), len(refiner.tileset.codes))
    assert rec.prototypes.sized is None  # photos: tiles 25-80 px, the blended prototypes
    # each code's face three times, 8-9 px wide through a slight tilt and another light
    faces = tile_faces(HOLDOUT_STYLE)
    codes = [c for c in refiner.tileset.codes if c in faces for _ in range(3)]
    rng = np.random.default_rng(11)
    crops = []
    for c in codes:
        face = cv2.resize(np.asarray(faces[c][0]), (48, 64)).astype(np.float32)
        m = cv2.getRotationMatrix2D((24, 32), rng.uniform(-5, 5), rng.uniform(0.95, 1.05))
        face = cv2.warpAffine(face * rng.uniform(0.75, 1.1), m, (48, 64), borderMode=cv2.BORDER_REPLICATE)
        w = int(rng.integers(8, 10))
        tiny = cv2.resize(face, (w, round(w * 4 / 3)), interpolation=cv2.INTER_AREA)
        crops.append(np.clip(cv2.resize(tiny, (48, 64), interpolation=cv2.INTER_LINEAR), 0, 255).astype(np.uint8))
    res = rec.table_classifier.run(np.stack(crops))
    sized = refiner.apply(res, tile_px=np.full(len(codes), 8.5, np.float32)).codes
    blended = refiner.apply(res).codes
    right_sized = sum(a == b for a, b in zip(sized, codes, strict=True))
    right_blended = sum(a == b for a, b in zip(blended, codes, strict=True))
    assert right_sized > right_blended, (right_sized, right_blended, len(codes))


def test_the_table_classifier_reads_each_tile_at_its_own_width(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``TileRecognizer.classify`` for the table (``tile_px`` given) measures each quad's width and
    reads small tiles with the sized prototypes; a photo's reading does not use them."""
    from vision.classify import quad_width_px
    from vision.pipeline import TileRecognizer

    path, _, _ = holdout_grid(tmp_path, seed=4)
    root = tmp_path / "sets"
    assert main(["enroll", "--name", "unseen", str(path), "--layout", "chinese", "--root", str(root)]) == 0
    monkeypatch.setattr("vision.tileset.TILESETS_DIR", root)
    rec = TileRecognizer(tileset="unseen")
    faces = tile_faces(HOLDOUT_STYLE)
    codes = [c for c in rec.table_prototypes.tileset.codes if c in faces]
    canvas = np.full((40, 12 * len(codes) + 8, 3), 60, np.uint8)
    quads = []
    for k, c in enumerate(codes):  # a row of far tiles, 9 x 12 px
        canvas[14:26, 4 + 12 * k:13 + 12 * k] = cv2.resize(np.asarray(faces[c][0]), (9, 12), interpolation=cv2.INTER_AREA)
        x0 = 4 + 12 * k
        quads.append([[x0, 14], [x0 + 9, 14], [x0 + 9, 26], [x0, 26]])
    q = np.asarray(quads, np.float32)
    assert np.allclose(quad_width_px(q), 9.0)
    got = rec.classify(canvas, q, tile_px=9.0)
    raw = rec.table_classifier.classify_quads(canvas, q)
    sized = rec.table_prototypes.apply(raw, tile_px=quad_width_px(q))
    blended = rec.table_prototypes.apply(raw)
    assert list(got.codes) == list(sized.codes)
    assert np.allclose(got.probs, sized.probs, atol=1e-5)
    assert not np.allclose(sized.probs, blended.probs, atol=1e-3)
