"""Tiles lying at an angle (``vision.photo_turns``): quads come back at the tiles' angle, a turn the
edges agree on only weakly is a doubt, and a doubtful turn is kept only where it reads surer."""

from __future__ import annotations

import numpy as np
from pipeline_helpers import NEEDS_CLASSIFIER

pytestmark = NEEDS_CLASSIFIER



def test_tiles_lying_at_an_angle_come_back_at_their_angle(recognizer) -> None:  # type: ignore[no-untyped-def]
    from scripts.synth_scenes import SceneMaker
    from vision.detect import quad_params

    rng = np.random.default_rng(5)
    scene = SceneMaker(seed=5).scene(640, 480, rng, short=(30.0, 50.0), layouts=(2, 6))
    truth = quad_params(scene.quads.astype(np.float32))
    assert np.percentile(np.abs(np.degrees(truth[:, 4])) % 90, 50) > 5  # the scene's tiles are turned
    d = recognizer.detect(scene.image)
    got = quad_params(d.quads)
    dist = np.linalg.norm(got[:, None, :2] - truth[None, :, :2], axis=2)
    near = dist.min(axis=1) < 0.3 * truth[dist.argmin(axis=1), 2]
    assert near.sum() >= 0.8 * len(truth)
    err = np.abs(np.degrees(got[near, 4] - truth[dist.argmin(axis=1)[near], 4])) % 90
    err = np.minimum(err, 90 - err)
    assert np.median(err) < 4.0, np.round(err, 1)


def test_a_quad_the_edges_agree_on_only_weakly_is_a_doubt(recognizer) -> None:  # type: ignore[no-untyped-def]
    from tests.vision.test_detect_decode import tile_row
    from vision.detect import edge_turns, quad_params, rect_quads
    from vision.photo_turns import WEAK_COHERENCE, turned

    img, centres = tile_row(35.0)
    n = len(centres)
    upright = rect_quads(centres[:, 0], centres[:, 1], np.full(n, 40.0), np.full(n, 54.0), np.zeros(n))
    score = np.linspace(0.9, 0.5, n).astype(np.float32)
    quads, _, alt = turned(img, upright, score)  # clean edges: turned, no doubt
    assert np.all(np.isnan(alt))
    assert np.all(np.abs(np.degrees(quad_params(quads)[:, 4]) - 35.0) < 3.0)
    noisy = np.clip(img + np.random.default_rng(1).normal(0, 90, img.shape), 0, 255).astype(np.uint8)
    _, strength = edge_turns(noisy, upright)
    weak = (strength >= WEAK_COHERENCE) & (strength < 0.3)
    assert weak.any() and not weak.all()  # some tiles agree surely, some weakly
    quads, kept, alt = turned(noisy, upright, score)
    assert len(quads) == n and np.allclose(kept, score)
    doubt = ~np.isnan(alt[:, 0, 0])
    assert np.array_equal(doubt, weak)
    assert np.allclose(quads[doubt], upright[doubt], atol=1e-3)  # read as found, and turned too
    assert np.all(np.abs(np.degrees(quad_params(alt[doubt])[:, 4]) - 35.0) < 6.0)
    assert np.all(np.abs(np.degrees(quad_params(quads[~doubt])[:, 4]) - 35.0) < 6.0)


def test_a_doubtful_turn_is_kept_only_where_it_reads_surer(recognizer) -> None:  # type: ignore[no-untyped-def]
    """... or reads the same code nearly as surely (TURN_TIE): read right either way, the tile is
    boxed where its edges lie."""
    from scripts.synth_scenes import SceneMaker
    from vision.detect import quad_params, rect_quads
    from vision.photo_turns import TURN_TIE, read_turns

    rng = np.random.default_rng(5)
    scene = SceneMaker(seed=5).scene(640, 480, rng, short=(30.0, 50.0), layouts=(2, 6))
    truth = scene.quads.astype(np.float32)
    p = quad_params(truth)
    tilt = np.abs(np.degrees(p[:, 4])) % 90
    pick = np.flatnonzero((tilt > 20) & (tilt < 70))
    assert len(pick) >= 4  # the scene has tiles well away from upright
    truth, codes = truth[pick], [scene.codes[i] for i in pick]
    p = p[pick]
    upright = rect_quads(p[:, 0], p[:, 1], p[:, 2], p[:, 3], np.zeros(len(p), np.float32))
    # each tile twice: found upright with its true outline the doubt, and found at its outline
    # with upright the doubt (a turn that should mostly lose)
    quads, alt = np.concatenate([upright, truth]), np.concatenate([truth, upright])
    alt[0] = np.nan  # no doubt over the first: left as it was read
    first = recognizer.classify(scene.image, quads)
    turned = recognizer.classify(scene.image, np.where(np.isnan(alt), quads, alt))
    surer = turned.confidence > first.confidence
    tie = (turned.codes == first.codes) & ~surer & (turned.confidence >= first.confidence - TURN_TIE)
    win = surer | tie
    win[0] = False
    n = len(pick)
    assert win[1:n].any() and (~win[n:]).any() and tie[1:].any()  # every case occurs on this scene
    got = read_turns(recognizer.classify, scene.image, quads, alt)  # one batch: as found and turned
    assert np.allclose(got.quads[win], alt[win]) and np.allclose(got.quads[~win], quads[~win])
    assert np.allclose(got.confidence, np.where(win, turned.confidence, first.confidence), atol=1e-4)
    assert got.probs is not None and np.allclose(got.probs[win], turned.probs[win], atol=1e-4)
    right = lambda d: sum(str(c) == t for c, t in zip(d.codes, codes, strict=True))  # noqa: E731
    assert right(got[:n]) > right(first[:n])
    plain = read_turns(recognizer.classify, scene.image, upright, None)
    assert np.allclose(plain.quads, upright) and np.allclose(plain.confidence, first.confidence[:n], atol=1e-4)


def test_an_edge_field_is_made_once_a_picture_and_turns_quads_as_made_at_once() -> None:
    from tests.vision.test_detect_decode import tile_row
    from vision.detect import edge_field, edge_turns, rect_quads
    from vision.photo_turns import EdgeFields

    img, centres = tile_row(35.0)
    n = len(centres)
    upright = rect_quads(centres[:, 0], centres[:, 1], np.full(n, 40.0), np.full(n, 54.0), np.zeros(n))
    at_once = edge_turns(img, upright)
    for threads in (1, 2):  # no worker thread, and one
        fields = EdgeFields(threads)
        fields.start(img)
        field = fields.get(img)
        assert fields.get(img) is field  # held for this picture
        assert np.array_equal(field.sums, edge_field(img).sums)
        for got, want in zip(edge_turns(img, upright, field=field), at_once, strict=True):
            assert np.array_equal(got, want)
        copy = img.copy()
        assert fields.get(copy) is not field  # another array: its own field
        img_before = img.copy()
        img[:] = 0  # changed in place: the held field stays until cleared
        assert fields.get(img) is field
        fields.clear()
        blank = fields.get(img)
        assert blank is not field and not np.any(blank.sums)
        img[:] = img_before


def test_a_picture_changed_in_place_is_read_afresh(recognizer) -> None:  # type: ignore[no-untyped-def]
    """The recogniser holds each picture's edge field while it reads it at several scales
    (:class:`vision.photo_turns.EdgeFields`): a caller who reuses one array for the next frame
    gets that frame's tiles, not the last one's turns."""
    from pathlib import Path

    import cv2

    data = Path(__file__).parent / "data"
    first, second = (cv2.imread(str(data / name)) for name in ("photo1.jpg", "photo2.jpg"))
    second = cv2.resize(second, (first.shape[1], first.shape[0]))
    want = recognizer.detect(second.copy())
    frame = first.copy()
    recognizer.detect(frame)
    frame[:] = second
    got = recognizer.detect(frame)
    assert len(want) > 5 and list(got.codes) == list(want.codes)
    assert np.array_equal(got.quads, want.quads)


def test_an_edge_field_is_the_same_wherever_its_arrays_lie_in_memory() -> None:
    """The field is made on a worker thread, among other allocations: it must not depend on where
    its arrays happen to lie (``cv2.magnitude`` rounded its last bit one way or the other with
    their alignment: 21 of these 40 fields differed from the first)."""
    from tests.vision.test_detect_decode import tile_row
    from vision.detect import edge_field

    img, _ = tile_row(35.0)
    first = edge_field(img).sums
    rng = np.random.default_rng(0)
    held = []
    for _ in range(40):
        held.append(np.ones(int(rng.integers(1, 300_000)), np.uint8))  # moves the next allocations
        assert np.array_equal(edge_field(img).sums, first)
