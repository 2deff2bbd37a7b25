"""The ``companion detect`` command: JSON lines, drawings, folders, a drawing folder it cannot make,
``--min-score 0``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
from pipeline_helpers import DATA, NEEDS_CLASSIFIER, PHOTOS, REPO, blurred_photo1

from vision.io import load_image

pytestmark = NEEDS_CLASSIFIER


def test_detect_command_prints_one_json_line_per_image() -> None:
    paths = [str(DATA / p["file"]) for p in PHOTOS[:2]]
    proc = subprocess.run(
        [sys.executable, "-m", "companion", "detect", *paths, "--jsonl"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [line["image"] for line in lines] == paths
    for line, photo in zip(lines, PHOTOS, strict=False):
        assert set(line) == {"image", "tiles", "ms"}
        assert len(line["tiles"]) >= 0.8 * len(photo["tiles"])
        tile = line["tiles"][0]
        assert set(tile) == {"code", "box", "quad", "confidence"}
        assert len(tile["quad"]) == 4 and 0 <= tile["confidence"] <= 1
        assert all(0 <= v <= 640 + 5 for v in tile["box"])


def test_detect_command_draws_each_image_it_reads(tmp_path: Path) -> None:
    # two images of one name from two folders, and a file that is no image
    paths = []
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        paths.append(tmp_path / folder / "photo1.jpg")
        paths[-1].write_bytes((DATA / "photo1.jpg").read_bytes())
    bad = tmp_path / "notes.jpg"
    bad.write_text("no pixels here\n")
    out = tmp_path / "drawn"
    proc = subprocess.run([sys.executable, "-m", "companion", "detect", *map(str, paths), str(bad), "--annotate", str(out)],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 2, proc.stderr  # the file that is no image
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [line.get("annotated") for line in lines] == [str(out / "photo1.tiles.png"), str(out / "photo1.2.tiles.png"), None]
    assert sorted(p.name for p in out.iterdir()) == ["photo1.2.tiles.png", "photo1.tiles.png"]
    original = load_image(DATA / "photo1.jpg")
    for line in lines[:2]:
        drawn = cv2.imread(line["annotated"])
        assert drawn.shape == original.shape
        changed = np.any(drawn.astype(int) != original.astype(int), axis=2)
        for tile in line["tiles"]:  # each tile's outline is drawn along its quad
            x, y = np.round(np.asarray(tile["quad"]).mean(axis=0)).astype(int)
            corner = np.round(tile["quad"][0]).astype(int)
            assert changed[max(corner[1] - 2, 0):corner[1] + 3, max(corner[0] - 2, 0):corner[0] + 3].any()
            assert not changed[y, x]  # the face itself is left as it is
    assert "error" in lines[2]


def test_detect_command_reads_the_image_files_of_a_folder(tmp_path: Path) -> None:
    photos = tmp_path / "photos"
    (photos / "older").mkdir(parents=True)
    for name in ("b.JPG", "a.jpg", "older/c.jpg"):  # a subfolder is not read
        (photos / name).write_bytes((DATA / "photo1.jpg").read_bytes())
    (photos / "notes.txt").write_text("not a photo\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = subprocess.run([sys.executable, "-m", "companion", "detect", str(photos), str(empty)],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [line["image"] for line in lines] == [str(photos / "a.jpg"), str(photos / "b.JPG"), str(empty)]
    assert len(lines[0]["tiles"]) == len(lines[1]["tiles"]) >= 10
    assert lines[2] == {"image": str(empty), "error": "a folder with no image files"}
    assert proc.returncode == 2 and "no image files" in proc.stderr and str(empty) in proc.stderr


def test_detect_command_names_a_drawing_folder_it_cannot_make(tmp_path: Path) -> None:
    blocker = tmp_path / "file.txt"
    blocker.write_text("a file where the folder would go\n")
    proc = subprocess.run([sys.executable, "-m", "companion", "detect", str(DATA / "photo1.jpg"), "--annotate",
                           str(blocker / "drawn")], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "cannot make the folder for the drawings" in proc.stderr and str(blocker / "drawn") in proc.stderr


def test_detect_command_min_score_zero_lists_every_tile_found(tmp_path: Path) -> None:
    # photo1 out of focus: the localiser finds weak boxes that the default score drops
    path = str(tmp_path / "blurred.png")
    cv2.imwrite(path, blurred_photo1())

    def tiles(*extra: str) -> int:
        proc = subprocess.run([sys.executable, "-m", "companion", "detect", path, *extra],
                              capture_output=True, text=True, cwd=REPO, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return len(json.loads(proc.stdout)["tiles"])

    assert tiles("--min-score", "0") > tiles()
