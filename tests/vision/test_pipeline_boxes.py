"""What a photo keeps and how its tiles are boxed: ``min_score``, boxes drawn in to the face
(``scale_boxes``), tiles cut by the picture's edge (``clip_boxes``)."""

from __future__ import annotations

import numpy as np
from pipeline_helpers import DATA, NEEDS_CLASSIFIER, PHOTOS, REPO, blurred_photo1

from vision.detect import quad_iou_boxes
from vision.io import load_image

pytestmark = NEEDS_CLASSIFIER



def test_a_photo_keeps_the_tiles_that_score_min_score(recognizer) -> None:  # type: ignore[no-untyped-def]
    """On a photo a tile is kept when objectness x confidence reaches ``min_score`` (0 keeps all);
    told ``tile_px`` (a table reader), every tile is kept."""
    from vision.pipeline import MIN_SCORE, TileRecognizer

    everything = TileRecognizer(REPO / "models", min_score=0.0)
    image = blurred_photo1()  # out of focus: some of the boxes found score low
    all_tiles, kept = everything.detect(image), recognizer.detect(image)
    score = all_tiles.confidence * all_tiles.meta["objectness"]
    assert recognizer.min_score == MIN_SCORE > 0 and (score < MIN_SCORE).sum() >= 1
    sure = score >= MIN_SCORE
    assert kept.codes.tolist() == all_tiles.codes[sure].tolist()
    assert np.allclose(kept.boxes, all_tiles.boxes[sure])
    assert np.allclose(kept.meta["objectness"], all_tiles.meta["objectness"][sure])  # follows the tiles
    assert np.all(kept.confidence * kept.meta["objectness"] >= MIN_SCORE)
    frame = load_image(DATA / "photo1.jpg")
    assert len(recognizer.detect(frame, tile_px=30.0)) == len(everything.detect(frame, tile_px=30.0))


def test_a_photos_boxes_are_its_quads_bounds_drawn_in_to_the_face(recognizer) -> None:  # type: ignore[no-untyped-def]
    """A photo's boxes are its quads' bounds scaled by ``PHOTO_BOX_SCALE`` about their centres
    (photo labels are drawn tight to the face; the localiser learned the export's loosened training
    boxes), and on the two photos of valid's main kinds they fit the labels better than the bounds;
    a frame read with ``tile_px`` (a table) keeps the bounds."""
    from vision.pipeline import PHOTO_BOX_SCALE, clip_boxes, scale_boxes

    assert 0.8 < PHOTO_BOX_SCALE < 1.0
    for photo in PHOTOS[:2]:
        image = load_image(DATA / str(photo["file"]))
        d = recognizer.detect(image)
        bounds = np.concatenate([d.quads.min(axis=1), d.quads.max(axis=1)], axis=1)
        assert np.allclose(d.boxes, clip_boxes(scale_boxes(bounds, PHOTO_BOX_SCALE), image.shape), atol=1e-3)
        inside = np.all(d.boxes == scale_boxes(bounds, PHOTO_BOX_SCALE), axis=1)  # not cut by the edge
        assert inside.sum() > 0.8 * len(d)
        centres = (d.boxes[:, :2] + d.boxes[:, 2:]) / 2
        assert np.allclose(centres[inside], ((bounds[:, :2] + bounds[:, 2:]) / 2)[inside], atol=1e-3)
        truth = np.array([t["box"] for t in photo["tiles"]], np.float32)  # type: ignore[union-attr]
        fit = quad_iou_boxes(d.boxes, truth).max(axis=0).mean()
        assert fit > quad_iou_boxes(bounds, truth).max(axis=0).mean() + 0.01, photo["file"]
    image = load_image(DATA / "photo1.jpg")
    table = recognizer.detect(image, tile_px=30.0)
    bounds = np.concatenate([table.quads.min(axis=1), table.quads.max(axis=1)], axis=1)
    assert np.allclose(table.boxes, clip_boxes(bounds, image.shape))


def test_scale_boxes_keeps_centres_and_scales_sides() -> None:
    from vision.pipeline import scale_boxes

    b = scale_boxes(np.array([[10, 20, 30, 60]], np.float32), 0.5)
    assert b.tolist() == [[15.0, 30.0, 25.0, 50.0]]
    assert scale_boxes(np.zeros((0, 4), np.float32), 0.9).shape == (0, 4)


def test_a_tile_the_pictures_edge_cuts_is_boxed_where_it_is_seen(recognizer) -> None:  # type: ignore[no-untyped-def]
    """A photo cut across its row of tiles, 60 % of the way down them: each cut tile's quad keeps
    the whole tile, out past the picture's edge, while its box stops at the edge (every box lies
    within the picture) and fits the part in the picture, as a label boxes it, better than the
    quad's bounds do."""
    from vision.pipeline import PHOTO_BOX_SCALE, scale_boxes

    photo = PHOTOS[0]
    image = load_image(DATA / str(photo["file"]))
    truth = np.array([t["box"] for t in photo["tiles"]], np.float32)  # type: ignore[union-attr]
    y = int(np.median(truth[:, 1] + 0.6 * (truth[:, 3] - truth[:, 1])))
    cut = np.ascontiguousarray(image[:y])
    d = recognizer.detect(cut)
    h, w = cut.shape[:2]
    assert (d.quads[..., 1].max(axis=1) > y + 2).sum() >= 10  # whole tiles, partly outside
    assert d.boxes[:, 0::2].min() >= 0 and d.boxes[:, 0::2].max() <= w
    assert d.boxes[:, 1::2].min() >= 0 and d.boxes[:, 1::2].max() <= h
    seen = truth.copy()
    seen[:, 3] = np.minimum(seen[:, 3], y)  # a label boxes what is in the picture
    fit = quad_iou_boxes(seen, d.boxes).max(axis=1)
    assert (fit >= 0.5).all()
    bounds = scale_boxes(np.concatenate([d.quads.min(axis=1), d.quads.max(axis=1)], axis=1), PHOTO_BOX_SCALE)
    assert fit.mean() > quad_iou_boxes(seen, bounds).max(axis=1).mean() + 0.05


def test_clip_boxes_keeps_boxes_within_the_image() -> None:
    from vision.pipeline import clip_boxes

    b = clip_boxes(np.array([[-5, 10, 30, 70], [90, -3, 120, 20]], np.float32), (60, 100, 3))
    assert b.tolist() == [[0.0, 10.0, 30.0, 60.0], [90.0, 0.0, 100.0, 20.0]]
    assert clip_boxes(np.zeros((0, 4), np.float32), (60, 100)).shape == (0, 4)
