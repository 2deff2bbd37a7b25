"""Tile recognition end to end: a BGR frame -> :class:`vision.types.Detections`.

:class:`TileRecognizer` chains the localiser (:mod:`vision.detect`), crop extraction and the crop
classifier (:mod:`vision.classify`), optionally refined by an enrolled tile set
(``calibration/tilesets/NAME/``).  Models are loaded and warmed up on construction.  Input
images are validated by :func:`vision.io.check_image`; a bad input raises
:class:`vision.io.ImageLoadError` (a ``ValueError``) and never crashes the caller's loop.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from vision.detect import TileLocalizer
from vision.io import check_image
from vision.types import Detections

REPO = Path(__file__).resolve().parents[1]


def auto_long_side(shape: tuple[int, ...]) -> int:
    """The localiser's input long side for an image: half size, kept within 320..640 px.

    Tiles in a phone photo or a table frame are 25-130 px across; halving puts them at 12-65 px,
    the range the localiser is trained on.  Small images are not enlarged past 320.
    """
    long = max(shape[0], shape[1])
    return int(min(max(long // 2, min(long, 320)), 640))


class TileRecognizer:
    """Localise, crop, classify: ``TileRecognizer().detect(image_bgr) -> Detections``.

    ``tileset``: the name of an enrolled set under ``calibration/tilesets/`` whose prototypes
    refine the classifier's reading.  ``input_long_side``: force the localiser's input size
    (default: :func:`auto_long_side`).  ``min_objectness``: drop weaker localiser peaks.
    """

    def __init__(
        self,
        models_dir: str | Path = REPO / "models",
        tileset: str | None = None,
        input_long_side: int | None = None,
        min_objectness: float = 0.3,
        threads: int = 2,
    ) -> None:
        from vision.classify import TileClassifier

        models = Path(models_dir)
        self.localizer = TileLocalizer(
            models / "localizer.onnx", threshold=min_objectness, threads=threads
        )
        self.classifier = TileClassifier(models / "classifier.onnx", threads=threads)
        self.tileset = tileset
        self.prototypes: Any = None
        if tileset is not None:
            self.prototypes = load_prototypes(tileset, self.classifier.classes)
        self.input_long_side = input_long_side
        self.detect(np.full((320, 320, 3), 90, np.uint8))  # warm-up of every stage

    def detect(self, image_bgr: npt.NDArray[np.uint8], name: str = "<frame>") -> Detections:
        """Every tile in one BGR image, in its pixel coordinates; ``meta['ms']`` is the time."""
        t0 = time.perf_counter()
        img = check_image(image_bgr, name)
        long_side = self.input_long_side or auto_long_side(img.shape)
        loc = self.localizer.localize(img, scale=long_side / max(img.shape[:2]))
        if len(loc) == 0:
            d = Detections.empty()
            return Detections(
                d.boxes,
                d.quads,
                d.codes,
                d.confidence,
                meta={"ms": _ms(t0), "objectness": loc.score},
            )
        from vision.classify import extract_crops

        crops = extract_crops(img, loc.quads)
        res = self.classifier.run(crops)
        if self.prototypes is not None:
            res = self.prototypes.apply(res)
        return Detections.from_quads(
            loc.quads,
            list(res.codes),
            res.confidence,
            embeddings=res.embeddings,
            meta={"ms": _ms(t0), "objectness": loc.score},
        )


def load_prototypes(name: str, classes: list[str]) -> Any:
    """The enrolled tile set ``name`` (``python -m companion enroll``) as a classifier refiner."""
    from vision.tileset import TileSetPrototypes, load_tileset

    return TileSetPrototypes(load_tileset(name), classes)


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 2)
