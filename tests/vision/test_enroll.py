"""Tile-set enrollment: the sheet, a round trip on a synthetic grid photo, photos taken turned or
under a lamp, bad photos, the grid's order, flowers.

Finding and framing the layout's tiles, the prototypes and the sized prototypes are tested in the
``test_enroll_*.py`` modules beside this one; their shared helpers are in ``enroll_helpers.py``.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from enroll_helpers import MODEL, holdout_grid

from companion.cli import main
from vision.classify import TileClassifier, extract_crops
from vision.enroll import EnrollError, find_tiles, layout_codes, row_lengths, sort_into_grid
from vision.prototypes import TileSetPrototypes
from vision.tileset import TileSet, TileSetError, load_tileset


def test_layouts_are_documented_sizes() -> None:
    assert len(layout_codes("american")) == 37 and row_lengths("american") == [9, 9, 9, 10]
    assert len(layout_codes("chinese")) == 42 and layout_codes("chinese")[-1] == "SE4"
    with pytest.raises(EnrollError, match="'mexican'"):
        layout_codes("mexican")


@pytest.mark.parametrize("suffix", [".svg", ".png"])
def test_sheet_is_written(tmp_path: Path, suffix: str) -> None:
    out = tmp_path / f"sheet{suffix}"
    assert main(["enroll", "--sheet", str(out), "--layout", "american"]) == 0
    data = out.read_bytes()
    assert len(data) > 1000
    if suffix == ".svg":
        text = data.decode()
        assert all(f">{c}<" in text for c in layout_codes("american") if c != "BK")
    else:
        assert cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR) is not None


def test_enroll_round_trip_on_a_synthetic_grid_photo(tmp_path: Path) -> None:
    photo, image, true_quads = holdout_grid(tmp_path)
    root = tmp_path / "sets"
    args = ["enroll", "--name", "dorothy", str(photo), "--layout", "chinese", "--root", str(root)]
    assert main([*args, "--model", str(MODEL)]) == 0
    ts = load_tileset("dorothy", root)
    assert ts.codes == tuple(layout_codes("chinese")) and ts.embeddings.shape == (42, 64)
    assert len(list((root / "dorothy" / "crops").glob("*.png"))) == 42
    # Reading a second photo of the same set: (nearly) every tile right under the enrolled set,
    # far better than the base classifier, which never saw this artwork style.
    _, image2, quads2 = holdout_grid(tmp_path, seed=5)
    clf = TileClassifier(MODEL)
    base = clf.run(extract_crops(image2, quads2))
    res = TileSetPrototypes(ts, clf.classes).apply(base)
    truth = layout_codes("chinese")
    right = sum(a == b for a, b in zip(res.codes, truth, strict=True))
    assert right >= 40, [(a, b) for a, b in zip(res.codes, truth, strict=True) if a != b]
    assert right > sum(a == b for a, b in zip(base.codes, truth, strict=True))


@pytest.mark.parametrize("turn", [1, 2, 3])
def test_a_photo_taken_upside_down_or_sideways_enrolls_as_taken_upright(
    tmp_path: Path, turn: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same laid-out set photographed a quarter, a half and three quarters turned (a phone
    held the wrong way, no orientation tag): its tiles form the layout's rows only turned back, so
    it is enrolled turned back, and its prototypes are those of the photo taken upright."""
    from vision.enroll import enroll_image, upright_grid

    _, image, _ = holdout_grid(tmp_path)
    clf = TileClassifier(MODEL)
    upright, _, agree = enroll_image(image, "chinese", clf, "upright")
    turned_image = np.ascontiguousarray(np.rot90(image, turn))
    with pytest.raises(EnrollError, match="rows|expected"):  # as taken, it is not the layout
        sort_into_grid(find_tiles(turned_image, 42), row_lengths("chinese"))
    assert upright_grid(turned_image, "chinese")[0] == (4 - turn) % 4
    ts, _, agree_turned = enroll_image(turned_image, "chinese", clf, "turned")
    assert ts.meta == {"turned_degrees": 90 * ((4 - turn) % 4)} and upright.meta == {}
    cos = np.sum(ts.embeddings * upright.embeddings, axis=1)
    assert cos.min() > 0.9 and agree_turned == pytest.approx(agree, abs=0.05)
    photo = tmp_path / "turned.png"
    cv2.imwrite(str(photo), turned_image)
    root = tmp_path / "sets"
    args = ["enroll", "--name", "turned", str(photo), "--layout", "chinese", "--root", str(root)]
    assert main([*args, "--model", str(MODEL)]) == 0
    assert f"read turned by {90 * ((4 - turn) % 4)} degrees" in capsys.readouterr().out
    assert load_tileset("turned", root).meta["turned_degrees"] == 90 * ((4 - turn) % 4)


def test_blank_photo_is_refused_with_exit_code_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.full((300, 400, 3), 90, np.uint8))
    code = main(
        ["enroll", "--name", "x", str(blank), "--root", str(tmp_path), "--model", str(MODEL)]
    )
    assert code == 3
    assert "expected 37 tiles" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_wrong_layout_count_and_unreadable_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    photo, _, _ = holdout_grid(tmp_path)
    root = ["--root", str(tmp_path / "sets"), "--model", str(MODEL)]
    assert main(["enroll", "--name", "x", str(photo), "--layout", "american", *root]) == 3
    assert "contours found 42" in capsys.readouterr().err
    text = tmp_path / "notes.png"
    text.write_text("not an image")
    assert main(["enroll", "--name", "x", str(text), *root]) == 2
    assert "cannot read image" in capsys.readouterr().err
    heic = tmp_path / "layout.heic"  # an iPhone's default format: named, with what to do
    heic.write_bytes(b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + b"\x00" * 300)
    assert main(["enroll", "--name", "x", str(heic), *root]) == 2
    assert "HEIC/HEIF photo" in capsys.readouterr().err
    assert main(["enroll", "--name", "x", str(tmp_path / "missing.jpg"), *root]) == 2
    assert main(["enroll", "--name", "../evil", str(photo), *root]) == 2
    assert main(["enroll", str(photo)]) == 2


def test_sort_into_grid_orders_rows_and_rejects_wrong_rows() -> None:
    rng = np.random.default_rng(1)
    quads = []
    for r, n in enumerate([3, 2]):
        for c in range(n):
            x, y = 10 + c * 40, 10 + r * 60
            quads.append([[x, y], [x + 30, y], [x + 30, y + 40], [x, y + 40]])
    q = np.array(quads, np.float32)
    shuffled = q[rng.permutation(len(q))]
    assert np.array_equal(sort_into_grid(shuffled, [3, 2]), q)
    with pytest.raises(EnrollError, match=r"rows of \[3, 2\]"):
        sort_into_grid(shuffled, [2, 3])


def test_american_set_reads_flowers_as_f() -> None:
    classes = ["1B", "F", "FL1", "SE2", "J", "BK"]
    ts = TileSet("a", "american", ("1B", "F", "J"), np.eye(3, 4, dtype=np.float32))
    fuse = TileSetPrototypes(ts, classes, weight=1.0)
    probs = np.array([[0.1, 0.05, 0.5, 0.3, 0.05, 0.0]], np.float32)
    res = fuse.fuse(probs, np.ones((1, 4), np.float32))
    assert classes[int(res.argmax())] == "F"
    assert res[0, classes.index("FL1")] == 0 and res[0, classes.index("SE2")] == 0
    with pytest.raises(TileSetError, match="2 codes"):
        TileSet("b", "american", ("1B", "F"), np.zeros((3, 4), np.float32))


@pytest.mark.parametrize("lamp", ["warm", "cool"])
def test_a_set_enrolled_under_a_lamp_reads_a_daylight_photo_of_it(tmp_path: Path, lamp: str) -> None:
    """The enrollment photo's tint is taken out as the recogniser takes it out of every picture
    (``vision.light.without_lamp``), so the prototypes are the set's own faces, not the lamp's."""
    from vision.enroll import enroll_image
    from vision.light import tinted

    _, image, _ = holdout_grid(tmp_path)
    clf = TileClassifier(MODEL)
    ts, _, _ = enroll_image(tinted(image, lamp), "chinese", clf, "lamp")
    plain, _, _ = enroll_image(image, "chinese", clf, "plain")
    # taken out: 0.994 (warm) and 0.996 (cool) against the daylight enrollment; kept: 0.894 and 0.977
    assert float(np.mean(np.sum(ts.embeddings * plain.embeddings, axis=1))) > 0.985
    _, image2, quads2 = holdout_grid(tmp_path, seed=5)
    res = TileSetPrototypes(ts, clf.classes).apply(clf.run(extract_crops(image2, quads2)))
    truth = layout_codes("chinese")
    assert sum(a == b for a, b in zip(res.codes, truth, strict=True)) >= 40
