"""Measure the tile classifier: real photo crops, held-out artwork enrollment, American synthesis.

    python -m scripts.bench_classifier [--model models/classifier.onnx] [--per-class 30] [--seed 11]

Prints, in one run:

1. tiles-photos-v4/valid: accuracy on every labelled tile (crops cut from the labelled boxes),
   per-class recall and the worst five classes with what they were read as;
2. held-out artwork style (:data:`vision.artwork.HOLDOUT_STYLE`, never trained on): a synthetic
   grid photo of one tile per class is enrolled exactly as ``companion enroll`` does, then
   ``--per-class`` augmented crops per class are read, base classifier vs enrolled prototypes;
3. synthetic American validation (fresh seed): jokers, flowers ``F``, soap ``WD``, index-numbered
   craks, read under American rules (flowers/seasons -> ``F``), per-tile accuracy per class;
4. classifier speed: median ms for a batch of 60 crops.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # `python scripts/bench_classifier.py` as well as `python -m scripts.bench_classifier`

from scripts import crops as C  # noqa: E402
from vision import american  # noqa: E402
from vision.artwork import HOLDOUT_STYLE, INDEX_BASES, tile_faces  # noqa: E402
from vision.classify import DEFAULT_MODEL, Classified, TileClassifier  # noqa: E402
from vision.enroll import enroll_image, grid_photo, layout_codes  # noqa: E402
from vision.prototypes import TileSetPrototypes  # noqa: E402
from vision.tileset import TileSet  # noqa: E402


def report(title: str, truth: list[str], pred: list[str], worst: int = 5) -> float:
    """Print accuracy, per-class recall (worst first) and the main confusions; returns accuracy."""
    acc = float(np.mean([t == p for t, p in zip(truth, pred, strict=True)])) if truth else 0.0
    print(f"\n## {title}: accuracy {acc:.4f} on {len(truth)} tiles")
    per: dict[str, Counter[str]] = {}
    for t, p in zip(truth, pred, strict=True):
        per.setdefault(t, Counter())[p] += 1
    rows = sorted(per.items(), key=lambda kv: kv[1][kv[0]] / sum(kv[1].values()))
    print("class  n     recall  read as (top confusions)")
    for code, cnt in rows:
        n = sum(cnt.values())
        wrong = ", ".join(f"{c}x{k}" for c, k in cnt.most_common() if c != code)[:60]
        print(f"{code:<5} {n:>5}  {cnt[code] / n:.3f}   {wrong}")
    print(
        "worst five: "
        + ", ".join(f"{c} ({cnt[c] / sum(cnt.values()):.3f})" for c, cnt in rows[:worst])
    )
    return acc


def bench_photos(clf: TileClassifier) -> float:
    patches, _, codes = C.cached_photo_patches("valid")
    rng = np.random.default_rng(0)
    crops = np.stack([C.jitter_patch(p, rng, amount=0.0) for p in patches])
    return report("tiles-photos-v4/valid, crops from labelled boxes", codes, clf.run(crops).codes)


def enroll_synthetic(
    clf: TileClassifier, faces: dict[str, np.ndarray], layout: str, seed: int
) -> TileSet:
    """Enroll a synthetic grid photo of ``faces`` exactly as ``companion enroll`` does."""
    image, _ = grid_photo(faces, layout, np.random.default_rng(seed))
    return enroll_image(image, layout, clf, f"holdout-{HOLDOUT_STYLE}")[0]


def bench_holdout(clf: TileClassifier, per_class: int, seed: int) -> tuple[float, float]:
    faces = {c: list(v) for c, v in tile_faces(HOLDOUT_STYLE).items()}
    tileset = enroll_synthetic(clf, {c: v[0] for c, v in faces.items()}, "chinese", seed)
    rng = np.random.default_rng(seed + 1)
    truth = [c for c in faces for _ in range(per_class)]
    res = clf.run(np.stack([C.synth_crop(c, faces, rng, extras=False) for c in truth]))
    base_only = TileSetPrototypes(tileset, clf.classes, weight=1.0)
    fused = TileSetPrototypes(tileset, clf.classes)
    a = report(
        f"held-out style {HOLDOUT_STYLE}: base classifier (set's codes only)",
        truth,
        base_only.apply(res).codes,
    )
    b = report(
        f"held-out style {HOLDOUT_STYLE}: enrolled from one example per class",
        truth,
        fused.apply(res).codes,
    )
    return a, b


def american_faces(seed: int, n: int) -> dict[str, list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    faces: dict[str, list[np.ndarray]] = {
        "J": [american.joker(rng) for _ in range(n)],
        "F": [american.flower(rng) for _ in range(n)],
        "WD": [american.soap(rng) for _ in range(n)],
    }
    bases: dict[str, list[np.ndarray]] = {}
    for style in INDEX_BASES:
        for code, imgs in tile_faces(style).items():
            bases.setdefault(code, []).extend(imgs)
    for k in range(1, 10):
        code = f"{k}C"
        faces[code] = [
            american.with_index(bases[code][i % len(bases[code])], str(k), rng) for i in range(n)
        ]
    return faces


def bench_american(clf: TileClassifier, per_class: int, seed: int) -> float:
    faces = american_faces(seed, per_class)
    rng = np.random.default_rng(seed + 1)
    truth = [c for c in faces for _ in range(per_class)]
    res: Classified = clf.run(np.stack([C.synth_crop(c, faces, rng, extras=False) for c in truth]))
    rules = TileSetPrototypes(
        TileSet("american", "american", (), np.zeros((0, res.embeddings.shape[1]), np.float32)),
        clf.classes,
        allowed=layout_codes("american"),
    )
    return report(
        "synthetic American validation (jokers, F, soap, index craks)",
        truth,
        rules.apply(res).codes,
    )


def bench_speed(clf: TileClassifier) -> float:
    crops = np.random.default_rng(0).integers(0, 255, (60, 64, 48, 3), dtype=np.uint8)
    times = []
    for _ in range(15):
        t = time.perf_counter()
        clf.run(crops)
        times.append((time.perf_counter() - t) * 1000)
    ms = float(np.median(times))
    print(
        f"\n## speed: {ms:.1f} ms median for a batch of 60 crops (includes the half-turn average)"
    )
    return ms


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", type=Path, default=DEFAULT_MODEL,
                   help="default: the photo classifier the pipeline reads (classifier-int8.onnx where present)")
    p.add_argument("--per-class", type=int, default=30)
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--skip-photos", action="store_true")
    args = p.parse_args()
    clf = TileClassifier(args.model)
    results = {}
    if not args.skip_photos:
        results["photo valid crops"] = bench_photos(clf)
    base, fused = bench_holdout(clf, args.per_class, args.seed)
    results[f"held-out {HOLDOUT_STYLE}, base"] = base
    results[f"held-out {HOLDOUT_STYLE}, enrolled (target >= 0.97)"] = fused
    results["American synthetic (target >= 0.99)"] = bench_american(
        clf, args.per_class, args.seed + 100
    )
    ms = bench_speed(clf)
    print("\n## summary")
    for k, v in results.items():
        print(f"{k:<50} {v:.4f}")
    print(f"{'ms per 60 crops':<50} {ms:.1f}")


if __name__ == "__main__":
    main()
