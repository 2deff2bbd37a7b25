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


def contour_quads(image: Image, min_frac: float = 0.0004) -> FloatArray:
    """Tiles as the blobs that differ from a plain background (sampled at the image border)."""
    h, w = image.shape[:2]
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
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((7, 7), np.uint8))
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    rects = [cv2.minAreaRect(c) for c in contours if cv2.contourArea(c) > min_frac * h * w]
    if not rects:
        return np.zeros((0, 4, 2), np.float32)
    areas = np.array([r[1][0] * r[1][1] for r in rects])
    med = float(np.median(areas))
    rects = [r for r, a in zip(rects, areas, strict=True) if 0.35 * med < a < 2.2 * med]
    return np.stack([_upright_quad(cv2.boxPoints(r)) for r in rects]).astype(np.float32)


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


def find_tiles(image: Image, expected: int, localizer_path: Path | None = None) -> FloatArray:
    """Quads of the tiles in an enrollment photo; raises :class:`EnrollError` on a wrong count.

    The localiser and the contours each look; of those that find ``expected`` tiles, the one whose
    quads are likest in size (:func:`size_spread`) is kept: on plain cloth the contours outline
    each tile exactly, while the localiser's sizes can wander (a layout photographed 8 degrees
    turned: short sides 40-70 px against 62 px), and on a busy cloth the contours miscount."""
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
    counted = [quads for _, quads in candidates if len(quads) == expected]
    if counted:
        return min(counted, key=size_spread)  # the localiser's on a tie
    tried += [f"{name} found {len(quads)}" for name, quads in candidates]
    raise EnrollError(f"expected {expected} tiles in the layout, but {'; '.join(tried)}")


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
    turn, crops = upright_grid(image, layout)
    res = clf.run(crops)
    agree = float(np.mean([
        a == b or (b == "F" and a[:2] in ("FL", "SE"))
        for a, b in zip(res.codes, codes, strict=True)
    ]))
    copies = clf.run(augment_crops(crops, augment)).embeddings if augment else None
    prototypes = prototypes_from(res.embeddings, copies, augment)
    meta = {"turned_degrees": 90 * turn} if turn else {}
    return TileSet(name, layout, tuple(codes), prototypes, meta), crops, agree


TURNS = (0, 2, 1, 3)
"""Quarter turns (counter-clockwise, :func:`numpy.rot90`) an enrollment photo is tried at, the
photo as taken first: one taken upside down, or sideways by a phone that wrote no orientation tag,
is read turned upright.  A layout's rows tell the turns apart, so at most one fits (American
9-9-9-10, Chinese 9-9-9-7-8: turned half round they read 10-9-9-9 and 8-7-9-9-9, a quarter round
in rows of at most 5 tiles)."""


def upright_grid(image: Image, layout: str) -> tuple[int, Image]:
    """``(quarter turns, crops in layout order)`` at the first turn of :data:`TURNS` at which the
    photo's tiles form the layout's rows; raises the photo as taken's :class:`EnrollError` when
    none does."""
    from vision.classify import extract_crops

    rows = row_lengths(layout)
    first: EnrollError | None = None
    for turn in TURNS:
        turned = np.ascontiguousarray(np.rot90(image, turn))
        try:
            quads = sort_into_grid(find_tiles(turned, sum(rows)), rows)
        except EnrollError as exc:
            first = first or exc
            continue
        return turn, extract_crops(turned, quads)
    assert first is not None
    raise first


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
    faces: dict[str, Image], layout: str, rng: np.random.Generator, tile_w: int = 60
) -> tuple[Image, FloatArray]:
    """A synthetic photo of a laid-out set on dark cloth, and the true quads in layout order."""
    rows = LAYOUTS[layout]
    tile_h = round(tile_w * 4 / 3)
    gap = tile_w // 3
    width = 2 * gap + max(len(r) for r in rows) * (tile_w + gap)
    height = 2 * gap + len(rows) * (tile_h + gap)
    base = np.array([60, 45, 35], np.float32) + rng.uniform(-15, 15, 3)
    img = np.clip(base + rng.normal(0, 4, (height, width, 3)), 0, 255).astype(np.uint8)
    quads = []
    for r, row in enumerate(rows):
        for c, code in enumerate(row):
            x = gap + c * (tile_w + gap) + int(rng.integers(-3, 4))
            y = gap + r * (tile_h + gap) + int(rng.integers(-3, 4))
            img[y : y + tile_h, x : x + tile_w] = cv2.resize(
                faces[code], (tile_w, tile_h), interpolation=cv2.INTER_AREA
            )
            quads.append([[x, y], [x + tile_w, y], [x + tile_w, y + tile_h], [x, y + tile_h]])
    return img, np.array(quads, np.float32)
