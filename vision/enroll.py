"""Teaching the system a tile set from one photo of one of each tile laid out in a grid.

Layouts (row by row, left to right, as the player sees the tiles upright):

* ``american`` (37 tiles): ``1B..9B`` / ``1C..9C`` / ``1D..9D`` / ``E S W N RD GD WD F J BK``
  (``BK``: one tile face down);
* ``chinese`` (42 tiles): ``1B..9B`` / ``1C..9C`` / ``1D..9D`` / ``E S W N RD GD WD`` /
  ``FL1..FL4 SE1..SE4``.

:func:`find_tiles` locates the tiles (the localiser when ``models/localizer.onnx`` is present
and contours on a plain background both look; the likest-sized find is kept),
:func:`sort_into_grid` orders them into the layout along its own rows (:func:`layout_tilt`; at
whichever quarter turn of the photo they form its rows, :func:`upright_grid`),
:func:`layout_sheet_svg` draws the printable sheet and :func:`grid_photo` a synthetic photo of a
laid-out set (for tests and the held-out-style benchmark).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import cv2
import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from vision.classify import TileClassifier
    from vision.tileset import TileSet

Image = npt.NDArray[np.uint8]
FloatArray = npt.NDArray[np.float32]
REPO = Path(__file__).resolve().parents[1]

_N = [str(n) for n in range(1, 10)]
LAYOUTS: dict[str, tuple[tuple[str, ...], ...]] = {
    "american": (
        tuple(f"{n}B" for n in _N),
        tuple(f"{n}C" for n in _N),
        tuple(f"{n}D" for n in _N),
        ("E", "S", "W", "N", "RD", "GD", "WD", "F", "J", "BK"),
    ),
    "chinese": (
        tuple(f"{n}B" for n in _N),
        tuple(f"{n}C" for n in _N),
        tuple(f"{n}D" for n in _N),
        ("E", "S", "W", "N", "RD", "GD", "WD"),
        ("FL1", "FL2", "FL3", "FL4", "SE1", "SE2", "SE3", "SE4"),
    ),
}


class EnrollError(ValueError):
    """An enrollment photo that does not show the layout; the message says what was found."""


def layout_codes(layout: str) -> list[str]:
    if layout not in LAYOUTS:
        raise EnrollError(f"unknown layout: {layout!r} (known: {', '.join(LAYOUTS)})")
    return [c for row in LAYOUTS[layout] for c in row]


def row_lengths(layout: str) -> list[int]:
    layout_codes(layout)
    return [len(r) for r in LAYOUTS[layout]]


# ---------------------------------------------------------------- finding and ordering tiles


def foreground(image: Image) -> npt.NDArray[np.uint8]:
    """1 where the photo differs from its plain background (sampled at the image border), else 0."""
    lab = cv2.cvtColor(cv2.GaussianBlur(image, (5, 5), 0), cv2.COLOR_BGR2LAB).astype(np.float32)
    border = np.concatenate(
        [
            lab[:4].reshape(-1, 3),
            lab[-4:].reshape(-1, 3),
            lab[:, :4].reshape(-1, 3),
            lab[:, -4:].reshape(-1, 3),
        ]
    )
    dist = np.linalg.norm(lab - np.median(border, axis=0), axis=2)
    mask = (
        dist
        > max(
            25.0,
            float(np.percentile(np.linalg.norm(border - np.median(border, axis=0), axis=1), 99))
            * 1.5,
        )
    ).astype(np.uint8)
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    return np.asarray(cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((7, 7), np.uint8)), np.uint8)


def blobs(image: Image, min_frac: float = 0.0004) -> list[npt.NDArray[np.int32]]:
    """The outlines of the shapes that differ from a plain background, each at least ``min_frac``
    of the photo, those far from the median size (under 0.35 or over 2.2 times its area) left out."""
    h, w = image.shape[:2]
    contours, _ = cv2.findContours(foreground(image), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    kept = [c for c in contours if cv2.contourArea(c) > min_frac * h * w]
    if not kept:
        return []
    areas = np.array([np.prod(cv2.minAreaRect(c)[1]) for c in kept])
    med = float(np.median(areas))
    return [np.asarray(c, np.int32) for c, a in zip(kept, areas, strict=True) if 0.35 * med < a < 2.2 * med]


def contour_quads(image: Image, min_frac: float = 0.0004) -> FloatArray:
    """Tiles as the blobs that differ from a plain background (:func:`blobs`), one tile each."""
    found = blobs(image, min_frac)
    if not found:
        return np.zeros((0, 4, 2), np.float32)
    rects = [np.asarray(cv2.boxPoints(cv2.minAreaRect(c)), np.float32) for c in found]
    return np.stack([_upright_quad(r) for r in rects]).astype(np.float32)


ROW_ASPECTS = (0.7, 2.5)
"""A row of touching tiles cut into its layout row's count must give tiles taller than wide, about
as a tile is (a face is about 4:3); in perspective the far rows look squatter and the near ones
taller (a layout seen 35 degrees from above: 1.2-2.0)."""


def row_quads(image: Image, rows: list[int]) -> FloatArray:
    """Tiles laid touching in their rows (a gap between rows only): where the background parts the
    photo into as many shapes as the layout has rows, each shape, taken top to bottom along its
    own length, is cut into its row's count of tiles, in perspective (the shape's four corners
    give the plane).  Empty when the shapes are not such rows.  A photo upside down is cut so too,
    its row of 10 into 9: :func:`upright_grid` tells the turns apart."""
    found = blobs(image)
    if len(found) != len(rows) or not rows:
        return np.zeros((0, 4, 2), np.float32)
    sides = [_long_sides(c) for c in found]
    first = sides[0][1] - sides[0][0]
    sides = [(b, a, d, c) if float((b - a) @ first) < 0 else (a, b, c, d) for a, b, c, d in sides]
    along = np.mean([b - a for a, b, _, _ in sides], axis=0)
    across = np.array([-along[1], along[0]])  # top to bottom when the rows run left to right
    order = np.argsort([float(np.mean(s, axis=0) @ across) for s in sides])
    lo, hi = ROW_ASPECTS
    quads: list[FloatArray] = []
    for n, k in zip(rows, order, strict=True):
        corners = np.array(sides[k], np.float32)
        row = _cut(corners, n)
        aspect = float(np.median([
            float(np.linalg.norm(q[3] - q[0])) / max(float(np.linalg.norm(q[1] - q[0])), 1e-6) for q in row
        ]))
        if not lo <= aspect <= hi:
            return np.zeros((0, 4, 2), np.float32)
        quads += [_upright_quad(q) for q in row]
    return np.stack(quads).astype(np.float32)


def _cut(corners: FloatArray, n: int) -> FloatArray:
    """``(n, 4, 2)``: a row's four corners ``a, b, c, d`` (``a -> b`` and ``d -> c`` its long
    sides) cut into ``n`` tiles as the plane they lie on is seen."""
    h = cv2.getPerspectiveTransform(np.array([[0, 0], [n, 0], [n, 1], [0, 1]], np.float32), corners)
    x = np.arange(n + 1, dtype=np.float32)
    top = cv2.perspectiveTransform(np.stack([x, np.zeros_like(x)], 1)[None], h)[0]
    bottom = cv2.perspectiveTransform(np.stack([x, np.ones_like(x)], 1)[None], h)[0]
    return np.stack([top[:-1], top[1:], bottom[1:], bottom[:-1]], axis=1).astype(np.float32)


def _long_sides(contour: npt.NDArray[np.int32]) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """``(a, b, c, d)``: a shape's four corners with ``a -> b`` and ``d -> c`` its two long sides,
    running the same way, left to right in the image where they are not upright (a quadrilateral fitted to its outline, which
    follows a row seen in perspective; its bounding rectangle when none fits)."""
    peri = cv2.arcLength(contour, True)
    pts = None
    for eps in (0.01, 0.02, 0.03, 0.05):
        approx = cv2.approxPolyDP(contour, eps * peri, True).reshape(-1, 2)
        if len(approx) == 4 and cv2.isContourConvex(approx.reshape(-1, 1, 2)):
            pts = approx.astype(np.float32)
            break
    if pts is None:
        pts = cv2.boxPoints(cv2.minAreaRect(contour)).astype(np.float32)
    lengths = [float(np.linalg.norm(pts[(i + 1) % 4] - pts[i])) for i in range(4)]
    i = 0 if lengths[0] + lengths[2] >= lengths[1] + lengths[3] else 1
    a, b = pts[i], pts[(i + 1) % 4]
    d, c = pts[(i + 3) % 4], pts[(i + 2) % 4]
    if b[0] < a[0]:  # left to right
        a, b, c, d = b, a, d, c
    return a, b, c, d


def _upright_quad(pts: npt.NDArray[np.float32]) -> FloatArray:
    """Four corners -> clockwise from the top-left of a portrait tile (long side vertical)."""
    c = pts.mean(axis=0)
    ang = np.arctan2(pts[:, 1] - c[1], pts[:, 0] - c[0])
    q = pts[np.argsort(ang)]  # clockwise in image coordinates, starting near the left
    start = int(np.argmin(q[:, 0] + q[:, 1]))
    q = np.roll(q, -start, axis=0)
    if np.linalg.norm(q[1] - q[0]) > np.linalg.norm(q[2] - q[1]) * 1.15:
        q = np.roll(q, -1, axis=0)  # landscape: reading order stays rows, the crop turns upright
    return q.astype(np.float32)


def size_spread(quads: FloatArray) -> float:
    """How unlike in size quads are: the coefficient of variation of their areas (0 when alike;
    the tiles of one set are all one size)."""
    from vision.detect import quad_params

    p = quad_params(np.asarray(quads, np.float32).reshape(-1, 4, 2))
    area = p[:, 2] * p[:, 3]
    return float(np.std(area) / max(float(np.mean(area)), 1e-6)) if len(area) else 0.0


def find_tiles(
    image: Image, expected: int, localizer_path: Path | None = None, rows: list[int] | None = None
) -> FloatArray:
    """Quads of the tiles in an enrollment photo; raises :class:`EnrollError` on a wrong count.

    The localiser and the contours each look, and given the layout's ``rows``, the contours again
    as rows of touching tiles (:func:`row_quads`); of those that find ``expected`` tiles, the one
    whose quads are likest in size (:func:`size_spread`) is kept: on plain cloth the contours
    outline each tile exactly, while the localiser's sizes can wander (a layout photographed 8
    degrees turned: short sides 40-70 px against 62 px), and on a busy cloth the contours
    miscount."""
    tried: list[str] = []
    path = localizer_path or REPO / "models" / "localizer.onnx"
    candidates: list[tuple[str, FloatArray]] = []
    if path.is_file():
        try:
            from vision.detect import TileLocalizer

            loc = TileLocalizer(
                path, input_long_side=min(1280, max(320, max(image.shape[:2]) // 32 * 32))
            )
            candidates.append(("localizer", loc.localize(image).quads))
        except (ImportError, ValueError) as exc:
            tried.append(f"localizer failed ({exc})")
    candidates.append(("contours", contour_quads(image)))
    touching = row_quads(image, rows) if rows and sum(rows) == expected else None
    counted = [quads for _, quads in candidates if len(quads) == expected]
    if touching is not None and len(touching):
        counted.append(touching)
    if counted:
        return min(counted, key=size_spread)  # the localiser's on a tie
    tried += [f"{name} found {len(quads)}" for name, quads in candidates]
    shapes = len(candidates[-1][1])
    hint = " (rows that touch one another: leave a gap between rows)" if rows and 0 < shapes < len(rows) else ""
    raise EnrollError(f"expected {expected} tiles in the layout, but {'; '.join(tried)}{hint}")


def layout_tilt(centres: FloatArray) -> float:
    """The angle (radians, within +-45 degrees of the image's x axis) at which a laid-out grid's
    rows run: the median direction from each tile to its nearest neighbour (mostly the next in its
    row, tiles being taller than wide; a neighbour in its column gives the same angle a quarter
    turn round).  0 for fewer than three tiles."""
    c = np.asarray(centres, np.float64).reshape(-1, 2)
    if len(c) < 3:
        return 0.0
    d = np.linalg.norm(c[:, None] - c[None], axis=2)
    np.fill_diagonal(d, np.inf)
    v = c[np.argmin(d, axis=1)] - c
    ang = np.arctan2(v[:, 1], v[:, 0])
    ang = (ang + np.pi / 4) % (np.pi / 2) - np.pi / 4  # rows and columns alike, either way round
    return float(np.median(ang))


def sort_into_grid(quads: FloatArray, rows: list[int]) -> FloatArray:
    """Order quads row by row (top to bottom), left to right; the row sizes must match.  A layout
    lying askew (or photographed with the phone turned a little) is ordered along its own rows
    (:func:`layout_tilt`)."""
    tilt = layout_tilt(quads.mean(axis=1))
    turn = np.array([[np.cos(tilt), np.sin(tilt)], [-np.sin(tilt), np.cos(tilt)]])
    centres = (quads.mean(axis=1) - quads.mean(axis=(0, 1))) @ turn.T  # rows made level
    order = np.argsort(centres[:, 1])
    heights = np.array([np.linalg.norm(q[3] - q[0]) for q in quads])
    gap = 0.5 * float(np.median(heights))
    groups: list[list[int]] = [[int(order[0])]] if len(order) else []
    for i in order[1:]:
        prev = np.mean([centres[j, 1] for j in groups[-1]])
        if centres[i, 1] - prev > gap:
            groups.append([])
        groups[-1].append(int(i))
    sizes = [len(g) for g in groups]
    if sizes != list(rows):
        raise EnrollError(f"tiles form rows of {sizes}, the layout needs rows of {list(rows)}")
    return np.stack([quads[i] for g in groups for i in sorted(g, key=lambda j: centres[j, 0])])


def augment_crops(crops: Image, n: int, seed: int = 0, small: float = 0.0, width: int | None = None) -> Image:
    """``n`` jittered copies of each crop (shift, scale, turn, light, blur), crop-major order;
    a share ``small`` of them also shrunk to a tile 9-29 px wide and blown up again, as a whole
    table's far tiles look (:data:`TABLE_SMALL`); with ``width``, every copy shrunk to a tile that
    many pixels wide and blown up again (:func:`vision.prototypes.sized_prototypes`).

    Enrollment averages the embeddings of a tile's crop and these copies into its prototype, so
    that one example stands for the small changes of a live view.
    """
    rng = np.random.default_rng(seed)
    h, w = crops.shape[1:3]
    out = np.empty((len(crops) * n, h, w, 3), np.uint8)
    for i, crop in enumerate(crops):
        for j in range(n):
            m = cv2.getRotationMatrix2D((w / 2, h / 2), rng.uniform(-6, 6), rng.uniform(0.92, 1.08))
            m[:, 2] += rng.uniform(-0.06, 0.06, 2) * (w, h)
            img = cv2.warpAffine(crop, m, (w, h), borderMode=cv2.BORDER_REPLICATE).astype(
                np.float32
            )
            img = img * rng.uniform(0.7, 1.2) + rng.uniform(-15, 15, 3)
            if rng.random() < 0.5:
                img = cv2.GaussianBlur(img, (3, 3), rng.uniform(0.3, 1.0))
            if width is not None:
                img = _seen_at(img, width)
            elif small and rng.random() < small:
                img = _seen_at(img, int(rng.integers(9, 30)))
            out[i * n + j] = np.clip(img, 0, 255).astype(np.uint8)
    return out


def _seen_at(img: npt.NDArray[np.float32], width: int) -> npt.NDArray[np.float32]:
    """``img`` as a tile ``width`` pixels wide looks once cut out and blown up to the crop size."""
    h, w = img.shape[:2]
    tiny = cv2.resize(img, (width, max(4, round(width * h / w))), interpolation=cv2.INTER_AREA)
    return np.asarray(cv2.resize(tiny, (w, h), interpolation=cv2.INTER_LINEAR), np.float32)


AUGMENT = 8
"""Jittered copies of each enrolled crop averaged into its prototype."""

TABLE_SMALL = 0.5
"""Share of the jittered copies shrunk to table size when a set is embedded for the table
reader's classifier (whole-table frames show tiles 8-35 px wide; an enrollment photo 60 px):
on 50 rendered tables of an American set drawn over the held-out artwork style at 1280x720,
enrolled, 71.0 % of exposures read right against 67.7 % with full-size copies alone, and no
false dead-hand call against one (tenth session, ``bench_table --faces american:xm-dorothys
--enroll``)."""


def enroll_image(
    image: Image, layout: str, clf: TileClassifier, name: str, augment: int = AUGMENT
) -> tuple[TileSet, Image, float]:
    """Find, order and embed the tiles of an enrollment photo.

    Returns the tile set (one prototype per layout position), the crops in layout order, and the
    share of tiles that the base classifier already reads as laid out (flowers count as ``F``).
    Raises :class:`EnrollError` when the photo does not show the layout.
    """
    from vision.light import without_light
    from vision.tileset import TileSet, prototypes_from

    image = without_light(image)  # the set's faces as the recogniser sees them under any lamp or glare
    codes = layout_codes(layout)
    turn, crops = upright_grid(image, layout, clf)
    res = clf.run(crops)
    agree = agreement(res.codes, codes)
    copies = clf.run(augment_crops(crops, augment)).embeddings if augment else None
    prototypes = prototypes_from(res.embeddings, copies, augment)
    meta = {"turned_degrees": 90 * turn} if turn else {}
    return TileSet(name, layout, tuple(codes), prototypes, meta), crops, agree


def agreement(read: Sequence[str], codes: Sequence[str]) -> float:
    """The share of tiles read as laid out (a flower or season read for the layout's ``F``)."""
    return float(np.mean([
        a == b or (b == "F" and a[:2] in ("FL", "SE")) for a, b in zip(read, codes, strict=True)
    ]))


TURNS = (0, 2, 1, 3)
"""Quarter turns (counter-clockwise, :func:`numpy.rot90`) an enrollment photo is tried at, the
photo as taken first: one taken upside down, or sideways by a phone that wrote no orientation tag,
is read turned upright.  A layout's rows mostly tell the turns apart (American 9-9-9-10, Chinese
9-9-9-7-8: turned half round they read 10-9-9-9 and 8-7-9-9-9, a quarter round in rows of at
most 5 tiles).  Rows of touching tiles do not (:func:`row_quads` cuts a row into the count the
layout asks of it), nor a lucky count of the localiser's: :data:`TURN_MARGIN`."""
TURN_MARGIN = 0.25
"""Where the photo's tiles form the layout's rows at more than one turn, the first is kept unless
the base classifier reads this much more of another's tiles as laid out (:func:`agreement`):
a photo of touching rows taken upside down, cut 10-9-9-9 as 9-9-9-10, reads none right."""


def upright_grid(image: Image, layout: str, clf: TileClassifier | None = None) -> tuple[int, Image]:
    """``(quarter turns, crops in layout order)`` at the first turn of :data:`TURNS` at which the
    photo's tiles form the layout's rows, or with ``clf`` at another that reads
    :data:`TURN_MARGIN` more of them as laid out; raises the photo as taken's
    :class:`EnrollError` when none does."""
    from vision.classify import extract_crops

    rows = row_lengths(layout)
    first: EnrollError | None = None
    fits: list[tuple[int, Image]] = []
    for turn in TURNS:
        turned = np.ascontiguousarray(np.rot90(image, turn))
        try:
            quads = sort_into_grid(find_tiles(turned, sum(rows), rows=rows), rows)
        except EnrollError as exc:
            first = first or exc
            continue
        fits.append((turn, extract_crops(turned, quads)))
        if clf is None:
            break
    if not fits:
        assert first is not None
        raise first
    if len(fits) == 1 or clf is None:
        return fits[0]
    codes = layout_codes(layout)
    agree = [agreement(clf.run(crops).codes, codes) for _, crops in fits]
    best = int(np.argmax(agree))
    return fits[best] if agree[best] >= agree[0] + TURN_MARGIN else fits[0]


# ---------------------------------------------------------------- the sheet and a synthetic photo


def layout_sheet_svg(layout: str) -> str:
    """A printable A4-landscape SVG: one labelled cell per tile in layout order."""
    layout_codes(layout)
    rows = LAYOUTS[layout]
    cw, ch, x0, y0 = 80, 104, 40, 120
    parts = [
        '<svg xmlns="http://www.w3.org/2000/svg" width="1123" height="794" viewBox="0 0 1123 794">',
        '<rect width="1123" height="794" fill="white"/>',
        f'<text x="40" y="50" font-family="sans-serif" font-size="26">Tile set enrollment: {layout} layout</text>',
        '<text x="40" y="85" font-family="sans-serif" font-size="15">Lay one of each tile face up, upright, '
        "in this order on a plain dark cloth, with a finger's gap between tiles. Photograph from above.</text>",
    ]
    for r, row in enumerate(rows):
        for c, code in enumerate(row):
            x, y = x0 + c * (cw + 16), y0 + r * (ch + 14)
            parts.append(
                f'<rect x="{x}" y="{y}" width="{cw}" height="{ch}" rx="8" fill="#f4f1e6" stroke="#555"/>'
            )
            label = "face down" if code == "BK" else code
            size = 14 if code == "BK" else 26
            parts.append(
                f'<text x="{x + cw / 2}" y="{y + ch / 2 + 9}" text-anchor="middle" '
                f'font-family="sans-serif" font-size="{size}">{label}</text>'
            )
    parts.append("</svg>")
    return "\n".join(parts)


def grid_photo(
    faces: dict[str, Image], layout: str, rng: np.random.Generator, tile_w: int = 60,
    touching: bool = False,
) -> tuple[Image, FloatArray]:
    """A synthetic photo of a laid-out set on dark cloth, and the true quads in layout order;
    ``touching``: the tiles of a row touch (the rows keep their gap)."""
    rows = LAYOUTS[layout]
    tile_h = round(tile_w * 4 / 3)
    gap = tile_w // 3
    pitch = tile_w if touching else tile_w + gap
    width = 2 * gap + max(len(r) for r in rows) * pitch
    height = 2 * gap + len(rows) * (tile_h + gap)
    base = np.array([60, 45, 35], np.float32) + rng.uniform(-15, 15, 3)
    img = np.clip(base + rng.normal(0, 4, (height, width, 3)), 0, 255).astype(np.uint8)
    quads = []
    for r, row in enumerate(rows):
        for c, code in enumerate(row):
            x = gap + c * pitch + (0 if touching else int(rng.integers(-3, 4)))
            y = gap + r * (tile_h + gap) + int(rng.integers(-3, 4))
            img[y : y + tile_h, x : x + tile_w] = cv2.resize(
                faces[code], (tile_w, tile_h), interpolation=cv2.INTER_AREA
            )
            quads.append([[x, y], [x + tile_w, y], [x + tile_w, y + tile_h], [x, y + tile_h]])
    return img, np.array(quads, np.float32)
