"""A lamp's tint measured on the brightest pixels and taken out (vision.light)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vision.io import load_image
from vision.light import (
    LAMP_TINTS,
    LEVELS,
    OVEREXPOSED,
    POOR_PICTURES,
    SAMPLE_SIDE,
    WHITE_REFERENCE,
    WHITE_TOLERANCE,
    clipped_share,
    lamp_gains,
    levels_gains,
    light_corrections,
    poorly_taken,
    tinted,
    white_patch,
    with_levels,
    without_lamp,
    without_light,
)
from vision.pipeline import TileRecognizer

DATA = Path(__file__).parent / "data"
PHOTOS = ["photo1.jpg", "photo2.jpg", "photo3.jpg", "photo4.jpg"]


def felt_with_tiles(face: tuple[int, int, int] = (226, 236, 240)) -> np.ndarray:
    """A green table with a few ivory tiles with dark print: tiles are the brightest things."""
    img = np.zeros((360, 640, 3), np.uint8)
    img[:] = (50, 110, 40)
    rng = np.random.default_rng(3)
    for x in range(40, 600, 60):
        img[100:170, x:x + 50] = face
        img[120:150, x + 15:x + 35] = (40, 40, 160)
    return np.clip(img.astype(np.int16) + rng.integers(-4, 5, img.shape), 0, 255).astype(np.uint8)


@pytest.mark.parametrize("name", PHOTOS)
def test_a_daylight_photo_is_left_exactly_as_it_is(name: str) -> None:
    img = load_image(DATA / name)
    assert lamp_gains(img) is None
    assert without_lamp(img) is img


@pytest.mark.parametrize("lamp", sorted(LAMP_TINTS))
@pytest.mark.parametrize("name", PHOTOS)
def test_a_tinted_photo_is_brought_back_to_daylight(name: str, lamp: str) -> None:
    img = load_image(DATA / name)
    lit = tinted(img, lamp)
    gains = lamp_gains(lit)
    assert gains is not None
    # the factors undo the tint: their product with it is grey (up to the photo's own white)
    undone = gains * np.asarray(LAMP_TINTS[lamp])
    assert np.ptp(undone / undone.mean()) < 0.08, undone
    back = without_lamp(lit)
    white = white_patch(back)
    assert white is not None
    assert np.abs(np.log(white / np.asarray(WHITE_REFERENCE))).max() <= WHITE_TOLERANCE
    assert lamp_gains(back) is None  # taken out once, nothing left to take
    # the picture comes back to the untinted one but for its brightness (the white patch keeps
    # the lamp's; blue lost some levels to it)
    scaled = back.astype(np.float64) * (img.mean() / back.mean())
    assert float(np.mean(np.abs(scaled - img))) < 5.0


def test_the_sample_comes_back_only_when_the_picture_is_left_as_it_is() -> None:
    """The lamp's sample, the picture shrunk by area, is handed on (the gap rule shrinks the
    picture to the same size) only when nothing was corrected: it is then the returned picture's."""
    import cv2

    img = cv2.resize(felt_with_tiles(), (1280, 720), interpolation=cv2.INTER_NEAREST)
    out, gains, levels, sample = light_corrections(img)
    assert out is img and gains is None and levels is None and sample is not None
    assert sample.shape == (180, SAMPLE_SIDE, 3)
    assert np.array_equal(sample, cv2.resize(img, (SAMPLE_SIDE, 180), interpolation=cv2.INTER_AREA))
    for picture in (tinted(img, "warm"), tinted(img, "dim"), poorly_taken(img, "washed")):
        out, gains, levels, sample = light_corrections(picture)
        assert out is not picture and (gains is not None or levels is not None) and sample is None
    small = felt_with_tiles()[:200, :300]  # no longer than the sample: itself
    assert light_corrections(small)[3] is small


@pytest.mark.parametrize("name", PHOTOS)
def test_a_dim_photo_is_brightened_alike_on_every_channel(name: str) -> None:
    img = load_image(DATA / name)
    gains = lamp_gains(tinted(img, "dim"))
    assert gains is not None and np.ptp(gains) < 1e-9 and gains[0] > 1.5
    back = without_lamp(tinted(img, "dim"))
    white = white_patch(back)
    assert white is not None and lamp_gains(back) is None
    assert abs(float(np.mean(back)) - float(np.mean(img))) < 0.25 * float(np.mean(img))


def test_the_tiles_not_the_felt_set_the_white() -> None:
    img = felt_with_tiles()
    assert lamp_gains(img) is None
    warm = tinted(img, "warm")
    gains = lamp_gains(warm)
    assert gains is not None and gains[0] > 1.3 > 1.0 > gains[2]  # blue raised, red lowered


def test_a_scene_with_nothing_white_is_not_recoloured() -> None:
    """A green cloth with nothing on it: its brightest pixels are green, far beyond any lamp."""
    cloth = np.zeros((200, 300, 3), np.uint8)
    cloth[:] = (30, 140, 20)
    cloth[::7] = (35, 160, 25)
    assert lamp_gains(cloth) is None
    assert without_lamp(cloth) is cloth


@pytest.mark.parametrize("shape", [(1, 1, 3), (3, 2, 3), (40, 40, 3)])
def test_blank_tiny_or_dark_pictures_give_no_tint(shape: tuple[int, int, int]) -> None:
    for value in (0, 3, 255):
        img = np.full(shape, value, np.uint8)
        assert white_patch(img) is None or lamp_gains(img) is None
        assert without_lamp(img) is img


def test_an_unknown_lamp_is_named() -> None:
    with pytest.raises(ValueError, match="unknown lamp 'sodium'"):
        tinted(np.zeros((4, 4, 3), np.uint8), "sodium")


MODELS = Path(__file__).resolve().parents[2] / "models"


@pytest.fixture(scope="module")
def rec() -> TileRecognizer:
    if not (MODELS / "classifier.onnx").is_file():
        pytest.skip("classifier model not committed yet")
    return TileRecognizer(MODELS)


def test_the_recogniser_reports_the_factors_it_applied(rec: TileRecognizer) -> None:
    img = load_image(DATA / "photo1.jpg")
    assert "lamp_gains" not in rec.detect(img).meta
    d = rec.detect(tinted(img, "warm"))
    assert d.meta["lamp_gains"][0] > 1.3 and len(d) == len(rec.detect(img))
    kept = TileRecognizer(MODELS, lamp=False).detect(tinted(img, "warm"))
    assert "lamp_gains" not in kept.meta
    # read as tinted, not with the tint taken out all the same
    assert kept.probs.shape != d.probs.shape or not np.allclose(kept.probs, d.probs, atol=1e-3)


@pytest.mark.parametrize("name", PHOTOS)
def test_a_washed_out_photo_is_stretched_back_and_a_good_one_left_alone(name: str) -> None:
    img = load_image(DATA / name)
    assert levels_gains(img) is None
    washed = poorly_taken(img, "washed")
    levels = levels_gains(washed)
    assert levels is not None
    back = with_levels(washed, *levels)
    grey = np.percentile(back.mean(axis=2), (1, 99))
    assert abs(grey[0] - LEVELS[0]) < 12 and abs(grey[1] - LEVELS[1]) < 12, grey
    # nearer the photo as it was taken than the washed-out copy is
    err = np.abs(back.astype(np.float64) - img).mean()
    assert err < 0.5 * np.abs(washed.astype(np.float64) - img).mean(), err
    assert levels_gains(back) is None  # stretched once, nothing left to stretch
    assert without_light(img) is img and np.array_equal(without_light(washed), back)
    table = levels_gains(washed, (60.0, 220.0))  # a table frame's target: its felt's darks kept
    assert table is not None and table[0] < levels[0]


def test_raised_blacks_alone_or_a_narrow_spread_alone_is_no_washed_out_photo() -> None:
    felt = felt_with_tiles()
    assert levels_gains(felt) is None  # dark print: the blacks are not raised
    ramp = np.repeat(np.linspace(100, 255, 320)[None, :, None], 3, axis=2)  # raised, spread wide
    assert levels_gains(np.repeat(ramp, 120, axis=0).astype(np.uint8)) is None
    narrow = (felt.astype(np.float64) * 0.5 + 30).astype(np.uint8)  # narrow, blacks still dark
    assert levels_gains(narrow) is None
    assert levels_gains(np.full((64, 64, 3), 180, np.uint8)) is None  # blank


def test_an_unknown_poor_picture_is_named() -> None:
    assert POOR_PICTURES == ("over", "washed", "side", "blur")
    with pytest.raises(ValueError, match="unknown picture 'fog'"):
        poorly_taken(np.zeros((4, 4, 3), np.uint8), "fog")


def test_the_recogniser_stretches_a_washed_out_photo_but_never_a_table_frame(rec: TileRecognizer) -> None:
    img = load_image(DATA / "photo2.jpg")
    washed = poorly_taken(img, "washed")
    assert "levels" not in rec.detect(img).meta
    d = rec.detect(washed)
    assert d.meta["levels"][0] > 1.5
    assert sorted(map(str, d.codes)) == sorted(map(str, rec.detect(img).codes))
    kept = TileRecognizer(MODELS, lamp=False).detect(washed)
    assert "levels" not in kept.meta
    assert kept.probs.shape != d.probs.shape or not np.allclose(kept.probs, d.probs, atol=1e-3)
    assert "levels" not in rec.detect(washed, tile_px=60.0).meta  # the table reader's path


def test_clipped_faces_are_measured_inside_the_tiles_alone() -> None:
    felt = felt_with_tiles()
    tiles = np.array([[[x, 100], [x + 49, 100], [x + 49, 169], [x, 169]] for x in range(40, 600, 60)], np.float32)
    assert clipped_share(felt, tiles) == 0.0  # ivory faces, not burnt
    burnt = poorly_taken(felt, "over")
    assert clipped_share(burnt, tiles) >= OVEREXPOSED  # faces white, the print still inked
    assert clipped_share(burnt, tiles) < 0.95
    glare = felt.copy()
    glare[:90] = 255  # a white cloth or paper beside the tiles is no burnt face
    assert clipped_share(glare, tiles) == 0.0
    assert clipped_share(burnt, tiles[:, :, :] * 0.01) == 0.0  # too few pixels to say
    assert clipped_share(burnt, np.zeros((0, 4, 2), np.float32)) == 0.0
