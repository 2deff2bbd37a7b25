"""A few-step smoke run of each training script (the only training CI does).

The scripts import torch, so they run in a subprocess: nothing under tests/ imports torch. Each
run must train, checkpoint and export an ONNX model that our runtime loads and runs.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from scripts.photos import shared_data_dir
from vision.runtime import OnnxModel

REPO = Path(__file__).resolve().parents[1]
needs_photos = pytest.mark.skipif(
    not (shared_data_dir() / "tiles-photos-v4" / "train").is_dir(),
    reason="shared photo data not present (../shared/data or $COMPANION_SHARED/data)",
)
needs_torch = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="torch is not installed (pip install -e '.[train]')"
)


def _run(args: list[str], timeout: int = 240) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    res = subprocess.run([sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True,
                         timeout=timeout)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    return res


@needs_torch
@needs_photos
def test_localizer_training_smoke(tmp_path: Path) -> None:
    onnx = tmp_path / "loc.onnx"
    _run(["scripts/train_localizer.py", "--out", str(tmp_path / "run"), "--epochs", "1", "--steps", "2",
          "--batch", "2", "--eval-photos", "2", "--export", str(onnx), "--threads", "1",
          "--synth", "0.5", "--american", "1.0", "--backs", "0.2", "--light", "0.5"])  # half synthetic scenes, each American
    assert list((tmp_path / "run").glob("*.pt")), "no checkpoint written"
    outs = OnnxModel(onnx).run(np.zeros((1, 3, 320, 320), np.float32))
    assert outs and all(np.isfinite(o).all() for o in outs)
    assert outs[0].shape[-2:] == (80, 80)  # stride-4 heatmap


@needs_torch
@needs_photos
def test_table_localizer_training_smoke(tmp_path: Path) -> None:
    """Windows cut from rendered tables, all of them seen top-down as the table reader localises,
    fine-tuning the committed table localiser (started from its ONNX file)."""
    onnx = tmp_path / "loc.onnx"
    res = _run(["scripts/train_localizer.py", "--out", str(tmp_path / "run"), "--epochs", "1", "--steps", "2",
               "--batch", "2", "--eval-photos", "2", "--export", str(onnx), "--threads", "1", "--table", "1.0",
               "--table-frames", "2", "--top-down", "1.0", "--init", str(REPO / "models" / "localizer-table.onnx")])
    assert "initialised from" in res.stdout and "localizer-table.onnx" in res.stdout
    outs = OnnxModel(onnx).run(np.zeros((1, 3, 320, 320), np.float32))
    assert outs[0].shape[-2:] == (80, 80) and np.isfinite(outs[0]).all()


_POOL = """
import numpy as np
from scripts.localizer_data import TablePool
base, area, dense = (TablePool(1, 5, area=a, dense=d).frames[0] for a, d in ((0, 0), (1, 0), (0, 1)))
print(len(base[1]), len(area[1]), len(dense[1]), float(np.abs(base[1] - area[1]).max()),
      float(np.abs(base[0].astype(int) - area[0].astype(int)).mean()))
"""


@needs_torch
@needs_photos
def test_table_pool_area_sampled_and_dense_frames() -> None:
    """``--area`` draws the same tables area-sampled (the same tiles, other pixels); ``--dense``
    lays 20-60 discards in rows, so the frame holds more tiles."""
    res = _run(["-c", _POOL])
    n_base, n_area, n_dense, quad_diff, pixel_diff = res.stdout.split()
    assert n_base == n_area and float(quad_diff) < 1e-3
    assert float(pixel_diff) > 0.05  # the same frame would be 0
    assert int(n_dense) > int(n_base)


@needs_torch
@needs_photos
def test_classifier_training_smoke(tmp_path: Path) -> None:
    res = _run(["-m", "scripts.train_classifier", "--epochs", "1", "--max-batches", "2", "--synth-per-class", "2",
               "--batch", "8", "--threads", "1", "--run-dir", str(tmp_path / "run"), "--out", str(tmp_path / "out"),
               "--init", str(REPO / "models" / "classifier.onnx"), "--drop-loose", "--photo-repeat", "2",
               "--localised-crops", "1", "--scene-crops", "3:0.5", "--view-scenes", "3:0.5", "--extra-table", "7:2:0.7:american-mix+wide-mix",
               "--recolour", "0.5", "--tiny", "0.5", "--light", "0.5"])
    assert "initialised from" in res.stdout  # a fine-tune of the committed model, started from its ONNX file
    # two rendered tables of sets drawn over training styles (and the Noto glyphs), cut as the table reader cuts
    assert int(res.stdout.split("from table frames")[0].rsplit("(", 1)[1]) > 20, res.stdout[:800]
    # the train photos whose boxes are the export's 45-degree turns are left out, the rest twice
    dropped = int(res.stdout.split("--drop-loose: ")[1].split()[0])
    photos = int(res.stdout.split("data: ")[1].split()[0])
    assert 0 < dropped and photos == 2 * (22548 - dropped), res.stdout[:500]
    # and the upright photos' tiles once more, cut at the photo localiser's quads as the pipeline cuts them
    assert int(res.stdout.split("--localised-crops: ")[1].split()[0]) > 10000, res.stdout[:500]
    assert "valid crops at localised quads" in res.stdout
    # and the tiles of synthetic scenes (some American) cut the same way, with American ones to validate on
    assert int(res.stdout.split("--scene-crops: ")[1].split()[0]) > 20, res.stdout[:800]
    assert "American scene crops" in res.stdout
    # and scenes drawn in view, as the benchmark draws them: some of their tiles cut by the picture's edge
    view = res.stdout.split("--view-scenes: ")[1]
    assert int(view.split()[0]) > 20 and int(view.split(", ")[1].split()[0]) > 0, view[:300]
    assert "American in-view scene crops" in res.stdout and "(cut by the edge " in res.stdout
    assert (tmp_path / "run" / "last.pt").is_file(), "no checkpoint written"
    model = OnnxModel(tmp_path / "out" / "classifier.onnx")  # also checks the written sha256
    logits, emb = model.run(np.zeros((3, 3, 64, 48), np.float32))
    assert logits.shape[0] == emb.shape[0] == 3 and np.isfinite(logits).all()


_ROUND_TRIP = """
import sys
from pathlib import Path
import torch
from scripts.onnx_weights import load_onnx_weights
torch.manual_seed(0)
kind, src, dst = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
if kind.startswith("classifier"):
    from scripts.classifier_export import export, extra_blocks, load_into
    from scripts.classifier_net import TileNet
    grow = int(kind.partition("+")[2] or 0)  # "classifier+1": one residual block more than the file
    net = TileNet(extra=extra_blocks(src) + grow)
    load_into(net, src, lambda: torch.rand(64, 3, 64, 48))
    export(net, dst, {})
else:
    from scripts.localizer_export import export_onnx
    from scripts.localizer_net import GROWN, GROWN_TWICE, LocNet, grown_file
    was = grown_file(src)
    net = LocNet(grow=was)
    load_onnx_weights(net, src, torch.rand(4, 3, 320, 320) * 255)
    if kind == "localizer+grow":  # grown once more than the file (--grow), the new blocks at zero
        grown = LocNet(grow=was + 1)
        missing = grown.load_state_dict(net.state_dict(), strict=False).missing_keys
        assert {k.split(".")[0] for k in missing} == set((GROWN, GROWN_TWICE)[was]), missing
        net = grown
    export_onnx(net, dst / "localizer.onnx")
"""


@needs_torch
@pytest.mark.parametrize(("kind", "model", "shape"), [
    ("classifier", "classifier.onnx", (6, 3, 64, 48)),
    ("classifier+1", "classifier.onnx", (6, 3, 64, 48)),  # grown by a block that starts as the identity
    ("localizer", "localizer-table.onnx", (1, 3, 320, 320)),
    ("localizer", "localizer.onnx", (1, 3, 320, 320)),  # a file grown by --grow
    ("localizer+grow", "localizer-table.onnx", (1, 3, 320, 320)),  # grown by --grow, before it is trained
    ("localizer+grow", "localizer.onnx", (1, 3, 320, 320)),  # grown once more
])
def test_committed_model_is_a_checkpoint(tmp_path: Path, kind: str, model: str, shape: tuple[int, ...]) -> None:
    """Training can start from the committed ONNX file (its BatchNorms were folded on export):
    loaded into the torch net and exported again, it computes what the committed file computes;
    so does the net grown by a residual block (the localiser by ``--grow``'s), before it is trained."""
    _run(["-c", _ROUND_TRIP, kind, str(REPO / "models" / model), str(tmp_path)])
    again = tmp_path / ("classifier.onnx" if kind.startswith("classifier") else "localizer.onnx")
    x = np.random.default_rng(1).uniform(0, 1 if kind == "classifier" else 255, shape).astype(np.float32)
    want = OnnxModel(REPO / "models" / model).run(x)
    got = OnnxModel(again).run(x)
    for w, g in zip(want, got, strict=True):
        assert w.shape == g.shape
        np.testing.assert_allclose(g, w, atol=1e-3 * max(1.0, float(np.abs(w).max())))


@needs_torch
def test_a_grown_localiser_is_not_trained_as_an_ungrown_one(tmp_path: Path) -> None:
    """The committed photo localiser holds ``--grow``'s blocks: training from it without ``--grow``
    stops with a message that says so, before anything is written; so does a run's checkpoint grown
    more than the run asks for."""
    res = subprocess.run([sys.executable, "scripts/train_localizer.py", "--init", "models/localizer.onnx",
                          "--out", str(tmp_path / "run"), "--export", str(tmp_path / "run" / "l.onnx"),
                          "--epochs", "1", "--steps", "1"], cwd=REPO,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=240)
    assert res.returncode != 0 and "pass --grow" in res.stderr, res.stderr[-500:]
    assert not (tmp_path / "run" / "last.pt").exists()
    # nor a run's checkpoint of a net grown twice, trained as one grown once (its blocks would be dropped)
    ckpt = tmp_path / "grown2.pt"
    _run(["-c", "import sys, torch; from scripts.localizer_net import LocNet; "
          "torch.save({'model': LocNet(grow=2).state_dict()}, sys.argv[1])", str(ckpt)])
    res = subprocess.run([sys.executable, "scripts/train_localizer.py", "--init", str(ckpt), "--grow",
                          "--out", str(tmp_path / "run2"), "--export", str(tmp_path / "run2" / "l.onnx"),
                          "--epochs", "1", "--steps", "1"], cwd=REPO,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=240)
    assert res.returncode != 0 and "pass --grow 2" in res.stderr, res.stderr[-500:]


@needs_torch
def test_an_onnx_file_of_another_net_is_refused(tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, "-c", _ROUND_TRIP, "localizer", str(REPO / "models" / "classifier.onnx"),
                          str(tmp_path)], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                         capture_output=True, text=True, timeout=240)
    assert res.returncode != 0 and "ValueError" in res.stderr and "classifier.onnx" in res.stderr


def test_american_scene_faces_are_not_the_benchmarks() -> None:
    from scripts.bench_vision_scenes import american_faces
    from scripts.synth_scenes import american_scene_faces

    train, bench = american_scene_faces(71 + 1000), american_faces(21)
    assert {"J", "F", "BK", "WD", "5C"} <= set(train) and set(train) == set(bench)
    assert not any(np.array_equal(a, b) for a in train["J"] for b in bench["J"])


def test_scene_backs_share() -> None:
    from scripts.synth_scenes import SceneMaker, american_scene_faces

    faces = american_scene_faces(5)
    plain = SceneMaker(seed=3, faces=faces)
    backs = SceneMaker(seed=3, faces=faces, back_share=0.5)
    n_plain = n_backs = total_plain = total_backs = 0
    for k in range(6):
        a = plain.scene(320, 320, np.random.default_rng(k))
        b = backs.scene(320, 320, np.random.default_rng(k))
        n_plain, total_plain = n_plain + a.codes.count("BK"), total_plain + len(a.codes)
        n_backs, total_backs = n_backs + b.codes.count("BK"), total_backs + len(b.codes)
    assert total_plain > 20 and total_backs > 20
    assert n_plain / total_plain < 0.15 < 0.35 < n_backs / total_backs
    # without backs in the library the share is ignored
    no_backs = {code: imgs for code, imgs in faces.items() if code != "BK"}
    assert SceneMaker(seed=3, faces=no_backs, back_share=0.5).back_share == 0.0


def test_in_view_scenes_keep_their_truth_in_the_picture() -> None:
    """``in_view`` (the benchmark's scenes): every truth tile lies mostly in the picture.  The
    legacy scenes, drawn from the same random draws, have tiles the camera's perspective moved out
    of the picture while they stayed in the truth."""
    from scripts.synth_scenes import SceneMaker, american_scene_faces, in_view

    faces = american_scene_faces(5)
    out_legacy = out_new = total = 0
    for k in range(12):
        old = SceneMaker(seed=3, faces=faces).scene(320, 240, np.random.default_rng(k), short=(30.0, 50.0))
        new = SceneMaker(seed=3, faces=faces, in_view=True).scene(320, 240, np.random.default_rng(k),
                                                                  short=(30.0, 50.0))
        out_legacy += int((~in_view(old.quads, 320, 240)).sum())
        out_new += int((~in_view(new.quads, 320, 240)).sum())
        total += len(new.codes)
        assert len(new.codes) == len(new.quads) <= len(old.codes)
    assert total > 30
    assert out_new == 0 < out_legacy


def test_widened_perspective_fills_the_picture_from_the_table() -> None:
    """``camera_effects(widen_only=True)`` never fills a border: a plain picture with a red frame
    one pixel wide loses its frame past the picture's edges, where the legacy perspective pulls it
    (and its mirror image) inside."""
    from scripts.synth_scenes import camera_effects

    inside_red = {True: 0, False: 0}
    for widen in (True, False):
        for k in range(8):
            img = np.full((120, 160, 3), 128, np.uint8)
            img[0, :] = img[-1, :] = img[:, 0] = img[:, -1] = (0, 0, 255)
            out, _ = camera_effects(img, np.zeros((0, 4, 2), np.float32), np.random.default_rng(k), widen_only=widen)
            red = (out[..., 2].astype(int) - out[..., 1].astype(int)) > 60
            inside_red[widen] += int(red[3:-3, 3:-3].sum())
    assert inside_red[True] == 0 < inside_red[False]


@needs_torch
def test_tiny_shrinks_a_crop_to_a_far_tiles_detail() -> None:
    """``--tiny``: a crop comes back at its size with a far tile's detail: fine strokes averaged
    away, a large mark still where it was."""
    from scripts.classifier_data import tiny

    crop = np.full((64, 48, 3), 230, np.uint8)
    crop[4:12, 4:44:2] = 0  # fine strokes, one pixel apart
    crop[30:54, 12:36] = (30, 30, 200)  # a large red mark
    rng = np.random.default_rng(0)
    outs = [tiny(crop, rng) for _ in range(20)]
    assert all(o.shape == crop.shape and o.dtype == np.uint8 for o in outs)
    strokes = [float(o[6:10, 8:40, 0].std()) for o in outs]
    assert max(strokes) < 0.5 * float(crop[6:10, 8:40, 0].std())  # no stroke stands apart any more
    assert all(o[42, 24, 2] > 150 and o[42, 24, 0] < 120 for o in outs)  # the mark is still red there
    sizes = {np.count_nonzero(np.abs(np.diff(o[:, 24, 0].astype(int))) > 2) for o in outs}
    assert len(sizes) > 1  # shrunk to various sizes


def test_bad_light_makes_each_poor_picture_and_keeps_the_print() -> None:
    """``--light``: a crop over-exposed, washed out, lit from one side or blurred, its print still
    darker than its face; an unknown kind is named."""
    from scripts.crops import BAD_LIGHTS, bad_light

    crop = np.full((64, 48, 3), (200, 215, 225), np.uint8)
    crop[20:44, 18:30] = (40, 40, 170)  # a red mark
    rng = np.random.default_rng(0)
    outs = {k: bad_light(crop, rng, k) for k in BAD_LIGHTS}
    assert all(o.shape == crop.shape and o.dtype == np.uint8 for o in outs.values())
    assert outs["over"][5, 5].min() > crop[5, 5].min()  # brighter, the face near clipping
    assert int(outs["washed"][30, 24].min()) > int(crop[30, 24].min()) + 15  # the print's blacks raised
    side = outs["side"].astype(int).sum(axis=2)
    assert abs(side[2, 2] - side[61, 45]) > 60  # one corner lit, the other dark
    assert outs["blur"][20:44, 17].astype(int).sum() != crop[20:44, 17].astype(int).sum()  # edges soft
    for o in outs.values():
        grey = o.astype(int).sum(axis=2)
        assert grey[30, 24] < grey[30, 6]  # the mark still darker than the face beside it
    picked = {bad_light(crop, rng).tobytes() for _ in range(12)}
    assert len(picked) > 4  # at random: various kinds and strengths
    with pytest.raises(ValueError, match="unknown light 'fog'"):
        bad_light(crop, rng, "fog")


@needs_torch
def test_recolour_turns_hues_and_keeps_shapes() -> None:
    """``--recolour``: a green-on-ivory crop comes back in other inks or grey, its shape unchanged."""
    from scripts.classifier_data import recolour

    crop = np.full((64, 48, 3), (200, 230, 240), np.uint8)
    crop[20:44, 18:30] = (40, 140, 30)  # a green stick
    rng = np.random.default_rng(0)
    outs = [recolour(crop, rng) for _ in range(30)]
    assert all(o.shape == crop.shape and o.dtype == np.uint8 for o in outs)
    sticks = np.array([o[30, 24].astype(int) for o in outs])
    assert len({tuple(v // 40) for v in sticks}) >= 4  # many different inks
    assert any(np.ptp(o[30, 24].astype(int)) < 3 for o in outs)  # some grey
    for o in outs:  # the stick still stands out from the face where it was
        grey = o.astype(int).sum(axis=2)
        assert abs(grey[30, 24] - grey[5, 5]) > 60


def test_wide_mix_sets_are_seeded_and_never_the_measured_styles() -> None:
    """``wide-mix`` table pools draw sets over the training styles and the Noto glyphs, never the
    held-out style, the benchmark's own faces or the Symbola glyphs (each measured as unseen)."""
    from scripts import table_crops as tc
    from vision.artwork import HOLDOUT_STYLE, TRAIN_STYLES

    sets = [tc.wide_set(k) for k in range(tc.WIDE_SETS)]
    assert sets == [tc.wide_set(k) for k in range(tc.WIDE_SETS)]  # seeded
    used = {s for styles, _ in sets for s in styles}
    assert not used & {HOLDOUT_STYLE, "american-synth", "font-symbola"}, used
    assert used <= set(TRAIN_STYLES) | {"font-noto"} and "font-noto" in used and len(used) >= 8, used
    assert 0 < sum(am for _, am in sets) < len(sets)  # American sets and the styles' own faces
    plain = next(k for k, (_, am) in enumerate(sets) if not am)
    assert "F" not in tc._wide_faces(plain) and "J" in tc._wide_faces(next(k for k, (_, am) in enumerate(sets) if am))
    x, codes = tc.frame_crops(7, tc.WIDE_SOURCE, 0.7)
    assert x.shape[1:] == (64, 48, 3) and len(codes) == len(x) > 10


def test_wide_mix2_leaves_wide_mix_alone_and_draws_the_extra_styles() -> None:
    from scripts import table_crops as tc
    from vision.artwork import EXTRA_STYLES, HOLDOUT_STYLE, TRAIN_STYLES

    sets = [tc.wide_set(k, second=True) for k in range(tc.WIDE2_SETS)]
    assert sets == [tc.wide_set(k, second=True) for k in range(tc.WIDE2_SETS)]  # seeded
    assert sets != [tc.wide_set(k) for k in range(tc.WIDE2_SETS)]
    used = {s for styles, _ in sets for s in styles}
    assert not used & {HOLDOUT_STYLE, "american-synth", "font-symbola"}, used
    assert set(EXTRA_STYLES) <= used <= set(TRAIN_STYLES) | {"font-noto"} | set(EXTRA_STYLES), used
    assert sum(any(s in EXTRA_STYLES for s in styles) for styles, _ in sets) >= len(sets) // 2
    x, codes = tc.frame_crops(7, tc.WIDE2_SOURCE, 0.7)
    assert x.shape[1:] == (64, 48, 3) and len(codes) == len(x) > 10


def test_wide_mix3_draws_dorwhite_and_unifont_and_leaves_the_other_pools_alone() -> None:
    from scripts import table_crops as tc
    from vision.artwork import EXTRA_STYLES, HOLDOUT_STYLE, TRAIN_STYLES

    sets = [tc.wide_set(k, third=True) for k in range(tc.WIDE3_SETS)]
    assert sets == [tc.wide_set(k, third=True) for k in range(tc.WIDE3_SETS)]  # seeded
    assert sets != [tc.wide_set(k, second=True) for k in range(tc.WIDE3_SETS)]
    used = {s for styles, _ in sets for s in styles}
    assert not used & {HOLDOUT_STYLE, "american-synth", "font-symbola"}, used
    assert set(tc.WIDE3_STYLES) <= used <= set(TRAIN_STYLES) | {"font-noto"} | set(EXTRA_STYLES) | set(tc.WIDE3_STYLES)
    assert sum(styles[0] == "xm-dorwhite" for styles, _ in sets) >= len(sets) // 4
    k = next(k for k, (styles, am) in enumerate(sets) if styles == ("xm-dorwhite",) and am)
    faces = tc._faces(f"{tc.WIDE3_SOURCE}/{k}")
    assert {"J", "F", "BK", "WD", "1C", "9B"} <= set(faces)  # American: jokers, flowers, backs, soaps
    x, codes = tc.frame_crops(7, tc.WIDE3_SOURCE, 0.7)
    assert x.shape[1:] == (64, 48, 3) and len(codes) == len(x) > 10


def test_bench_ignores_detections_on_tiles_out_of_the_truth() -> None:
    """``bench_vision.inside_quads``: a point inside a tilted quad (either winding) is in; a point in
    its axis-aligned bounds but outside the quad is not."""
    from scripts.bench_vision_tally import inside_quads

    diamond = np.array([[[10, 0], [20, 10], [10, 20], [0, 10]]], np.float32)
    points = np.array([[10, 10], [2, 2], [18, 18], [11, 3], [30, 10]], np.float32)
    assert inside_quads(points, diamond)[:, 0].tolist() == [True, False, False, True, False]
    assert inside_quads(points, diamond[:, ::-1])[:, 0].tolist() == [True, False, False, True, False]


@needs_photos
def test_american_photos_are_sets_over_train_photos_seen_face_on() -> None:
    """``american-photos``: each set draws its own photos of ``train/`` (never ``valid/``, which
    the benchmark's ``american:photos`` faces come from), with the American set's own tiles."""
    from scripts import table_crops as tc

    bare = np.full((96, 72, 3), 230, np.uint8)
    turned = bare.copy()
    turned[:12, :12] = (40, 140, 30)  # the green cloth in the corners of a tile lying at 45 degrees
    turned[-12:, -12:] = (40, 140, 30)
    assert tc.face_on(bare) and not tc.face_on(turned)
    a, b = tc._faces(f"{tc.PHOTO_SOURCE}/0"), tc._faces(f"{tc.PHOTO_SOURCE}/1")
    assert {"J", "F", "BK", "WD", "GD", "5D", "N"} <= set(a)
    assert not all(np.array_equal(x, y) for x, y in zip(a["5D"], b["5D"], strict=True))
    x, codes = tc.frame_crops(123, tc.PHOTO_SOURCE, 0.7, 0.7)
    assert x.shape[1:] == (64, 48, 3) and len(codes) == len(x) > 10 and "J" in codes


@needs_torch
def test_unlabelled_backs_finds_face_down_tiles_no_label_covers() -> None:
    from scripts.localizer_targets import backs_colours, unlabelled_backs

    img = np.full((200, 300, 3), (40, 120, 30), np.uint8)  # green cloth (BGR)
    img[20:60, 20:50] = (230, 180, 90)  # a light-blue back, unlabelled
    img[120:170, 200:240] = (230, 180, 90)  # a light-blue back inside a labelled box
    img[100:160, 100:140] = (235, 235, 235)  # a white face-up tile ...
    img[110:114, 110:114] = (230, 180, 90)  # ... with a speck of blue print
    img[20:60, 240:280] = (200, 60, 220)  # a magenta back, unlabelled
    boxes = np.array([[195, 115, 245, 175], [95, 95, 145, 165]], np.float32)
    mask = unlabelled_backs(img, boxes)
    assert mask.dtype == np.uint8 and mask.shape == img.shape[:2]
    assert mask[25:55, 25:45].all()  # the unlabelled back
    assert not mask[115:175, 195:245].any()  # the labelled one
    assert not mask[100:160, 100:140].any()  # the print
    assert not mask[80:100, 150:200].any()  # the cloth
    assert not mask[25:55, 245:275].any()  # blue only by default ...
    both = unlabelled_backs(img, boxes, backs_colours("blue, magenta"))
    assert both[25:55, 245:275].all() and both[25:55, 25:45].all()  # ... magenta when asked
    with pytest.raises(SystemExit, match="unknown colour"):
        backs_colours("blue,green")


@needs_torch
def test_augment_moves_a_mask_with_the_photo_and_draws_alike() -> None:
    import copy

    import cv2

    from scripts.localizer_augment import augment, augment_with

    img = np.zeros((480, 640, 3), np.uint8)
    img[100:220, 300:380] = 255
    quads = np.array([[[300, 100], [380, 100], [380, 220], [300, 220]]], np.float32)
    extra = (img[..., 0] > 0).astype(np.uint8)
    for seed in range(6):
        rng = np.random.default_rng(seed)
        twin = copy.deepcopy(rng)
        out, q, moved = augment_with(img, quads, rng, 0.5, extra)
        plain, q2 = augment(img, quads, twin, 0.5)
        assert np.array_equal(out, plain) and np.array_equal(q, q2)
        assert rng.random() == twin.random()  # the same draws either way
        assert moved is not None and moved.shape == out.shape[:2]
        if moved.sum() > 50:  # the square went where the square's quad went
            ys, xs = np.nonzero(moved)
            assert np.allclose([xs.mean(), ys.mean()], q[0].mean(axis=0), atol=2.0)
            assert moved.sum() == pytest.approx(cv2.contourArea(q[0]), rel=0.1)


@needs_torch
def test_unlabelled_weight_ignores_covered_cells_but_not_a_tile_centre() -> None:
    from scripts.localizer_targets import SIZE, make_targets, unlabelled_weight

    quads = np.array([[[100, 100], [140, 100], [140, 160], [100, 160]]], np.float32)
    heat, _, _, weight = make_targets(quads, np.zeros((0, 4, 2), np.float32))
    mask = np.zeros((SIZE, SIZE), np.uint8)
    mask[0:80, 0:80] = 1  # a back, unlabelled
    mask[100:160, 100:140] = 1  # over the labelled tile too
    out = unlabelled_weight(weight, mask, heat)
    assert out.shape == weight.shape and (weight == 1).all()
    assert (out[:18, :18] == 0).all() and (out[25:, 45:] == 1).all()
    centre = np.argwhere(heat[0] == 1.0)
    assert len(centre) == 1 and out[tuple(centre[0])] == 1.0


@needs_torch
@pytest.mark.parametrize("script", ["scripts/train_localizer.py", "scripts/train_classifier.py"])
def test_a_gpu_that_is_not_there_is_a_clear_error(script: str, tmp_path: Path) -> None:
    """``--device`` names where training runs (``auto``: a GPU when torch sees one); a GPU torch
    does not see stops the run at once, before any data is read, saying so."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    res = subprocess.run([sys.executable, script, "--device", "cuda:99", "--out", str(tmp_path / "x")], cwd=REPO,
                         env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode != 0
    assert "--device cuda:99: torch" in res.stderr and ("sees no GPU" in res.stderr or "GPU(s)" in res.stderr)
    assert not (tmp_path / "x").exists()


@needs_torch
@needs_photos
def test_the_localisers_worker_processes_draw_the_same_batches_for_any_number_of_them(tmp_path: Path) -> None:
    """``--workers N`` draws batch (epoch, step) from a stream of its own: one worker, two, or two
    then one across a resume train the same file."""
    args = ["--epochs", "2", "--steps", "2", "--batch", "2", "--eval-photos", "1", "--threads", "1",
            "--synth", "0.5", "--american", "1.0"]
    files = []
    for run, workers, stop in (("a", "1", []), ("b", "2", []), ("c", "2", ["--stop-epoch", "1"]), ("c", "1", [])):
        onnx = tmp_path / f"{run}{workers}.onnx"
        _run(["scripts/train_localizer.py", "--out", str(tmp_path / run), *args, "--workers", workers, *stop,
              "--export", str(onnx)])
        files.append(onnx.read_bytes())
    assert files[0] == files[1] == files[3]
    assert files[2] != files[3]  # the first epoch's file, then the resumed run's


def _photo1() -> object:
    """``tests/vision/data/photo1.jpg`` as a labelled photo: its rack's row of 15 tiles labelled,
    the 30-odd face-up discards heaped above it not."""
    import json

    from scripts.photos import PhotoSample

    data = REPO / "tests" / "vision" / "data"
    entry = next(p for p in json.loads((data / "photos.json").read_text()) if p["file"] == "photo1.jpg")
    boxes = np.array([t["box"] for t in entry["tiles"]], np.float32)
    return PhotoSample(data / "photo1.jpg", 640, 640, boxes, tuple(t["code"] for t in entry["tiles"]),
                       (None,) * len(boxes))


def test_unlabelled_tiles_are_the_pile_beside_a_labelled_row() -> None:
    from scripts.crops import unlabelled_tiles_in
    from vision.detect import quad_iou_boxes
    from vision.pipeline import TileRecognizer

    photo = _photo1()
    found = unlabelled_tiles_in(TileRecognizer(REPO / "models"), [photo])
    quads = found["photo1.jpg"]
    assert len(quads) >= 15  # read at three scales, the same tile often more than once
    bounds = np.concatenate([quads.min(axis=1), quads.max(axis=1)], axis=1)
    assert quad_iou_boxes(bounds, photo.boxes).max() < 0.1  # never a labelled tile
    assert np.all(quads[:, :, 1].mean(axis=1) < photo.boxes[:, 1].min())  # the pile lies above the row


@needs_torch
def test_tiles_the_labels_leave_out_carry_no_heat_loss() -> None:
    from scripts.localizer_data import Source
    from scripts.localizer_targets import unlabelled_tiles_mask

    photo = _photo1()
    pile = np.array([[[0, 0], [640, 0], [640, 300], [0, 300]]], np.float32)  # the top of the photo
    mask = unlabelled_tiles_mask((640, 640, 3), pile)
    assert mask[:300].all() and not mask[310:].any()
    backs = np.zeros((640, 640), np.uint8)
    backs[600:, :10] = 1
    both = unlabelled_tiles_mask((640, 640, 3), pile, backs)
    assert both[600:, :10].all() and both[:300].all() and not backs[:300].any()  # the backs' mask kept, not changed
    plain = Source([photo], 0.0, 0)
    ignored = Source([photo], 0.0, 0, tiles_ignored={"photo1.jpg": pile})
    shares = []
    for seed in range(6):
        w0 = plain.sample(np.random.default_rng(seed))[4]
        w1 = ignored.sample(np.random.default_rng(seed))[4]  # the same draws: the same window
        assert np.all(w1 <= w0)
        shares.append(float((w1 < w0).mean()))
    assert max(shares) > 0.1  # where the window takes in the pile, a good part of it carries no loss


@needs_torch
def test_tiles_the_labels_leave_out_can_be_labelled_once_each() -> None:
    from scripts.localizer_data import Source
    from scripts.localizer_targets import one_per_tile

    a = np.array([[100, 50], [140, 50], [140, 110], [100, 110]], np.float32)
    found = np.stack([a, a + 2, a + [200, 0]])  # one tile read twice, another once
    assert len(one_per_tile(found)) == 2
    photo = _photo1()
    src = Source([photo], 0.0, 0, tiles_labelled={"photo1.jpg": found})
    assert len(src.quads[0]) == len(photo.boxes) + 2
    assert np.array_equal(src.quads[0][-2:], found[[0, 2]])
    assert len(Source([photo], 0.0, 0).quads[0]) == len(photo.boxes)
