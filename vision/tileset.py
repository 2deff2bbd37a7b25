"""Enrolled tile sets on disk: one example crop per tile code, with its embedding.

A tile set lives in ``calibration/tilesets/NAME/``: ``tileset.json`` (name, layout, codes, the
classifier's sha256), ``prototypes.npz`` (``codes`` and L2-normalised ``embeddings``),
``crops/NN_CODE.png``, ``check.png``: the crops laid out as the sheet lays them, under the codes
they are enrolled as (:mod:`vision.tileset_sheet`), for the player to check, and the enrollment
photo itself (``photo.jpg``), to enroll the set again from.  This module names,
saves, loads and lists them; :mod:`vision.prototypes` reads a tile with one (its prototypes embedded for the running classifier, weighed and matched).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from vision.classify import l2_normalise
from vision.tileset_sheet import check_sheet, marks

FloatArray = npt.NDArray[np.float32]
REPO = Path(__file__).resolve().parents[1]
TILESETS_DIR = REPO / "calibration" / "tilesets"
CHECK_SHEET = "check.png"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class TileSetError(ValueError):
    """A tile set that is missing, malformed or badly named; the message names it."""


def check_name(name: str) -> str:
    if not _NAME.match(name) or name in (".", ".."):
        raise TileSetError(f"invalid tile set name: {name!r} (letters, digits, _ . -; up to 64)")
    return name


@dataclass(frozen=True)
class TileSet:
    """An enrolled set: one or more prototype embeddings per code."""

    name: str
    layout: str
    codes: tuple[str, ...]
    embeddings: FloatArray
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.embeddings.ndim != 2 or len(self.embeddings) != len(self.codes):
            raise TileSetError(
                f"tile set {self.name!r}: {len(self.codes)} codes but embeddings {self.embeddings.shape}"
            )

    @property
    def american(self) -> bool:
        return self.layout == "american"


def prototypes_from(embeddings: FloatArray, copies: FloatArray | None, n: int) -> FloatArray:
    """One prototype per tile: the normalised mean of its embedding and its ``n`` copies' ones."""
    emb = l2_normalise(embeddings)
    if copies is None or n == 0:
        return emb
    extra = l2_normalise(copies).reshape(len(emb), n, -1)
    return l2_normalise((emb + extra.sum(axis=1)) / (n + 1))


def tileset_dir(name: str, root: Path | None = None) -> Path:
    return (root or TILESETS_DIR) / check_name(name)


def save_tileset(tileset: TileSet, crops: npt.NDArray[np.uint8], root: Path | None = None) -> Path:
    """Write a tile set's folder; returns it."""
    folder = tileset_dir(tileset.name, root)
    (folder / "crops").mkdir(parents=True, exist_ok=True)
    for old in (folder / "crops").glob("*.png"):
        old.unlink()
    for i, (code, crop) in enumerate(zip(tileset.codes, crops, strict=True)):
        cv2.imwrite(str(folder / "crops" / f"{i:02d}_{code}.png"), crop)
    np.savez(
        folder / "prototypes.npz", codes=np.array(tileset.codes), embeddings=tileset.embeddings
    )
    info = {
        "name": tileset.name,
        "layout": tileset.layout,
        "codes": list(tileset.codes),
        **tileset.meta,
    }
    (folder / "tileset.json").write_text(json.dumps(info, indent=1) + "\n")
    sheet = check_sheet(crops, tileset.codes, tileset.layout, marks(tileset.meta))
    cv2.imwrite(str(folder / CHECK_SHEET), sheet)
    return folder


def folder_of(name_or_path: str | Path, root: Path | None = None) -> Path:
    """A set's folder: a folder path as given, else the named set's under ``root`` (or
    ``calibration/tilesets``); a :class:`TileSetError` for a bad name."""
    p = Path(name_or_path)
    return p if p.is_dir() else tileset_dir(str(name_or_path), root)


def tileset_info(name_or_path: str | Path, root: Path | None = None) -> dict[str, Any]:
    """A set's ``tileset.json``; a :class:`TileSetError` that names the set or the file where it is
    not enrolled, cannot be read or is not a JSON object (its fields are the caller's to check)."""
    folder = folder_of(name_or_path, root)
    path = folder / "tileset.json"
    if not path.is_file():
        raise TileSetError(f"no enrolled tile set {str(name_or_path)!r} (looked in {str(folder)!r})")
    try:
        info = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise TileSetError(f"cannot read {str(path)!r}: {exc}") from exc
    if not isinstance(info, dict):
        raise TileSetError(f"cannot read {str(path)!r}: not a JSON object")
    return info


def load_tileset(name_or_path: str | Path, root: Path | None = None) -> TileSet:
    """A tile set by name (under ``calibration/tilesets``) or by folder path."""
    folder = folder_of(name_or_path, root)
    info = tileset_info(name_or_path, root)
    with np.load(folder / "prototypes.npz") as data:
        codes = tuple(str(c) for c in data["codes"])
        emb = l2_normalise(np.asarray(data["embeddings"], np.float32))
    meta = {k: v for k, v in info.items() if k not in ("name", "layout", "codes")}
    return TileSet(str(info["name"]), str(info["layout"]), codes, emb, meta)


def places_to_check(name_or_path: str | Path, root: Path | None = None) -> list[tuple[str, str]]:
    """The pairs of places an enrollment named as perhaps holding each other's tiles
    (``maybe_swapped`` in ``tileset.json``, :func:`vision.enroll_order.doubtful_swaps`); none
    where the set says none or its ``tileset.json`` cannot be read (the recogniser says that)."""
    try:
        pairs = tileset_info(name_or_path, root).get("maybe_swapped") or []
    except TileSetError:
        return []
    if not isinstance(pairs, list):
        return []
    return [(str(a), str(b)) for a, b in (q for q in pairs if isinstance(q, list) and len(q) == 2)]


def to_check(name_or_path: str | Path, root: Path | None = None) -> list[str]:
    """:func:`places_to_check` in words, a line each, for whatever reads with the set to say."""
    return [f"tile set {name_or_path}: the tiles in {a}'s and {b}'s places may lie in each other's places (its "
            "enrollment could not tell); look at them, framed in amber on the Tile set page or in its check.png, "
            "and enroll it again if they do"
            for a, b in places_to_check(name_or_path, root)]


def stored_crops(name_or_path: str | Path, root: Path | None = None) -> npt.NDArray[np.uint8] | None:
    """The enrolled crops of a tile set in layout order (``crops/NN_CODE.png``), or None when any
    is missing or unreadable."""
    files = sorted((folder_of(name_or_path, root) / "crops").glob("*.png"))
    crops = [c for c in (cv2.imread(str(f), cv2.IMREAD_COLOR) for f in files) if c is not None]
    if not crops or len(crops) != len(files) or len({c.shape for c in crops}) != 1:
        return None
    return np.stack(crops).astype(np.uint8)


PHOTO = "photo"
"""The enrollment photo kept in the set's folder (``photo.jpg``, ``photo.png``, ...), as taken, so
that the set can be enrolled again from it (two places exchanged, ``--as-laid``) with no new photo."""


def save_photo(folder: Path, data: bytes, suffix: str) -> Path:
    """Keep an enrollment photo's bytes in the set's ``folder`` (a photo kept before is replaced)."""
    for old in folder.glob(f"{PHOTO}.*"):
        old.unlink()
    ext = suffix.lower() if re.fullmatch(r"\.[a-z0-9]{1,5}", suffix.lower()) else ".jpg"
    path = folder / f"{PHOTO}{ext}"
    path.write_bytes(data)
    return path


def stored_photo(name_or_path: str | Path, root: Path | None = None) -> Path | None:
    """The enrollment photo kept with a set (:func:`save_photo`); None for a set enrolled before
    photos were kept, or none of that name."""
    return next(iter(sorted(folder_of(name_or_path, root).glob(f"{PHOTO}.*"))), None)


def list_tilesets(root: Path | None = None) -> list[str]:
    base = root or TILESETS_DIR
    return sorted(p.name for p in base.glob("*/tileset.json") for p in [p.parent])
