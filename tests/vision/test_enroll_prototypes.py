"""An enrolled set's prototypes: following the classifier from stored crops, the base classifier's
weight for a set it knows, square quads under a set, whitened matching, ``detect --tileset``,
a models folder with no table classifier."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from enroll_helpers import holdout_grid

from companion.cli import main
from vision.artwork import HOLDOUT_STYLE, TRAIN_STYLES, tile_faces
from vision.classify import DEFAULT_MODEL, TileClassifier
from vision.enroll import TABLE_SMALL, grid_photo
from vision.prototypes import TileSetPrototypes, for_classifier
from vision.tileset import TileSet, TileSetError, load_tileset, stored_crops

TABLE_MODEL = DEFAULT_MODEL.with_name("classifier-table.onnx")


@pytest.mark.skipif(not TABLE_MODEL.is_file(), reason="no second classifier committed")
def test_prototypes_follow_the_classifier(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A set enrolled with one classifier is embedded again from its stored crops for another (a
    newer model, or the table reader's), exactly as enrolling with that one would embed it."""
    from vision.pipeline import TileRecognizer
    from vision.runtime import sha256_of

    photo, _, _ = holdout_grid(tmp_path)
    root = tmp_path / "sets"
    for name, model in (("photo", DEFAULT_MODEL), ("table", TABLE_MODEL)):
        args = ["enroll", "--name", name, str(photo), "--layout", "chinese", "--root", str(root)]
        assert main([*args, "--model", str(model)]) == 0
    ts, direct = load_tileset("photo", root), load_tileset("table", root)
    table_clf = TileClassifier(TABLE_MODEL)
    sha = sha256_of(TABLE_MODEL)
    assert ts.meta["classifier_sha256"] != sha and direct.meta["classifier_sha256"] == sha
    moved = for_classifier(ts, table_clf, sha, stored_crops("photo", root))
    assert not np.allclose(ts.embeddings, direct.embeddings, atol=1e-2)  # two embedding spaces
    assert np.allclose(moved.embeddings, direct.embeddings, atol=1e-4)
    assert moved.meta["classifier_sha256"] == sha and moved.codes == ts.codes
    assert for_classifier(direct, table_clf, sha, None) is direct  # its own classifier: kept as is
    with pytest.raises(TileSetError, match="enroll the set again"):
        for_classifier(ts, table_clf, sha, None)
    # the recogniser gives each classifier prototypes of its own
    monkeypatch.setattr("vision.tileset.TILESETS_DIR", root)
    rec = TileRecognizer(tileset="photo")
    assert rec.prototypes.tileset.meta["classifier_sha256"] == sha256_of(rec.classifier.path)
    # the table reader's copies include tiles shrunk to table size (TABLE_SMALL)
    small = for_classifier(ts, table_clf, sha, stored_crops("photo", root), small=TABLE_SMALL)
    assert np.allclose(rec.table_prototypes.tileset.embeddings, small.embeddings, atol=1e-4)
    assert not np.allclose(small.embeddings, direct.embeddings, atol=1e-3)
    assert for_classifier(direct, table_clf, sha, stored_crops("table", root), small=TABLE_SMALL) is not direct
    assert for_classifier(direct, table_clf, sha, None, small=TABLE_SMALL) is direct  # its own, crops gone


def test_a_set_with_an_unreadable_crop_has_no_stored_crops(tmp_path: Path) -> None:
    """``stored_crops`` gives the crops in layout order, or None when one of them cannot be read
    (the loader then keeps the stored prototypes or asks for the set to be enrolled again)."""
    photo, _, _ = holdout_grid(tmp_path)
    root = tmp_path / "sets"
    assert main(["enroll", "--name", "s", str(photo), "--layout", "chinese", "--root", str(root)]) == 0
    crops = stored_crops("s", root)
    assert crops is not None and len(crops) == len(load_tileset("s", root).codes)
    first = sorted((root / "s" / "crops").glob("*.png"))[0]
    first.write_bytes(b"not a png")
    assert stored_crops("s", root) is None


def test_a_set_the_model_knows_keeps_the_base_classifier_weighed_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Enrolling a style the classifiers trained on must not read it worse: the recogniser
    measures how well the base classifier alone reads the set's jittered copies and weighs its
    prototypes less when it does (KNOWN_SET_WEIGHT); a style no model saw keeps BASE_WEIGHT.
    The known style is ``km-jade`` (0.991 / 0.976 by the photo / table classifier): ``km-classic``,
    the first training style, has cream faces, made white as a lamp's tint would be
    (``vision.light.WHITE_TOLERANCE``), and the table classifier, which trained on them cream,
    then reads them as laid out 0.949 of the time, under the mark."""
    from vision.pipeline import TileRecognizer
    from vision.prototypes import (
        BASE_WEIGHT,
        KNOWN_SET_AGREEMENT,
        KNOWN_SET_WEIGHT,
        PHOTO_BASE_WEIGHT,
        PHOTO_SCALE,
        SCALE,
        set_weight,
    )

    root = tmp_path / "sets"
    assert "km-jade" in TRAIN_STYLES
    for name, style in (("known", "km-jade"), ("unseen", HOLDOUT_STYLE)):
        faces = {c: v[0] for c, v in tile_faces(style).items()}
        image, _ = grid_photo(faces, "chinese", np.random.default_rng(3))
        cv2.imwrite(str(tmp_path / f"{name}.png"), image)
        args = ["enroll", "--name", name, str(tmp_path / f"{name}.png"), "--layout", "chinese", "--root", str(root)]
        assert main([*args, "--model", str(DEFAULT_MODEL)]) == 0
    monkeypatch.setattr("vision.tileset.TILESETS_DIR", root)
    known, unseen = TileRecognizer(tileset="known"), TileRecognizer(tileset="unseen")
    for refiner in (known.prototypes, known.table_prototypes):
        assert refiner.agreement >= KNOWN_SET_AGREEMENT and refiner.weight == KNOWN_SET_WEIGHT
        assert refiner.whitener is not None and refiner.whitener.shape == (64, 64)  # from its copies
    # photos read the prototypes' similarities softer than the table reader, whose calls were weighed at 16
    assert known.prototypes.scale == PHOTO_SCALE < known.table_prototypes.scale == SCALE
    for refiner, weight in ((unseen.prototypes, PHOTO_BASE_WEIGHT), (unseen.table_prototypes, BASE_WEIGHT)):
        # photos lean on an unfamiliar set's prototypes more; the table reader keeps its weight
        assert refiner.agreement < KNOWN_SET_AGREEMENT and refiner.weight == weight
    assert set_weight(None) == BASE_WEIGHT  # crops gone: nothing measured, the usual weight
    # a real set the base reads 0.94 of the time lost 30-32 tiles in 550 weighed 0.3 (forty-second
    # session); the unseen artwork sets read at most 0.912 and keep the usual weight
    assert set_weight(0.94) == KNOWN_SET_WEIGHT and set_weight(0.912) == BASE_WEIGHT


def test_under_a_set_the_base_classifier_does_not_know_square_quads_are_read_as_cut() -> None:
    """A nearly square quad may have its sides the wrong way round, and the photo pipeline reads it
    a quarter turned too, keeping the base classifier's surer reading.  Under an enrolled set the
    base does not know, its sureness says little of the set's faces, so the quad is read as cut;
    under a set it knows (and with no set) it is still read both ways round.  The faces are
    squeezed to 66 x 60 under quads whose first edge is the face's left side, as in
    ``test_a_nearly_square_quad_the_wrong_way_round_is_read_turned``."""
    from vision.classify import TURN_ASPECT
    from vision.photo_turns import turns
    from vision.pipeline import TileRecognizer
    from vision.prototypes import KNOWN_SET_WEIGHT, PHOTO_BASE_WEIGHT

    faces = tile_faces("km-traditional")
    codes = [c for c in faces if c not in ("BK", "WD")]
    image = np.full((80, 80 * len(codes), 3), 40, np.uint8)
    quads = []
    for i, c in enumerate(codes):
        x0, y0 = 80 * i + 7, 10
        image[y0 : y0 + 60, x0 : x0 + 66] = cv2.resize(faces[c][0], (66, 60), interpolation=cv2.INTER_AREA)
        quads.append([[x0, y0 + 60], [x0, y0], [x0 + 66, y0], [x0 + 66, y0 + 60]])
    q = np.array(quads, np.float32)
    rec = TileRecognizer()
    clf = rec.classifier
    upright = np.stack([cv2.resize(faces[c][0], (48, 64), interpolation=cv2.INTER_AREA) for c in codes])
    tileset = TileSet("squeezed", "chinese", tuple(codes), clf.run(upright).embeddings)
    as_cut, both_ways = clf.classify_quads(image, q), clf.classify_quads(image, q, turn_below=TURN_ASPECT)
    assert as_cut.codes != both_ways.codes  # some quads read otherwise turned
    for weight, turned in ((PHOTO_BASE_WEIGHT, False), (KNOWN_SET_WEIGHT, True)):
        rec.prototypes = TileSetPrototypes(tileset, clf.classes, weight=weight)
        assert rec.prototypes.known is turned and turns(rec.prototypes) is turned
        want = rec.prototypes.apply(both_ways if turned else as_cut)
        assert list(rec.classify(image, q).codes) == want.codes
    rec.prototypes = None
    assert turns(None) and list(rec.classify(image, q).codes) == both_ways.codes


def test_matching_counts_less_the_directions_a_tiles_copies_wander_in() -> None:
    """A tile moved along the direction in which the set's jittered copies wander (a shift, a blur)
    is matched to its own code once the copies' spread is whitened out (``within_whitener``),
    where plain cosine similarity takes it for the code that differs from it partly that way."""
    from vision.prototypes import within_whitener

    e = np.eye(4, dtype=np.float32)
    protos = np.stack([e[1], (e[1] + 0.5 * e[0] + 0.5 * e[2]) / np.sqrt(1.5)]).astype(np.float32)
    wander = np.linspace(-0.8, 0.8, 8, dtype=np.float32)[:, None] * e[0]
    copies = np.concatenate([p + wander for p in protos]).astype(np.float32)  # crop-major, 8 a code
    whitener = within_whitener(copies, 8)
    assert np.linalg.norm(e[0] @ whitener) < 0.5 * np.linalg.norm(e[2] @ whitener)
    tileset = TileSet("w", "chinese", ("1B", "2B"), protos)
    tile = (e[1] + 0.7 * e[0])[None].astype(np.float32)  # a 1 Bams, moved the way copies wander
    probs = np.full((1, 3), 1 / 3, np.float32)
    plain = TileSetPrototypes(tileset, ["1B", "2B", "BK"], weight=0.0)
    whitened = TileSetPrototypes(tileset, ["1B", "2B", "BK"], weight=0.0, whitener=whitener)
    assert int(plain.fuse(probs, tile).argmax()) == 1
    assert int(whitened.fuse(probs, tile).argmax()) == 0


def test_detect_reads_with_an_enrolled_set_and_names_one_it_cannot_find(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``companion detect --tileset NAME`` reads scenes of the style no model trained on with the
    set enrolled from one grid photo, more of their tiles right than without it, and boxes them
    nearer their outlines (the localiser frames this style's faces inside the edge its artwork
    draws; under the set, the tiles are moved onto their rims: median IoU with the truth 0.709
    plain, 0.742 enrolled with the photo convention's boxes, 0.780 on the rims); a set that is not
    enrolled is named in a one-line error, exit code 2."""
    import json

    from scripts.synth_scenes import SceneMaker
    from vision.detect import quad_iou_boxes

    photo, _, _ = holdout_grid(tmp_path)
    root = tmp_path / "sets"
    assert main(["enroll", "--name", "mine", str(photo), "--layout", "chinese", "--root", str(root)]) == 0
    monkeypatch.setattr("vision.tileset.TILESETS_DIR", root)
    gen = SceneMaker(seed=7, faces=tile_faces(HOLDOUT_STYLE), in_view=True)
    rng = np.random.default_rng(7)
    scenes = [gen.scene(640, 480, rng, short=(30.0, 50.0), layouts=(2, 6)) for _ in range(3)]
    paths = [str(tmp_path / f"scene{i}.png") for i in range(len(scenes))]
    for path, sc in zip(paths, scenes, strict=True):
        cv2.imwrite(path, sc.image)

    def right(args: list[str]) -> tuple[int, float]:
        capsys.readouterr()
        assert main(["detect", *paths, *args]) == 0
        count, overlaps = 0, []
        for line, sc in zip(capsys.readouterr().out.splitlines(), scenes, strict=True):
            tiles = json.loads(line)["tiles"]
            truth = np.concatenate([sc.quads.min(axis=1), sc.quads.max(axis=1)], axis=1).astype(np.float32)
            boxes = np.array([t["box"] for t in tiles], np.float32).reshape(-1, 4)
            if not len(boxes):
                continue
            iou = quad_iou_boxes(truth, boxes)
            best = iou.argmax(axis=1)
            pairs = enumerate(zip(best, sc.codes, strict=True))
            count += sum(iou[i, j] >= 0.5 and tiles[j]["code"] == c for i, (j, c) in pairs)
            overlaps += [float(iou[i, j]) for i, j in enumerate(best) if iou[i, j] >= 0.5]
        return count, float(np.median(overlaps))

    (plain, plain_iou), (enrolled, enrolled_iou) = right([]), right(["--tileset", "mine"])
    assert enrolled > plain, (enrolled, plain, sum(len(sc.codes) for sc in scenes))
    assert enrolled_iou > plain_iou + 0.05, (plain_iou, enrolled_iou)
    capsys.readouterr()
    assert main(["detect", paths[0], "--tileset", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert "no enrolled tile set 'nosuch'" in err and "Traceback" not in err


def test_without_a_table_classifier_the_table_reader_keeps_its_own_weight(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A models folder with no table classifier reads tables with the photo classifier and its
    prototypes, but weighed as a table reader weighs an unfamiliar set (BASE_WEIGHT), not as photos
    do (PHOTO_BASE_WEIGHT); the photos' own refiner is left as it is."""
    import shutil

    from vision.pipeline import TileRecognizer
    from vision.prototypes import BASE_WEIGHT, PHOTO_BASE_WEIGHT

    models = tmp_path / "models"
    models.mkdir()
    for name in ("localizer.onnx", "classifier.onnx", "classifier.json"):
        for f in DEFAULT_MODEL.parent.glob(name + "*"):
            shutil.copy(f, models / f.name)
    faces = {c: v[0] for c, v in tile_faces(HOLDOUT_STYLE).items()}
    image, _ = grid_photo(faces, "chinese", np.random.default_rng(3))
    cv2.imwrite(str(tmp_path / "unseen.png"), image)
    root = tmp_path / "sets"
    args = ["enroll", "--name", "unseen", str(tmp_path / "unseen.png"), "--layout", "chinese", "--root", str(root)]
    assert main([*args, "--model", str(models / "classifier.onnx")]) == 0
    monkeypatch.setattr("vision.tileset.TILESETS_DIR", root)
    rec = TileRecognizer(models, tileset="unseen")
    assert rec.table_classifier is rec.classifier
    assert rec.prototypes.weight == PHOTO_BASE_WEIGHT and rec.table_prototypes.weight == BASE_WEIGHT
    assert rec.table_prototypes.tileset is rec.prototypes.tileset
