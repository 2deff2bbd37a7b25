"""Synthetic table scenes with exact tile quads and codes, drawn from the artwork faces.

    python scripts/synth_scenes.py --out runs/synth --n 8        # write a few scenes to look at

A scene is a table texture (green felt, wood, cloth) with tiles laid out as a real table shows
them: rows of touching tiles (racks, exposures; some rows upside down), small grids, and loose
discards at any angle.  Each tile is its face inside an ivory border with a visible side
(thickness) and a soft drop shadow.  Then a mild camera perspective, lamp light falloff, a cast
shadow, blur, noise and JPEG compression.  ``Scene.quads`` are the tile-top corners clockwise
from the upright tile's top-left, in image pixels; ``Scene.codes`` their tile codes.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from vision.artwork import tile_faces  # noqa: E402

ASPECT = 4 / 3  # tile long side / short side


@dataclass(frozen=True)
class Scene:
    """One synthetic image with its truth: quads (N, 4, 2) float32 and N codes; ``ignored``: quads
    of tiles drawn but left out of the truth (mostly out of the picture), which a benchmark neither
    asks for nor holds against a detector."""

    image: np.ndarray
    quads: np.ndarray
    codes: tuple[str, ...]
    ignored: np.ndarray = field(default_factory=lambda: np.zeros((0, 4, 2), np.float32))


# ----------------------------------------------------------------------------- textures
def table_texture(w: int, h: int, rng: np.random.Generator) -> np.ndarray:
    """Green felt, wood grain, or a woven cloth of a random colour."""
    kind = rng.integers(3)
    if kind == 0:
        base = np.array([rng.uniform(40, 90), rng.uniform(100, 150), rng.uniform(30, 70)])
        img = base[None, None, :] + rng.normal(0, 8, (h, w, 1))
    elif kind == 1:
        base = np.array([rng.uniform(30, 70), rng.uniform(70, 120), rng.uniform(120, 180)])
        y = np.arange(h)[:, None] + rng.normal(0, 3, (1, w)).cumsum(axis=1) * 0.3
        grain = np.sin(y / rng.uniform(3, 9)) * rng.uniform(8, 20)
        img = base[None, None, :] + grain[:, :, None] + rng.normal(0, 4, (h, w, 1))
        if rng.random() < 0.5:
            img = img.transpose(1, 0, 2)[:h, :w] if h == w else img
    else:
        base = rng.uniform(30, 230, 3)
        yy, xx = np.mgrid[0:h, 0:w]
        p = rng.uniform(2, 5)
        weave = (np.sin(xx / p * math.pi) * np.sin(yy / p * math.pi)) * rng.uniform(4, 15)
        img = base[None, None, :] + weave[:, :, None] + rng.normal(0, 5, (h, w, 1))
    return np.ascontiguousarray(np.clip(img, 0, 255).astype(np.uint8))


# ----------------------------------------------------------------------------- tiles
def tile_sprite(face: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The tile top: the face inside an ivory border, upright, 96 x 72 scaled."""
    fh, fw = face.shape[:2]
    b = int(rng.integers(2, 7))
    ivory = np.array([rng.uniform(190, 235), rng.uniform(215, 245), rng.uniform(225, 250)])
    body = np.empty((fh + 2 * b, fw + 2 * b, 3), np.uint8)
    body[:] = ivory.astype(np.uint8)
    body[b : b + fh, b : b + fw] = face
    return body


def draw_tile(
    canvas: np.ndarray, sprite: np.ndarray, quad: np.ndarray, rng: np.random.Generator
) -> None:
    """Draw shadow, side and face of one tile whose top face lands on ``quad`` (tl, tr, br, bl)."""
    h, w = canvas.shape[:2]
    side = np.array([rng.uniform(-1, 1), rng.uniform(0.3, 1)]) * rng.uniform(0.05, 0.18)
    short = np.linalg.norm(quad[1] - quad[0])
    off = side * short * 2.2
    shadow = (quad + off * 1.6).astype(np.int32)
    lo = np.maximum(np.floor(np.minimum(quad.min(0), (quad + off * 1.6).min(0))) - 2, 0).astype(int)
    hi = np.minimum(np.ceil(np.maximum(quad.max(0), (quad + off * 1.6).max(0))) + 3, [w, h]).astype(
        int
    )
    if np.any(hi <= lo):
        return
    roi = canvas[lo[1] : hi[1], lo[0] : hi[0]]
    mask = np.zeros(roi.shape[:2], np.uint8)
    cv2.fillConvexPoly(mask, shadow - lo, 255)
    mask = cv2.GaussianBlur(mask, (5, 5), 0)
    roi[:] = (roi * (1 - mask[:, :, None] / 255.0 * 0.45)).astype(np.uint8)
    side_col = tuple(float(v) for v in rng.uniform(60, 220, 3))
    hull = cv2.convexHull(np.concatenate([quad, quad + off]).astype(np.float32)).reshape(-1, 2)
    cv2.fillConvexPoly(roi, (hull - lo).round().astype(np.int32), side_col, lineType=cv2.LINE_AA)
    sh, sw = sprite.shape[:2]
    src = np.array([[0, 0], [sw, 0], [sw, sh], [0, sh]], np.float32)
    m = cv2.getPerspectiveTransform(src, (quad - lo).astype(np.float32))
    size = (roi.shape[1], roi.shape[0])
    warped = cv2.warpPerspective(
        sprite, m, size, flags=cv2.INTER_AREA if short < 40 else cv2.INTER_LINEAR
    )
    wmask = cv2.warpPerspective(np.full((sh, sw), 255, np.uint8), m, size)
    a = wmask[:, :, None] / 255.0
    roi[:] = (roi * (1 - a) + warped * a).astype(np.uint8)


def upright_quad(cx: float, cy: float, short: float, angle: float) -> np.ndarray:
    """tl, tr, br, bl of a tile centred at (cx, cy), turned by ``angle`` (radians, clockwise)."""
    long = short * ASPECT
    up = np.array([math.sin(angle), -math.cos(angle)]) * long / 2
    right = np.array([math.cos(angle), math.sin(angle)]) * short / 2
    c = np.array([cx, cy])
    return np.array([c + up - right, c + up + right, c - up + right, c - up - right], np.float32)


# ----------------------------------------------------------------------------- layouts
def row_layout(w: int, h: int, short: float, rng: np.random.Generator) -> list[np.ndarray]:
    """A row (or a 1-3 row grid) of touching tiles at a random angle."""
    n = int(rng.integers(3, 15))
    rows = 1 if rng.random() < 0.7 else int(rng.integers(2, 4))
    angle = (
        rng.uniform(-math.pi, math.pi)
        if rng.random() < 0.5
        else rng.choice([0, math.pi / 2, math.pi, -math.pi / 2]) + rng.normal(0, 0.08)
    )
    gap = rng.uniform(0, 0.08) * short
    cx, cy = rng.uniform(0, w), rng.uniform(0, h)
    along = np.array([math.cos(angle), math.sin(angle)])
    across = np.array([-math.sin(angle), math.cos(angle)])
    flip = math.pi if rng.random() < 0.3 else 0.0
    quads = []
    for r in range(rows):
        for i in range(n):
            c = (
                np.array([cx, cy])
                + along * (i - n / 2) * (short + gap)
                + across * r * (short * ASPECT + gap)
            )
            turn = flip + (math.pi if rng.random() < 0.05 else 0.0)
            quads.append(upright_quad(c[0], c[1], short, angle + turn))
    return quads


def discard_layout(w: int, h: int, short: float, rng: np.random.Generator) -> list[np.ndarray]:
    """Loose tiles at any angle, placed without overlapping."""
    return [
        upright_quad(
            rng.uniform(0, w),
            rng.uniform(0, h),
            short * rng.uniform(0.9, 1.1),
            rng.uniform(-math.pi, math.pi),
        )
        for _ in range(int(rng.integers(3, 16)))
    ]


IN_VIEW = 0.6
"""A tile is in a scene's truth when at least this share of its area lies in the picture."""


def in_view(quads: np.ndarray, w: int, h: int) -> np.ndarray:
    """Per quad, whether at least :data:`IN_VIEW` of its area lies inside a ``w`` x ``h`` picture."""
    keep = np.zeros(len(quads), bool)
    for k, q in enumerate(quads):
        m = np.zeros((h, w), np.uint8)
        cv2.fillConvexPoly(m, np.asarray(q).round().astype(np.int32), 1)
        keep[k] = int(m.sum()) >= IN_VIEW * cv2.contourArea(np.asarray(q, np.float32))
    return keep


def drop_overlaps(quads: list[np.ndarray], w: int, h: int) -> list[np.ndarray]:
    """Keep quads (in order) that do not overlap an earlier kept one and mostly lie in view."""
    occ = np.zeros((h, w), np.uint8)
    kept = []
    for q in quads:
        m = np.zeros((h, w), np.uint8)
        cv2.fillConvexPoly(m, q.round().astype(np.int32), 1)
        area = cv2.contourArea(q.astype(np.float32))
        inside = int(m.sum())
        if inside < IN_VIEW * area or np.logical_and(m, occ).sum() > 0.03 * area:
            continue
        occ |= m
        kept.append(q)
    return kept


# ----------------------------------------------------------------------------- scene
def american_scene_faces(
    seed: int, styles: tuple[str, ...] = ("km-traditional", "gnome-smooth")
) -> dict[str, list[np.ndarray]]:
    """An American set's faces for whole scenes: jokers, flowers, soaps, plain backs and
    index-numbered number and wind tiles (``vision.american.synth_faces``, four of each) over the
    artwork ``styles``.  The vision benchmark draws its American scenes with seed 21 + 777; the
    localiser's training (``--american``) with its run's seed + 1000; ``bench_table --faces
    american:STYLE`` with 4242; the classifier's ``american-mix`` table pools with 9100 + k."""
    from vision import american

    bases: dict[str, list[np.ndarray]] = {}
    for style in styles:
        for code, imgs in tile_faces(style).items():
            bases.setdefault(code, []).extend(np.array(i) for i in imgs)
    return american.synth_faces(seed=seed, per_code=4, bases=bases)


class SceneMaker:
    """Draws scenes from a face library (default: every training artwork style).

    ``back_share``: each tile is a plain back (``BK``, when the library has backs) with this
    probability, a uniform draw of ``codes`` otherwise; 0 (the default) draws every tile from
    ``codes`` and leaves the random stream as it always was.

    ``in_view``: the camera's perspective only ever widens the drawn table (no mirrored edge
    fills the picture's borders), and a tile that the perspective moves mostly out of the picture
    leaves the truth (:func:`in_view`).  False (the default) draws the scenes the committed models
    trained on and the benchmarks measured until the eighteenth session: the perspective may pull
    the picture's edge inwards, its borders then filled with the table's mirror image (tiles with
    no truth), and tiles it moves out of the picture stay in the truth.
    """

    def __init__(
        self,
        seed: int = 0,
        faces: dict[str, list[np.ndarray]] | None = None,
        codes: list[str] | None = None,
        back_share: float = 0.0,
        in_view: bool = False,
    ) -> None:
        self.in_view = in_view
        self.faces = faces if faces is not None else tile_faces()
        self.codes = codes if codes is not None else sorted(self.faces)
        self.rng = np.random.default_rng(seed)
        self.back_share = back_share if "BK" in self.faces else 0.0

    def scene(
        self,
        w: int,
        h: int,
        rng: np.random.Generator | None = None,
        short: tuple[float, float] = (10, 42),
        layouts: tuple[int, int] = (1, 6),
    ) -> Scene:
        """One scene: ``layouts`` rows/grids/discard groups of tiles ``short`` px across."""
        rng = self.rng if rng is None else rng
        img = table_texture(w, h, rng)
        s = math.exp(rng.uniform(math.log(short[0]), math.log(short[1])))
        quads: list[np.ndarray] = []
        for _ in range(int(rng.integers(layouts[0], layouts[1]))):
            quads += (
                row_layout(w, h, s, rng) if rng.random() < 0.7 else discard_layout(w, h, s, rng)
            )
        quads = drop_overlaps(quads, w, h)
        if self.back_share > 0:
            codes = ["BK" if rng.random() < self.back_share else self.codes[int(rng.integers(len(self.codes)))]
                     for _ in quads]
        else:
            codes = [self.codes[int(rng.integers(len(self.codes)))] for _ in quads]
        order = np.argsort([q[:, 1].mean() for q in quads])  # far tiles first
        for i in order:
            faces = self.faces[codes[i]]
            draw_tile(img, tile_sprite(faces[int(rng.integers(len(faces)))], rng), quads[i], rng)
        arr = np.asarray(quads, np.float32).reshape(-1, 4, 2)
        img, arr = camera_effects(img, arr, rng, widen_only=self.in_view)
        if self.in_view and len(arr):
            keep = in_view(arr, w, h)
            codes = [c for c, k in zip(codes, keep, strict=True) if k]
            return Scene(img, arr[keep], tuple(codes), arr[~keep])
        return Scene(img, arr, tuple(codes))


OUTWARDS = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], np.float64)
"""Each picture corner's outward direction (top-left, top-right, bottom-right, bottom-left)."""


def camera_effects(
    img: np.ndarray, quads: np.ndarray, rng: np.random.Generator, widen_only: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Mild perspective, lamp falloff, a cast shadow, blur, noise, JPEG.

    ``widen_only``: the perspective moves the drawn table's corners outwards only, so the warped
    table covers the whole picture and no border is filled in (the same random draws)."""
    h, w = img.shape[:2]
    if rng.random() < 0.6:
        d = rng.uniform(-0.08, 0.08, (4, 2)) * [w, h]
        if widen_only:
            d = np.abs(d) * OUTWARDS
        src = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
        m = cv2.getPerspectiveTransform(src, (src + d).astype(np.float32))
        img = cv2.warpPerspective(img, m, (w, h), borderMode=cv2.BORDER_REFLECT)
        if len(quads):
            quads = cv2.perspectiveTransform(quads.reshape(-1, 1, 2), m).reshape(-1, 4, 2)
    out = img.astype(np.float32)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    lx, ly = rng.uniform(0, w), rng.uniform(0, h)
    r = np.sqrt((xx - lx) ** 2 + (yy - ly) ** 2) / max(w, h)
    out *= (1.15 - rng.uniform(0.2, 0.6) * r)[:, :, None]
    if rng.random() < 0.5:
        pts = (rng.uniform(0, 1, (4, 2)) * [w, h]).astype(np.int32)
        m = np.zeros((h, w), np.float32)
        cv2.fillConvexPoly(m, cv2.convexHull(pts), 1.0)
        m = cv2.GaussianBlur(m, (0, 0), rng.uniform(2, 10))
        out *= (1 - m * rng.uniform(0.2, 0.5))[:, :, None]
    if rng.random() < 0.4:
        out = cv2.GaussianBlur(out, (0, 0), rng.uniform(0.4, 1.2))
    out += rng.normal(0, rng.uniform(1, 5), out.shape)
    out8 = np.clip(out, 0, 255).astype(np.uint8)
    if rng.random() < 0.6:
        ok, enc = cv2.imencode(".jpg", out8, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(40, 95))])
        out8 = cv2.imdecode(enc, cv2.IMREAD_COLOR)
    return out8, quads.astype(np.float32)


def layout_photo(
    faces: dict[str, np.ndarray], rng: np.random.Generator, touching: bool = False, layout: str = "american",
    short: float = 60.0,
) -> tuple[np.ndarray, np.ndarray]:
    """An enrollment layout (:data:`vision.enroll.LAYOUTS`) as a phone photographs it on a table:
    tiles with their sides and shadows (:func:`draw_tile`) on felt, wood or woven cloth
    (:func:`table_texture`), a lamp's falloff, perhaps a cast shadow, a little perspective, blur,
    noise, JPEG (:func:`camera_effects`); the tiles apart, or ``touching`` in their rows.
    ``(image, true quads in layout order)``."""
    from vision.enroll import layout_codes, row_lengths

    long, gap, margin = short * 4 / 3, short / 3, 2.2 * short
    pitch = short if touching else short + gap
    rows = row_lengths(layout)
    w, h = int(2 * margin + max(rows) * pitch), int(2 * margin + len(rows) * (long + gap))
    img = table_texture(w, h, rng)
    quads = []
    for r, row in enumerate(rows):
        for c in range(row):
            x = margin + c * pitch + (0 if touching else rng.uniform(-3, 3))
            y = margin + r * (long + gap) + rng.uniform(-3, 3)
            quads.append(np.array([[x, y], [x + short, y], [x + short, y + long], [x, y + long]], np.float32))
    for q, code in zip(quads, layout_codes(layout), strict=True):
        draw_tile(img, tile_sprite(np.asarray(faces[code]), rng), q, rng)
    return camera_effects(img, np.array(quads), rng)


def main() -> None:
    ap = argparse.ArgumentParser(description="write synthetic scenes with their quads drawn")
    ap.add_argument("--out", type=Path, default=REPO / "runs" / "synth")
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--size", type=int, nargs=2, default=(320, 320))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    maker = SceneMaker(args.seed)
    for i in range(args.n):
        sc = maker.scene(*args.size)
        vis = sc.image.copy()
        for q in sc.quads:
            cv2.polylines(vis, [q.round().astype(np.int32)], True, (0, 0, 255), 1)
            cv2.circle(vis, tuple(int(v) for v in q[0]), 2, (255, 0, 0), -1)
        cv2.imwrite(str(args.out / f"scene{i}.png"), np.hstack([sc.image, vis]))
        print(f"scene{i}: {len(sc.codes)} tiles")


if __name__ == "__main__":
    main()
