"""Table-scale training crops for the classifier: rendered whole-table frames, cut as the pipeline cuts.

    python -m scripts.table_crops --frames 40 --seed 1 --show runs/table_crops.png

Each frame is a seeded Siamese table from :func:`vision.render.render_table` (a phone at a table
edge, 1280x720 or 1920x1080, tiles 12-35 px across) with faces from one of three sources: every
training artwork style merged (the held-out style :data:`vision.artwork.HOLDOUT_STYLE` never),
the American synthetic style alone, or real photographed tiles from tiles-photos-v4 ``train/``
(never ``valid/``, which is the benchmark); pools may also draw from ``american-mix``: American
sets (jokers, flowers, soaps, backs, index numbers; :func:`vision.american.synth_faces`) drawn
over two training styles picked at random, one of :data:`MIX_SETS` sets per frame, and from
``wide-mix``: :data:`WIDE_SETS` sets over one or two training styles or the Noto font's glyphs,
American three times in four, and ``wide-mix2``: the same with half its sets over one of
:data:`vision.artwork.EXTRA_STYLES`, and ``wide-mix3``: with xmahjongg's American-labelled
``xm-dorwhite`` and the Unifont glyphs besides.  The renderer's true quads are disturbed the way the
localiser's are (turned into the rotated rectangle around the face half the time, scaled
+-10%, shifted and bent by a few pixels) and cut with :func:`vision.classify.extract_crops` on
the full frame, exactly as :class:`vision.pipeline.TileRecognizer` does.  Tiles whose code the
face source lacks (drawn by the renderer's fallback, a printed label) are left out, and three
backs in four (a third of a table's tiles are backs).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
from functools import cache
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from companion.rules.tiles import ALL_CODES, AMERICAN, CHINESE
from vision.classify import extract_crops
from vision.detect import quad_params, rect_quads
from vision.faces import Faces, real_crops
from vision.render import (
    CAMERA_SUPERSAMPLE,
    random_view,
    render_table,
)
from vision.render_scenes import random_scene

REPO = Path(__file__).resolve().parents[1]
SIZES = ((1280, 720), (1920, 1080))
SOURCES = ("artwork", "american", "photos")
MIX_SOURCE = "american-mix"
MIX_SETS = 12
WIDE_SOURCE = "wide-mix"
WIDE_SETS = 24
WIDE_STYLES = ("font-noto",)
"""Styles that ``wide-mix`` draws on beside the training styles: the Noto font's line-art glyphs
(``font-symbola``, the other font, is kept out to measure a line-art set no model saw)."""
WIDE2_SOURCE = "wide-mix2"
WIDE2_SETS = 24
"""``wide-mix2``: sets like ``wide-mix``'s, half of them over one of
:data:`vision.artwork.EXTRA_STYLES` (GNOME's postmodern faces, xmahjongg's gnome faces), seeded
apart from ``wide-mix`` so that its cached pools stay what they were."""
WIDE3_SOURCE = "wide-mix3"
WIDE3_SETS = 24
WIDE3_STYLES = ("xm-dorwhite", "font-unifont")
"""``wide-mix3``: sets like ``wide-mix2``'s, the first style xmahjongg's American-labelled
``xm-dorwhite`` (:data:`vision.artwork.AMERICAN_STYLES`) 40 % of the time and the Unifont glyphs
15 %; seeded apart from the other pools."""
PHOTO_SOURCE = "american-photos"
PHOTO_SETS = 12
"""``american-photos``: American sets over real photographed tiles of ``tiles-photos-v4/train``
(40 of each code, those whose corners show the face: :func:`face_on`), each set with its own four
photos of each code, index numbers drawn on them, and its own jokers, flowers, soaps and backs
(``vision.american.synth_faces``, seed 9500 + k): how a real American set looks, where the
``photos`` source shows the photos bare and the mixes draw index numbers over artwork."""
MIX_SOURCES = (MIX_SOURCE, WIDE_SOURCE, WIDE2_SOURCE, WIDE3_SOURCE, PHOTO_SOURCE)
FACE_CORNER = (70, 170)
""":func:`face_on`: a crop's corners' mean HSV saturation under the first, value over the second."""


def face_on(crop: npt.NDArray[np.uint8]) -> bool:
    """Whether a photo crop's corners show its tile's face (a pale, unsaturated face), not the
    cloth around a tile lying at 45 degrees inside its upright box."""
    hsv = cv2.cvtColor(crop, cv2.COLOR_BGR2HSV)
    corners = np.concatenate([hsv[:8, :8], hsv[:8, -8:], hsv[-8:, :8], hsv[-8:, -8:]]).reshape(-1, 3)
    return bool(corners[:, 1].mean() < FACE_CORNER[0] and corners[:, 2].mean() > FACE_CORNER[1])


@cache
def _faces(source: str) -> Faces:
    from vision.artwork import tile_faces

    if source == "artwork":
        return tile_faces()
    if source == "american":
        return tile_faces("american-synth")
    if source == "photos":
        return real_crops(per_code=40, split="train")
    if source.startswith(MIX_SOURCE + "/"):
        return _mixed_faces(int(source.split("/", 1)[1]))
    if source.startswith(WIDE_SOURCE + "/"):
        return _wide_faces(int(source.split("/", 1)[1]))
    if source.startswith(WIDE2_SOURCE + "/"):
        return _wide_faces(int(source.split("/", 1)[1]), second=True)
    if source.startswith(WIDE3_SOURCE + "/"):
        return _wide_faces(int(source.split("/", 1)[1]), third=True)
    if source.startswith(PHOTO_SOURCE + "/"):
        return _photo_set(int(source.split("/", 1)[1]))
    raise ValueError(f"unknown face source: {source!r} (known: {', '.join(SOURCES + MIX_SOURCES)})")


@cache
def _train_photos() -> Faces:
    faces = {c: [f for f in v if face_on(f)] for c, v in real_crops(per_code=40, split="train").items()}
    return {c: v for c, v in faces.items() if v}


@cache
def _photo_set(k: int) -> Faces:
    """American set ``k`` of :data:`PHOTO_SOURCE` (``synth_faces`` draws index numbers on the
    number and wind photos, keeps the dragons and leaves the rest)."""
    from vision import american

    return american.synth_faces(seed=9500 + k, per_code=4, bases=_train_photos())


@cache
def _mixed_faces(k: int) -> Faces:
    """American set ``k``: its jokers, flowers, soaps, backs and index numbers drawn over two
    training styles picked with seed ``k`` (never the held-out style)."""
    from scripts.synth_scenes import american_scene_faces
    from vision.artwork import TRAIN_STYLES

    rng = np.random.default_rng(9000 + k)
    bases_styles = [s for s in TRAIN_STYLES if s != "american-synth"]
    styles = tuple(str(s) for s in rng.choice(bases_styles, size=2, replace=False))
    return american_scene_faces(9100 + k, styles)


def wide_set(k: int, second: bool = False, third: bool = False) -> tuple[tuple[str, ...], bool]:
    """Set ``k`` of ``wide-mix`` (``second``: of ``wide-mix2``, ``third``: of ``wide-mix3``): its
    one or two styles, of the training styles and :data:`WIDE_STYLES` (``wide-mix2``: and
    :data:`vision.artwork.EXTRA_STYLES`, the first style one of those half the time; ``wide-mix3``:
    and :data:`WIDE3_STYLES`, the first ``xm-dorwhite`` 40 % and ``font-unifont`` 15 % of the
    time; never the held-out style, ``font-symbola``, nor ``american-synth``, the benchmark's own
    faces), and whether it is drawn as an American set (three times in four)."""
    from vision.artwork import EXTRA_STYLES, TRAIN_STYLES

    pool = [s for s in TRAIN_STYLES if s != "american-synth"] + list(WIDE_STYLES)
    if third:
        rng = np.random.default_rng(8500 + k)
        pool += list(EXTRA_STYLES) + list(WIDE3_STYLES)
        u = rng.random()
        first = WIDE3_STYLES[0] if u < 0.4 else WIDE3_STYLES[1] if u < 0.55 else str(rng.choice(pool))
        rest = [s for s in pool if s != first]
        styles = (first,) + tuple(str(s) for s in rng.choice(rest, size=int(rng.integers(0, 2)), replace=False))
        return styles, bool(rng.random() < 0.75)
    if not second:
        rng = np.random.default_rng(7000 + k)
        styles = tuple(str(s) for s in rng.choice(pool, size=int(rng.integers(1, 3)), replace=False))
        return styles, bool(rng.random() < 0.75)
    rng = np.random.default_rng(7500 + k)
    pool += list(EXTRA_STYLES)
    first = str(rng.choice(EXTRA_STYLES if rng.random() < 0.5 else pool))
    rest = [s for s in pool if s != first]
    styles = (first,) + tuple(str(s) for s in rng.choice(rest, size=int(rng.integers(0, 2)), replace=False))
    return styles, bool(rng.random() < 0.75)


@cache
def _wide_faces(k: int, second: bool = False, third: bool = False) -> Faces:
    """The faces of :func:`wide_set` ``k``: an American set (jokers, flowers, soaps, backs, index
    numbers) over its styles, or the styles' own faces (a font's joker is its Chinese joker glyph)."""
    from scripts.synth_scenes import american_scene_faces
    from vision.artwork import tile_faces

    styles, american = wide_set(k, second, third)
    if american:
        return american_scene_faces((8600 if third else 7600 if second else 7100) + k, styles)
    out: dict[str, list[np.ndarray]] = {}
    for style in styles:
        for code, imgs in tile_faces(style).items():
            out.setdefault(code, []).extend(imgs)
    return out


def jitter_quads(quads: npt.NDArray[np.float32], rng: np.random.Generator) -> npt.NDArray[np.float32]:
    """True face quads -> quads with the localiser's typical error (rectangle, scale, shift, bend)."""
    q = np.asarray(quads, np.float32).copy()
    n = len(q)
    if n == 0:
        return q
    rect = rng.random(n) < 0.5
    if rect.any():
        p = quad_params(q[rect])
        p[:, 2:4] *= rng.uniform(0.95, 1.1, (int(rect.sum()), 1))  # the body, a little wider
        q[rect] = rect_quads(p[:, 0], p[:, 1], p[:, 2], p[:, 3], p[:, 4])
    c = q.mean(axis=1, keepdims=True)
    size = np.linalg.norm(q[:, 1] - q[:, 0], axis=1)[:, None, None]  # the tile's width in px
    scale = rng.uniform(0.9, 1.1, (n, 1, 1)) * np.exp(rng.normal(0, 0.04, (n, 1, 2)))
    shift = rng.normal(0, 0.08, (n, 1, 2)) * size
    bend = rng.normal(0, 0.03, (n, 4, 2)) * size
    return ((q - c) * scale + c + shift + bend).astype(np.float32)


def snap_jitter(quads: npt.NDArray[np.float32], rng: np.random.Generator) -> npt.NDArray[np.float32]:
    """True face quads -> quads with the table reader's error: it lays the true face outline in
    perspective at the localised centre (``TableReader.snap_quads``), so only the centre (a few
    per cent of the tile) and the scale (the face's height above the table) are off."""
    q = np.asarray(quads, np.float32)
    if len(q) == 0:
        return q.copy()
    c = q.mean(axis=1, keepdims=True)
    size = np.linalg.norm(q[:, 1] - q[:, 0], axis=1)[:, None, None]
    scale = rng.uniform(0.95, 1.05, (len(q), 1, 1))
    return ((q - c) * scale + c + rng.normal(0, 0.05, (len(q), 1, 2)) * size).astype(np.float32)


def frame_crops(seed: int, source: str, snap: float = 0.0, area: float = 0.0) -> tuple[npt.NDArray[np.uint8], list[str]]:
    """One rendered table's crops and their codes; ``area``: the chance that the frame is drawn as a
    camera sees it, each pixel the mean over its area (``render_table``'s default), not sampled
    once at its centre (the first twenty sessions' pools)."""
    from vision.layout import load_layout

    rng = np.random.default_rng(seed + 15485863)
    layout = load_layout("siamese-2")
    if source == MIX_SOURCE:
        source = f"{MIX_SOURCE}/{int(rng.integers(MIX_SETS))}"
    elif source == WIDE_SOURCE:
        source = f"{WIDE_SOURCE}/{int(rng.integers(WIDE_SETS))}"
    elif source == WIDE2_SOURCE:
        source = f"{WIDE2_SOURCE}/{int(rng.integers(WIDE2_SETS))}"
    elif source == WIDE3_SOURCE:
        source = f"{WIDE3_SOURCE}/{int(rng.integers(WIDE3_SETS))}"
    elif source == PHOTO_SOURCE:
        source = f"{PHOTO_SOURCE}/{int(rng.integers(PHOTO_SETS))}"
    tileset = CHINESE if source == "photos" or rng.random() < 0.25 else AMERICAN
    scene = random_scene(layout, seed, tileset)
    faces = _faces(source)
    size = SIZES[int(rng.integers(len(SIZES)))]
    # a draw of its own, so that a pool with area 0 is the very frames it always was
    supersample = CAMERA_SUPERSAMPLE if area > 0 and np.random.default_rng(seed + 7).random() < area else 1
    r = render_table(layout, scene, seed=seed, view=random_view(seed, size), faces=faces, supersample=supersample)
    # backs are a third of a table's tiles: keep a quarter of them
    keep = [t for t in r.tiles if t.code in faces and (t.code != "BK" or rng.random() < 0.25)]
    if not keep:
        return np.zeros((0, 64, 48, 3), np.uint8), []
    true = np.asarray([t.quad_px for t in keep], np.float32)
    if snap > 0:
        snapped = rng.random(len(keep)) < snap
        quads = np.where(snapped[:, None, None], snap_jitter(true, rng), jitter_quads(true, rng))
    else:  # as the pools of the first sessions were drawn
        quads = jitter_quads(true, rng)
    return extract_crops(r.image, quads), [t.code for t in keep]


def _job(job: tuple[int, str, float, float]) -> tuple[npt.NDArray[np.uint8], list[str]]:
    return frame_crops(*job)


def table_crops(seed: int, frames: int, workers: int = 2, snap: float = 0.0,
                sources: tuple[str, ...] = SOURCES, area: float = 0.0) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """Crops from ``frames`` rendered tables (face ``sources`` in turn) and their class indices;
    a share ``snap`` of the tiles cut as the table reader cuts them (:func:`snap_jitter`), the
    rest with the photo localiser's error (:func:`jitter_quads`); a share ``area`` of the frames
    area-sampled as a camera sees them (:func:`frame_crops`)."""
    for source in sources:
        if source not in SOURCES + MIX_SOURCES:
            raise ValueError(f"unknown face source: {source!r} (known: {', '.join(SOURCES + MIX_SOURCES)})")
    jobs = [(seed * 100003 + i, sources[i % len(sources)], snap, area) for i in range(frames)]
    if workers > 1:
        with mp.get_context("spawn").Pool(workers) as pool:
            parts = pool.map(_job, jobs)
    else:
        parts = [_job(j) for j in jobs]
    x = np.concatenate([p[0] for p in parts]) if parts else np.zeros((0, 64, 48, 3), np.uint8)
    y = np.array([ALL_CODES.index(c) for p in parts for c in p[1]], np.int64)
    return x, y


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--frames", type=int, default=12)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--show", type=Path, default=None, help="write a grid of the first crops here")
    ap.add_argument("--sources", default=",".join(SOURCES),
                    help=f"face sources in turn, of {', '.join(SOURCES + MIX_SOURCES)} (default: the first three)")
    args = ap.parse_args()
    x, y = table_crops(args.seed, args.frames, args.workers, sources=tuple(args.sources.split(",")))
    counts = np.bincount(y, minlength=len(ALL_CODES))
    print(f"{len(x)} crops from {args.frames} frames; per class: "
          + " ".join(f"{c}:{n}" for c, n in zip(ALL_CODES, counts, strict=True) if n))
    if args.show is not None:
        import cv2

        n = min(len(x), 160)
        cols = 20
        grid = np.zeros((((n + cols - 1) // cols) * 64, cols * 48, 3), np.uint8)
        for i in range(n):
            grid[(i // cols) * 64 : (i // cols + 1) * 64, (i % cols) * 48 : (i % cols + 1) * 48] = x[i]
        args.show.parent.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(args.show), grid)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
