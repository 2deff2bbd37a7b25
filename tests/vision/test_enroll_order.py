"""Tiles laid out of the sheet's order (two swapped, three moved round) are enrolled where they
belong, each as the tile it reads surely (:func:`vision.enroll.misplaced`); ``--as-laid`` keeps
them where they lie, and a set laid right is never reordered.  Two tiles read each likelier as the
other's, though not surely, are named for the player to check (:func:`vision.enroll.doubtful_swaps`)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from enroll_helpers import MODEL, SWAPS, holdout_grid, swapped_grid

import vision.tileset as vision_tileset
from companion.cli import main
from vision.artwork import TRAIN_STYLES, tile_faces
from vision.classify import TileClassifier
from vision.enroll import (
    SWAP_ODDS,
    EnrollError,
    LaidTwiceError,
    doubtful_swaps,
    enroll_image,
    exchanges,
    grid_photo,
    laid_twice,
    layout_codes,
    misplaced,
)
from vision.tileset_sheet import CHECK, COLOURS, MOVED, cells

CODES = ["1B", "2B", "3B", "4B", "F", "J"]


def test_misplaced_finds_each_cycle_of_tiles_read_surely_as_the_next_places_tile() -> None:
    sure = [0.9] * 6
    assert misplaced(CODES, sure, CODES) == []
    assert misplaced(["1B", "3B", "2B", "4B", "F", "J"], sure, CODES) == [[1, 2]]
    assert misplaced(["2B", "3B", "1B", "4B", "F", "J"], sure, CODES) == [[0, 1, 2]]
    assert misplaced(["4B", "3B", "2B", "1B", "F", "J"], sure, CODES) == [[0, 3], [1, 2]]
    assert misplaced(["1B", "2B", "3B", "4B", "J", "FL3"], sure, CODES) == [[4, 5]]  # a flower for F
    # one of the two read unsurely, or a tile read as another's code alone (a misreading, or a
    # tile laid twice): no cycle
    assert misplaced(["1B", "3B", "2B", "4B", "F", "J"], [0.9, 0.9, 0.4, 0.9, 0.9, 0.9], CODES) == []
    assert misplaced(["1B", "3B", "3B", "4B", "F", "J"], [0.99] * 6, CODES) == []
    assert misplaced(["1B", "3B", "2B", "4B", "F", "J"], [0.9, 0.6, 0.6, 0.9, 0.9, 0.9], CODES, sure=0.7) == []


def test_tiles_laid_in_each_others_places_are_enrolled_where_they_belong() -> None:
    clf = TileClassifier(MODEL)
    right, swapped = swapped_grid()
    reference, _, agree_right = enroll_image(right, "chinese", clf, "right")
    assert "reordered" not in reference.meta
    ts, _, agree = enroll_image(swapped, "chinese", clf, "swapped")
    assert ts.meta["reordered"] == [{"place": p, "tile": t} for p, t in SWAPS.items()]
    cos = np.sum(ts.embeddings * reference.embeddings, axis=1)
    assert cos.min() > 0.99 and agree == agree_right  # every tile's prototype as laid right
    laid, _, agree_laid = enroll_image(swapped, "chinese", clf, "as-laid", as_laid=True)
    moved = [layout_codes("chinese").index(c) for c in SWAPS]
    assert "reordered" not in laid.meta and agree_laid < agree
    assert np.sum(laid.embeddings * reference.embeddings, axis=1)[moved].max() < 0.9


def test_an_exchange_asked_for_is_kept_though_its_tiles_read_surely_as_laid_and_says_so() -> None:
    clf = TileClassifier(MODEL)
    right, swapped = swapped_grid()
    codes = layout_codes("chinese")
    laid, crops_laid, _ = enroll_image(right, "chinese", clf, "right")
    ts, crops, _ = enroll_image(right, "chinese", clf, "asked", exchanged=[("8B", "9B")])
    i, j = codes.index("8B"), codes.index("9B")
    assert np.array_equal(crops[i], crops_laid[j]) and np.array_equal(crops[j], crops_laid[i])
    assert ts.meta["exchanged_read_otherwise"] == [["8B", "9B"]] and "reordered" not in ts.meta
    assert np.sum(ts.embeddings[i] * laid.embeddings[j]) > 0.99  # 8B taught with the 9 Bams' face, as asked
    # the tiles laid out of order, one pair exchanged by the player: that pair as asked, the rest put back
    ts, _, _ = enroll_image(swapped, "chinese", clf, "both", exchanged=[("3B", "4B")])
    assert ts.meta["exchanged"] == [["3B", "4B"]] and "exchanged_read_otherwise" not in ts.meta
    assert ts.meta["reordered"] == [{"place": p, "tile": t} for p, t in SWAPS.items() if p not in ("3B", "4B")]
    assert np.sum(ts.embeddings * laid.embeddings, axis=1).min() > 0.99


@pytest.mark.parametrize("style", ["xm-dorothys", "font-symbola"])
def test_a_set_the_models_do_not_know_laid_right_is_not_reordered(style: str, tmp_path: Path) -> None:
    """Sets the classifier reads worst (the held-out style, a font's line art) misread many tiles,
    but never two as each other's surely (no false swap over 59 layouts of 16 styles, fifty-fourth
    session)."""
    if style == "xm-dorothys":
        image = holdout_grid(tmp_path)[1]
    else:
        faces = {c: v[0] for c, v in tile_faces(style).items()}
        image = grid_photo(faces, "chinese", np.random.default_rng(1))[0]
    ts, _, agree = enroll_image(image, "chinese", TileClassifier(MODEL), style)
    assert agree < 0.95  # misreads there are
    assert "reordered" not in ts.meta and "maybe_swapped" not in ts.meta


def test_enroll_says_which_tiles_it_put_back_and_as_laid_keeps_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    photo = tmp_path / "swapped.png"
    cv2.imwrite(str(photo), swapped_grid()[1])
    root = tmp_path / "sets"
    args = ["enroll", str(photo), "--layout", "chinese", "--root", str(root), "--model", str(MODEL)]
    assert main([*args, "--name", "put-back"]) == 0
    out = capsys.readouterr().out
    assert "5 tiles lay in each other's places: 4B in 3B's place, 3B in 4B's place, S in E's place" in out
    assert json.loads((root / "put-back" / "tileset.json").read_text())["reordered"][0] == {"place": "3B", "tile": "4B"}
    assert f"each tile under the code it is enrolled as, laid out as the sheet lays them: {root / 'put-back' / 'check.png'}" in out
    drawn, codes = cv2.imread(str(root / "put-back" / "check.png")), layout_codes("chinese")
    moved = [c for c, (x, y, _, _) in zip(codes, cells("chinese", len(codes), (64, 48)), strict=True)
             if tuple(drawn[y - 2, x - 2]) == COLOURS[MOVED]]
    assert moved == ["3B", "4B", "E", "S", "W"]
    assert main([*args, "--name", "laid", "--as-laid"]) == 0
    assert "each other's places" not in capsys.readouterr().out
    assert "reordered" not in json.loads((root / "laid" / "tileset.json").read_text())
    (root / "broken").mkdir()
    (root / "broken" / "tileset.json").write_text("{not json")
    (root / "cut-short").mkdir()  # written by hand: fields of the wrong kind
    (root / "cut-short" / "tileset.json").write_text('{"layout": "chinese", "codes": [], "reordered": [5]}')
    assert main(["enroll", "--list", "--root", str(root)]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed[0].startswith(f"broken: unreadable {root / 'broken' / 'tileset.json'}")
    assert listed[1].startswith(f"cut-short: unreadable {root / 'cut-short' / 'tileset.json'}")
    n = len(layout_codes("chinese"))
    agree = json.loads((root / "laid" / "tileset.json").read_text())["base_agreement"]
    assert 0.5 < agree < 1 and listed[2] == f"laid: chinese layout, {n} tiles; {agree:.0%} read as laid out"
    assert listed[3].startswith(f"put-back: chinese layout, {n} tiles; 100% read as laid out; put back: 4B in 3B's place")


def test_laid_twice_finds_a_place_whose_tile_reads_surely_as_another_places_as_that_one_does() -> None:
    sure = [0.95] * 6
    assert laid_twice(CODES, sure, CODES) == []
    assert laid_twice(["1B", "1B", "3B", "4B", "F", "J"], sure, CODES) == [(1, 0)]
    assert laid_twice(["1B", "2B", "3B", "4B", "FL1", "SE2"], sure, CODES) == [(5, 4)]  # two flowers
    assert laid_twice(["1B", "1B", "3B", "4B", "F", "J"], [0.95, 0.8, 0.95, 0.95, 0.95, 0.95], CODES) == []
    assert laid_twice(["2B", "2B", "3B", "4B", "F", "J"], sure, CODES) == [(0, 1)]
    assert laid_twice(["1B", "3B", "2B", "4B", "F", "J"], sure, CODES) == []  # swapped: misplaced's


def test_a_tile_laid_twice_in_place_of_another_is_refused_unless_as_laid_or_said_laid_right(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """An 8 Craks laid in the 7 Craks' place as well: enrolled, the set's 7 Craks prototype would be
    an 8 Craks, and its 8 Craks read as 7 Craks.  The player may say otherwise for that place alone
    (a set whose 7 Craks the classifier takes for an 8 Craks), and every other check still holds."""
    faces = {c: v[0] for c, v in tile_faces(TRAIN_STYLES[0]).items()}
    faces["7C"] = faces["8C"]
    image, _ = grid_photo(faces, "chinese", np.random.default_rng(0))
    clf = TileClassifier(MODEL)
    with pytest.raises(EnrollError, match=r"the tile in 7C's place reads as 8C, as the tile in 8C's place does: "
                                          r"a tile laid twice and another missing\?"):
        enroll_image(image, "chinese", clf, "twice")
    ts, _, _ = enroll_image(image, "chinese", clf, "twice", as_laid=True)
    assert ts.codes[layout_codes("chinese").index("7C")] == "7C"
    photo = tmp_path / "twice.png"
    cv2.imwrite(str(photo), image)
    args = ["enroll", str(photo), "--layout", "chinese", "--root", str(tmp_path / "sets"), "--model", str(MODEL)]
    assert main([*args, "--name", "twice"]) == 3
    assert "enroll with --laid-right 7C (or keep every tile where it lies: --as-laid)" in capsys.readouterr().err
    assert not (tmp_path / "sets" / "twice").exists()
    assert main([*args, "--name", "twice", "--as-laid"]) == 0
    with pytest.raises(LaidTwiceError) as refused:
        enroll_image(image, "chinese", clf, "twice")
    assert refused.value.places == ["7C"]
    ts, _, _ = enroll_image(image, "chinese", clf, "said", laid_right=["7C"])
    assert ts.meta["laid_right"] == ["7C"] and ts.codes[layout_codes("chinese").index("7C")] == "7C"
    both = {c: v[0] for c, v in tile_faces(TRAIN_STYLES[0]).items()}
    both.update({"7C": both["8C"], "3B": both["4B"], "4B": both["3B"]})  # and two tiles swapped: still put back
    ts, _, _ = enroll_image(grid_photo(both, "chinese", np.random.default_rng(0))[0], "chinese", clf, "both",
                            laid_right=["7C"])
    assert [m["place"] for m in ts.meta["reordered"]] == ["3B", "4B"]
    capsys.readouterr()
    assert main([*args, "--name", "said", "--laid-right", "7C"]) == 0
    assert "laid right as said: the tile in 7C's place is enrolled as 7C" in capsys.readouterr().out
    assert main(["enroll", "--list", "--root", str(tmp_path / "sets")]) == 0
    assert "laid right as said: 7C" in capsys.readouterr().out
    assert main([*args, "--name", "bad", "--laid-right", "X9"]) == 2
    assert "laid right 'X9': not a place of the chinese layout" in capsys.readouterr().err


def _probs(rows: dict[int, dict[str, float]], classes: list[str]) -> np.ndarray:
    """Class probabilities for the places of :data:`CODES`: each place's own code at 0.9 unless
    ``rows`` gives that place's readings (the rest spread evenly)."""
    out = np.zeros((len(CODES), len(classes)), np.float32)
    for i, code in enumerate(CODES):
        given = rows.get(i, {code if code != "F" else "FL1": 0.9})
        rest = (1 - sum(given.values())) / (len(classes) - len(given))
        out[i] = [given.get(c, rest) for c in classes]
    return out


def test_doubtful_swaps_names_two_places_each_read_likelier_as_the_other_by_the_odds_asked() -> None:
    classes = TileClassifier(MODEL).classes
    assert doubtful_swaps(_probs({}, classes), classes, CODES) == []
    # neither tile read surely as the other's (misplaced finds none), but each far likelier so than as its own
    unsure = {1: {"3B": 0.3, "2B": 1e-4}, 2: {"2B": 0.25, "3B": 1e-4}}
    assert doubtful_swaps(_probs(unsure, classes), classes, CODES) == [(1, 2)]
    gain = float(np.log(0.3) + np.log(0.25) - 2 * np.log(1e-4))
    assert doubtful_swaps(_probs(unsure, classes), classes, CODES, odds=gain + 0.1) == []
    assert SWAP_ODDS < gain
    # one of the two read likelier as its own tile: no swap, however unlikely the other
    one_way = {1: {"3B": 0.3, "2B": 1e-4}, 2: {"2B": 0.25, "3B": 0.3}}
    assert doubtful_swaps(_probs(one_way, classes), classes, CODES) == []
    # a flower read for the layout's F, and a place named in one pair at most
    flower = {3: {"FL2": 0.2, "4B": 1e-5}, 4: {"4B": 0.5, "FL1": 1e-6, "FL2": 1e-6}}
    assert doubtful_swaps(_probs(flower, classes), classes, CODES) == [(3, 4)]
    three = {0: {"2B": 0.2, "3B": 0.2, "1B": 1e-6}, 1: {"1B": 0.5, "2B": 1e-6}, 2: {"1B": 0.3, "3B": 1e-6}}
    assert doubtful_swaps(_probs(three, classes), classes, CODES) == [(0, 1)]


@pytest.mark.parametrize(("style", "a", "b"), [("km-egypt", "6B", "FL1"), ("font-symbola", "3C", "RD")])
def test_two_tiles_laid_in_each_others_places_that_read_unsurely_are_named_not_moved(
    style: str, a: str, b: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """Swaps :func:`misplaced` cannot put back: neither tile reads surely as the other's (km-egypt's
    6 Bams as a flower at 0.3, its flower as a 6 Bams; Symbola's 3 Craks and red dragon's line art)."""
    faces = {c: v[0] for c, v in tile_faces(style).items()}
    laid = {**faces, a: faces[b], b: faces[a]}
    clf = TileClassifier(MODEL)
    right, _ = grid_photo(faces, "chinese", np.random.default_rng(0))
    swapped, _ = grid_photo(laid, "chinese", np.random.default_rng(0))
    assert "maybe_swapped" not in enroll_image(right, "chinese", clf, style)[0].meta
    ts, _, _ = enroll_image(swapped, "chinese", clf, style)
    assert ts.meta["maybe_swapped"] == [[a, b]] and "reordered" not in ts.meta
    assert ts.codes == tuple(layout_codes("chinese"))  # enrolled as laid: only named
    assert "maybe_swapped" not in enroll_image(swapped, "chinese", clf, style, as_laid=True)[0].meta
    photo = tmp_path / "swapped.png"
    cv2.imwrite(str(photo), swapped)
    root = tmp_path / "sets"
    assert main(["enroll", str(photo), "--layout", "chinese", "--root", str(root), "--model", str(MODEL),
                 "--name", "doubt"]) == 0
    out = capsys.readouterr().out
    codes = layout_codes("chinese")
    sheet = root / "doubt" / "check.png"
    assert (f"warning: the tiles in {a}'s and {b}'s places may lie in each other's places" in out
            and f"look at the two framed in amber in {sheet}" in out)
    drawn = cv2.imread(str(sheet))
    boxes = cells("chinese", len(codes), (64, 48))
    framed = [c for c, (x, y, _, _) in zip(codes, boxes, strict=True) if tuple(drawn[y - 2, x - 2]) == COLOURS[CHECK]]
    assert framed == sorted([a, b], key=codes.index)
    assert (root / "doubt" / "crops" / f"{codes.index(a):02d}_{a}.png").is_file()
    assert json.loads((root / "doubt" / "tileset.json").read_text())["maybe_swapped"] == [[a, b]]
    assert f"enroll the same photo again with --swap {a},{b}" in out
    args = ["enroll", str(photo), "--layout", "chinese", "--root", str(root), "--model", str(MODEL)]
    assert main([*args, "--name", "agreed", "--swap", f"{a},{b}"]) == 0  # the player agrees: exchanged
    out = capsys.readouterr().out
    assert f"exchanged as asked: the tile in {a}'s place is enrolled as {b}" in out and "warning" not in out
    agreed = json.loads((root / "agreed" / "tileset.json").read_text())
    assert agreed["exchanged"] == [[a, b]] and "maybe_swapped" not in agreed
    right_set = enroll_image(right, "chinese", clf, style)[0]
    again = np.sum(vision_tileset.load_tileset(root / "agreed").embeddings * right_set.embeddings, axis=1)
    assert again.min() > 0.99  # every prototype as the set laid right makes it
    assert main(["enroll", "--list", "--root", str(root)]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed[0].endswith(f"exchanged as asked: {a} and {b}")
    assert listed[1].endswith(f"read as laid out; to check: {a} and {b} may lie in each other's places")
    assert main(["detect", str(photo), "--tileset", str(root / "doubt")]) == 0  # read with the set: said again
    said = capsys.readouterr()
    assert json.loads(said.out)["tiles"] and (
        f"warning: tile set {root / 'doubt'}: the tiles in {a}'s and {b}'s places may lie in each other's places" in said.err)
    # or later, with no photo: the set enrolled again from its own photo, kept with it, and its layout
    assert (root / "doubt" / "photo.png").read_bytes() == photo.read_bytes()
    assert main(["enroll", "--name", "doubt", "--swap", f"{a},{b}", "--root", str(root), "--model", str(MODEL)]) == 0
    out = capsys.readouterr().out
    assert f"enrolling 'doubt' again from its own photo, {root / 'doubt' / 'photo.png'}" in out
    again = json.loads((root / "doubt" / "tileset.json").read_text())
    assert again["layout"] == "chinese" and again["exchanged"] == [[a, b]] and "maybe_swapped" not in again
    assert main(["enroll", "--name", "nothing", "--root", str(root)]) == 2
    assert "enroll needs a PHOTO: there is no tile set 'nothing' with its photo kept" in capsys.readouterr().err


def test_a_swap_asked_for_names_two_places_of_the_layout_once_each(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert exchanges([], "chinese") == [] and exchanges(["6B,FL1", " 3C , RD "], "chinese") == [("6B", "FL1"), ("3C", "RD")]
    for bad, said in (("6B", "give two places"), ("6B,", "give two places"), ("6B,FL1,3C", "give two places"),
                      ("6B,X9", "'X9' is not a place of the chinese layout"), ("J,F", "'J' is not a place"),
                      ("6B,6B", "not with itself")):
        with pytest.raises(ValueError, match=said):
            exchanges([bad], "chinese")
    with pytest.raises(ValueError, match="each place may be swapped once"):
        exchanges(["6B,FL1", "FL1,3C"], "chinese")
    assert exchanges(["J,F"], "american") == [("J", "F")]
    photo = tmp_path / "grid.png"
    cv2.imwrite(str(photo), np.zeros((60, 60, 3), np.uint8))
    assert main(["enroll", str(photo), "--name", "x", "--layout", "chinese", "--swap", "6B,X9",
                 "--root", str(tmp_path / "sets")]) == 2
    assert "'X9' is not a place of the chinese layout" in capsys.readouterr().err
    assert not (tmp_path / "sets").exists()
