"""What the photo pipeline itself cuts and reads, cached for training: tiles cut at the quads
``TileRecognizer.localize`` finds in the photos (:func:`localised_photo_crops`) and in synthetic
scenes (:func:`localised_scene_crops`, :func:`scene_crops_cut`), each labelled by the true box it
overlaps, and the tiles the photos show but their labels leave out (:func:`unlabelled_photo_tiles`,
:func:`unlabelled_tiles_in`, at :data:`PILE_SCALES` and :data:`PILE_SURE`).  Cached on disk under
keys naming the pipeline (:mod:`scripts.crop_cache`).  Torch-free.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from scripts.crop_cache import cache_path, models_dir, pipeline_digest
from vision.classify import CROP_H, CROP_W

Image = npt.NDArray[np.uint8]


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

    digest = pipeline_digest()
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
    (:func:`scripts.crop_cache.pipeline_digest`) and by these settings."""
    from scripts.photos import load_split
    from vision.pipeline import TileRecognizer

    path = cache_path(f"unlabelled_{split}_{pipeline_digest()}_{'-'.join(map(str, PILE_SCALES))}_{PILE_SURE}.npz")
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
    return cache_path(f"scenes_s{seed}_n{scenes}_am{american:g}{view}_{pipeline_digest()}.npz")


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
