"""Finding the tiles of an enrollment photo and ordering them into the layout's rows.

:func:`find_tiles` locates the tiles: the localiser (``models/localizer.onnx``, when present) and
the shapes that differ from a plain cloth (:func:`contour_quads`) both look, and where the cloth
shows one shape a row of touching tiles, each row is cut into its count (:func:`row_quads`); the
likest-sized find that counts the layout's tiles is kept.  :func:`sort_into_grid` orders them
into the layout along its own rows (:func:`layout_tilt`).  :mod:`vision.enroll` tries the photo's
quarter turns and embeds the tiles.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from vision.grid_rows import FIT_EVIDENCE, fit_rows, layout_tilt, row_groups

Image = npt.NDArray[np.uint8]
FloatArray = npt.NDArray[np.float32]
REPO = Path(__file__).resolve().parents[1]


class EnrollError(ValueError):
    """An enrollment photo that does not show the layout; the message says what was found."""


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
    running the same way, left to right in the image where they are not upright (a quadrilateral
    fitted to its outline, which follows a row seen in perspective; its bounding rectangle when
    none fits)."""
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
    """Quads of the tiles in an enrollment photo (the first of :func:`tile_candidates`); raises
    :class:`EnrollError` when no finder counts ``expected`` tiles."""
    return tile_candidates(image, expected, localizer_path, rows)[0]


def tile_candidates(
    image: Image, expected: int, localizer_path: Path | None = None, rows: list[int] | None = None
) -> list[FloatArray]:
    """The ways of finding an enrollment photo's tiles that count ``expected``, likest first;
    raises :class:`EnrollError` when none does.

    The localiser and the contours each look, and given the layout's ``rows``, the contours again
    as rows of touching tiles (:func:`row_quads`); of those that find ``expected`` tiles, the one
    whose quads are likest in size (:func:`size_spread`) comes first: on plain cloth the contours
    outline each tile exactly, while the localiser's sizes can wander (a layout photographed 8
    degrees turned: short sides 40-70 px against 62 px), and on a busy cloth the contours
    miscount.  Last, given ``rows``, the localiser's tiles fitted to the layout's rows
    (:func:`fit_rows`: a tile found twice or on the cloth left out, one missed filled in)."""
    tried: list[str] = []
    path = localizer_path or REPO / "models" / "localizer.onnx"
    candidates: list[tuple[str, FloatArray]] = []
    found, weak = None, None
    if path.is_file():
        try:
            from vision.detect import PEAK_THRESHOLD, Localized, TileLocalizer, quad_params

            side = min(1280, max(320, max(image.shape[:2]) // 32 * 32))
            low = TileLocalizer(path, threshold=FIT_EVIDENCE if rows else PEAK_THRESHOLD,
                                input_long_side=side).localize(image)
            # its finds at the usual threshold are those a run at it keeps (greedy NMS, surest first)
            sure = low.score >= PEAK_THRESHOLD
            found = Localized(low.quads[sure], low.score[sure])
            if rows:
                weak = quad_params(low.quads)[:, :2]
            candidates.append(("localizer", found.quads))
        except (ImportError, ValueError) as exc:
            tried.append(f"localizer failed ({exc})")
    candidates.append(("contours", contour_quads(image)))
    counted = [quads for _, quads in candidates if len(quads) == expected]
    if rows and sum(rows) == expected:
        touching = row_quads(image, rows)
        counted += [touching] if len(touching) else []
    counted.sort(key=size_spread)  # the localiser's first on a tie
    if rows and sum(rows) == expected and found is not None:
        fitted = fit_rows(found.quads, found.score, rows, weak)
        counted += [fitted] if len(fitted) else []
    if counted:
        return counted
    tried += [f"{name} found {len(quads)}" for name, quads in candidates]
    shapes = len(candidates[-1][1])
    hint = (" (the cloth shows fewer shapes than the layout has rows: leave a wider gap between rows, "
            "on a plain cloth darker than the tiles)") if rows and 0 < shapes < len(rows) else ""
    raise EnrollError(f"expected {expected} tiles in the layout, but {'; '.join(tried)}{hint}")


def even_sized(quads: FloatArray, rows: list[int]) -> FloatArray:
    """``quads`` in layout order, each scaled about its centre, along its own sides, to one size:
    the median of all the tiles' (one set's tiles are one size), each row's seen at the size of
    how far apart its tiles lie against all rows' (the median step between neighbours' centres: a
    row farther from the camera looks smaller, and where a tile's box wanders its centre stays).  A tile boxed on
    its print alone, or with its shadow, is cut as its neighbours are, and its prototype matches
    the tiles read later, boxed alike."""
    from vision.detect import quad_params

    q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    p = quad_params(q)
    bounds = np.cumsum([0, *rows])
    steps = [np.linalg.norm(np.diff(p[lo:hi, :2], axis=0), axis=1) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]
    every = np.concatenate([st for st in steps if len(st)]) if any(len(st) for st in steps) else np.zeros(0)
    overall = float(np.median(every)) if len(every) else 0.0
    scale = np.ones(len(q))
    for lo, hi, st in zip(bounds[:-1], bounds[1:], steps, strict=True):
        scale[lo:hi] = float(np.median(st)) / overall if len(st) and overall > 0 else 1.0
    short, long = float(np.median(p[:, 2] / scale)), float(np.median(p[:, 3] / scale))  # as at one distance
    out = q.copy()
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        k = float(scale[lo])
        theta = p[lo:hi, 4]
        across = np.stack([np.cos(theta), np.sin(theta)], axis=1)[:, None]  # (n, 1, 2)
        along = np.stack([np.sin(theta), -np.cos(theta)], axis=1)[:, None]
        c = q[lo:hi].mean(axis=1, keepdims=True)
        off = q[lo:hi] - c
        a = np.sum(off * across, axis=2, keepdims=True) * (k * short / np.maximum(p[lo:hi, 2], 1e-6))[:, None, None]
        b = np.sum(off * along, axis=2, keepdims=True) * (k * long / np.maximum(p[lo:hi, 3], 1e-6))[:, None, None]
        out[lo:hi] = c + a * across + b * along
    return out.astype(np.float32)


def sort_into_grid(quads: FloatArray, rows: list[int]) -> FloatArray:
    """Order quads row by row (top to bottom), left to right; the row sizes must match.  A layout
    lying askew (or photographed with the phone turned a little) is ordered along its own rows
    (:func:`layout_tilt`)."""
    tilt = layout_tilt(quads.mean(axis=1))
    turn = np.array([[np.cos(tilt), np.sin(tilt)], [-np.sin(tilt), np.cos(tilt)]])
    centres = (quads.mean(axis=1) - quads.mean(axis=(0, 1))) @ turn.T  # rows made level
    heights = np.array([np.linalg.norm(q[3] - q[0]) for q in quads])
    groups = row_groups(centres[:, 1], 0.5 * float(np.median(heights)))
    sizes = [len(g) for g in groups]
    if sizes != list(rows):
        raise EnrollError(f"tiles form rows of {sizes}, the layout needs rows of {list(rows)}")
    return np.stack([quads[i] for g in groups for i in sorted(g, key=lambda j: centres[j, 0])])
