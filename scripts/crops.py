"""Training crops for the tile classifier (64 x 48, long side vertical).

Two sources:

* real photos: every labelled box of tiles-photos-v4 (CC BY 4.0 "Chinese Mahjong Detection" v4,
  Roboflow user riichimahjongdetection), cut with padding into a fixed-size portrait patch once
  (:func:`photo_patches`, cached by :func:`cached_photo_patches`), then jittered on the fly
  (:func:`jitter_patch`, :func:`photo_crop`);
* artwork: a face from :func:`vision.artwork.tile_faces` drawn as a tile on a table (tile body,
  touching neighbours, perspective, lamp light, shadow, blur, noise, JPEG) and cut by a jittered
  quad the way the localiser would (:func:`synth_crop`, :func:`synth_chunk`); jokers, flowers,
  backs and soaps are drawn fresh each time by :mod:`vision.american`.

Also the poor pictures a crop is put through (:data:`BAD_LIGHTS`, :func:`bad_light`).  The crops
cut where the photo pipeline localises are :mod:`scripts.localised_crops`'; where the cached
crops live is :mod:`scripts.crop_cache`'s.  Torch-free.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from scripts.crop_cache import cache_path
from scripts.photos import CLASS_CODES  # class id -> tile code: the one table
from vision import american
from vision.artwork import FACE_H, FACE_W, shared_dir
from vision.classify import CROP_H, CROP_W
from vision.light import POOR_PICTURES

Image = npt.NDArray[np.uint8]


PAD = 0.2
PATCH_H, PATCH_W = round(CROP_H * (1 + 2 * PAD)), round(CROP_W * (1 + 2 * PAD))
TABLES = ((40, 110, 40), (50, 90, 130), (70, 70, 70), (120, 60, 30), (90, 130, 160), (30, 60, 20))


def photos_root() -> Path:
    return shared_dir() / "tiles-photos-v4"


def read_label_file(path: Path, width: int, height: int) -> list[tuple[str, tuple[float, ...]]]:
    """YOLO rows -> ``(code, (x1, y1, x2, y2))`` in pixels; polygon rows give their bbox."""
    out = []
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        vals = [float(v) for v in parts[1:]]
        cid = int(parts[0])
        if cid >= len(CLASS_CODES) or len(vals) < 4 or (len(vals) > 4 and len(vals) % 2):
            raise ValueError(f"{path}:{lineno}: bad label row {line!r}")
        if len(vals) == 4:
            xc, yc, w, h = vals
            box = (xc - w / 2, yc - h / 2, xc + w / 2, yc + h / 2)
        else:
            xs, ys = vals[0::2], vals[1::2]
            box = (min(xs), min(ys), max(xs), max(ys))
        out.append(
            (CLASS_CODES[cid], (box[0] * width, box[1] * height, box[2] * width, box[3] * height))
        )
    return out


def box_quad(box: tuple[float, ...], pad: float) -> npt.NDArray[np.float32]:
    """A padded axis-aligned box as a portrait quad, clockwise from the top-left."""
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    x1, x2, y1, y2 = x1 - pad * w, x2 + pad * w, y1 - pad * h, y2 + pad * h
    q = np.array([[x1, y1], [x2, y1], [x2, y2], [x1, y2]], np.float32)
    if w > h * 1.1:  # lying tile: start at the bottom-left so the long side runs down the crop
        q = np.roll(q, -3, axis=0)
    return q


def photo_patches(split: str, limit: int | None = None) -> tuple[Image, list[str]]:
    """Every labelled tile of one split as a padded portrait patch ``(N, PATCH_H, PATCH_W, 3)``."""
    root = photos_root() / split
    images = sorted((root / "images").iterdir())[:limit]
    dst = np.array([[0, 0], [PATCH_W, 0], [PATCH_W, PATCH_H], [0, PATCH_H]], np.float32)
    patches, codes = [], []
    for img_path in images:
        img = cv2.imread(str(img_path))
        if img is None:
            continue
        label = root / "labels" / (img_path.stem + ".txt")
        if not label.is_file():
            continue
        for code, box in read_label_file(label, img.shape[1], img.shape[0]):
            m = cv2.getPerspectiveTransform(box_quad(box, PAD), dst)
            patches.append(
                cv2.warpPerspective(img, m, (PATCH_W, PATCH_H), borderMode=cv2.BORDER_REPLICATE)
            )
            codes.append(code)
    return np.stack(patches), codes


def jitter_patch(patch: Image, rng: np.random.Generator, amount: float = 1.0) -> Image:
    """A 64 x 48 crop of a padded patch with random scale, shift and small rotation."""
    s = 1.0 + rng.uniform(-0.08, 0.12) * amount
    dx, dy = rng.uniform(-0.07, 0.07, 2) * amount
    ang = rng.uniform(-6, 6) * amount
    cx, cy = PATCH_W / 2 + dx * CROP_W, PATCH_H / 2 + dy * CROP_H
    m = cv2.getRotationMatrix2D((cx, cy), ang, 1.0 / s)
    m[0, 2] += CROP_W / 2 - cx
    m[1, 2] += CROP_H / 2 - cy
    return cv2.warpAffine(
        patch, m, (CROP_W, CROP_H), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )


def _table(rng: np.random.Generator, h: int, w: int) -> Image:
    base = np.array(TABLES[rng.integers(len(TABLES))], np.float32) + rng.uniform(-25, 25, 3)
    img = base[None, None, :] + rng.normal(0, rng.uniform(2, 10), (h, w, 3))
    if rng.random() < 0.3:  # wood grain
        img += (np.sin(np.arange(w) / rng.uniform(2, 6))[None, :, None] * 12).astype(np.float32)
    return np.clip(img, 0, 255).astype(np.uint8)


def _fresh_face(
    code: str, faces: dict[str, list[Image]], rng: np.random.Generator, extras: bool = True
) -> Image:
    if not extras:
        return faces[code][rng.integers(len(faces[code]))]
    if code == "J":
        return american.joker(rng)
    if code == "F":
        return american.flower(rng)
    if code == "BK":
        return american.back(rng)
    if code == "WD" and rng.random() < 0.3:
        return american.soap(rng)
    face = faces[code][rng.integers(len(faces[code]))]
    if code[0].isdigit() and rng.random() < 0.2:
        return american.with_index(face, code[0], rng)
    return face


def _draw_tile(canvas: Image, face: Image, x: int, y: int, rng: np.random.Generator) -> None:
    """A tile at ``(x, y)``: its body (thickness in a random direction) then its face."""
    t = int(rng.integers(0, 10))
    if t:
        body = american.BACK_COLOURS[rng.integers(len(american.BACK_COLOURS))]
        ox, oy = int(rng.integers(-t, t + 1)), t
        cv2.rectangle(canvas, (x + ox, y + oy), (x + ox + FACE_W, y + oy + FACE_H), body, -1)
    canvas[y : y + FACE_H, x : x + FACE_W] = face


def _scene(
    code: str,
    faces: dict[str, list[Image]],
    codes: list[str],
    rng: np.random.Generator,
    extras: bool = True,
) -> Image:
    """A 3 x 3 tile neighbourhood on a table, the target tile in the middle cell."""
    gap = int(rng.integers(0, 6))
    ch, cw = FACE_H + gap, FACE_W + gap
    canvas = _table(rng, 3 * ch + 20, 3 * cw + 20)
    for r in range(3):
        for c in range(3):
            if (r, c) != (1, 1) and rng.random() > 0.45:
                continue
            other = code if (r, c) == (1, 1) else codes[rng.integers(len(codes))]
            _draw_tile(
                canvas, _fresh_face(other, faces, rng, extras), 10 + c * cw, 10 + r * ch, rng
            )
    return canvas


def _photometric(img: Image, rng: np.random.Generator) -> Image:
    h, w = img.shape[:2]
    out = img.astype(np.float32)
    gx, gy = rng.uniform(-0.5, 0.5, 2)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    light = 1 + gx * (xx / w - 0.5) + gy * (yy / h - 0.5)
    out *= (light * rng.uniform(0.6, 1.25))[:, :, None]
    out *= rng.uniform(0.85, 1.15, 3)[None, None, :]
    if rng.random() < 0.35:  # a shadow edge across the tile
        a, b = rng.uniform(-1, 1, 2)
        mask = (xx - w / 2) * a + (yy - h / 2) * b > rng.uniform(-10, 10)
        out[mask] *= rng.uniform(0.45, 0.8)
    out += rng.normal(0, rng.uniform(0, 8), out.shape)
    out = np.clip(out, 0, 255).astype(np.uint8)
    if rng.random() < 0.5:  # low resolution: a 25-40 px wide tile
        sw = int(rng.integers(20, 44))
        small = cv2.resize(out, (sw, round(sw * h / w)), interpolation=cv2.INTER_AREA)
        out = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    if rng.random() < 0.3:
        out = cv2.GaussianBlur(out, (3, 3), rng.uniform(0.3, 1.2))
    if rng.random() < 0.5:
        ok, enc = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(30, 90))])
        out = cv2.imdecode(enc, cv2.IMREAD_COLOR)
    return out


BAD_LIGHTS = POOR_PICTURES
"""What :func:`bad_light` does to a crop, one at a time, at random strengths: the poor pictures of
``vision.light.POOR_PICTURES``, which cost the most on valid photos beside a lamp's tint and a dim
room (docs/recognition.md "Under a lamp" and "Poor pictures")."""


def bad_light(img: Image, rng: np.random.Generator, kind: str | None = None) -> Image:
    """``img`` as a poor picture takes it, one of :data:`BAD_LIGHTS` (``kind``, else at random):
    ``over`` over-exposed (x1.25-1.7, + 0-30, clipped: the glossy faces blown out under a strong
    lamp), ``washed`` washed out (x0.45-0.8, + 40-110: glare, haze, a webcam's raised blacks),
    ``side`` lit from one side (x1.1 falling to x0.35-0.75 across, in any direction), ``blur``
    out of focus or shaken (Gaussian, sigma 0.7-1.6 px at the crop's size)."""
    kind = kind or BAD_LIGHTS[int(rng.integers(len(BAD_LIGHTS)))]
    if kind == "blur":
        return np.asarray(cv2.GaussianBlur(img, (0, 0), rng.uniform(0.7, 1.6)), np.uint8)
    out = img.astype(np.float32)
    if kind == "over":
        out = out * rng.uniform(1.25, 1.7) + rng.uniform(0, 30)
    elif kind == "washed":
        out = out * rng.uniform(0.45, 0.8) + rng.uniform(40, 110)
    elif kind == "side":
        h, w = img.shape[:2]
        a = rng.uniform(0, 2 * np.pi)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        t = ((xx / w - 0.5) * np.cos(a) + (yy / h - 0.5) * np.sin(a)) + 0.5  # 0..1 across, about
        out = out * (1.1 + (rng.uniform(0.35, 0.75) - 1.1) * np.clip(t, 0, 1))[:, :, None]
    else:
        raise ValueError(f"unknown light {kind!r} (known: {', '.join(BAD_LIGHTS)})")
    return np.clip(out, 0, 255).astype(np.uint8)


def synth_crop(
    code: str, faces: dict[str, list[Image]], rng: np.random.Generator, extras: bool = True
) -> Image:
    """One augmented 64 x 48 crop of ``code`` drawn from artwork ``faces``.

    ``extras``: draw jokers/flowers/backs fresh, sometimes a soap WD or corner index numerals;
    without, every face (target and neighbours) comes from ``faces`` alone.
    """
    codes = list(faces)
    scene = _scene(code, faces, codes, rng, extras)
    gap = (scene.shape[1] - 20) // 3 - FACE_W
    x0, y0 = 10 + FACE_W + gap, 10 + FACE_H + gap
    quad = np.array(
        [[x0, y0], [x0 + FACE_W, y0], [x0 + FACE_W, y0 + FACE_H], [x0, y0 + FACE_H]], np.float32
    )
    quad += rng.normal(0, 0.04, (4, 2)).astype(np.float32) * np.array([FACE_W, FACE_H], np.float32)
    quad += rng.uniform(-0.05, 0.05, 2).astype(np.float32) * np.array([FACE_W, FACE_H], np.float32)
    dst = np.array([[0, 0], [CROP_W, 0], [CROP_W, CROP_H], [0, CROP_H]], np.float32)
    m = cv2.getPerspectiveTransform(quad, dst)
    crop = cv2.warpPerspective(
        scene, m, (CROP_W, CROP_H), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE
    )
    crop = _photometric(crop, rng)
    return np.ascontiguousarray(np.rot90(crop, 2)) if rng.random() < 0.5 else crop


def photo_crop(patch: Image, rng: np.random.Generator) -> Image:
    """A training crop from a real photo patch: jitter, light, blur, random half turn."""
    crop = jitter_patch(patch, rng)
    if rng.random() < 0.5:
        crop = _photometric(crop, rng)
    return np.ascontiguousarray(np.rot90(crop, 2)) if rng.random() < 0.5 else crop


def cached_photo_patches(split: str) -> tuple[Image, npt.NDArray[np.int64], list[str]]:
    """:func:`photo_patches` cached on disk: ``(patches, class indices, codes)``."""
    from companion.rules.tiles import ALL_CODES

    path = cache_path(f"photos_{split}_pad{PAD}.npz")
    if not path.is_file():
        patches, codes = photo_patches(split)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, x=patches, y=np.array([ALL_CODES.index(c) for c in codes]))
    with np.load(path) as d:
        x, y = d["x"], d["y"]
    return x, y, [ALL_CODES[int(k)] for k in y]


def synth_chunk(job: tuple[int, list[str]]) -> Image:
    """Worker: synthetic crops for a list of codes from one seed (for a process pool)."""
    from vision.artwork import tile_faces

    cv2.setNumThreads(1)
    seed, codes = job
    faces = {k: list(v) for k, v in tile_faces().items()}
    rng = np.random.default_rng(seed)
    return np.stack([synth_crop(code, faces, rng) for code in codes])
