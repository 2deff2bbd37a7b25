"""The synthetic scenes training draws (``scripts.synth_scenes``): American faces that are not the
benchmark's, the share of face-down backs, scenes kept in view, the widened perspective; and the
benchmark ignoring detections on tiles out of the truth.
"""

from __future__ import annotations

import numpy as np


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


def test_bench_ignores_detections_on_tiles_out_of_the_truth() -> None:
    """``bench_vision_tally.inside_quads``: a point inside a tilted quad (either winding) is in; a point in
    its axis-aligned bounds but outside the quad is not."""
    from scripts.bench_vision_tally import inside_quads

    diamond = np.array([[[10, 0], [20, 10], [10, 20], [0, 10]]], np.float32)
    points = np.array([[10, 10], [2, 2], [18, 18], [11, 3], [30, 10]], np.float32)
    assert inside_quads(points, diamond)[:, 0].tolist() == [True, False, False, True, False]
    assert inside_quads(points, diamond[:, ::-1])[:, 0].tolist() == [True, False, False, True, False]
