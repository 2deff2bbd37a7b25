"""A synthetic Siamese table with known truth, for tests, benchmarks and the bundled demo.

``render_table(layout, scene, seed=...)`` draws the four ArUco markers, the racks' exposures and
face-down tiles and the discards on a felt table top-down, then warps it into the view of a phone
propped at one table edge (30-70 degrees from vertical) and adds light, blur and noise.  The
result carries the image, every tile's true code, zone, exposure and image quad, and the true
homography.  Everything is a pure function of ``(layout, scene, seed, options)``.

:func:`vision.render_scenes.random_scene` makes a plausible scene and
:func:`vision.render_camera.random_view` a camera; callers wanting a given rule situation build a
:class:`Scene` themselves.  Faces come from ``faces=`` (e.g. ``vision.artwork.tile_faces()``
or :func:`vision.faces.real_crops`), else from :func:`vision.faces.drawn_faces` (fast, for tests).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np
import numpy.typing as npt

from companion.rules.tiles import BACK
from vision.calibrate import MARKER_IDS, marker_image, table_corners
from vision.faces import Faces, drawn_faces, drawn_options
from vision.layout import Layout, Zone
from vision.render_camera import (
    CAMERA_SUPERSAMPLE,
    View,
    camera_homography,
    camera_warp,
    random_view,
)
from vision.types import Detections

Image = npt.NDArray[np.uint8]

TILE_W_MM, TILE_H_MM = 24.0, 32.0


@dataclass(frozen=True)
class RackScene:
    """What lies on one rack: exposures in order, then ``face_down`` backs in a second row."""

    exposures: tuple[tuple[str, ...], ...] = ()
    face_down: int = 0
    touching: bool = False  # exposures laid with no gap between them


@dataclass(frozen=True)
class Scene:
    racks: dict[str, RackScene] = field(default_factory=dict)
    discards: tuple[str, ...] = ()
    dense_discards: bool = False  # discards laid in rows, side by side (else scattered apart)


@dataclass(frozen=True)
class TileTruth:
    code: str
    zone: str | None
    group: int  # exposure index on its rack; -1 for backs and discards
    quad_px: tuple[tuple[float, float], ...]  # clockwise from the face's top-left
    centre_mm: tuple[float, float]


@dataclass(frozen=True)
class RenderedTable:
    image: Image
    tiles: tuple[TileTruth, ...]
    scene: Scene
    layout: Layout
    table_to_image: npt.NDArray[np.float64]
    view: View
    hidden_markers: tuple[int, ...] = ()

    def detections(self, confidence: float = 0.99) -> Detections:
        """The truth as a :class:`Detections` (an oracle recogniser's output)."""
        if not self.tiles:
            return Detections.empty()
        quads = np.asarray([t.quad_px for t in self.tiles], np.float32)
        conf = np.full(len(self.tiles), confidence, np.float32)
        return Detections.from_quads(quads, [t.code for t in self.tiles], conf)

    def exposures(self) -> dict[str, list[list[str]]]:
        return {name: [list(e) for e in rack.exposures] for name, rack in self.scene.racks.items()}


# ----------------------------------------------------------------------------- geometry


def tile_quad_mm(centre: npt.ArrayLike, up: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """The four corners of a tile, clockwise from its face's top-left (y-down table frame)."""
    c, u = np.asarray(centre, np.float64), np.asarray(up, np.float64)
    r = np.array([-u[1], u[0]])
    hw, hh = TILE_W_MM / 2, TILE_H_MM / 2
    return np.stack([c + u * hh - r * hw, c + u * hh + r * hw, c - u * hh + r * hw, c - u * hh - r * hw])


# ----------------------------------------------------------------------------- placement


def _rack_frame(zone: Zone, layout: Layout) -> tuple[npt.NDArray[np.float64], ...]:
    """Centre, reading direction, up direction, length and depth of a rack zone."""
    (cx, cy), (a, b), _ = cv2.minAreaRect(zone.polygon)
    right, up = (v.astype(np.float64) for v in layout.reading_axes(zone))
    length, depth = (a, b) if abs(right[0]) > abs(right[1]) else (b, a)
    if abs(right[0]) < 1e-6 or abs(right[1]) < 1e-6:
        bbox = zone.polygon.max(axis=0) - zone.polygon.min(axis=0)
        length, depth = (bbox[0], bbox[1]) if abs(right[0]) > 0.5 else (bbox[1], bbox[0])
    return np.array([cx, cy]), right, up, np.array([length, depth])


def _place_rack(
    zone: Zone, rack: RackScene, layout: Layout, rng: np.random.Generator
) -> list[tuple[str, int, npt.NDArray[np.float64], npt.NDArray[np.float64]]]:
    """(code, group, centre_mm, up) for every tile of one rack."""
    centre, right, up, (length, depth) = _rack_frame(zone, layout)
    row_off = max(0.0, depth / 2 - TILE_H_MM / 2 - 2.0)
    placed = []
    for row, items in enumerate(_rack_rows(rack, rng)):
        span = sum(TILE_W_MM + gap for _, _, gap in items)
        if span > length - 8:
            raise ValueError(f"rack {zone.name!r}: {len(items)} tiles do not fit in {length:.0f} mm")
        pos = -length / 2 + 4 + rng.uniform(0, max(0.0, length - 8 - span) * 0.5)
        base = centre - up * row_off if row == 0 else centre + up * row_off
        for code, group, gap in items:
            pos += gap
            c = base + right * (pos + TILE_W_MM / 2) + rng.normal(0, 0.5, 2) * up
            ang = np.deg2rad(rng.normal(0, 1.2))
            u = np.array([np.cos(ang) * up[0] - np.sin(ang) * up[1], np.sin(ang) * up[0] + np.cos(ang) * up[1]])
            placed.append((code, group, c, u))
            pos += TILE_W_MM
    return placed


def _rack_rows(rack: RackScene, rng: np.random.Generator) -> list[list[tuple[str, int, float]]]:
    front: list[tuple[str, int, float]] = []
    for g, exposure in enumerate(rack.exposures):
        for k, code in enumerate(exposure):
            if k == 0 and g > 0:
                gap = rng.uniform(0.3, 1.2) if rack.touching else rng.uniform(10.0, 20.0)
            else:
                gap = rng.uniform(0.3, 1.5)
            front.append((code, g, gap if (g or k) else 0.0))
    back = [(BACK, -1, 0.0 if i == 0 else rng.uniform(0.3, 1.0)) for i in range(rack.face_down)]
    return [front, back]


def _place_discards_in_rows(
    zone: Zone, codes: tuple[str, ...], rng: np.random.Generator
) -> list[tuple[str, int, npt.NDArray[np.float64], npt.NDArray[np.float64]]]:
    """Discards as a long game leaves them: rows of tiles side by side, 0-3 mm apart (touching
    about a third of the time), each a few degrees off square and facing either player."""
    poly = np.asarray(zone.polygon_mm, np.float64)
    lo, hi = poly.min(axis=0) + 22, poly.max(axis=0) - 22
    placed = []
    x, y = lo[0], lo[1]
    for code in codes:
        gap = float(rng.choice([0.0, rng.uniform(0.5, 3.0)], p=[0.35, 0.65]))
        if x + TILE_W_MM > hi[0]:
            x, y = lo[0], y + TILE_H_MM + float(rng.uniform(2.0, 6.0))
        if y + TILE_H_MM > hi[1]:
            raise ValueError(f"discards: no room for {len(codes)} tiles in rows in zone {zone.name!r}")
        c = np.array([x + TILE_W_MM / 2, y + TILE_H_MM / 2 + float(rng.normal(0, 0.8))])
        a = np.radians(float(rng.normal(0, 2.5))) + (np.pi if rng.random() < 0.5 else 0.0)
        placed.append((code, -1, c, np.array([np.sin(a), -np.cos(a)])))
        x += TILE_W_MM + gap
    return placed


def _place_discards(
    zone: Zone, codes: tuple[str, ...], rng: np.random.Generator
) -> list[tuple[str, int, npt.NDArray[np.float64], npt.NDArray[np.float64]]]:
    poly = np.asarray(zone.polygon_mm, np.float64)
    lo, hi = poly.min(axis=0) + 22, poly.max(axis=0) - 22
    centres: list[npt.NDArray[np.float64]] = []
    placed = []
    for code in codes:
        for _ in range(400):
            c = rng.uniform(lo, hi)
            if cv2.pointPolygonTest(poly.astype(np.float32), (float(c[0]), float(c[1])), True) < 20:
                continue
            if all(np.linalg.norm(c - o) > 42 for o in centres):
                break
        else:
            raise ValueError(f"discards: no room for {len(codes)} tiles in zone {zone.name!r}")
        centres.append(c)
        a = rng.uniform(0, 2 * np.pi)
        placed.append((code, -1, c, np.array([np.cos(a), np.sin(a)])))
    return placed


# ----------------------------------------------------------------------------- drawing


def _paste(canvas: Image, img: Image, quad: npt.NDArray[np.float64]) -> None:
    """Affine-warp ``img`` onto the canvas quad (TL, TR, BR, BL), within its bounding box only."""
    x0, y0 = np.floor(quad.min(axis=0)).astype(int) - 1
    x1, y1 = np.ceil(quad.max(axis=0)).astype(int) + 1
    x0, y0 = max(x0, 0), max(y0, 0)
    x1, y1 = min(x1, canvas.shape[1]), min(y1, canvas.shape[0])
    if x1 <= x0 or y1 <= y0:
        return
    h, w = img.shape[:2]
    src = np.array([[0, 0], [w, 0], [w, h]], np.float32)
    m = cv2.getAffineTransform(src, (quad[:3] - [x0, y0]).astype(np.float32))
    size = (x1 - x0, y1 - y0)
    warped = cv2.warpAffine(img, m, size, flags=cv2.INTER_LINEAR)
    mask = cv2.warpAffine(np.full((h, w), 255, np.uint8), m, size, flags=cv2.INTER_LINEAR)
    roi = canvas[y0:y1, x0:x1]
    alpha = (mask.astype(np.float32) / 255.0)[..., None]
    roi[:] = (warped * alpha + roi * (1 - alpha)).astype(np.uint8)


def _felt(size: tuple[int, int], rng: np.random.Generator) -> Image:
    h, w = size
    base = np.array([rng.uniform(30, 70), rng.uniform(80, 130), rng.uniform(30, 70)], np.float32)
    if rng.random() < 0.3:
        base = np.array([rng.uniform(90, 140)] * 3, np.float32) * np.array([0.8, 0.9, 1.0], np.float32)
    small = rng.normal(0, 6, (max(2, h // 64), max(2, w // 64), 1)).astype(np.float32)
    shade = cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)[..., None]
    return np.asarray(np.clip(base + shade, 0, 255), np.uint8)


def _draw_tile(canvas: Image, face: Image, quad: npt.NDArray[np.float64], s: float, body: tuple[int, ...]) -> None:
    shadow = (quad + 1.6 * s).astype(np.int32)
    cv2.fillConvexPoly(canvas, shadow, (20, 30, 20), cv2.LINE_AA)
    cv2.fillConvexPoly(canvas, quad.astype(np.int32), body, cv2.LINE_AA)
    centre = quad.mean(axis=0)
    _paste(canvas, face, centre + (quad - centre) * 0.9)


def _draw_markers(canvas: Image, layout: Layout, s: float, margin: float) -> None:
    side = layout.marker_mm * s
    module = side / 6
    for mid, (x, y) in zip(MARKER_IDS, table_corners(layout.table_mm), strict=True):
        img = np.asarray(cv2.cvtColor(marker_image(mid, max(12, int(round(side)))), cv2.COLOR_GRAY2BGR), np.uint8)
        cx, cy = (x + margin) * s, (y + margin) * s
        quiet = side / 2 + module
        cv2.rectangle(canvas, (int(cx - quiet), int(cy - quiet)), (int(cx + quiet), int(cy + quiet)), (245, 245, 245), -1)
        half = side / 2
        quad = np.array([[cx - half, cy - half], [cx + half, cy - half], [cx + half, cy + half], [cx - half, cy + half]])
        _paste(canvas, img, quad)


def _finish(image: Image, rng: np.random.Generator) -> Image:
    img = image.astype(np.float32)
    h, w = img.shape[:2]
    gain = rng.uniform(0.8, 1.15)
    ramp = np.linspace(rng.uniform(-18, 0), rng.uniform(0, 18), w, dtype=np.float32)[None, :, None]
    img = img * gain + rng.uniform(-12, 12) + ramp
    sigma = rng.uniform(0.0, 0.8)
    if sigma > 0.2:
        img = np.asarray(cv2.GaussianBlur(img, (0, 0), sigma), np.float32)
    img += rng.normal(0, rng.uniform(1.5, 4.0), img.shape).astype(np.float32)
    return np.clip(img, 0, 255).astype(np.uint8)


def _hide(image: Image, hmat: npt.NDArray[np.float64], layout: Layout, ids: tuple[int, ...], rng: np.random.Generator) -> None:
    """Cover markers with a hand-coloured blob."""
    corners = table_corners(layout.table_mm)
    for mid in ids:
        p = cv2.perspectiveTransform(corners[mid].reshape(1, 1, 2).astype(np.float64), hmat).reshape(2)
        edge = cv2.perspectiveTransform(
            (corners[mid] + [layout.marker_mm, 0]).reshape(1, 1, 2).astype(np.float64), hmat
        ).reshape(2)
        r = max(8, int(np.linalg.norm(edge - p) * 1.3))
        colour = (int(rng.uniform(120, 170)), int(rng.uniform(150, 190)), int(rng.uniform(200, 235)))
        cv2.ellipse(image, (int(p[0]), int(p[1])), (r, int(r * 1.4)), rng.uniform(0, 180), 0, 360, colour, -1)


def render_table(
    layout: Layout,
    scene: Scene,
    seed: int = 0,
    view: View | None = None,
    faces: Faces | None = None,
    hide_markers: tuple[int, ...] = (),
    supersample: int = CAMERA_SUPERSAMPLE,
) -> RenderedTable:
    """Draw ``scene`` on ``layout`` as a phone at ``view`` sees it; deterministic in ``seed``.

    ``supersample``: the view is warped at that many times its size and each pixel averaged over
    its area, as a camera's sensor sums the light that falls on it (:data:`CAMERA_SUPERSAMPLE`);
    1 samples the table top at each pixel's centre alone, as the renderer did until the
    twenty-first session: far tiles, shrunk five-fold, alias into speckle no camera makes.
    """
    if supersample < 1:
        raise ValueError(f"supersample must be 1 or more, got {supersample}")
    rng = np.random.default_rng(seed)
    view = view or random_view(seed)
    faces = faces or drawn_faces()
    w, h = layout.table_mm
    margin = layout.marker_mm + 40.0
    s = 2.0 * view.size[0] / 1280
    canvas = _felt((int((h + 2 * margin) * s), int((w + 2 * margin) * s)), rng)
    _draw_markers(canvas, layout, s, margin)
    placed = []
    for zone in layout.zones:
        if zone.kind == "rack" and zone.name in scene.racks:
            placed += [(zone.name, *p) for p in _place_rack(zone, scene.racks[zone.name], layout, rng)]
        elif zone.kind == "discards" and scene.discards:
            place = _place_discards_in_rows if scene.dense_discards else _place_discards
            placed += [(zone.name, *p) for p in place(zone, scene.discards, rng)]
    unknown = set(scene.racks) - {z.name for z in layout.racks}
    if unknown:
        raise ValueError(f"scene names racks not in layout {layout.name!r}: {sorted(unknown)}")
    body = tuple(int(v) for v in rng.uniform([190, 215, 225], [215, 235, 245]))
    hmat = camera_homography(layout, view)
    truths = []
    for zone_name, code, group, c, u in placed:
        quad = tile_quad_mm(c, u)
        options = faces.get(code) or drawn_options(code)
        face = options[int(rng.integers(len(options)))]
        _draw_tile(canvas, np.ascontiguousarray(face), (quad + margin) * s, s, body)
        qpx = cv2.perspectiveTransform(quad.reshape(-1, 1, 2), hmat).reshape(4, 2)
        truths.append(TileTruth(code, zone_name, group, tuple((float(x), float(y)) for x, y in qpx), (float(c[0]), float(c[1]))))
    shift = np.array([[1 / s, 0, -margin], [0, 1 / s, -margin], [0, 0, 1]])
    floor = tuple(float(v) for v in rng.uniform(40, 110, 3))
    image = camera_warp(canvas, hmat @ shift, view.size, floor, supersample)
    _hide(image, hmat, layout, hide_markers, rng)
    image = _finish(image, rng)
    return RenderedTable(image, tuple(truths), scene, layout, hmat, view, tuple(hide_markers))
