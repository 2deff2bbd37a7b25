"""Training crops for the tile classifier (64 x 48, long side vertical).

Two sources:

* real photos: every labelled box of tiles-photos-v4 (CC BY 4.0 "Chinese Mahjong Detection" v4,
  Roboflow user riichimahjongdetection), cut with padding into a fixed-size portrait patch once
  (:func:`photo_patches`), then jittered on the fly (:func:`jitter_patch`);
* artwork: a face from :func:`vision.artwork.tile_faces` drawn as a tile on a table (tile body,
  touching neighbours, perspective, lamp light, shadow, blur, noise, JPEG) and cut by a jittered
  quad the way the localiser would (:func:`synth_crop`); jokers, flowers, backs and soaps are
  drawn fresh each time by :mod:`vision.american`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

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


def cache_path(name: str) -> Path:
    root = Path(os.environ.get("COMPANION_CACHE", Path.home() / ".cache" / "siamese-companion"))
    return root / "crops" / name


def synth_chunk(job: tuple[int, list[str]]) -> Image:
    """Worker: synthetic crops for a list of codes from one seed (for a process pool)."""
    from vision.artwork import tile_faces

    cv2.setNumThreads(1)
    seed, codes = job
    faces = {k: list(v) for k, v in tile_faces().items()}
    rng = np.random.default_rng(seed)
    return np.stack([synth_crop(code, faces, rng) for code in codes])


def localised_photo_crops(split: str, drop_loose: bool = True) -> tuple[Image, npt.NDArray[np.int64]]:
    """Crops of one split's photos cut the way the pipeline cuts them: at the quads the photo
    localiser finds (``TileRecognizer.localize``, its scales and all), each labelled with the
    code of the labelled box it overlaps at IoU >= 0.5 (unmatched quads are left out).  Photos
    with loose boxes (the export's 45-degree turns) are left out unless ``drop_loose`` is False.
    Cached on disk, keyed by the localiser file's sha256 and the pipeline's scale settings.
    ``(crops, class indices)``."""
    from scripts.localizer_targets import loose_boxes
    from scripts.photos import load_split
    from vision.pipeline import TileRecognizer

    digest = _pipeline_digest()
    path = cache_path(f"localised_{split}_{digest}{'_all' if not drop_loose else ''}.npz")
    if not path.is_file():
        rec = TileRecognizer(models_dir(), threads=2)
        crops, labels = [], []
        for s in load_split(split):
            if drop_loose and loose_boxes(s.boxes):
                continue
            img = cv2.imread(str(s.image_path))
            if img is None or len(s.boxes) == 0:
                continue
            _cut_where_localised(rec, img, s.boxes, s.codes, crops, labels)
        _save(path, crops, labels)
    with np.load(path) as d:
        return d["x"], d["y"]


PILE_SCALES = (1.0, 1.5, 1.8)
"""The scales (times a photo's default, :data:`vision.scales.PHOTO_SCALES`' unit) at which
:func:`unlabelled_photo_tiles` reads a photo."""
PILE_SURE = 0.8
"""The confidence at which :func:`unlabelled_photo_tiles` takes a tile it reads as a tile."""


def unlabelled_photo_tiles(split: str) -> dict[str, npt.NDArray[np.float32]]:
    """The tiles a split's photos show and their labels leave out, by image file name: quads
    ``(N, 4, 2)`` in photo pixels of every tile the photo pipeline reads at any of
    :data:`PILE_SCALES` with a score of :data:`vision.pipeline.MIN_SCORE` and a confidence of
    :data:`PILE_SURE` or more, whose box overlaps no labelled box (IoU under 0.1).

    Many photos label a rack's row and leave the face-up discards heaped beside it out; trained
    as they are, they teach the photo localiser that a pile of tiles is table, and it finds few
    of them at a photo's first scale (docs/recognition.md, Known gaps).  Read at 1.8 times that
    scale, 12 of valid's photos showed 199 such tiles (thirty-eighth session; 48 drawn at random
    from a like set were all tiles).  ``train_localizer.py --tiles-ignored`` takes them out of the
    heat loss, ``--tiles-labelled`` takes them as labelled tiles (neither fine-tune kept,
    models/MODEL_CARD.md).  Cached on disk, keyed as the localised crops are
    (:func:`_pipeline_digest`) and by these settings."""
    from scripts.photos import load_split
    from vision.pipeline import TileRecognizer

    path = cache_path(f"unlabelled_{split}_{_pipeline_digest()}_{'-'.join(map(str, PILE_SCALES))}_{PILE_SURE}.npz")
    if not path.is_file():
        found = unlabelled_tiles_in(TileRecognizer(models_dir(), threads=2), load_split(split))
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, names=np.array([n for n, q in found.items() for _ in q], dtype=str),
                 quads=np.concatenate([np.zeros((0, 4, 2), np.float32), *found.values()]))
    with np.load(path) as d:
        names = d["names"]
        return {str(n): d["quads"][names == n] for n in np.unique(names)}


def unlabelled_tiles_in(rec: Any, samples: Iterable[Any]) -> dict[str, npt.NDArray[np.float32]]:
    """:func:`unlabelled_photo_tiles` of these photos (:class:`scripts.photos.PhotoSample`), read
    by ``rec`` (a :class:`vision.pipeline.TileRecognizer`), uncached; photos with none are left out."""
    from vision.detect import quad_iou_boxes
    from vision.pipeline import MIN_SCORE

    out: dict[str, npt.NDArray[np.float32]] = {}
    for s in samples:
        img = cv2.imread(str(s.image_path))
        if img is None:
            continue
        quads = []
        for f in PILE_SCALES:
            det, obj = rec._read_at(img, None, f)
            sure = (det.confidence * obj >= MIN_SCORE) & (det.confidence >= PILE_SURE)
            if len(s.boxes) and len(det):
                sure &= quad_iou_boxes(det.boxes.astype(np.float32), s.boxes.astype(np.float32)).max(axis=1) < 0.1
            quads.append(det.quads[sure])
        found = np.concatenate(quads).astype(np.float32)
        if len(found):
            out[s.image_path.name] = found
    return out


def _pipeline_digest() -> str:
    """12 hex digits naming how the photo pipeline localises: the photo localiser file's sha256, the
    settings that move its quads (scales, unsqueezing, angle refinement, doubtful turns, second
    boxes, grown backs, backs found as plain patches, small quads grown to their rims, backs of the
    table's colour, tiles boxed in halves) and the classifier's sha256 (it chooses how far a squeezed photo is
    unsqueezed, and which doubtful turns are kept)."""
    import hashlib

    from vision import backs, detect, mend, photo_turns, pipeline, rims, scales

    h = hashlib.sha256((models_dir() / "localizer.onnx").read_bytes())
    h.update(repr((scales.PHOTO_SCALES, scales.READS_WELL, pipeline.MIN_SCORE)).encode())
    h.update(repr((scales.SMALL_TILE_PX, scales.SMALL_TILE_SCALES)).encode())  # thirty-third session
    # the seventh session's unsqueezing and angle refinement change the quads too
    h.update(repr((scales.SQUEEZED_ASPECT, scales.UNSQUEEZE_ASPECTS, detect.ANGLE_COHERENCE,
                   detect.ANGLE_REACH)).encode())
    h.update(repr(detect.COVERED_SHARE).encode())  # the ninth session's second-box drop
    # the nineteenth session's doubtful turns, the thirty-fourth's tie, grown backs and table gaps
    h.update(repr((photo_turns.WEAK_COHERENCE, photo_turns.DOUBT_TURN, photo_turns.TURN_TIE, mend.SMALL_BACK_AREA,
                   mend.BACK_NEIGHBOURS, backs.GAP_SHARE, backs.GAP_COLOUR,
                   backs.GAP_SAMPLE)).encode())
    # the thirty-fifth session's backs found as plain patches
    h.update(repr((backs.PLAIN_BACKS, backs.PLAIN_BACK_SURE, backs.PLAIN_PATCH_PX, backs.PLAIN_PATCH_FILL, backs.PLAIN_PATCH_CORNERS,
                   backs.PLAIN_PATCH_AREA, backs.PLAIN_PATCH_ASPECT, backs.PLAIN_PATCH_EDGES)).encode())
    # the thirty-sixth session's small quads grown to their rims
    h.update(repr((mend.SMALL_QUAD_AREA, mend.RIM_GAIN, mend.RIM_OVERLAP, rims.RIM_SAMPLES,
                   rims.RIM_STEP)).encode())
    # the thirty-ninth session's backs of the table's colour kept, tiles boxed in two halves read whole,
    # and coloured faces read as white dragons read again
    h.update(repr((backs.PANEL_TEXTURE, backs.PANEL_HUE, backs.PANEL_LIGHT, backs.PANEL_REACH,
                   mend.HALVES_JOINED, mend.HALF_FILL, mend.HALF_SIZE, mend.HALF_TURN,
                   mend.HALF_TIE, backs.WHITE_CHROMA, backs.PLAIN_COLOURED)).encode())
    # the forty-first session's tiles boxed across their length, turned and read whole
    h.update(repr((mend.ACROSS_TURNED, mend.ACROSS_ASPECT, mend.ACROSS_FIT, mend.ACROSS_READ,
                   mend.ACROSS_GAIN)).encode())
    # since the ninth session a squeezed photo is unsqueezed at the factor the classifier reads surest
    h.update((models_dir() / "classifier.onnx.sha256").read_bytes())
    return h.hexdigest()[:12]


TRAIN_MODELS_ENV = "COMPANION_TRAIN_MODELS"
"""The models folder the localised crops are cut with, when set (``scripts/train_all.py`` sets it
to the chain's own folder, so that a run cuts its crops with the files the runs before it made,
as the chain's runs did); else the repository's ``models/``."""


def models_dir() -> Path:
    """The models folder the localised crops are cut with (:data:`TRAIN_MODELS_ENV`)."""
    from vision import pipeline

    env = os.environ.get(TRAIN_MODELS_ENV)
    return Path(env) if env else pipeline.REPO / "models"


def localised_scene_crops(
    seed: int, scenes: int, american: float = 0.5, in_view: bool = False
) -> tuple[Image, npt.NDArray[np.int64]]:
    """Crops of ``scenes`` synthetic 640x480 scenes (:class:`scripts.synth_scenes.SceneMaker`, tiles
    20-56 px across, upright rows and loose discards) cut the way the pipeline cuts a photo's
    tiles: at the quads ``TileRecognizer.localize`` finds, each labelled with the true tile it
    overlaps at IoU >= 0.5 (unmatched quads are left out).  A share ``american`` of the scenes is
    drawn with an American set's faces (``american_scene_faces(seed + 1000)``, as the localiser's
    ``--american`` draws them; the vision benchmark's American faces use another seed), the rest
    with every training artwork style.  ``in_view``: the scenes are drawn as the vision benchmark
    draws its own (``SceneMaker(in_view=True)``: no mirrored border, and a tile the picture's edge
    cuts stays in while most of it shows), so the crops hold tiles cut by the picture's edge, cut
    where the pipeline cuts them (:func:`scene_crops_cut` says which).  Cached on disk, keyed as
    :func:`localised_photo_crops` plus the arguments.  ``(crops, class indices)``."""
    from scripts.bench_vision_tally import cut_by_edge
    from scripts.synth_scenes import SceneMaker, american_scene_faces
    from vision.pipeline import TileRecognizer

    path = _scene_path(seed, scenes, american, in_view)
    if not path.is_file():
        rec = TileRecognizer(models_dir(), threads=2)
        rng = np.random.default_rng(seed)
        plain = SceneMaker(seed=seed, in_view=in_view)
        am = (SceneMaker(seed=seed + 1, faces=american_scene_faces(seed + 1000), in_view=in_view)
              if american > 0 else plain)
        crops, labels, cut = [], [], []
        for _ in range(scenes):
            maker = am if rng.random() < american else plain
            sc = maker.scene(640, 480, rng, short=(20.0, 56.0), layouts=(2, 7))
            truth = np.concatenate([sc.quads.min(axis=1), sc.quads.max(axis=1)], axis=1)
            _cut_where_localised(rec, sc.image, truth, sc.codes, crops, labels,
                                 cut_by_edge(sc.quads, sc.image.shape), cut, clip=in_view)
        _save(path, crops, labels, cut)
    with np.load(path) as d:
        return d["x"], d["y"]


def scene_crops_cut(seed: int, scenes: int, american: float = 0.5, in_view: bool = False) -> npt.NDArray[np.bool_]:
    """Per crop of :func:`localised_scene_crops` (same arguments, made first), whether the true tile
    it was cut at runs outside the picture."""
    path = _scene_path(seed, scenes, american, in_view)
    if not path.is_file():
        localised_scene_crops(seed, scenes, american, in_view)
    with np.load(path) as d:  # the cut flags alone: an npz reads only the member asked for
        return d["cut"].astype(bool) if "cut" in d else np.zeros(len(d["y"]), bool)


def _scene_path(seed: int, scenes: int, american: float, in_view: bool) -> Path:
    view = "_view" if in_view else ""
    return cache_path(f"scenes_s{seed}_n{scenes}_am{american:g}{view}_{_pipeline_digest()}.npz")


def _cut_where_localised(
    rec: Any,
    image: Image,
    truth_boxes: npt.ArrayLike,
    codes: Sequence[str],
    crops: list[Image],
    labels: list[int],
    truth_flags: npt.NDArray[np.bool_] | None = None,
    flags: list[bool] | None = None,
    clip: bool = False,
) -> None:
    """Append to ``crops`` / ``labels`` the tiles of ``image`` cut at the quads ``rec.localize``
    finds, each labelled with the code of the true box it overlaps at IoU >= 0.5 (the rest left out);
    and to ``flags`` that box's entry in ``truth_flags``, when given.  ``clip``: both boxes are
    clipped to the picture first, as the vision benchmark scores a tile its edge cuts."""
    from companion.rules.tiles import ALL_CODES
    from vision.classify import extract_crops
    from vision.detect import quad_iou_boxes

    truth = np.asarray(truth_boxes, np.float32).reshape(-1, 4)
    quads, _ = rec.localize(image)
    if len(quads) == 0 or len(truth) == 0:
        return
    boxes = np.concatenate([quads.min(axis=1), quads.max(axis=1)], axis=1).astype(np.float32)
    if clip:
        h, w = image.shape[:2]
        lim = np.array([w, h, w, h], np.float32)
        boxes, truth = np.clip(boxes, 0, lim), np.clip(truth, 0, lim)
    iou = quad_iou_boxes(boxes, truth)
    best = iou.argmax(axis=1)
    ok = iou[np.arange(len(quads)), best] >= 0.5
    if ok.any():
        crops.append(extract_crops(image, quads[ok]))
        labels.extend(ALL_CODES.index(codes[j]) for j in best[ok])
        if flags is not None and truth_flags is not None:
            flags.extend(bool(truth_flags[j]) for j in best[ok])


def _save(path: Path, crops: list[Image], labels: list[int], cut: list[bool] | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    x = np.concatenate(crops) if crops else np.zeros((0, CROP_H, CROP_W, 3), np.uint8)
    extra = {"cut": np.asarray(cut, bool)} if cut is not None else {}
    np.savez(path, x=x, y=np.asarray(labels, np.int64), **extra)
