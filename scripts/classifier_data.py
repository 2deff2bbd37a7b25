"""The tile classifier's training data: the cached crop pools (photos, synthetic artwork, rendered
tables; :func:`photo_data`, :func:`synthetic_data`, :func:`table_data` and the validation pools,
:data:`Check`, they bring) and the augmentations drawn on them each epoch (:func:`recolour`,
:func:`tiny`).  The crops are numpy arrays; torch comes in only with :data:`CLASSES`
(:mod:`scripts.classifier_net`).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

from scripts import crops as C
from scripts.classifier_net import CLASSES
from scripts.crop_cache import cache_path
from scripts.localised_crops import localised_photo_crops, localised_scene_crops, scene_crops_cut
from vision.classify import CROP_H, CROP_W


def _cached(path: Path, make: Callable[[], tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """``(x, y)`` from the npz cache at ``path``, made (and saved) by ``make()`` the first time."""
    if path.is_file():
        with np.load(path) as d:
            return d["x"], d["y"]
    x, y = make()
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, x=x, y=y)
    return x, y


def _synth_crops(labels: np.ndarray, first_seed: int, chunks: int, workers: int) -> tuple[np.ndarray, np.ndarray]:
    """Synthetic crops of the given class indices, drawn in ``chunks`` seeded jobs on a process pool."""
    parts = np.array_split(labels, chunks)
    jobs = [(first_seed + i, [CLASSES[k] for k in ch]) for i, ch in enumerate(parts) if len(ch)]
    with mp.get_context("spawn").Pool(workers) as pool:
        return np.concatenate(pool.map(C.synth_chunk, jobs)), labels


def synth_pool(seed: int, per_class: int, workers: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """``per_class`` synthetic crops of every class, cached on disk by (seed, per_class)."""
    labels = np.repeat(np.arange(len(CLASSES)), per_class)
    return _cached(cache_path(f"synth_s{seed}_n{per_class}.npz"),
                   lambda: _synth_crops(labels, seed * 1000, 16, workers))


def boost_pool(seed: int, spec: str, workers: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Extra synthetic crops of some classes (``"J:1500,F:800"``), cached on disk by seed and spec."""
    counts = {}
    for part in spec.split(","):
        code, _, n = part.partition(":")
        if code not in CLASSES or not n.isdigit():
            raise SystemExit(f"--boost: expected CODE:N[,CODE:N...] with codes of the classifier, got {part!r}")
        counts[code] = int(n)
    key = "_".join(f"{c}{n}" for c, n in counts.items())
    labels = np.array([CLASSES.index(c) for c, n in counts.items() for _ in range(n)])
    return _cached(cache_path(f"boost_s{seed}_{key}.npz"),
                   lambda: _synth_crops(labels, seed * 1000 + 777, 8, workers))


def table_pool(seed: int, frames: int, workers: int = 2, snap: float = 0.0,
               sources: tuple[str, ...] | None = None, area: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Crops cut from ``frames`` rendered whole-table frames (:mod:`scripts.table_crops`), cached;
    ``sources``: the face sources in turn (default: ``table_crops.SOURCES``); ``area``: the share
    of frames drawn area-sampled, as a camera sees them (0: every pool before the twenty-first
    session)."""
    from scripts.table_crops import SOURCES, table_crops

    sources = sources or SOURCES
    name = f"table_s{seed}_f{frames}" + (f"_snap{snap:g}" if snap else "")
    if sources != SOURCES:
        name += "_" + "+".join(sources)
    if area:
        name += f"_area{area:g}"
    return _cached(cache_path(f"{name}.npz"), lambda: table_crops(seed, frames, workers, snap, sources, area))


def _pool_spec(spec: str) -> tuple[np.ndarray, np.ndarray]:
    """The table pool ``SEED:FRAMES[:SNAP[:SOURCE+SOURCE...[:AREA]]]`` (an empty SOURCES field: the default)."""
    seed_s, frames_s, *rest = spec.split(":")
    snap = float(rest[0]) if rest and rest[0] else 0.0
    sources = tuple(rest[1].split("+")) if len(rest) > 1 and rest[1] else None
    area = float(rest[2]) if len(rest) > 2 and rest[2] else 0.0
    return table_pool(int(seed_s), int(frames_s), snap=snap, sources=sources, area=area)


def recolour(crop: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The crop's hues turned by a random angle and its saturation scaled (0.4-1.3x), or (one time
    in six) made grey: tile sets print their suits in any colours (gold bamboo, blue craks), and
    the shapes, not the inks, name a tile."""
    if rng.random() < 1 / 6:
        grey = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
        return np.ascontiguousarray(np.repeat(grey[:, :, None], 3, axis=2))
    hsv = cv2.cvtColor(crop, cv2.COLOR_BGR2HSV_FULL).astype(np.int16)
    hsv[..., 0] = (hsv[..., 0] + int(rng.integers(256))) % 256
    hsv[..., 1] = np.clip(hsv[..., 1] * rng.uniform(0.4, 1.3), 0, 255)
    return np.asarray(cv2.cvtColor(hsv.astype(np.uint8), cv2.COLOR_HSV2BGR_FULL))


TINY_WIDTH = (6.0, 11.0)
"""Widths (px) a crop is shrunk to by :func:`tiny`: the far racks' tiles at 1280x720."""
TINY_SQUASH = (0.45, 1.35)
"""A tiny tile's height over its width: a camera leaning 60-70 degrees from vertical sees a far
tile 12 px wide and 5 px tall (docs/table.md, "Where the 1280x720 misses lie")."""


def tiny(crop: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The crop as a far tile looks once cut from a frame: shrunk by area averaging (as a camera
    sums light) to 6-11 px wide and 0.45-1.35 times that tall, then blown back up to the crop's
    size bilinearly, as ``vision.classify.extract_crops`` warps a tiny quad."""
    h, w = crop.shape[:2]
    tw = rng.uniform(*TINY_WIDTH)
    th = tw * rng.uniform(*TINY_SQUASH) * h / w
    small = cv2.resize(crop, (max(2, round(tw)), max(2, round(th))), interpolation=cv2.INTER_AREA)
    return np.asarray(cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR), np.uint8)


def photo_set(split: str) -> tuple[np.ndarray, np.ndarray]:
    def make() -> tuple[np.ndarray, np.ndarray]:
        patches, codes = C.photo_patches(split)
        return patches, np.array([CLASSES.index(c) for c in codes])

    return _cached(cache_path(f"photos_{split}_pad{C.PAD}.npz"), make)


def loose_photo_tiles(split: str) -> np.ndarray:
    """Per tile of :func:`photo_set` (same order: photos by file name, label rows in order), True
    where its photo's boxes are loose: the export's +-45 degree turns, whose axis-aligned boxes
    hold a turned tile and parts of its neighbours (``localizer_targets.loose_boxes``; 577 of 1350
    train photos, none in valid).  The classifier never sees such a crop at inference: every
    tile is cut upright from its own quad."""
    from scripts.localizer_targets import loose_boxes
    from scripts.photos import iter_split

    root = C.photos_root() / split
    names = [p.name for p in sorted((root / "images").iterdir())]
    flags: dict[str, tuple[bool, int]] = {}
    for sample in iter_split(split):
        flags[sample.image_path.name] = (loose_boxes(sample.boxes), len(sample.boxes))
    out = [np.full(flags[n][1], flags[n][0]) for n in names if n in flags]
    return np.concatenate(out) if out else np.zeros(0, bool)


def centre_crops(patches: np.ndarray) -> np.ndarray:
    rng = np.random.default_rng(0)
    return np.stack([C.jitter_patch(p, rng, amount=0.0) for p in patches])


Check = tuple[str, np.ndarray, np.ndarray, np.ndarray | None]
"""A validation pool printed after each epoch: ``(name, crops, labels, the crops the picture's edge
cuts, also printed alone, or None)``."""


def photo_data(args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The train photos' tiles (``--drop-loose``, ``--photo-repeat``) and valid's, centre-cut."""
    px, py = photo_set("train")
    if args.drop_loose:
        keep = ~loose_photo_tiles("train")
        if len(keep) != len(px):
            raise SystemExit(f"--drop-loose: {len(keep)} labelled tiles but {len(px)} cached photo crops")
        print(f"--drop-loose: {int((~keep).sum())} tiles of photos with loose (turned) boxes left out", flush=True)
        px, py = px[keep], py[keep]
    if args.photo_repeat > 1:
        px, py = np.concatenate([px] * args.photo_repeat), np.concatenate([py] * args.photo_repeat)
    vx, vy = photo_set("valid")
    return px, py, centre_crops(vx), vy


def synthetic_data(args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray, list[Check]]:
    """The synthetic pool (``--boost``, ``--localised-crops``, ``--scene-crops``, ``--view-scenes``)
    and the validation pools those options bring."""
    sx, sy = synth_pool(args.synth_seed or args.seed, args.synth_per_class)
    checks: list[Check] = []
    if args.boost:
        bx, by = boost_pool(args.seed, args.boost)
        sx, sy = np.concatenate([sx, bx]), np.concatenate([sy, by])
    if args.localised_crops:
        lx, ly = localised_photo_crops("train")
        sx = np.concatenate([sx] + [lx] * args.localised_crops)
        sy = np.concatenate([sy] + [ly] * args.localised_crops)
        checks.append(("valid crops at localised quads", *localised_photo_crops("valid"), None))
        print(f"--localised-crops: {len(lx)} train photo tiles cut at the localiser's quads, x{args.localised_crops}",
              flush=True)
    if args.scene_crops:
        n_s, share_s, seed_s = (args.scene_crops.split(":") + ["", ""])[:3]
        share = float(share_s) if share_s else 0.5
        cx, cy = localised_scene_crops(int(seed_s) if seed_s else args.seed, int(n_s), share)
        sx, sy = np.concatenate([sx, cx]), np.concatenate([sy, cy])
        svx, svy = localised_scene_crops(args.seed + 1000, max(10, int(n_s) // 10), 1.0)
        checks.append(("American scene crops", svx, svy, None))
        print(f"--scene-crops: {len(cx)} tiles of {n_s} synthetic scenes cut at the localiser's quads "
              f"({share:g} American); {len(svx)} American ones of another seed for validation", flush=True)
    if args.view_scenes:
        sx, sy, check = _view_scenes(args, sx, sy)
        checks.append(check)
    return sx, sy, checks


def _view_scenes(args: argparse.Namespace, sx: np.ndarray, sy: np.ndarray) -> tuple[np.ndarray, np.ndarray, Check]:
    """``--view-scenes N:SHARE:SEED``: the pool with tiles of N scenes drawn in view, and an
    American pool of another seed to validate on, its tiles the picture's edge cuts apart."""
    n_v, share_v, seed_v = (args.view_scenes.split(":") + ["", ""])[:3]
    share = float(share_v) if share_v else 0.5
    seed_v_i = int(seed_v) if seed_v else args.seed
    vsx, vsy = localised_scene_crops(seed_v_i, int(n_v), share, in_view=True)
    n_cut = int(scene_crops_cut(seed_v_i, int(n_v), share, in_view=True).sum())
    view_val = (args.seed + 2000, max(10, int(n_v) // 10), 1.0)
    wvx, wvy = localised_scene_crops(*view_val, in_view=True)
    wv_cut = scene_crops_cut(*view_val, in_view=True)
    print(f"--view-scenes: {len(vsx)} tiles of {n_v} synthetic scenes drawn in view ({share:g} American), "
          f"{n_cut} of them cut by the picture's edge; {len(wvx)} American ones of another seed for "
          f"validation ({int(wv_cut.sum())} cut)", flush=True)
    return np.concatenate([sx, vsx]), np.concatenate([sy, vsy]), ("American in-view scene crops", wvx, wvy, wv_cut)


def table_data(args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray, Check | None]:
    """Crops cut from rendered table frames (``--table-crops``, ``--extra-table``) and the table
    pool validated on (``--table-val``, else one of another seed), if any."""
    tx = np.zeros((0, CROP_H, CROP_W, 3), np.uint8)
    ty = np.zeros(0, np.int64)
    check: Check | None = None
    if args.table_crops:
        tx, ty = table_pool(args.seed, args.table_crops, snap=args.table_snap, area=args.table_area)
        check = ("table crops", *table_pool(args.seed + 1000, max(12, args.table_crops // 10), snap=args.table_snap,
                                            area=args.table_area), None)
    for spec in filter(None, args.extra_table.split(",")):
        ex, ey = _pool_spec(spec)
        tx, ty = np.concatenate([tx, ex]), np.concatenate([ty, ey])
    if args.table_val:
        check = ("table crops", *_pool_spec(args.table_val), None)
    return tx, ty, check
