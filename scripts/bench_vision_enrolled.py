"""The vision benchmark's enrolled sets: a real set, and the held-out artwork style.

:func:`real_set_enrolled` enrolls valid's photos of a real set no train photo shows
(:data:`REAL_SET`) from some of them and reads the rest, plain and enrolled
(:func:`print_real_set`); :func:`held_out_scenes` reads American scenes over the style no model
trained on, plain and with the set enrolled from a grid photo and from rendered table photos of
its layout (:data:`HELD_OUT_PHOTO_SEEDS`, :func:`print_held_out`).  Run by
``scripts/bench_vision.py``.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from scripts.bench_vision_tally import Tally, inside_quads, mislabelled
from scripts.photos import PhotoSample
from vision.detect import quad_iou_boxes

REAL_SET = "IMG_27"
"""File-name stem of valid's photos of one real tile set that no train photo shows (35 photos
besides the 7 :func:`mislabelled` ones): a player's own set, as far as this export holds one."""


def real_set_enrolled(
    photos: list[PhotoSample], models: Path, threads: int = 2, splits: int = 5, enrol: int = 10
) -> list[dict[str, Any]]:
    """Valid's :data:`REAL_SET` enrolled from one labelled tile a code of ``enrol`` of its photos,
    drawn at random (seed = the split), and read on its other photos, plain and enrolled: a row a
    split with the base agreement, the fusion weight, and each reading's tally and tiles read right
    of those boxed (IoU >= 0.5).  Each code's tile is the one the pipeline boxes best (the highest
    IoU with its label), cut where the pipeline puts it; the crops are saved as ``companion enroll``
    saves a set's and read by a recogniser given that set, as ``detect --tileset`` reads one (its
    loader embeds them with their jittered copies and weighs the set by how well the base
    classifier reads those).  No rows when the photos are missing."""
    import tempfile

    from vision.classify import extract_crops
    from vision.light import without_light
    from vision.pipeline import TileRecognizer
    from vision.tileset import TileSet, save_tileset

    real = [s for s in photos if s.image_path.name.startswith(REAL_SET) and not mislabelled(s)]
    if len(real) < enrol + 5:
        return []
    rec = TileRecognizer(models, threads=threads)
    found: dict[Path, tuple[np.ndarray, Any]] = {}
    for s in real:
        img = cv2.imread(str(s.image_path))
        if img is None:
            raise SystemExit(f"bench_vision: cannot read {s.image_path}")
        found[s.image_path] = (img, rec.detect(img))

    rows: list[dict[str, Any]] = []
    for split in range(splits):
        order = np.random.default_rng(split).permutation(len(real))
        train, test = [real[i] for i in order[:enrol]], [real[i] for i in order[enrol:]]
        best = _best_tiles(train, found)
        codes = sorted(best)
        crops = np.stack([extract_crops(without_light(best[c][1]), best[c][2][None])[0] for c in codes])
        with tempfile.TemporaryDirectory(prefix="bench-real-set-") as tmp:
            # no classifier recorded and no prototypes yet: the loader embeds the crops, as it embeds
            # a set enrolled with another classifier (vision.prototypes.for_classifier)
            unembedded = TileSet("real-set", "chinese", tuple(codes), np.zeros((len(codes), 1), np.float32))
            enrolled = TileRecognizer(models, threads=threads, tileset=str(save_tileset(unembedded, crops, Path(tmp))))
        refiner = enrolled.prototypes
        rows.append({"split": split, "codes": len(codes), "test": len(test), "agreement": refiner.agreement,
                     "weight": refiner.weight, "plain": _read_set(test, found, None),
                     "enrolled": _read_set(test, found, enrolled)})
    return rows


def _matches(s: PhotoSample, d: Any) -> tuple[np.ndarray, np.ndarray]:
    """For each of ``s``'s labelled tiles, the detection of ``d`` that boxes it best and their IoU."""
    if not len(d) or not len(s.codes):
        return np.full(len(s.codes), -1), np.zeros(len(s.codes))
    iou = quad_iou_boxes(s.boxes.astype(np.float32), d.boxes.astype(np.float32))
    best = iou.argmax(axis=1)
    return best, iou[np.arange(len(best)), best]


def _best_tiles(
    photos: list[PhotoSample], found: dict[Path, tuple[np.ndarray, Any]]
) -> dict[str, tuple[float, np.ndarray, np.ndarray]]:
    """Each code's tile in ``photos`` that the pipeline's reading (``found``) boxes best:
    ``code -> (IoU, image, quad)``."""
    best: dict[str, tuple[float, np.ndarray, np.ndarray]] = {}
    for s in photos:
        img, d = found[s.image_path]
        idx, iou = _matches(s, d)
        for j, code in enumerate(s.codes):
            if iou[j] >= 0.5 and (code not in best or iou[j] > best[code][0]):
                best[code] = (float(iou[j]), img, d.quads[idx[j]])
    return best


def _read_set(test: list[PhotoSample], found: dict[Path, tuple[np.ndarray, Any]], reader: Any) -> tuple[Tally, int, int]:
    """``test`` read by ``reader`` (None: as ``found`` already read them): the tally, and the
    labelled tiles read right of those boxed (IoU >= 0.5)."""
    tally, right, boxed = Tally(), 0, 0
    for s in test:
        d = found[s.image_path][1] if reader is None else reader.detect(found[s.image_path][0])
        tally.add(d.boxes, [str(c) for c in d.codes], d.confidence, s.boxes, list(s.codes))
        idx, iou = _matches(s, d)
        boxed += int((iou >= 0.5).sum())
        right += sum(int(d.codes[idx[j]] == c) for j, c in enumerate(s.codes) if iou[j] >= 0.5)
    return tally, right, boxed


def print_real_set(photos: list[PhotoSample], args: argparse.Namespace) -> None:
    """:func:`real_set_enrolled`'s rows, and their sums."""
    rows = real_set_enrolled(photos, args.models, args.threads, args.real_enroll)
    if not rows:
        print(f"\nreal set enrolled: skipped (too few {REAL_SET}* photos among those read)")
        return
    print(f"\na real set no photo in train/ shows (valid's {REAL_SET}xx photos), enrolled from one labelled tile "
          f"a code of 10 of its photos, read on the other {rows[0]['test']} ({len(rows)} draws): tiles read right "
          "of those boxed, and F1")
    names = ("plain", "enrolled")
    right_sum, boxed_sum = Counter[str](), Counter[str]()
    counts = {name: np.zeros(3, np.int64) for name in names}  # tp, fp, fn
    for r in rows:
        parts = []
        for name in names:
            tally, right, boxed = r[name]
            parts.append(f"{name} {right}/{boxed}, F1 {Tally.prf(tally.tp, tally.fp, tally.fn)[2]:.4f}")
            right_sum[name] += right
            boxed_sum[name] += boxed
            counts[name] += (tally.tp, tally.fp, tally.fn)
        print(f"  draw {r['split']}: {r['codes']} codes, base agreement {r['agreement']:.3f}, base weight "
              f"{r['weight']:.2f}: " + "; ".join(parts))
    print("  all draws: " + "; ".join(
        f"{name} {right_sum[name]}/{boxed_sum[name]} ({right_sum[name] / max(boxed_sum[name], 1):.4f}), "
        f"F1 {Tally.prf(*(int(v) for v in counts[name]))[2]:.4f}"
        for name in names))


HELD_OUT_PHOTO_SEEDS = (1000, 1001)
"""Seeds of the rendered table photos (:func:`scripts.synth_scenes.layout_photo`, tiles apart) the
held-out style is also enrolled from, as a player's phone photo of the layout would enroll it."""


def held_out_scenes(
    models: Path, n: int, seed: int = 21, threads: int = 2, photo_seeds: tuple[int, ...] = ()
) -> tuple[Tally, Tally, float, dict[int, Tally | None]]:
    """American scenes drawn over the style no model trained on (:data:`vision.artwork.HOLDOUT_STYLE`),
    read plain and with that set enrolled from one synthetic grid photo of one of each tile, as
    ``bench_table --enroll`` enrolls it: ``(plain, enrolled, the set's base agreement, by photo)``;
    with ``photo_seeds``, also enrolled from each rendered table photo of the layout
    (:data:`HELD_OUT_PHOTO_SEEDS`), None where that photo is refused."""
    import tempfile

    from scripts.bench_table import enrolled
    from scripts.synth_scenes import SceneMaker, american_scene_faces, layout_photo
    from vision.artwork import HOLDOUT_STYLE
    from vision.classify import TileClassifier, photo_classifier
    from vision.enroll import EnrollError, enroll_image
    from vision.pipeline import TileRecognizer, clip_boxes
    from vision.tileset import save_tileset

    faces = american_scene_faces(4242, (HOLDOUT_STYLE,))
    first = {c: np.asarray(v[0]) for c, v in faces.items()}
    photos: dict[int, Tally | None] = {}
    with tempfile.TemporaryDirectory(prefix="bench-held-out-") as tmp:
        readers = {
            "plain": TileRecognizer(models, threads=threads),
            "enrolled": TileRecognizer(models, threads=threads, tileset=enrolled(faces, models, Path(tmp))),
        }
        clf = TileClassifier(photo_classifier(models))
        for s in photo_seeds:
            try:
                ts, crops, _ = enroll_image(layout_photo(first, np.random.default_rng(s))[0], "american", clf, f"photo-{s}")
            except EnrollError:
                photos[s] = None
                continue
            folder = save_tileset(ts, crops, Path(tmp) / f"photo-{s}")
            readers[f"photo-{s}"] = TileRecognizer(models, threads=threads, tileset=str(folder))
    gen = SceneMaker(seed=seed + 5000, faces=faces, in_view=True)
    rng = np.random.default_rng(seed)
    tallies = {name: Tally() for name in readers}
    for _ in range(n):
        sc = gen.scene(640, 480, rng, short=(30.0, 50.0), layouts=(2, 6))
        truth = clip_boxes(np.concatenate([sc.quads.min(axis=1), sc.quads.max(axis=1)], axis=1), sc.image.shape)
        for name, rec in readers.items():
            d = rec.detect(sc.image)
            if len(sc.ignored) and len(d):
                d = d[~np.any(inside_quads(d.centres, sc.ignored), axis=1)]
            tallies[name].add(d.boxes, [str(c) for c in d.codes], d.confidence, truth, [str(c) for c in sc.codes])
    agreement = readers["enrolled"].prototypes.agreement
    photos.update({s: tallies[f"photo-{s}"] for s in photo_seeds if f"photo-{s}" in tallies})
    return (tallies["plain"], tallies["enrolled"], float(agreement) if agreement is not None else float("nan"),
            photos)


def print_held_out(args: argparse.Namespace) -> None:
    """:func:`held_out_scenes`, per tile and as detections."""
    from vision.artwork import HOLDOUT_STYLE

    plain, enrolled_tally, agreement, photos = held_out_scenes(
        args.models, args.held_out, threads=args.threads, photo_seeds=HELD_OUT_PHOTO_SEEDS)
    n = max(sum(plain.per_truth.values()), 1)
    print(f"\nsynthetic American scenes over {HOLDOUT_STYLE}, the style no model trained on: {args.held_out}, "
          f"{n} tiles (the set enrolled from one grid photo, base agreement {agreement:.3f})")
    for name, t in (("plain", plain), ("enrolled", enrolled_tally)):
        print(f"  {name:<9} per-tile accuracy {t.tp / n:.4f}; as detections F1 {Tally.prf(t.tp, t.fp, t.fn)[2]:.4f}")
    for s, t in photos.items():
        where = f"enrolled from a table photo of the layout (rendered, seed {s})"
        print(f"  {where}: refused" if t is None else
              f"  {where}: per-tile accuracy {t.tp / n:.4f}; as detections F1 {Tally.prf(t.tp, t.fp, t.fn)[2]:.4f}")
