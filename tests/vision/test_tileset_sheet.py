"""The check sheet of an enrolled set: every crop in the layout's rows under the code it is
enrolled as, the places to check and the tiles moved framed."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.enroll import layout_codes
from vision.tileset import CHECK_SHEET, TileSet, save_tileset
from vision.tileset_sheet import CHECK, COLOURS, FRAME, MOVED, cells, check_sheet, marks, sheet_of


def _crops(n: int) -> np.ndarray:
    """``n`` 64x48 crops, each a flat colour of its own with a dark bar at a height of its own."""
    rng = np.random.default_rng(3)
    crops = np.repeat(rng.integers(40, 220, (n, 1, 1, 3)), 64 * 48, axis=1).reshape(n, 64, 48, 3).astype(np.uint8)
    for k in range(n):
        crops[k, k % 60: k % 60 + 4] = 10
    return crops


def _frame(sheet: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    """The colour just outside a crop's top left corner, inside its frame."""
    x, y, _, _ = box
    return sheet[y - FRAME // 2, x - FRAME // 2]


def test_each_crop_lies_in_its_layout_place_under_its_code_and_marked_places_are_framed() -> None:
    codes = layout_codes("chinese")
    crops = _crops(len(codes))
    sheet = check_sheet(crops, codes, "chinese", {"6B": CHECK, "FL1": CHECK, "3C": MOVED})
    boxes = cells("chinese", len(codes), crops.shape[1:])
    rows = sorted({y for _, y, _, _ in boxes})
    assert len(rows) == 5 and [sum(y == r for _, y, _, _ in boxes) for r in rows] == [9, 9, 9, 7, 8]
    for k, (x, y, w, h) in enumerate(boxes):
        assert np.array_equal(sheet[y:y + h, x:x + w], cv2.resize(crops[k], (w, h), interpolation=cv2.INTER_NEAREST))
        caption = sheet[y + h + FRAME:y + h + 40, x:x + w]
        assert (caption.min(axis=2) < 120).sum() > 30  # the code written under it
    framed = {codes[k]: tuple(_frame(sheet, b)) for k, b in enumerate(boxes)}
    assert framed["6B"] == framed["FL1"] == COLOURS[CHECK] and framed["3C"] == COLOURS[MOVED]
    assert all(v == (255, 255, 255) for c, v in framed.items() if c not in ("6B", "FL1", "3C"))
    with pytest.raises(ValueError, match="41 crops for 42 codes"):
        check_sheet(crops[:41], codes, "chinese")


def test_a_set_whose_codes_are_not_its_layouts_is_laid_in_rows_of_nine() -> None:
    boxes = cells("american", 12, (64, 48))
    assert [y for _, y, _, _ in boxes].count(boxes[0][1]) == 9 and len({y for _, y, _, _ in boxes}) == 2


def test_marks_read_what_the_enrollment_said_and_ignore_fields_of_the_wrong_kind() -> None:
    meta = {"reordered": [{"place": "3B", "tile": "4B"}, {"place": "4B", "tile": "3B"}],
            "exchanged": [["7C", "8C"]], "maybe_swapped": [["6B", "FL1"]]}
    assert marks(meta) == {"3B": MOVED, "4B": MOVED, "7C": MOVED, "8C": MOVED, "6B": CHECK, "FL1": CHECK}
    assert marks({"reordered": [5], "maybe_swapped": "6B,FL1", "exchanged": None}) == {}


def test_a_saved_set_writes_its_check_sheet_and_a_stored_one_is_drawn_again(tmp_path: Path) -> None:
    codes = tuple(layout_codes("american"))
    crops = _crops(len(codes))
    meta = {"maybe_swapped": [["8B", "9B"]]}
    folder = save_tileset(TileSet("s", "american", codes, np.eye(len(codes), 8, dtype=np.float32), meta), crops,
                          tmp_path)
    written = cv2.imread(str(folder / CHECK_SHEET))
    again = sheet_of(folder)
    assert again is not None and np.array_equal(written, again)
    box = cells("american", len(codes), crops.shape[1:])[codes.index("9B")]
    assert tuple(_frame(written, box)) == COLOURS[CHECK]
    (folder / "tileset.json").write_text(json.dumps({"codes": list(codes)}))  # no layout: cannot be drawn
    assert sheet_of(folder) is None
    (folder / "tileset.json").write_text("[1, 2")
    assert sheet_of(folder) is None
