"""The synthetic table renderer: deterministic, truthful, and within its stated views."""

from __future__ import annotations

import numpy as np
import pytest
from table_helpers import SIAMESE, exps, player, table

from companion.rules.tiles import AMERICAN
from vision.faces import real_crops, shared_data_dir
from vision.layout import load_layout
from vision.render import (
    TILE_W_MM,
    RackScene,
    Scene,
    View,
    camera_warp,
    random_view,
    render_table,
)
from vision.render_scenes import random_scene


def test_same_seed_same_image_other_seed_other_image() -> None:
    scene = random_scene(SIAMESE, 4)
    a = render_table(SIAMESE, scene, seed=4)
    b = render_table(SIAMESE, scene, seed=4)
    c = render_table(SIAMESE, scene, seed=5)
    assert np.array_equal(a.image, b.image) and a.tiles == b.tiles
    assert not np.array_equal(a.image, c.image)


def test_truth_matches_scene_and_lies_in_the_image() -> None:
    r = table(player("P1", exps("8C 8C J", "N N N N"), exps("1D 1D 1D")), discards="RD 2B 2B")
    assert [t.code for t in r.tiles if t.zone == "P1-A" and t.code != "BK"] == ["8C", "8C", "J", "N", "N", "N", "N"]
    assert sorted(t.code for t in r.tiles if t.zone == "discards") == ["2B", "2B", "RD"]
    assert sum(t.code == "BK" for t in r.tiles if t.zone in ("P1-A", "P1-B")) == 27 - 10
    quads = np.array([t.quad_px for t in r.tiles])
    assert (quads >= 0).all() and (quads[..., 0] < 1280).all() and (quads[..., 1] < 720).all()
    zones = SIAMESE.assign([t.centre_mm for t in r.tiles])
    assert [SIAMESE.zones[i].name for i in zones] == [t.zone for t in r.tiles]


@pytest.mark.parametrize("seed", range(6))
def test_random_views_keep_the_stated_tilt_and_the_whole_table(seed: int) -> None:
    view = random_view(seed)
    assert 30 <= view.tilt_deg <= 70
    r = render_table(SIAMESE, Scene({}), seed=seed, view=view)
    corners = np.array([[0, 0, 1], [900, 0, 1], [900, 900, 1], [0, 900, 1]], float)
    p = (r.table_to_image @ corners.T).T
    uv = p[:, :2] / p[:, 2:]
    assert (uv > 0).all() and (uv[:, 0] < 1280).all() and (uv[:, 1] < 720).all()


def test_random_scenes_respect_the_set_and_the_counts() -> None:
    layout = load_layout("royale-4")
    for seed in range(5):
        scene = random_scene(layout, seed)
        shown = [c for rack in scene.racks.values() for e in rack.exposures for c in e] + list(scene.discards)
        assert AMERICAN.over_limit(shown) == {}
        for p in layout.players:
            racks = [scene.racks[z.name] for z in layout.racks if z.player == p]
            total = sum(r.face_down + sum(len(e) for e in r.exposures) for r in racks)
            assert total in (27, 28)


def test_scene_that_does_not_fit_is_refused() -> None:
    with pytest.raises(ValueError, match="do not fit"):
        render_table(SIAMESE, Scene({"P1-A": RackScene(exps(*["5D 5D 5D 5D"] * 7))}), view=View())
    with pytest.raises(ValueError, match="not in layout"):
        render_table(SIAMESE, Scene({"P9-A": RackScene()}), view=View())


@pytest.mark.skipif(not (shared_data_dir() / "tiles-photos-v4").is_dir(), reason="shared photo data not present")
def test_real_crops_render() -> None:
    crops = real_crops(per_code=1)
    assert len(crops) >= 30 and all(img.shape == (96, 72, 3) for v in crops.values() for img in v)
    r = table(player("P1", exps("5D 5D 5D")), faces=crops)
    assert sum(t.code == "5D" for t in r.tiles) == 3


def _centroid(img: np.ndarray) -> np.ndarray:
    g = img[..., 0].astype(np.float64)
    ys, xs = np.mgrid[: g.shape[0], : g.shape[1]]
    return np.array([(g * xs).sum(), (g * ys).sum()]) / g.sum()


def test_camera_warp_averages_each_pixel_over_its_area_without_moving_the_picture() -> None:
    # stripes 2 px wide shrunk five-fold: a camera sees an even grey; one sample per pixel sees stripes
    stripes = np.zeros((500, 500, 3), np.uint8)
    stripes[:, 0::4] = stripes[:, 1::4] = 255
    shrink = np.array([[0.2, 0, 0], [0, 0.2, 0], [0, 0, 1]], np.float64)
    area = camera_warp(stripes, shrink, (90, 90), (0, 0, 0), supersample=3)[5:-5, 5:-5, 0].astype(float)
    point = camera_warp(stripes, shrink, (90, 90), (0, 0, 0), supersample=1)[5:-5, 5:-5, 0].astype(float)
    assert abs(area.mean() - 127.5) < 15 and area.std() < 20
    assert point.std() > 100  # aliased: whole columns black or white
    # a square in perspective lands where one sample per pixel puts it (the truth's quads stay right)
    square = np.zeros((400, 400, 3), np.uint8)
    square[100:300, 150:250] = 255
    m = np.array([[0.1, 0.02, 3.3], [0.01, 0.12, 5.1], [0, 1e-4, 1]])
    c1 = _centroid(camera_warp(square, m, (60, 60), (0, 0, 0), supersample=1))
    for k in (3, 4):
        assert np.abs(_centroid(camera_warp(square, m, (60, 60), (0, 0, 0), supersample=k)) - c1).max() < 0.08


def test_render_table_is_area_sampled_by_default_and_refuses_no_samples() -> None:
    scene = random_scene(SIAMESE, 4)
    default = render_table(SIAMESE, scene, seed=4)
    assert np.array_equal(default.image, render_table(SIAMESE, scene, seed=4, supersample=3).image)
    point = render_table(SIAMESE, scene, seed=4, supersample=1)
    assert not np.array_equal(default.image, point.image) and default.tiles == point.tiles
    with pytest.raises(ValueError, match="supersample"):
        render_table(SIAMESE, scene, seed=4, supersample=0)


def test_dense_discards_lie_in_rows_side_by_side_inside_their_zone() -> None:
    codes = tuple(["5D", "N", "J", "2B", "F", "9C"] * 10)
    r = render_table(SIAMESE, Scene(player("P1") | player("P2"), codes, dense_discards=True), view=View())
    disc = [t for t in r.tiles if t.zone == "discards"]
    assert sorted(t.code for t in disc) == sorted(codes)
    c = np.array([t.centre_mm for t in disc])
    zone = next(z for z in SIAMESE.zones if z.kind == "discards")
    lo, hi = np.min(zone.polygon_mm, axis=0), np.max(zone.polygon_mm, axis=0)
    assert np.all(c > lo) and np.all(c < hi)
    rows = np.unique(np.round(c[:, 1] / 10))
    assert 2 <= len(rows) <= 6  # rows, not a scatter
    same_row = np.abs(np.diff(c[:, 1])) < 5
    pitch = np.diff(c[:, 0])[same_row]
    assert pitch.min() >= TILE_W_MM - 0.5 and np.median(pitch) < TILE_W_MM + 3  # side by side, some touching
    scattered = render_table(SIAMESE, Scene(player("P1") | player("P2"), codes[:12]), view=View())
    s = np.array([t.centre_mm for t in scattered.tiles if t.zone == "discards"])
    assert min(np.linalg.norm(a - b) for i, a in enumerate(s) for b in s[i + 1:]) > 42  # apart, as before
