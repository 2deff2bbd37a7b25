"""The classifier's training crops: the ``--tiny``, ``--light`` and ``--recolour`` augmentations,
and the table crop pools (``wide-mix``, ``wide-mix2``, ``wide-mix3``, ``american-photos``).
"""

from __future__ import annotations

import numpy as np
import pytest
from training_helpers import needs_photos, needs_torch


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
