"""The localiser's training pieces: the rendered-table pool's area-sampled and dense frames, the
unlabelled backs and their loss weights, the augmentation that moves a mask with the photo, and the
face-up tiles a photo's labels leave out (found by the pipeline, then ignored or labelled once each).
"""

from __future__ import annotations

import numpy as np
import pytest
from training_helpers import REPO, needs_photos, needs_torch, run_script

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
    res = run_script(["-c", _POOL])
    n_base, n_area, n_dense, quad_diff, pixel_diff = res.stdout.split()
    assert n_base == n_area and float(quad_diff) < 1e-3
    assert float(pixel_diff) > 0.05  # the same frame would be 0
    assert int(n_dense) > int(n_base)


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
    from scripts.localised_crops import unlabelled_tiles_in
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
