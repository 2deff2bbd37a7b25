"""The vision benchmark's synthetic scenes: busy 1280x720 frames and American scenes.

:func:`bench_scenes` draws the bench's scenes (American ones with :func:`american_faces`, a face
seed no model trained on), :func:`synth_eval` reads and tallies them, and :func:`american_lines`
prints the American scenes' lines over each seed.  Run by ``scripts/bench_vision.py``.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from scripts.bench_vision_tally import (
    Tally,
    cut_by_edge,
    inside_quads,
    miss_kinds,
    print_misses,
    print_summary,
)


def synth_eval(
    models: Path,
    size: tuple[int, int],
    n: int,
    seed: int,
    american: bool,
    threads: int = 2,
    kinds: Counter[str] | None = None,
    views: Counter[str] | None = None,
) -> tuple[Tally, list[float]]:
    """Recognise synthetic scenes: a busy 1280x720 table, or American-only faces.

    The scenes are drawn ``in_view`` (:class:`scripts.synth_scenes.SceneMaker`): until the
    eighteenth session their camera perspective could pull the picture's edge inwards and fill the
    border with the table's mirror image, and tiles it moved out of the picture stayed in the
    truth (on the 40 American scenes, 54 of 1,026 tiles no longer in view by the scenes' own
    60 % rule, some of them wholly outside, and mirrored tiles with no truth).  A tile the
    picture's edge cuts (12-18 % of the American scenes' tiles) is boxed in the truth as far as it
    is seen, as photo labels box it (:func:`vision.pipeline.clip_boxes`); until the thirtieth
    session its truth box ran on outside the picture, where no box of a detector can follow.

    ``kinds``: counts, when given, of how each truth tile came out (:func:`miss_kinds`); ``views``:
    how many tiles lie wholly in view and how many the picture's edge cuts (:func:`cut_by_edge`),
    and how many of each were read right."""
    from vision.pipeline import TileRecognizer, clip_boxes

    rec = TileRecognizer(models, threads=threads)
    tally, times = Tally(), []
    for sc in bench_scenes(size, n, seed, american):
        t0 = time.perf_counter()
        d = rec.detect(sc.image)
        times.append((time.perf_counter() - t0) * 1000)
        if len(sc.ignored) and len(d):  # a tile mostly out of the picture: neither asked for nor held against us
            d = d[~np.any(inside_quads(d.centres, sc.ignored), axis=1)]
        truth = clip_boxes(np.concatenate([sc.quads.min(axis=1), sc.quads.max(axis=1)], axis=1), sc.image.shape)
        tally.add(d.boxes, [str(c) for c in d.codes], d.confidence, truth, list(sc.codes))
        if kinds is None and views is None:
            continue
        came = miss_kinds(d.boxes, [str(c) for c in d.codes], truth, [str(c) for c in sc.codes])
        if kinds is not None:
            kinds.update(came)
        if views is not None:
            for kind, cut in zip(came, cut_by_edge(sc.quads, sc.image.shape), strict=True):
                where = "cut by the picture's edge" if cut else "wholly in view"
                views[where] += 1
                views[where + ", read right"] += kind == "right"
    return tally, times


def bench_scenes(size: tuple[int, int], n: int, seed: int, american: bool, **maker: Any) -> Iterator[Any]:
    """The bench's ``n`` synthetic scenes of ``seed`` (:class:`scripts.synth_scenes.Scene`), drawn
    in view: a busy table at 1280x720 and up, else a few groups (American faces when ``american``).
    ``maker``: more :class:`scripts.synth_scenes.SceneMaker` options (tests draw more backs)."""
    from scripts.synth_scenes import SceneMaker

    gen = SceneMaker(seed=seed, faces=american_faces(seed) if american else None, in_view=True, **maker)
    rng = np.random.default_rng(seed)
    w, h = size
    big = w >= 1000
    for _ in range(n):
        yield gen.scene(w, h, rng, short=(34.0, 50.0) if big else (30.0, 50.0), layouts=(7, 10) if big else (2, 6))


def american_faces(seed: int) -> dict[str, list[np.ndarray]]:
    """Fresh American faces (a seed unlike the classifier's and the localiser's training faces): J,
    F, soap WD, backs, and index-numbered number and wind tiles over two artwork styles."""
    from scripts.synth_scenes import american_scene_faces

    return american_scene_faces(seed + 777)


def american_lines(args: argparse.Namespace) -> None:
    """The synthetic American scenes: the first seed in full (per class), each seed's accuracy."""
    seeds = [int(x) for x in str(args.american_seeds).split(",") if x.strip()] or [21]
    kinds: Counter[str] = Counter()
    views: Counter[str] = Counter()
    am, t_am = synth_eval(args.models, (640, 480), args.american, seeds[0], True, args.threads, kinds, views)
    acc = am.tp / max(sum(am.per_truth.values()), 1)
    print(
        f"\nsynthetic American scenes: {args.american}, {sum(am.per_truth.values())} tiles; per-tile accuracy {acc:.4f}"
    )
    seen = sum(am.confusion.values())
    right = sum(k for (tc, pc), k in am.confusion.items() if tc == pc)
    print(
        f"  localised {seen / max(sum(am.per_truth.values()), 1):.4f} of tiles; "
        f"read right {right / max(seen, 1):.4f} of those"
    )
    print_summary("  as detections", am, t_am)  # false tiles too: a phantom joker misleads a player
    for code, n, r, p, _, top in am.class_rows():  # precision: a phantom back spoils a tile count
        print(f"  {code:<4} {n:>4} tiles  accuracy {r:.3f}  precision {p:.3f}  {top}")
    if len(seeds) > 1:
        accs = [acc]
        for seed in seeds[1:]:
            other, _ = synth_eval(args.models, (640, 480), args.american, seed, True, args.threads, kinds, views)
            accs.append(other.tp / max(sum(other.per_truth.values()), 1))
        print(f"\nsynthetic American scenes over {len(seeds)} seeds ({args.american} scenes each): per-tile accuracy "
              + " / ".join(f"{s}: {a:.4f}" for s, a in zip(seeds, accs, strict=True)) + f"; mean {float(np.mean(accs)):.4f}")
    print_misses(kinds)
    for where in ("wholly in view", "cut by the picture's edge"):
        n, right = views[where], views[where + ", read right"]
        print(f"  tiles {where}: {right} of {n} read right ({right / max(n, 1):.4f})")
