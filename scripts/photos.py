"""Load the tiles-photos-v4 photo set (CC BY 4.0 "Chinese Mahjong Detection" v4, Roboflow project
riichimahjongdetection/chinese-mahjong-detection): images, pixel boxes, tile codes.

Labels are YOLO rows ``class xc yc w h`` (normalised); about 6% are polygons
``class x1 y1 x2 y2 ...``: their bounding box is the box, and the polygon is kept (it gives the
tile's orientation).  Class ids map to the project's tile codes by :data:`CLASS_CODES` (the table
in the data set's README.md).  The data is read by path from ``<repo>/../shared/data`` or from
``$COMPANION_SHARED/data``; it is never copied into the repository.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

REPO = Path(__file__).resolve().parents[1]

CLASS_CODES: tuple[str, ...] = (
    "SE1", "1C", "1D", "1B", "E", "SE2", "2C", "2D", "2B", "S",
    "SE3", "3C", "3D", "3B", "W", "SE4", "4C", "4D", "4B", "N",
    "FL1", "5C", "5D", "5B", "WD", "FL2", "6C", "6D", "6B", "GD",
    "FL3", "7C", "7D", "7B", "RD", "FL4", "8C", "8D", "8B", "9C",
    "9D", "9B",
)  # fmt: skip
"""Class id of the export's data.yaml -> tile code (42 classes)."""


class PhotoLabelError(ValueError):
    """A label row that cannot be read; the message names the file and line."""


def shared_data_dir() -> Path:
    """``$COMPANION_SHARED/data`` when set, else ``<repo>/../shared/data``."""
    env = os.environ.get("COMPANION_SHARED")
    base = Path(env) if env else REPO.parent / "shared"
    return base / "data"


def photos_dir(split: str = "valid") -> Path:
    """The folder of one split (``train`` or ``valid``) of tiles-photos-v4."""
    return shared_data_dir() / "tiles-photos-v4" / split


@dataclass(frozen=True)
class PhotoSample:
    """One labelled photo.

    boxes:    (N, 4) float32 pixel ``x1, y1, x2, y2``
    codes:    N tile codes
    polygons: per tile, the (K, 2) float32 pixel polygon for polygon rows, else None
    """

    image_path: Path
    width: int
    height: int
    boxes: npt.NDArray[np.float32]
    codes: tuple[str, ...]
    polygons: tuple[npt.NDArray[np.float32] | None, ...]


def parse_label_line(
    line: str, width: int, height: int, where: str
) -> tuple[str, list[float], npt.NDArray[np.float32] | None]:
    """One label row -> (code, pixel box, pixel polygon or None)."""
    parts = line.split()
    try:
        cls = int(parts[0])
        vals = [float(v) for v in parts[1:]]
    except (ValueError, IndexError) as exc:
        raise PhotoLabelError(f"{where}: unreadable label row {line!r}") from exc
    if not 0 <= cls < len(CLASS_CODES):
        raise PhotoLabelError(f"{where}: class id {cls} out of range in {line!r}")
    if len(vals) == 4:
        xc, yc, w, h = vals
        box = [
            (xc - w / 2) * width,
            (yc - h / 2) * height,
            (xc + w / 2) * width,
            (yc + h / 2) * height,
        ]
        return CLASS_CODES[cls], box, None
    if len(vals) >= 6 and len(vals) % 2 == 0:
        poly = np.asarray(vals, np.float32).reshape(-1, 2) * np.array([width, height], np.float32)
        box = [
            float(poly[:, 0].min()),
            float(poly[:, 1].min()),
            float(poly[:, 0].max()),
            float(poly[:, 1].max()),
        ]
        return CLASS_CODES[cls], box, poly
    raise PhotoLabelError(f"{where}: expected 4 values or a polygon, got {len(vals)} in {line!r}")


def read_labels(
    label_path: Path, width: int, height: int
) -> tuple[npt.NDArray[np.float32], tuple[str, ...], tuple[npt.NDArray[np.float32] | None, ...]]:
    """Read one YOLO label file into pixel boxes, codes and polygons."""
    boxes: list[list[float]] = []
    codes: list[str] = []
    polys: list[npt.NDArray[np.float32] | None] = []
    text = label_path.read_text() if label_path.is_file() else ""
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        code, box, poly = parse_label_line(line, width, height, f"{label_path}:{i}")
        boxes.append(box)
        codes.append(code)
        polys.append(poly)
    arr = np.asarray(boxes, np.float32).reshape(-1, 4)
    return arr, tuple(codes), tuple(polys)


def image_size(path: Path) -> tuple[int, int]:
    """(width, height) of an image file (reads the header through cv2)."""
    import cv2

    img = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    if img is None:
        raise ValueError(f"cannot read image: {str(path)!r}")
    return int(img.shape[1]), int(img.shape[0])


def load_split(
    split: str = "valid", limit: int | None = None, size: tuple[int, int] | None = (640, 640)
) -> list[PhotoSample]:
    """All labelled photos of a split, sorted by file name.

    ``size`` is the known image size (the export is 640x640); pass None to read each image's size.
    """
    folder = photos_dir(split)
    images = sorted((folder / "images").glob("*.jpg"))
    if not images:
        raise FileNotFoundError(f"no photos under {str(folder / 'images')!r}")
    out: list[PhotoSample] = []
    for path in images[:limit]:
        w, h = size if size is not None else image_size(path)
        boxes, codes, polys = read_labels(folder / "labels" / (path.stem + ".txt"), w, h)
        out.append(PhotoSample(path, w, h, boxes, codes, polys))
    return out


def iter_split(split: str = "valid") -> Iterator[PhotoSample]:
    """Like :func:`load_split`, one sample at a time."""
    yield from load_split(split)


if __name__ == "__main__":
    for split in ("train", "valid"):
        samples = load_split(split)
        n = sum(len(s.codes) for s in samples)
        npoly = sum(p is not None for s in samples for p in s.polygons)
        print(f"{split}: {len(samples)} photos, {n} tiles, {npoly} polygon rows")
