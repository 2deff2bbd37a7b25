"""Tile face artwork: one BGR portrait face image per tile code, per artwork style.

Reads the shared artwork folder (``<repo>/../shared/data/artwork``, or ``$COMPANION_SHARED/data/artwork``)
and synthesises what no source has: American jokers (the word JOKER with a simple picture),
American flowers ``F``, plain coloured tile backs ``BK``, American "soap" white dragons and
index-numbered craks.  Every face is ``FACE_H x FACE_W`` (96 x 72, long side vertical).

Rendering (rsvg-convert for the SVG sets) happens once; results are cached as one ``.npz`` per
style under ``~/.cache/siamese-companion/artwork/`` (``$COMPANION_CACHE`` overrides the root),
never in the repository.  ``tile_faces()`` returns the training styles merged (the held-out
style :data:`HOLDOUT_STYLE` excluded); ``tile_faces(style)`` one style.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np

from companion.rules.tiles import ALL_CODES, CHINESE_FLOWERS, SEASONS
from vision.artwork_images import FACE_H, FACE_W, ArtworkError, Image, shared_dir
from vision.artwork_sources import KM_SETS, LOADERS

__all__ = [
    "AMERICAN_STYLES", "CACHE_VERSION", "EXTRA_STYLES", "FACE_H", "FACE_W", "FONT_STYLES", "HOLDOUT_STYLE",
    "INDEX_BASES", "STYLES", "TRAIN_STYLES", "ArtworkError", "cache_dir", "flower_codes", "shared_dir",
    "tile_faces",
]

CACHE_VERSION = "v3"  # v3: american-synth has red and green dragons

# kmahjongg "alphabet" and gnome "edu_kang_xi" draw letters/radicals instead of tile faces: unused.
STYLES: tuple[str, ...] = (
    *(f"km-{s}" for s in KM_SETS),
    "gnome-smooth",
    "xm-dorothys",
    "xm-real",
    "xm-gnome2",
    "fluffy-regular",
    "fluffy-black",
    "ffalt-uni",
    "american-synth",
)
FONT_STYLES: tuple[str, ...] = ("font-noto", "font-symbola", "font-unifont")
"""Line-art faces drawn from the Unicode mahjong glyphs of the shared fonts (U+1F000..U+1F02B,
the joker U+1F02A included); kept out of :data:`STYLES` so that no training default changes."""
EXTRA_STYLES: tuple[str, ...] = ("gnome-postmodern", "xm-gnome")
"""Two more sets of the shared artwork (GNOME Mahjongg's ``postmodern.svg``, xmahjongg's
``gnome.gif``, beige and blue), kept out of :data:`STYLES` like the fonts, for the same reason."""
AMERICAN_STYLES: tuple[str, ...] = ("xm-dorwhite",)
"""xmahjongg's ``dorwhite.gif``: an American-labelled set (index numbers, NORTH/EAST..., RED and
GREEN DRAGON, labelled flowers) on white and on yellow faces, its dots and bams drawn apart from
``xm-dorothys``'s; kept out of :data:`STYLES` like :data:`EXTRA_STYLES`."""
HOLDOUT_STYLE = "xm-dorothys"
"""Never used for training: the enrollment measurement teaches it from one example per class."""
TRAIN_STYLES: tuple[str, ...] = tuple(s for s in STYLES if s != HOLDOUT_STYLE)


def cache_dir() -> Path:
    env = os.environ.get("COMPANION_CACHE")
    root = Path(env) if env else Path.home() / ".cache" / "siamese-companion"
    return root / "artwork" / CACHE_VERSION


INDEX_BASES = ("km-default", "km-classic", "gnome-smooth", "fluffy-regular", "xm-real")


def _load_american_synth() -> dict[str, list[Image]]:
    from vision import american

    bases: dict[str, list[Image]] = {}
    for style in INDEX_BASES:
        for code, imgs in _style_faces(style).items():
            bases.setdefault(code, []).extend(imgs)
    return american.synth_faces(seed=1234, per_code=12, bases=bases)


_LOADERS: dict[str, Callable[[], dict[str, list[Image]]]] = {
    **LOADERS,
    "american-synth": _load_american_synth,
}


# ---------------------------------------------------------------- cache and public API


def _save_npz(path: Path, faces: dict[str, list[Image]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {f"{code}__{i}": img for code, imgs in faces.items() for i, img in enumerate(imgs)}
    tmp = path.with_suffix(f".tmp{os.getpid()}.npz")
    np.savez_compressed(tmp, **arrays)  # type: ignore[arg-type]
    os.replace(tmp, path)


def _load_npz(path: Path) -> dict[str, list[Image]]:
    out: dict[str, list[Image]] = {}
    with np.load(path) as data:
        keys = sorted(data.files, key=lambda k: (k.split("__")[0], int(k.split("__")[1])))
        for key in keys:
            out.setdefault(key.split("__")[0], []).append(np.asarray(data[key], np.uint8))
    return out


@cache
def _style_faces(style: str) -> dict[str, tuple[Image, ...]]:
    if style not in _LOADERS:
        raise ArtworkError(f"unknown artwork style: {style!r} (known: {', '.join(STYLES + FONT_STYLES + EXTRA_STYLES + AMERICAN_STYLES)})")
    path = cache_dir() / f"{style}.npz"
    if path.is_file():
        faces = _load_npz(path)
    else:
        faces = _LOADERS[style]()
        _save_npz(path, faces)
    return {code: tuple(imgs) for code, imgs in faces.items()}


def tile_faces(style: str | None = None) -> dict[str, list[np.ndarray]]:
    """BGR ``96 x 72`` faces per tile code.

    ``style=None`` merges every training style (all of :data:`STYLES` but :data:`HOLDOUT_STYLE`);
    the merge holds every code of the notation.  A single style holds the codes its artwork
    has (``american-synth`` holds ``J``, ``F``, ``BK``, the dragons and American number/soap faces).
    Returned images are shared read-only arrays: copy before drawing on them.
    """
    styles = TRAIN_STYLES if style is None else (style,)
    merged: dict[str, list[np.ndarray]] = {}
    for s in styles:
        for code, imgs in _style_faces(s).items():
            merged.setdefault(code, []).extend(imgs)
    for faces in merged.values():
        for img in faces:
            img.flags.writeable = False
    return {c: merged[c] for c in ALL_CODES if c in merged}


def flower_codes() -> tuple[str, ...]:
    """Chinese flower and season codes (read as ``F`` under an American tile set)."""
    return CHINESE_FLOWERS + SEASONS
