"""The scales a photo is read at (``vision.scales``): the tile-size scale, the mean score, the surest
reading among scales, small tiles read larger, still photos read in windows, squeezed photos."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from pipeline_helpers import DATA, NEEDS_CLASSIFIER, PHOTOS, REPO, f1_with_codes

from vision import mend, scales
from vision.io import load_image
from vision.types import Detections

pytestmark = NEEDS_CLASSIFIER



def test_scale_for_tile_puts_tiles_at_the_target_width() -> None:
    from vision.scales import MAX_INPUT_SIDE, TARGET_TILE_PX, scale_for_tile

    assert scale_for_tile(TARGET_TILE_PX / 1.5, (400, 600, 3)) == pytest.approx(1.5)
    assert scale_for_tile(TARGET_TILE_PX * 2, (400, 600, 3)) == pytest.approx(0.5)
    assert scale_for_tile(1.0, (400, 600, 3)) == 2.0  # never enlarged past 2x
    assert scale_for_tile(1.0, (1000, 1600, 3)) == pytest.approx(MAX_INPUT_SIDE / 1600)  # input size capped
    with pytest.raises(ValueError, match="tile_px"):
        scale_for_tile(0.0, (400, 600, 3))


def test_mean_score_averages_the_tiles_a_photo_keeps() -> None:
    from vision.scales import mean_score

    conf = np.array([1.0, 0.8, 0.5, 0.3], np.float32)
    obj = np.array([0.9, 0.5, 0.3, 0.5], np.float32)  # scores 0.9, 0.4, 0.15, 0.15
    assert mean_score(conf, obj) == pytest.approx(0.65)  # under 0.2 (MIN_SCORE) not counted
    assert mean_score(conf, obj, floor=0.0) == pytest.approx(0.4)
    assert mean_score(conf[2:], obj[2:]) == 0.0
    assert mean_score(np.zeros(0, np.float32), np.zeros(0, np.float32)) == 0.0


def test_a_tile_takes_its_surest_reading_among_the_scales_read() -> None:
    from vision.scales import surest_readings

    q = np.array([[0, 0], [10, 0], [10, 14], [0, 14]], np.float32)
    kept = Detections.from_quads(np.stack([q, q + 50]), ["5D", "N"], np.array([0.5, 0.95], np.float32))
    other = Detections.from_quads(np.stack([q + 1, q + 51, q + 200]), ["FL1", "S", "RD"],
                                  np.array([0.9, 0.6, 0.99], np.float32))
    got = surest_readings(kept, [other])
    assert got.codes.tolist() == ["FL1", "N"]  # a longer code is not cut to the kept codes' width
    assert got.confidence.tolist() == pytest.approx([0.9, 0.95])
    assert np.array_equal(got.quads, kept.quads) and len(got) == 2  # places stay; no tile added
    far = Detections.from_quads(np.stack([q + 9]), ["FL1"], np.array([0.99], np.float32))  # IoU under 0.5
    assert surest_readings(kept, [far]).codes.tolist() == ["5D", "N"]
    assert surest_readings(kept, []) is kept


def spy_scales(rec, monkeypatch) -> list[float]:  # type: ignore[no-untyped-def]
    seen: list[float] = []
    real = rec.localizer.localize

    def spy(image, scale=None, exact=False):  # type: ignore[no-untyped-def]
        seen.append(scale)
        return real(image, scale=scale, exact=exact)

    monkeypatch.setattr(rec.localizer, "localize", spy)
    return seen


def test_a_photo_is_read_at_the_scale_whose_tiles_score_highest(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from vision.pipeline import TileRecognizer
    from vision.scales import PHOTO_SCALES, mean_score

    monkeypatch.setattr(mend, "SMALL_QUAD_AREA", 0.0)  # no quad moved after the reading (rim_grown)
    rec = TileRecognizer(REPO / "models", input_long_side=320)
    seen = spy_scales(rec, monkeypatch)
    rec.detect(load_image(DATA / "photo3.jpg"))
    assert seen == [0.5]  # a forced input size: one scale
    rec.input_long_side = None
    img = load_image(DATA / "photo3.jpg")
    scores = []
    for f in PHOTO_SCALES:
        det, obj = rec._read_at(img, None, f)
        scores.append(mean_score(det.confidence, obj))
    assert max(scores) < scales.READS_WELL  # photo3 reads well at none of them: all three tried
    assert int(np.argmax(scores)) != 0  # and not best at the first
    seen.clear()
    d = rec.detect(img)
    assert seen == pytest.approx([0.5 * f for f in PHOTO_SCALES])
    best = PHOTO_SCALES[int(np.argmax(scores))]
    kept, obj = rec._read_at(img, None, best)
    # the tiles are the best reading's, in its places; each may read surer from another scale
    # (surest_readings), so it keeps at least those its own reading scores at min_score
    assert len(d) >= int(np.sum(kept.confidence * obj >= rec.min_score))
    assert all(np.isclose(kept.quads, q).all(axis=(1, 2)).any() for q in d.quads)
    # a photo that reads well at the first scale is read there alone
    monkeypatch.setattr(scales, "READS_WELL", scores[0])
    seen.clear()
    rec.detect(img)
    assert seen == pytest.approx([0.5 * PHOTO_SCALES[0]])


def far_photos(k: int, side: int | None = None) -> tuple[np.ndarray, list[dict[str, object]]]:
    """photo1 and photo2 in turn laid k x k, each at ``side`` pixels (640 / k: shrunk to a 640x640
    picture, the tiles a phone held k times further away takes at the same resolution; 640: a
    still photo k times larger, the tiles as big as in the photos)."""
    size = side * k if side else 640
    side = side or 640 // k
    canvas = np.zeros((size, size, 3), np.uint8)
    tiles: list[dict[str, object]] = []
    for j in range(k * k):
        photo = PHOTOS[j % 2]
        img = load_image(DATA / str(photo["file"]))
        oy, ox = (j // k) * side, (j % k) * side
        canvas[oy : oy + side, ox : ox + side] = cv2.resize(img, (side, side), interpolation=cv2.INTER_AREA)
        f = side / img.shape[1]
        tiles += [
            {"code": t["code"], "box": [t["box"][0] * f + ox, t["box"][1] * f + oy, t["box"][2] * f + ox, t["box"][3] * f + oy]}
            for t in photo["tiles"]
        ]
    return canvas, tiles


def test_a_photo_of_small_tiles_is_read_larger_too(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Tiles under SMALL_TILE_PX at the first scale are read at SMALL_TILE_SCALES too, whatever
    the first reading scores: the mean score does not see the tiles the localiser missed."""
    from vision.pipeline import TileRecognizer
    from vision.scales import PHOTO_SCALES, SMALL_TILE_SCALES

    assert [p["file"] for p in PHOTOS[:2]] == ["photo1.jpg", "photo2.jpg"]
    rec = TileRecognizer(REPO / "models")
    seen = spy_scales(rec, monkeypatch)
    img, tiles = far_photos(3)  # 219 tiles, 5-8 px across at the first scale's input (labels)
    d = rec.detect(img)
    assert seen == pytest.approx([0.5 * f for f in (*PHOTO_SCALES, *SMALL_TILE_SCALES)])
    assert f1_with_codes(d, tiles) >= 0.88  # 0.93 (thirty-third session)
    reads_well = scales.READS_WELL
    monkeypatch.setattr(scales, "READS_WELL", 0.0)  # however well the first reading scores
    seen.clear()
    rec.detect(img)
    assert len(seen) == len(PHOTO_SCALES) + len(SMALL_TILE_SCALES)
    # without the rule the same picture reads 0.27: the larger scales are what find these tiles
    monkeypatch.setattr(scales, "READS_WELL", reads_well)
    monkeypatch.setattr(scales, "SMALL_TILE_PX", 0.0)
    seen.clear()
    assert f1_with_codes(rec.detect(img), tiles) < 0.5
    assert seen == pytest.approx([0.5 * f for f in PHOTO_SCALES])


def test_a_still_photo_of_small_tiles_is_read_in_windows(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A still photo (longer than STILL_LONG_SIDE) whose tiles measure under SMALL_STILL_TILE_PX
    at its 640-pixel default input is read in overlapping windows, each as a photo (its own
    scales); where no window finds a tile it is read at PHOTO_SCALES and SMALL_TILE_SCALES of that
    input, as before the windows."""
    from vision import windows
    from vision.pipeline import TileRecognizer
    from vision.scales import PHOTO_SCALES, SMALL_TILE_SCALES

    rec = TileRecognizer(REPO / "models")
    seen = spy_scales(rec, monkeypatch)
    img, tiles = far_photos(4, side=640)  # 2560x2560, 408 tiles, a quarter of their size at 640 pixels (labels)
    d = rec.detect(img)
    assert seen[0] == pytest.approx(640 / 2560)  # the default input, where the tiles are measured
    # then 16 windows of 768 px (4 x 4), each read first at its own half size, as a photo
    assert len(windows.starts(2560)) == 4
    assert seen[1:].count(pytest.approx(0.5)) == 16
    assert all(any(s == pytest.approx(0.5 * f) for f in (*PHOTO_SCALES, *SMALL_TILE_SCALES)) for s in seen[1:])
    assert f1_with_codes(d, tiles) >= 0.92  # 0.948 (forty-eighth session)
    assert len(d.meta["objectness"]) == len(d)  # each tile's objectness, as a photo read whole reports it
    # read whole at the five scales instead, the same picture reads 0.847
    monkeypatch.setattr(windows, "read_in_windows", lambda *args: None)
    seen.clear()
    assert f1_with_codes(rec.detect(img), tiles) < 0.9
    base = 640 / 2560
    assert seen == pytest.approx([base * f for f in (*PHOTO_SCALES, *SMALL_TILE_SCALES)])


def test_a_still_photo_of_larger_tiles_reads_as_well_in_windows(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The test photos laid 3x3 at their own size (1920x1920): in windows 0.98, as the five scales
    read them whole (0.984; 0.80 read once at the default input)."""
    from vision.pipeline import TileRecognizer

    rec = TileRecognizer(REPO / "models")
    img, tiles = far_photos(3, side=640)
    assert f1_with_codes(rec.detect(img), tiles) >= 0.95
    monkeypatch.setattr(scales, "STILL_LONG_SIDE", 1920)  # not a still: read once, as before the rule
    assert f1_with_codes(rec.detect(img), tiles) < 0.9


def squeezed_photo1() -> tuple[np.ndarray, list[dict[str, object]]]:
    """photo1's row of 15 tiles cut out and stretched to 640x640 (tiles 12x longer than wide),
    the way an export squeezes a panorama; its labels mapped the same way."""
    photo = next(p for p in PHOTOS if p["file"] == "photo1.jpg")
    img = load_image(DATA / "photo1.jpg")
    boxes = np.array([t["box"] for t in photo["tiles"]], np.float32)
    y0, y1 = int(boxes[:, 1].min()) - 15, int(boxes[:, 3].max()) + 15
    f = 640 / (y1 - y0)
    squeezed = cv2.resize(img[y0:y1], (640, 640), interpolation=cv2.INTER_LINEAR)
    tiles = [
        {"code": t["code"], "box": [b[0], (b[1] - y0) * f, b[2], (b[3] - y0) * f]}
        for t, b in zip(photo["tiles"], boxes.tolist(), strict=True)
    ]
    return squeezed, tiles


@pytest.mark.parametrize("turn", [0, 1])
def test_a_squeezed_photo_is_read_unsqueezed(recognizer, turn: int) -> None:  # type: ignore[no-untyped-def]
    from vision.scales import SQUEEZED_ASPECT, squeeze_of

    squeezed, tiles = squeezed_photo1()
    if turn:  # tiles lying along x: the image is unsqueezed along x
        squeezed = np.ascontiguousarray(np.rot90(squeezed, -1))
        tiles = [{"code": t["code"], "box": [640 - b[3], b[0], 640 - b[1], b[2]]}
                 for t in tiles for b in [t["box"]]]
    first = recognizer.localizer.localize(squeezed, scale=0.6).quads  # what the photo path sees first
    assert squeeze_of(first)[0] > SQUEEZED_ASPECT
    assert squeeze_of(first)[1] == 1 - turn
    d = recognizer.detect(squeezed)
    assert f1_with_codes(d, tiles) >= 0.9, (len(d), d.codes.tolist())
    assert d.boxes[:, [0, 2]].max() <= 645 and d.boxes[:, [1, 3]].max() <= 645  # in the image's pixels
    loc, _ = recognizer.localize(squeezed)
    assert np.allclose(loc, d.quads)


def test_squeeze_of_measures_the_median_tile_and_its_axis() -> None:
    from vision.detect import rect_quads
    from vision.scales import squeeze_of

    n = np.ones(5, np.float32)
    quads = rect_quads(np.arange(5, dtype=np.float32) * 20, 50 * n, 10 * n, 100 * n, 0 * n)
    assert squeeze_of(quads) == pytest.approx((10.0, 1))
    assert squeeze_of(quads[:, :, ::-1].copy())[1] == 0  # x and y swapped: long sides along x
    assert squeeze_of(quads[:2]) == (0.0, 1)  # too few tiles to judge
