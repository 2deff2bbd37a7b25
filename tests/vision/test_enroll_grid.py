"""Finding an enrollment photo's tiles in the layout's rows: tiles touching in their rows, a layout
lying askew or photographed on a table, rows fitted and mended, tiles out of the sheet's order
refused, tiles cut alike and framed on their rims."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from enroll_helpers import MODEL, holdout_grid

from vision.artwork import HOLDOUT_STYLE, TRAIN_STYLES, tile_faces
from vision.classify import TileClassifier
from vision.enroll import EnrollError, find_tiles, grid_photo, row_lengths, sort_into_grid


def _turned_by(image: np.ndarray, degrees: float) -> np.ndarray:
    """The photo turned by ``degrees`` counter-clockwise on a canvas that holds all of it, the
    cloth's colour around it (a layout laid askew, or a phone held a little turned)."""
    h, w = image.shape[:2]
    m = cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0)
    cos, sin = abs(m[0, 0]), abs(m[0, 1])
    size = (int(h * sin + w * cos), int(h * cos + w * sin))
    m[:, 2] += np.array(size) / 2 - np.array([w, h]) / 2
    return cv2.warpAffine(image, m, size, borderValue=tuple(int(v) for v in image[2, 2]))


def _seen_from(image: np.ndarray, degrees: float) -> np.ndarray:
    """The photo as a camera sees it tilted ``degrees`` from straight above (a pinhole camera
    turned about the photo's x axis): its rows in perspective, one end of the layout larger."""
    h, w = image.shape[:2]
    k = np.array([[1.2 * w, 0, w / 2], [0, 1.2 * w, h / 2], [0, 0, 1]])
    a = np.radians(degrees)
    turn = np.array([[1, 0, 0], [0, np.cos(a), -np.sin(a)], [0, np.sin(a), np.cos(a)]])
    m = k @ turn @ np.linalg.inv(k)
    corners = cv2.perspectiveTransform(np.float32([[[0, 0]], [[w, 0]], [[w, h]], [[0, h]]]), m)
    lo, hi = corners.reshape(-1, 2).min(axis=0), corners.reshape(-1, 2).max(axis=0)
    m = np.array([[1, 0, 20 - lo[0]], [0, 1, 20 - lo[1]], [0, 0, 1]]) @ m
    size = (int(hi[0] - lo[0]) + 40, int(hi[1] - lo[1]) + 40)
    return cv2.warpPerspective(image, m, size, borderValue=tuple(int(v) for v in image[2, 2]))


@pytest.mark.parametrize("view", ["level", "upside down", "tilted 30 degrees"])
def test_tiles_touching_in_their_rows_enroll_in_order(tmp_path: Path, view: str) -> None:
    """Tiles laid touching in their rows, as on a rack, a gap between rows only: the cloth shows
    one shape a row, each cut into its row's count of tiles.  Upside down, the rows 8-7-9-9-9 cut
    as 9-9-9-7-8 form the layout's rows too; the base classifier reads the turn back far more of
    them as laid out, so it is kept.  Each tile's prototype is nearest its own of the set laid out
    apart (cosine over 0.85; two different tiles of the set laid apart are at most 0.855 alike)."""
    from vision.enroll import enroll_image

    faces = {c: v[0] for c, v in tile_faces(HOLDOUT_STYLE).items()}
    apart, _ = grid_photo(faces, "chinese", np.random.default_rng(0))
    touching, quads = grid_photo(faces, "chinese", np.random.default_rng(0), touching=True)
    clf = TileClassifier(MODEL)
    laid_apart, _, _ = enroll_image(apart, "chinese", clf, "apart")
    image = {"level": touching, "upside down": np.ascontiguousarray(touching[::-1, ::-1]),
             "tilted 30 degrees": _seen_from(touching, 30.0)}[view]
    ts, _, agree = enroll_image(image, "chinese", clf, "touching")
    assert ts.meta == ({"turned_degrees": 180} if view == "upside down" else {})
    cos = ts.embeddings @ laid_apart.embeddings.T  # each tile nearest itself laid apart
    assert list(cos.argmax(axis=1)) == list(range(len(cos))) and np.diag(cos).min() > 0.85 and agree > 0.5


def test_rows_that_touch_one_another_are_named_in_the_error(tmp_path: Path) -> None:
    """The cloth shows the layout as one shape: without the localiser (no model file), the error
    says to leave a wider gap between rows.  With it, its tiles are fitted to the rows and the
    layout is found in order."""
    faces = {c: v[0] for c, v in tile_faces(HOLDOUT_STYLE).items()}
    image, quads = grid_photo(faces, "chinese", np.random.default_rng(0), touching=True)
    tile_h = int(quads[0, 3, 1] - quads[0, 0, 1])
    # the rows pushed together, the gap cut from between them: the whole layout one shape
    rows = [image[: int(quads[0, 0, 1]) - 3]]
    rows += [image[int(q[0, 1]) - 3 : int(q[0, 1]) + tile_h + 3] for q in quads[[0, 9, 18, 27, 34]]]
    packed = np.ascontiguousarray(np.concatenate([*rows, image[int(quads[-1, 3, 1]) + 3 :]]))
    with pytest.raises(EnrollError, match="contours found 1 .*leave a wider gap between rows"):
        find_tiles(packed, 42, localizer_path=tmp_path / "none.onnx", rows=row_lengths("chinese"))
    found = sort_into_grid(find_tiles(packed, 42, rows=row_lengths("chinese")), row_lengths("chinese"))
    assert np.abs(found.mean(axis=1)[:, 0] - quads.mean(axis=1)[:, 0]).max() < 0.25 * tile_h


@pytest.mark.parametrize("degrees", [8.0, 12.0, -20.0, 35.0])
def test_a_layout_lying_askew_enrolls_along_its_own_rows(tmp_path: Path, degrees: float) -> None:
    """Tiles laid out askew (or a phone held a little turned): ordered along their own rows, each
    tile's prototype is that of the same tile photographed level.  (At 8 degrees the localiser
    finds the 42 tiles with sizes that wander; the contours, which outline each exactly on plain
    cloth, are kept.)"""
    from vision.enroll import enroll_image, layout_tilt

    _, image, quads = holdout_grid(tmp_path)
    clf = TileClassifier(MODEL)
    level, _, _ = enroll_image(image, "chinese", clf, "level")
    askew = _turned_by(image, degrees)
    ts, _, _ = enroll_image(askew, "chinese", clf, "askew")
    assert ts.meta == {}
    assert np.sum(ts.embeddings * level.embeddings, axis=1).min() > 0.95
    assert abs(np.degrees(layout_tilt(quads.mean(axis=1)))) < 2.0
    found = find_tiles(askew, 42)
    assert abs(np.degrees(layout_tilt(found.mean(axis=1))) + degrees) < 2.0  # image y points down


def test_layout_tilt_follows_the_rows_either_way() -> None:
    from vision.enroll import layout_tilt

    grid = np.array([[x * 80.0, y * 110.0] for y in range(3) for x in range(5)])
    for deg in (0.0, 10.0, -25.0, 40.0):
        t = np.radians(deg)
        turned = grid @ np.array([[np.cos(t), np.sin(t)], [-np.sin(t), np.cos(t)]])
        assert np.degrees(layout_tilt(turned)) == pytest.approx(deg, abs=0.01)
    assert layout_tilt(grid[:2]) == 0.0


def _layout_quads(rows: list[int], w: float = 40.0, h: float = 54.0, step: float = 48.0) -> np.ndarray:
    """The quads of a layout's tiles, rows left-aligned, in layout order."""
    out = []
    for r, n in enumerate(rows):
        for c in range(n):
            x, y = 30 + c * step, 30 + r * (h + 20)
            out.append([[x, y], [x + w, y], [x + w, y + h], [x, y + h]])
    return np.array(out, np.float32)


def test_fit_rows_mends_what_the_localiser_found_twice_on_the_cloth_or_missed() -> None:
    """A tile found twice, one boxed on the cloth off every row, one missed inside a row and one
    missed at a row's end where the localiser peaked weakly: fitted to the layout's rows, every
    tile is where it lies, in layout order.  Where nothing shows at either end, or a row holds
    more tiles than the layout asks, nothing is fitted."""
    from vision.grid_rows import fit_rows

    rows = row_lengths("american")
    true = _layout_quads(rows)
    found = np.concatenate([np.delete(true, [4, 36], axis=0), true[[20]] + 1.5,  # 5B, BK missed; 3D twice
                            _layout_quads([1])[None, 0] + [600, 400]])  # one on the cloth, off every row
    scores = np.r_[np.full(len(true) - 2, 0.8), 0.5, 0.6].astype(np.float32)
    weak = np.concatenate([found.mean(axis=1), true[36:].mean(axis=1) + 3])  # BK peaked under 0.3
    fitted = fit_rows(found, scores, rows, weak)
    assert fitted.shape == true.shape
    assert np.abs(fitted - true).max() < 2.0
    assert len(fit_rows(found, scores, rows, found.mean(axis=1))) == 0  # the end unseen
    crowded = np.concatenate([true, true[[8]] + [48, 0]])  # a tenth tile in the first row
    assert len(fit_rows(crowded, np.full(len(crowded), 0.8, np.float32), rows)) == 0


@pytest.mark.parametrize(("style", "first_seed", "touching"), [
    ("american-synth", 1000, False), ("american-synth", 1000, True), ("gnome-smooth", 2000, True),
])
def test_a_layout_photographed_on_a_table_enrolls_in_order(style: str, first_seed: int, touching: bool) -> None:
    """Six photos of an American set laid out on a table (tiles apart, or touching in their
    rows): the localiser finds 37-40 of the 37 tiles (37 on five of the twelve, not all where the
    tiles lie), the shapes on the cloth 1-14.  Without fitting the localiser's tiles to the
    layout's rows, 2 of 6 enrolled each way; fitted, 5 and 6, and every one that does has each
    row's tiles in their places (each row's prototypes those of the set laid out flat).  Of
    ``gnome-smooth``'s touching rows, seed 2003 was enrolled half turned round, every tile out of
    place: the localiser counted 37 at the wrong turn and at no other.  It reads none of them as
    laid out, under :data:`vision.enroll.MIN_AGREEMENT`, and is refused."""
    from scripts.synth_scenes import american_scene_faces, layout_photo
    from vision.enroll import enroll_image

    faces = {c: v[0] for c, v in american_scene_faces(4242, (style,)).items()}
    clf = TileClassifier(MODEL)
    flat, _ = grid_photo({c: np.asarray(v) for c, v in faces.items()}, "american", np.random.default_rng(5))
    reference = enroll_image(flat, "american", clf, "flat")[0]
    enrolled = 0
    for seed in range(first_seed, first_seed + 6):
        photo, _ = layout_photo(faces, np.random.default_rng(seed), touching)
        try:
            ts = enroll_image(photo, "american", clf, "table")[0]
        except EnrollError:
            continue
        cos = np.sum(ts.embeddings * reference.embeddings, axis=1)
        assert min(float(np.median(cos[a:b])) for a, b in ((0, 9), (9, 18), (18, 27), (27, 37))) > 0.6, seed
        enrolled += 1
    assert enrolled >= 5


def test_tiles_out_of_the_sheets_order_are_refused_not_enrolled(tmp_path: Path) -> None:
    """A set laid out in another order than the sheet's (here each row's tiles moved one place on,
    the first last): the
    base classifier reads almost none of them as laid out, so the photo is refused with a message
    that says to check the order, rather than enrolled with every prototype under the wrong code.
    Without a classifier to read them (``upright_grid`` alone), the tiles are still found."""
    from vision.enroll import LAYOUTS, enroll_image, upright_grid

    faces = {c: v[0] for c, v in tile_faces(TRAIN_STYLES[0]).items()}
    swapped = {c: faces[d] for row in LAYOUTS["chinese"] for c, d in zip(row, row[1:] + row[:1], strict=True)}
    image, _ = grid_photo(swapped, "chinese", np.random.default_rng(0))
    with pytest.raises(EnrollError, match=r"read as laid out only \d+%: check that they lie in the sheet's order"):
        enroll_image(image, "chinese", TileClassifier(MODEL), "reversed")
    assert upright_grid(image, "chinese")[0] == 0


def test_even_sized_cuts_every_tile_of_a_row_alike() -> None:
    """A tile boxed on its print alone and one boxed with its shadow are cut at the size of the
    rest, about their own centres, corners in the same order; a row whose tiles lie closer
    together (farther from the camera) is cut smaller by as much."""
    from vision.detect import quad_params
    from vision.enroll_grid import even_sized

    near = _layout_quads([9])
    far = (_layout_quads([9]) - [30, 30]) * 0.8 + [30, 120]  # 0.8 the size and the step
    quads = np.concatenate([near, far])
    c = quads.mean(axis=1, keepdims=True)
    quads[2] = c[2] + (quads[2] - c[2]) * 0.5  # its print alone
    quads[11] = c[11] + (quads[11] - c[11]) * [1.3, 1.2]  # with its shadow
    out = even_sized(quads, [9, 9])
    p = quad_params(out)
    assert np.allclose(p[:, :2], quad_params(quads)[:, :2], atol=1e-3)
    assert np.allclose(p[:9, 2:4], [40, 54], atol=0.01) and np.allclose(p[9:, 2:4], [32, 43.2], atol=0.01)
    assert np.allclose(out[:9], near, atol=1e-3) and np.allclose(out[9:], far, atol=1e-3)


def _plain_tiles_on_cloth() -> tuple[np.ndarray, np.ndarray]:
    """A row of nine plain 40 x 54 tiles, each printed "8", on dark cloth: ``(image, their quads)``."""
    image = np.full((200, 560, 3), (40, 60, 30), np.uint8)
    tiles = _layout_quads([9], w=40, h=54, step=56)
    for q in tiles:
        x0, y0 = q[0].astype(int)
        image[y0 : y0 + 54, x0 : x0 + 40] = (225, 235, 240)
        cv2.putText(image, "8", (x0 + 10, y0 + 38), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (30, 30, 160), 2)
    return image, tiles


def test_on_the_rims_frames_the_tiles_as_their_faces() -> None:
    """Quads a localiser drew at 0.88 of every tile are grown to the tiles' rims, and quads already
    on them stay there: the middle of the scales that lie on the rims about as sharply as the
    sharpest (a plain tile reads as sharp over a tenth either way)."""
    from vision.rims import on_the_rims

    image, tiles = _plain_tiles_on_cloth()
    c = tiles.mean(axis=1, keepdims=True)
    small = c + (tiles - c) * 0.88
    assert np.abs(on_the_rims(image, small) - tiles).max() < 1.5
    assert np.abs(on_the_rims(image, tiles) - tiles).max() < 1.5


def test_rim_framed_boxes_a_photos_tiles_on_their_rims_and_keeps_their_reading() -> None:
    """A photo read under a set the models do not know reports its tiles on their rims: quads
    the localiser drew at 0.9 of each tile are moved out to the tiles' edges, every tile's code and
    confidence as read, and the scale is in ``meta``."""
    from vision.rims import rim_framed
    from vision.types import Detections

    image, tiles = _plain_tiles_on_cloth()
    c = tiles.mean(axis=1, keepdims=True)
    codes = [f"{k + 1}D" for k in range(9)]
    read = Detections.from_quads(c + (tiles - c) * 0.9, codes, np.linspace(0.5, 0.9, 9, dtype=np.float32))
    out = rim_framed(image, read)
    truth = np.concatenate([tiles.min(axis=1), tiles.max(axis=1)], axis=1)
    assert np.abs(out.boxes - truth).max() < 1.5 < np.abs(read.boxes - truth).max()
    assert list(out.codes) == codes and np.array_equal(out.confidence, read.confidence)
    assert 1.08 <= out.meta["rim_scale"] <= 1.12
    assert len(rim_framed(image, Detections.empty())) == 0
