"""Artwork faces: every code present, sizes, the held-out style kept out, American synthesis."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from companion.rules.tiles import ALL_CODES
from vision import american
from vision.artwork import (
    FACE_H,
    FACE_W,
    HOLDOUT_STYLE,
    STYLES,
    TRAIN_STYLES,
    ArtworkError,
    tile_faces,
)
from vision.artwork_images import compose, flatten_alpha


def _digest(img: np.ndarray) -> str:
    return hashlib.sha1(np.ascontiguousarray(img).tobytes()).hexdigest()


def test_training_faces_cover_every_code_of_the_notation() -> None:
    faces = tile_faces()
    assert list(faces) == list(ALL_CODES)
    for code, imgs in faces.items():
        assert imgs, code
        for img in imgs:
            assert img.shape == (FACE_H, FACE_W, 3) and img.dtype == np.uint8, code
            assert img.std() > 3, f"{code}: a blank face"


def test_every_style_loads_and_the_holdout_is_not_in_training() -> None:
    assert HOLDOUT_STYLE in STYLES and HOLDOUT_STYLE not in TRAIN_STYLES
    held = tile_faces(HOLDOUT_STYLE)
    assert len(held) == 42  # the 34 kinds, 4 flowers, 4 seasons
    train = {_digest(img) for imgs in tile_faces().values() for img in imgs}
    assert not {_digest(img) for imgs in held.values() for img in imgs} & train
    for style in STYLES:
        assert len(tile_faces(style)) >= 4, style


def test_faces_are_read_only_and_stable_between_calls() -> None:
    a, b = tile_faces("km-traditional"), tile_faces("km-traditional")
    assert _digest(a["5C"][0]) == _digest(b["5C"][0])
    with pytest.raises(ValueError):
        a["5C"][0][0, 0, 0] = 1


def test_unknown_style_is_named_in_the_error() -> None:
    with pytest.raises(ArtworkError, match="no-such-style"):
        tile_faces("no-such-style")


def test_american_synthesis_is_seeded_and_varied() -> None:
    a = american.synth_faces(seed=3, per_code=4)
    b = american.synth_faces(seed=3, per_code=4)
    c = american.synth_faces(seed=4, per_code=4)
    assert set(a) == {"J", "F", "BK", "WD"}
    assert [_digest(x) for x in a["J"]] == [_digest(x) for x in b["J"]]
    assert [_digest(x) for x in a["J"]] != [_digest(x) for x in c["J"]]
    assert len({_digest(x) for x in a["J"]}) == 4
    for imgs in a.values():
        assert all(x.shape == (FACE_H, FACE_W, 3) for x in imgs)


def test_american_dragons_come_from_the_bases_and_leave_the_other_faces_alone() -> None:
    rng = np.random.default_rng(5)
    bases = {code: [rng.integers(0, 255, (FACE_H, FACE_W, 3), dtype=np.uint8) for _ in range(3)]
             for code in ("RD", "GD", "5C", "F")}
    with_dragons = american.synth_faces(seed=3, per_code=2, bases=bases)
    without = american.synth_faces(seed=3, per_code=2, bases={"5C": bases["5C"], "F": bases["F"]})
    for code in ("RD", "GD"):
        assert len(with_dragons[code]) == 2
        assert {_digest(x) for x in with_dragons[code]} <= {_digest(x) for x in bases[code]}
    assert [_digest(x) for x in with_dragons["5C"]] == [_digest(x) for x in without["5C"]]


def test_backs_are_plain_and_jokers_are_not() -> None:
    rng = np.random.default_rng(0)
    backs = [american.back(rng) for _ in range(5)]
    jokers = [american.joker(rng) for _ in range(5)]

    def spread(img: np.ndarray) -> float:  # per-channel spread, not the difference between channels
        return float(img[8:-8, 8:-8].reshape(-1, 3).std(axis=0).mean())

    assert max(spread(b) for b in backs) < 10
    assert min(spread(j) for j in jokers) > 20


def test_compose_fits_a_glyph_inside_the_face() -> None:
    glyph = np.zeros((200, 50, 4), np.uint8)
    glyph[:, :, 2] = 255  # red
    glyph[:, :, 3] = 255
    face = np.full((FACE_H, FACE_W, 3), 200, np.uint8)
    out = compose(glyph, face)
    red = (out[:, :, 2] > 240) & (out[:, :, 0] < 20)
    ys, xs = np.nonzero(red)
    assert ys.min() > 0 and ys.max() < FACE_H - 1  # margins kept
    assert (xs.max() - xs.min()) < (ys.max() - ys.min()) / 2  # aspect kept
    grey = flatten_alpha(np.zeros((4, 4, 4), np.uint8), (10, 20, 30))
    assert grey[0, 0].tolist() == [10, 20, 30]


def test_font_styles_draw_every_glyph_and_stay_out_of_training() -> None:
    from vision.artwork import FONT_STYLES

    train = {_digest(img) for imgs in tile_faces().values() for img in imgs}
    for style in FONT_STYLES:
        assert style not in TRAIN_STYLES and style not in STYLES, style
        faces = tile_faces(style)
        # the 34 kinds, 4 flowers, 4 seasons and the joker glyph; no back (the glyph's is striped)
        assert len(faces) == 43 and "J" in faces and "BK" not in faces, (style, sorted(faces))
        digests = {code: _digest(imgs[0]) for code, imgs in faces.items()}
        assert len(set(digests.values())) == 43, f"{style}: two codes drew the same face"
        assert not set(digests.values()) & train
        for code, imgs in faces.items():
            img = imgs[0]
            assert img.shape == (FACE_H, FACE_W, 3), (style, code)
            dark = (img.max(axis=2) < 100).mean()
            assert 0.01 < dark < 0.6, f"{style} {code}: {dark:.1%} ink (the outline cut badly?)"


def test_extra_styles_cut_their_sheets_right_and_stay_out_of_training() -> None:
    """GNOME's postmodern sheet and xmahjongg's gnome strip: every code where the sheet has it,
    each code a face of its own, none a training face, and cut on the tile (not across a seam)."""
    from vision.artwork import EXTRA_STYLES

    train = {_digest(img) for imgs in tile_faces().values() for img in imgs}
    sizes = {"gnome-postmodern": 42, "xm-gnome": 34}
    for style in EXTRA_STYLES:
        assert style not in TRAIN_STYLES and style not in STYLES, style
        faces = tile_faces(style)
        assert len(faces) == sizes[style] and "J" not in faces and "BK" not in faces, (style, sorted(faces))
        firsts = {code: _digest(imgs[0]) for code, imgs in faces.items()}
        assert len(set(firsts.values())) == len(faces), f"{style}: two codes drew the same face"
        assert not {_digest(i) for imgs in faces.values() for i in imgs} & train
        for code, imgs in faces.items():
            for img in imgs:
                assert img.shape == (FACE_H, FACE_W, 3), (style, code)
                ink = np.abs(img.astype(int) - np.median(img.reshape(-1, 3), axis=0)).max(axis=2) > 40
                assert 0.05 < ink[20:76, 14:58].mean() < 0.9, f"{style} {code}: nothing drawn mid-face"
    blue = tile_faces("xm-gnome")["5D"]
    tint = [float(f[:, :, 0].mean() - f[:, :, 2].mean()) for f in blue]  # blue minus red (BGR)
    assert len(blue) == 2 and tint[0] < 0 < 30 < tint[1], tint  # beige, then the blue copy
    # the postmodern weather tiles are seasons, its golden tiles flowers: they differ in hue
    pm = tile_faces("gnome-postmodern")
    assert pm["SE1"][0][20:76, 14:58, 0].mean() > pm["FL1"][0][20:76, 14:58, 0].mean() + 40


def _commonest(img: np.ndarray) -> np.ndarray:
    colours, counts = np.unique(img.reshape(-1, 3), axis=0, return_counts=True)
    return np.asarray(colours[counts.argmax()])


def ink_share(img: np.ndarray) -> float:
    return float((np.abs(img.astype(int) - _commonest(img)).max(axis=2) > 40)[20:76, 14:58].mean())


def test_dorwhite_is_cut_in_both_colours_and_stays_out_of_training() -> None:
    """xmahjongg's other American-labelled strip: 42 codes (no joker, no back), each twice (white,
    then yellow), every face drawn mid-tile, none a training face nor one of ``xm-dorothys``'s."""
    from vision.artwork import AMERICAN_STYLES, HOLDOUT_STYLE

    assert AMERICAN_STYLES == ("xm-dorwhite",)
    assert "xm-dorwhite" not in TRAIN_STYLES and "xm-dorwhite" not in STYLES
    faces = tile_faces("xm-dorwhite")
    assert len(faces) == 42 and "J" not in faces and "BK" not in faces, sorted(faces)
    assert all(len(imgs) == 2 for imgs in faces.values())
    firsts = {code: _digest(imgs[0]) for code, imgs in faces.items()}
    assert len(set(firsts.values())) == 42, "two codes drew the same face"
    seen = {_digest(img) for imgs in tile_faces().values() for img in imgs}
    seen |= {_digest(img) for imgs in tile_faces(HOLDOUT_STYLE).values() for img in imgs}
    assert not {_digest(i) for imgs in faces.values() for i in imgs} & seen
    for code, (white, yellow) in faces.items():
        for img in (white, yellow):
            assert img.shape == (FACE_H, FACE_W, 3), code
            assert 0.03 < ink_share(img) < 0.9, f"{code}: nothing drawn mid-face"
        # the face's own colour (BGR), its commonest pixel: white, then yellow
        w, y = (_commonest(f) for f in (white, yellow))
        assert min(w) > 200 and y[2] > 180 and y[0] < 120, (code, w, y)
    # the strip's order: the red dragon prints red, the green one green (BGR), the 2 Bam's two
    # sticks draw less than the 9 Bam's nine
    for code, more, less in (("RD", 2, 1), ("GD", 1, 2)):
        mid = faces[code][0][20:76, 14:58].astype(int)
        assert (mid[:, :, more] - mid[:, :, less]).mean() > 10, code
    assert ink_share(faces["2B"][0]) < ink_share(faces["9B"][0]) / 2
