"""``detect --piles``: the face-up tiles heaped beside a photo's row, read on request, on the real
models and a real photo (``photo1.jpg``: a rack's row of 15 labelled tiles, a heap of 30-odd
face-up discards above it that the photos leave unlabelled)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from pipeline_helpers import DATA, NEEDS_CLASSIFIER, REPO

from vision.io import load_image
from vision.piles import PILE_FACTORS, PILE_TILE_PX, covered, pile_factor, with_piles
from vision.scales import auto_long_side
from vision.types import Detections

pytestmark = NEEDS_CLASSIFIER


@pytest.fixture(scope="module")
def pile_reader():  # type: ignore[no-untyped-def]
    from vision.pipeline import TileRecognizer

    return TileRecognizer(REPO / "models", piles=True)


def _square(cx: float, cy: float, w: float, h: float) -> np.ndarray:
    return np.array([[cx - w / 2, cy - h / 2], [cx + w / 2, cy - h / 2], [cx + w / 2, cy + h / 2],
                     [cx - w / 2, cy + h / 2]], np.float32)


def test_the_heap_is_read_beside_the_row_on_request(recognizer, pile_reader) -> None:  # type: ignore[no-untyped-def]
    img = load_image(DATA / "photo1.jpg")
    row = recognizer.detect(img)
    both = pile_reader.detect(img)
    assert len(row) == 15  # the default reading: the row alone, as the photo is labelled
    assert len(both) >= 30
    # the row's tiles come back as they were, and no tile of the heap lies on one of them
    assert [str(c) for c in both.codes[:15]] == [str(c) for c in row.codes]
    assert np.allclose(both.quads[:15], row.quads, atol=1.0)
    heap = both[15:]
    assert all(not covered(q, row.quads) for q in heap.quads)
    # the heap's tiles lie above the row (smaller y), are read surely and are not backs
    assert float(heap.centres[:, 1].max()) < float(row.centres[:, 1].min())
    assert float(heap.confidence.min()) >= 0.8 and "BK" not in set(heap.codes.tolist())


def test_a_photo_with_no_heap_gains_nothing_it_should_not(recognizer, pile_reader) -> None:  # type: ignore[no-untyped-def]
    """The photo cut below its heap (its row and the rack under it): the pile's reading finds the same
    tiles there, so none is added."""
    img = load_image(DATA / "photo1.jpg")
    row = recognizer.detect(img)
    lo = int(row.boxes[:, 1].min()) - 20
    crop = np.ascontiguousarray(img[max(lo, 0):, :])
    plain = recognizer.detect(crop)
    assert len(plain) >= 13 and len(pile_reader.detect(crop)) == len(plain)


def test_the_pile_reading_puts_the_tiles_at_their_size_for_it() -> None:
    shape = (640, 640, 3)
    scale = auto_long_side(shape) / 640
    det = Detections.from_quads(np.stack([_square(100 + 50 * i, 300, 44, 60) for i in range(5)]),
                                ["5D"] * 5, np.ones(5, np.float32))
    assert pile_factor(det, shape) == pytest.approx(PILE_TILE_PX / (44 * scale), rel=0.02)
    tiny = Detections.from_quads(np.stack([_square(100, 300, 4, 6)]), ["5D"], np.ones(1, np.float32))
    assert pile_factor(tiny, shape) == PILE_FACTORS[1]
    assert pile_factor(Detections.empty(), shape) == 1.8


def test_only_sure_faces_where_no_tile_was_found_are_added_each_once() -> None:
    """The heap's reading (a stand-in ``read_at``) holds a tile over one already found, a new sure
    face, the same face found again less surely, a weak face and a sure back: only the new face is
    added, after the tiles already found, with its objectness."""
    found = Detections.from_quads(np.stack([_square(100, 100, 40, 60)]), ["5D"], np.ones(1, np.float32))
    quads = np.stack([_square(110, 100, 40, 60), _square(300, 100, 40, 60), _square(304, 102, 40, 60),
                      _square(500, 100, 40, 60), _square(700, 100, 40, 60)])
    heap = Detections.from_quads(quads, ["6D", "7B", "1B", "N", "BK"],
                                 np.array([0.99, 0.95, 0.9, 0.5, 0.99], np.float32))
    asked: list[float] = []

    def read_at(factor: float) -> tuple[Detections, np.ndarray]:
        asked.append(factor)
        return heap, np.full(len(heap), 0.9, np.float32)

    out, obj = with_piles(read_at, (640, 640, 3), found, np.ones(1, np.float32))
    assert asked == [pile_factor(found, (640, 640, 3))]
    assert [str(c) for c in out.codes] == ["5D", "7B"] and np.allclose(out.quads[1], quads[1])
    assert obj.tolist() == pytest.approx([1.0, 0.9])


def test_a_tile_overlapping_one_already_found_is_covered() -> None:
    """Overlap is measured against the smaller of the two, so a box spanning two tiles already
    found, or one inside a found tile, is covered, while a neighbour touching it is not."""
    found = np.stack([_square(100, 100, 40, 60), _square(141, 100, 40, 60)])
    assert covered(_square(110, 100, 40, 60), found)  # most of it on a found tile
    assert covered(_square(100, 100, 10, 10), found)  # a small box inside one
    assert covered(_square(120, 100, 80, 120), found)  # a big box over both
    assert not covered(_square(182, 100, 40, 60), found)  # the next tile along, touching
    assert not covered(_square(177, 100, 40, 60), found, share=0.15)  # a tenth of it over


def test_detect_piles_on_the_command_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    photo = tmp_path / "photo1.jpg"
    photo.write_bytes((DATA / "photo1.jpg").read_bytes())
    runs = {}
    for flag in ([], ["--piles"]):
        proc = subprocess.run([sys.executable, "-m", "companion", "detect", str(photo), *flag],
                              capture_output=True, text=True, cwd=REPO, timeout=120)
        assert proc.returncode == 0, proc.stderr
        runs[bool(flag)] = json.loads(proc.stdout)
    assert len(runs[False]["tiles"]) == 15 and len(runs[True]["tiles"]) >= 30


def test_a_still_read_in_windows_reads_the_heap_in_each(recognizer, pile_reader) -> None:  # type: ignore[no-untyped-def]
    """``photo1.jpg`` laid 3x3 (1920x1920, a still whose tiles are small: read in windows): each
    window reads its heaps, and each copy of the photo gives its row and its heap."""
    img = load_image(DATA / "photo1.jpg")
    big = np.ascontiguousarray(np.concatenate([np.concatenate([img] * 3, axis=1)] * 3, axis=0))
    plain, both = recognizer.detect(big), pile_reader.detect(big)
    assert plain.meta.get("windows", 0) > 1 and both.meta.get("windows", 0) > 1
    per_copy = np.bincount((both.centres[:, 1] // 640).astype(int) * 3 + (both.centres[:, 0] // 640).astype(int),
                           minlength=9)
    assert len(plain) <= 9 * 17 and per_copy.min() >= 35
