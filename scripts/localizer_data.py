"""Where the localiser's training samples come from: :class:`Source` (augmented photos, synthetic
scenes, windows of rendered tables from :class:`TablePool`) and :class:`Batches`, which draws each
epoch's batches in this process or in ``--workers`` processes.
"""

from __future__ import annotations

import argparse
import itertools
import math
from collections.abc import Iterator
from typing import Any

import cv2
import numpy as np
import torch

from scripts.localizer_augment import SIZE, augment_with, colour_jitter
from scripts.localizer_targets import (
    keep_visible,
    loose_boxes,
    make_targets,
    one_per_tile,
    photo_quads,
    unlabelled_backs,
    unlabelled_tiles_mask,
    unlabelled_weight,
)
from scripts.photos import PhotoSample
from vision.detect import quad_params


class TablePool:
    """Rendered whole-table frames (:mod:`vision.render`) cut into SIZE x SIZE training windows.

    Two kinds of window, centred near a random tile: a share ``top_down`` of them is the table
    seen from straight above at ``companion.table.RECTIFIED_PX_PER_MM`` (x0.8-1.25), as
    ``TableReader`` localises; the others are the frame itself scaled so that its median tile is
    about :data:`vision.scales.TARGET_TILE_PX` wide (x0.7-1.4).  Faces: every training artwork
    style, the American style alone, or real tiles from tiles-photos-v4 ``train/``
    (``scripts/table_crops.py``).
    """

    def __init__(self, frames: int, seed: int, top_down: float = 0.0, area: float = 0.0,
                 dense: float = 0.0) -> None:
        from companion.rules.tiles import AMERICAN, CHINESE
        from scripts.table_crops import SIZES, SOURCES, _faces
        from vision.layout import load_layout
        from vision.render import CAMERA_SUPERSAMPLE, random_view, render_table
        from vision.render_scenes import random_scene

        layout = load_layout("siamese-2")
        self.top_down = top_down
        self.frames: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        for i in range(frames):
            fs = seed * 7907 + i
            rng = np.random.default_rng(fs)
            source = SOURCES[i % len(SOURCES)]
            tileset = CHINESE if source == "photos" or rng.random() < 0.25 else AMERICAN
            size = SIZES[int(rng.integers(len(SIZES)))]
            # a share ``area`` area-sampled as a camera sums light (render_table's default since the
            # twenty-first session), the rest one sample per pixel, as the third session's table
            # localiser trained; a share ``dense`` with the discards laid in rows.  Draws of their
            # own, so that with both at 0 the pool is the very frames it always was.
            extra = np.random.default_rng(fs + 7).random(2)
            supersample = CAMERA_SUPERSAMPLE if extra[0] < area else 1
            scene = random_scene(layout, fs, tileset)
            if extra[1] < dense:
                from scripts.bench_table import with_dense_discards

                scene = with_dense_discards(scene, tileset, int(rng.integers(20, 61)), fs)
            r = render_table(layout, scene, seed=fs, view=random_view(fs, size),
                             faces=_faces(source), supersample=supersample)
            self.frames.append((r.image, np.asarray([t.quad_px for t in r.tiles], np.float32), r.table_to_image))

    def sample(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        from vision.scales import TARGET_TILE_PX

        img, quads, to_image = self.frames[int(rng.integers(len(self.frames)))]
        if rng.random() < self.top_down:
            return self._top_down(img, quads, to_image, rng)
        short = float(np.median(quad_params(quads)[:, 2]))
        s = TARGET_TILE_PX / max(short, 1.0) * math.exp(rng.uniform(math.log(0.7), math.log(1.4)))
        c = quads[int(rng.integers(len(quads)))].mean(axis=0) + rng.normal(0, 60, 2)
        m = np.array([[s, 0, SIZE / 2 - s * c[0]], [0, s, SIZE / 2 - s * c[1]]], np.float64)
        out = cv2.warpAffine(img, m, (SIZE, SIZE), flags=cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR,
                             borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0))
        q = quads.reshape(-1, 2) @ m[:, :2].T + m[:, 2]
        return colour_jitter(out, rng), q.reshape(-1, 4, 2).astype(np.float32)

    def _top_down(self, img: np.ndarray, quads: np.ndarray, to_image: np.ndarray,
                  rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        from companion.table import RECTIFIED_PX_PER_MM

        s = RECTIFIED_PX_PER_MM * math.exp(rng.uniform(math.log(0.8), math.log(1.25)))
        to_mm = np.linalg.inv(to_image)
        mm = cv2.perspectiveTransform(quads.reshape(-1, 1, 2).astype(np.float64), to_mm).reshape(-1, 4, 2)
        c = mm[int(rng.integers(len(mm)))].mean(axis=0) + rng.normal(0, 60, 2)
        window = np.array([[s, 0, SIZE / 2 - s * c[0]], [0, s, SIZE / 2 - s * c[1]], [0, 0, 1]], np.float64)
        m = window @ to_mm
        out = cv2.warpPerspective(img, m, (SIZE, SIZE), flags=cv2.INTER_LINEAR,
                                  borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0))
        q = cv2.perspectiveTransform(quads.reshape(-1, 1, 2).astype(np.float64), m).reshape(-1, 4, 2)
        return colour_jitter(out, rng), q.astype(np.float32)


class Source:
    """Training samples: augmented photos, plus synthetic scenes and table frames when requested."""

    def __init__(
        self, photos: list[PhotoSample], synth_frac: float, seed: int, band: float = 0.2,
        table_frac: float = 0.0, table_frames: int = 60, top_down: float = 0.0,
        american: float = 0.0,
        backs: float = 0.0,
        in_view: bool = False,
        area: float = 0.0,
        dense: float = 0.0,
        light: float = 0.0,
        backs_ignored: tuple[str, ...] = (),
        tiles_ignored: dict[str, np.ndarray] | None = None,
        tiles_labelled: dict[str, np.ndarray] | None = None,
    ) -> None:
        self.photos = photos
        self.backs_ignored = backs_ignored
        self.tiles_ignored = tiles_ignored or {}
        self.light = light
        self.band = band
        self.quads = [photo_quads(s) for s in photos]
        for i, s in enumerate(photos):  # the tiles the labels leave out, labelled once each
            extra = (tiles_labelled or {}).get(s.image_path.name)
            if extra is not None and len(extra):
                self.quads[i] = np.concatenate([self.quads[i], one_per_tile(extra)]).astype(np.float32)
        self.loose = [loose_boxes(s.boxes) for s in photos]
        self.synth_frac = synth_frac
        self.synth = None
        if synth_frac > 0:
            from scripts.synth_scenes import SceneMaker, american_scene_faces

            self.synth = SceneMaker(seed=seed, in_view=in_view)
        self.american_frac = american
        self.american = None
        if synth_frac > 0 and american > 0:
            self.american = SceneMaker(seed=seed + 1, faces=american_scene_faces(seed + 1000), back_share=backs,
                                      in_view=in_view)
        self.table_frac = table_frac
        self.table = TablePool(table_frames, seed, top_down, area, dense) if table_frac > 0 else None

    def sample(self, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
        if self.table is not None and rng.random() < self.table_frac:
            img, quads = self.table.sample(rng)
            loose, backs = False, None
        elif self.synth is not None and rng.random() < self.synth_frac:
            maker = self.american if self.american is not None and rng.random() < self.american_frac else self.synth
            sc = maker.scene(SIZE, SIZE, rng)
            img, quads = colour_jitter(sc.image, rng), sc.quads
            loose, backs = False, None
        else:
            i = int(rng.integers(len(self.photos)))
            loose = bool(self.loose[i])
            img = cv2.imread(str(self.photos[i].image_path))
            backs = unlabelled_backs(img, self.photos[i].boxes, self.backs_ignored) if self.backs_ignored else None
            piles = self.tiles_ignored.get(self.photos[i].image_path.name)
            if piles is not None and len(piles):
                backs = unlabelled_tiles_mask(img.shape, piles, backs)
            img, quads, backs = augment_with(img, self.quads[i], rng, self.band, backs)
        if self.light and rng.random() < self.light:
            from scripts.crops import bad_light

            img = bad_light(img, rng)
        kept, ignored = keep_visible(quads)
        heat, reg, mask, weight = make_targets(kept, ignored)
        if backs is not None:
            weight = unlabelled_weight(weight, backs, heat)
        mask = np.stack([mask, mask * (0.0 if loose else 1.0)])
        return img.transpose(2, 0, 1).astype(np.float32), heat, reg, mask, weight

    def arrays(self, n: int, rng: np.random.Generator) -> list[np.ndarray]:
        """``n`` samples stacked: image, heat, regression targets, mask, weight."""
        items = [self.sample(rng) for _ in range(n)]
        return [np.stack(col) for col in zip(*items, strict=True)]

    def batch(self, n: int, rng: np.random.Generator) -> list[torch.Tensor]:
        return [torch.from_numpy(a) for a in self.arrays(n, rng)]


_WORKER_SOURCE: Source | None = None


def _worker_batch(job: tuple[int, int, int, int]) -> list[np.ndarray]:
    """A batch drawn in a worker (forked holding the run's :class:`Source`): ``(seed, epoch, step, n)``."""
    seed, epoch, step, n = job
    assert _WORKER_SOURCE is not None
    return _WORKER_SOURCE.arrays(n, np.random.default_rng([seed, epoch, step]))


class Batches:
    """The batches of each epoch (:meth:`epoch`).  ``--workers 0`` draws them in this process, one
    after another, from the run's one random stream, as every run before the thirty-fifth session
    did.  ``--workers N`` draws them in N processes, forked once when the run starts (each one
    core: OpenCV runs single-threaded, see ``scripts.train_localizer.train``), batch
    ``(epoch, step)`` from its own stream seeded ``[seed, epoch, step]``: the same batches for any
    N, a resumed run included, but not the ones ``--workers 0`` draws.  At most 2N batches wait
    ahead of the training step."""

    def __init__(self, source: Source, args: argparse.Namespace) -> None:
        self.source, self.args = source, args
        self.pool: Any = None
        if args.workers > 0:
            import multiprocessing as mp

            global _WORKER_SOURCE
            _WORKER_SOURCE = source
            self.pool = mp.get_context("fork").Pool(args.workers)

    def epoch(self, epoch: int, rng: np.random.Generator) -> Iterator[list[torch.Tensor]]:
        args = self.args
        if self.pool is None:
            for _ in range(args.steps):
                yield self.source.batch(args.batch, rng)
            return
        jobs = iter([(args.seed, epoch, step, args.batch) for step in range(args.steps)])
        ahead = [self.pool.apply_async(_worker_batch, (job,)) for job in itertools.islice(jobs, 2 * args.workers)]
        while ahead:
            arrays = ahead.pop(0).get()
            ahead.extend(self.pool.apply_async(_worker_batch, (job,)) for job in itertools.islice(jobs, 1))
            yield [torch.from_numpy(a) for a in arrays]

    def close(self) -> None:
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
            self.pool = None
