"""Teaching the system a tile set from one photo of one of each tile laid out in a grid.

Layouts (row by row, left to right, as the player sees the tiles upright):

* ``american`` (37 tiles): ``1B..9B`` / ``1C..9C`` / ``1D..9D`` / ``E S W N RD GD WD F J BK``
  (``BK``: one tile face down);
* ``chinese`` (42 tiles): ``1B..9B`` / ``1C..9C`` / ``1D..9D`` / ``E S W N RD GD WD`` /
  ``FL1..FL4 SE1..SE4``.

:mod:`vision.enroll_grid` finds the tiles and orders them into the layout's rows
(:func:`find_tiles`, :func:`sort_into_grid`, re-exported here); :func:`upright_grid` finds the
quarter turn of the photo at which they form its rows, :func:`enroll_image` embeds them,
:func:`layout_sheet_svg` draws the printable sheet and :func:`grid_photo` a synthetic photo of a
laid-out set (for tests and the held-out-style benchmark).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np
import numpy.typing as npt

from vision.enroll_grid import (
    EnrollError,
    even_sized,
    find_tiles,
    sort_into_grid,
    tile_candidates,
)
from vision.enroll_order import (
    MISPLACED_SURE,
    SWAP_ODDS,
    TWICE_SURE,
    LaidTwiceError,
    cycled,
    doubtful_swaps,
    laid_twice,
    misplaced,
    reads_as,
    refuse_laid_twice,
)
from vision.grid_rows import layout_tilt
from vision.rims import on_the_rims

if TYPE_CHECKING:
    from vision.classify import TileClassifier
    from vision.tileset import TileSet

__all__ = [
    "AUGMENT", "LAYOUTS", "MISPLACED_SURE", "SWAP_ODDS", "TABLE_SMALL", "TWICE_SURE", "TURNS", "TURN_MARGIN", "EnrollError",
    "LaidTwiceError", "places_of",
    "agreement", "augment_crops", "doubtful_swaps", "enroll_image", "exchanges", "find_tiles", "grid_photo", "laid_twice",
    "layout_codes", "layout_sheet_svg", "layout_tilt", "misplaced", "row_lengths", "sort_into_grid", "upright_grid",
]

Image = npt.NDArray[np.uint8]
FloatArray = npt.NDArray[np.float32]

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


def layout_codes(layout: str) -> list[str]:
    if layout not in LAYOUTS:
        raise EnrollError(f"unknown layout: {layout!r} (known: {', '.join(LAYOUTS)})")
    return [c for row in LAYOUTS[layout] for c in row]


def row_lengths(layout: str) -> list[int]:
    layout_codes(layout)
    return [len(r) for r in LAYOUTS[layout]]


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
            m = np.asarray(cv2.getRotationMatrix2D((w / 2, h / 2), rng.uniform(-6, 6), rng.uniform(0.92, 1.08)), np.float64)
            m[:, 2] += rng.uniform(-0.06, 0.06, 2) * (w, h)
            img: npt.NDArray[Any] = cv2.warpAffine(crop, m, (w, h), borderMode=cv2.BORDER_REPLICATE).astype(
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


def _seen_at(img: npt.NDArray[Any], width: int) -> npt.NDArray[np.float32]:
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


def places_of(texts: Sequence[str], layout: str) -> list[str]:
    """Places of the layout named by the player (``--laid-right 7B``); a ValueError that names one
    that is not the layout's."""
    codes = layout_codes(layout)
    for text in texts:
        if text not in codes:
            raise ValueError(f"laid right {text!r}: not a place of the {layout} layout")
    return list(dict.fromkeys(texts))


def exchanges(pairs: Sequence[str], layout: str) -> list[tuple[str, str]]:
    """``["6B,FL1", ...]`` (the player's word that two places hold each other's tiles) as pairs of
    the layout's codes; a ValueError that names what is wrong: an unknown code, a place twice."""
    codes = layout_codes(layout)
    out: list[tuple[str, str]] = []
    for text in pairs:
        parts = [p.strip() for p in text.split(",")]
        if len(parts) != 2 or not all(parts):
            raise ValueError(f"swap {text!r}: give two places of the layout, e.g. 6B,FL1")
        for code in parts:
            if code not in codes:
                raise ValueError(f"swap {text!r}: {code!r} is not a place of the {layout} layout")
        if parts[0] == parts[1] or {*parts} & {c for pair in out for c in pair}:
            raise ValueError(f"swap {text!r}: each place may be swapped once, and not with itself")
        out.append((parts[0], parts[1]))
    return out


def enroll_image(
    image: Image, layout: str, clf: TileClassifier, name: str, augment: int = AUGMENT,
    as_laid: bool = False, exchanged: Sequence[tuple[str, str]] = (), laid_right: Sequence[str] = (),
) -> tuple[TileSet, Image, float]:
    """Find, order and embed the tiles of an enrollment photo.

    Returns the tile set (one prototype per layout position), the crops in layout order, and the
    share of tiles that the base classifier already reads as laid out (flowers count as ``F``).
    Tiles laid in each other's places (:func:`misplaced`) are put back where they belong, each
    under the code it reads, and ``meta["reordered"]`` names each one moved: the ``place`` it lay
    in and the ``tile`` it is.  A place whose tile reads surely as another place's, which reads so
    too (:func:`laid_twice`), is refused with :class:`EnrollError`.  Two places whose tiles read
    each likelier as the other's, though not surely (:func:`doubtful_swaps`), are enrolled as laid
    and named in ``meta["maybe_swapped"]`` (``[place, place]`` pairs) for the player to check.
    ``as_laid`` keeps every tile where it lies, refuses none and names none.  ``exchanged``: pairs
    of places (:func:`exchanges`) the player says hold each other's tiles, exchanged first and
    listed in ``meta["exchanged"]``; those places are neither put back nor named, and where the
    classifier reads their tiles surely as each other's even so, ``meta["exchanged_read_otherwise"]``
    lists the places as :func:`misplaced` would have moved them.  ``laid_right``: places the player
    says hold their own tiles (``meta["laid_right"]``), likewise neither moved, named nor refused as
    laid twice.  Raises :class:`EnrollError` when the photo does not show the
    layout.
    """
    from vision.light import without_light
    from vision.tileset import TileSet, prototypes_from

    image = without_light(image)  # the set's faces as the recogniser sees them under any lamp or glare
    codes = layout_codes(layout)
    turn, crops = upright_grid(image, layout, clf)
    res = clf.run(crops)
    meta: dict[str, Any] = {"turned_degrees": 90 * turn} if turn else {}
    if exchanged:
        crops, res = cycled(crops, res, [[codes.index(a), codes.index(b)] for a, b in exchanged])
        meta["exchanged"] = [[a, b] for a, b in exchanged]
    if laid_right:
        meta["laid_right"] = list(laid_right)
    asked = {codes.index(c) for c in [*laid_right, *(c for pair in exchanged for c in pair)]}  # the player's word
    cycles = [] if as_laid else misplaced(res.codes, res.confidence, codes)
    if against := [c for c in cycles if asked & {*c}]:
        meta["exchanged_read_otherwise"] = [[codes[k] for k in c] for c in against]
    if cycles := [c for c in cycles if c not in against]:
        crops, res = cycled(crops, res, cycles)  # the tile laid in slot k reads as the next slot's code
        meta["reordered"] = [{"place": codes[k], "tile": codes[j]}
                             for cycle in cycles for k, j in zip(cycle, np.roll(cycle, -1), strict=True)]
    if not as_laid:
        refuse_laid_twice(res, codes, asked)
    maybe = [] if as_laid else [(i, j) for i, j in doubtful_swaps(res.probs, clf.classes, codes) if not asked & {i, j}]
    if maybe:
        meta["maybe_swapped"] = [[codes[i], codes[j]] for i, j in maybe]
    agree = agreement(res.codes, codes)
    copies = clf.run(augment_crops(crops, augment)).embeddings if augment else None
    prototypes = prototypes_from(res.embeddings, copies, augment)
    return TileSet(name, layout, tuple(codes), prototypes, meta), crops, agree


def agreement(read: Sequence[str], codes: Sequence[str]) -> float:
    """The share of tiles read as laid out (a flower or season read for the layout's ``F``)."""
    return float(np.mean([reads_as(a, b) for a, b in zip(read, codes, strict=True)]))


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


MIN_AGREEMENT = 0.1
"""A find is kept only where the base classifier reads at least this share of its tiles as laid
out (:func:`agreement`).  Found at the wrong turn, a layout's tiles can still form its rows (the
localiser counting 37 exactly, a tile found twice making up for one missed; tiles fitted to the
rows, one boxed too large left out and a weak peak on the cloth taken in), and then read none
right: 7 of 280 rendered table photos were so enrolled at the forty-fifth session's start, and 4
of 160 once the rows were fitted, none with this floor.  A set the models
never saw reads 0.54-0.86 there (``xm-dorothys``, ``font-symbola``); the enroll command warns
under 30 %."""


def _first_in_rows(
    candidates: list[FloatArray], rows: list[int], crops_of: Callable[[FloatArray], Image],
    clf: TileClassifier | None, codes: list[str],
) -> FloatArray:
    """The first of ``candidates`` that forms the layout's ``rows`` (:func:`sort_into_grid`),
    in layout order, and that ``clf``, when given, reads as laid out enough (:func:`agreement` of
    ``crops_of`` its tiles at least :data:`MIN_AGREEMENT`); the first :class:`EnrollError` when
    none does."""
    error: EnrollError | None = None
    for quads in candidates:
        try:
            grid = sort_into_grid(quads, rows)
        except EnrollError as exc:
            error = error or exc
            continue
        if clf is not None:
            agree = agreement(clf.run(crops_of(grid)).codes, codes)
            if agree < MIN_AGREEMENT:
                error = error or EnrollError(
                    f"the tiles found read as laid out only {agree:.0%}: check that they lie in the sheet's order")
                continue
        return grid
    assert error is not None
    raise error


def upright_grid(image: Image, layout: str, clf: TileClassifier | None = None) -> tuple[int, Image]:
    """``(quarter turns, crops in layout order)`` at the first turn of :data:`TURNS` at which the
    photo's tiles form the layout's rows, or with ``clf`` at another that reads
    :data:`TURN_MARGIN` more of them as laid out; raises the photo as taken's
    :class:`EnrollError` when none does."""
    from vision.classify import extract_crops

    rows, codes = row_lengths(layout), layout_codes(layout)
    first: EnrollError | None = None
    fits: list[tuple[int, Image]] = []
    for turn in TURNS:
        turned = np.ascontiguousarray(np.rot90(image, turn))

        def crops_of(q: FloatArray, t: Image = turned) -> Image:
            return extract_crops(t, q)

        try:
            quads = _first_in_rows(
                tile_candidates(turned, sum(rows), rows=rows), rows, crops_of, clf, codes
            )
        except EnrollError as exc:
            first = first or exc
            continue
        fits.append((turn, extract_crops(turned, on_the_rims(turned, even_sized(quads, rows)))))
        if clf is None:
            break
    if not fits:
        assert first is not None
        raise first
    if len(fits) == 1 or clf is None:
        return fits[0]
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
        '<text x="40" y="80" font-family="sans-serif" font-size="15">Lay one of each tile face up, upright, '
        "in this order on a plain dark cloth, a finger's gap between rows (a row's tiles may touch).</text>",
        '<text x="40" y="102" font-family="sans-serif" font-size="15">Photograph from above, the whole '
        "layout in the picture.</text>",
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
