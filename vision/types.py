"""Validated containers passed between vision stages.

:class:`Detections` is the one value that crosses every stage boundary of the perception
pipeline (localise -> classify -> smooth -> zone assignment).  It is filtered with numpy masks
(``d[d.confidence > 0.5]``) and never imports an inference runtime.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]

PER_TILE_META = ("objectness", "blank")
"""Keys of :attr:`Detections.meta` holding one value per tile, which follow the tiles when they are
indexed: the localiser's ``objectness``, and ``blank`` (:func:`vision.blanks.blank_faces`: a face
found among the backs by its colour)."""


@dataclass(frozen=True)
class Detections:
    """N tiles found in one image, in that image's pixel coordinates.

    boxes:       (N, 4) float32 axis-aligned ``x1, y1, x2, y2``
    quads:       (N, 4, 2) float32 tile corners, clockwise from the tile face's top-left
    codes:       (N,) str tile codes of the notation (``"5D"``, ``"J"``, ``"BK"``...)
    confidence:  (N,) float32 in [0, 1], the classifier's probability for ``codes``
    embeddings:  optional (N, D) float32 classifier embeddings (for enrolled tile sets)
    probs:       optional (N, C) float32 class probabilities, columns named by ``classes``
                 (a table reader decodes a rack's touching runs jointly from them)
    """

    boxes: FloatArray
    quads: FloatArray
    codes: npt.NDArray[np.str_]
    confidence: FloatArray
    embeddings: FloatArray | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    probs: FloatArray | None = None
    classes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        n = len(self.boxes)
        if self.boxes.shape != (n, 4):
            raise ValueError(f"boxes must be (N, 4), got {self.boxes.shape}")
        if self.quads.shape != (n, 4, 2):
            raise ValueError(f"quads must be (N, 4, 2), got {self.quads.shape}")
        if self.codes.shape != (n,) or self.confidence.shape != (n,):
            raise ValueError(
                f"codes and confidence must be ({n},), got {self.codes.shape} and {self.confidence.shape}"
            )
        if self.embeddings is not None and self.embeddings.shape[0] != n:
            raise ValueError(f"embeddings must have {n} rows, got {self.embeddings.shape}")
        if self.probs is not None and self.probs.shape != (n, len(self.classes)):
            raise ValueError(f"probs must be (N, {len(self.classes)}) for {len(self.classes)} classes, got {self.probs.shape}")

    @classmethod
    def empty(cls) -> Detections:
        return cls(
            boxes=np.zeros((0, 4), np.float32),
            quads=np.zeros((0, 4, 2), np.float32),
            codes=np.zeros((0,), dtype="<U3"),
            confidence=np.zeros((0,), np.float32),
        )

    @classmethod
    def from_quads(
        cls, quads: FloatArray, codes: list[str], confidence: FloatArray, **extra: Any
    ) -> Detections:
        quads = np.asarray(quads, np.float32).reshape(-1, 4, 2)
        boxes = np.concatenate([quads.min(axis=1), quads.max(axis=1)], axis=1).astype(np.float32)
        return cls(
            boxes=boxes,
            quads=quads,
            codes=np.asarray(codes, dtype="<U3").reshape(-1),
            confidence=np.asarray(confidence, np.float32).reshape(-1),
            **extra,
        )

    def __len__(self) -> int:
        return len(self.boxes)

    def __getitem__(self, index: Any) -> Detections:
        meta = dict(self.meta)
        for key in PER_TILE_META:
            per_tile = meta.get(key)
            if isinstance(per_tile, np.ndarray) and per_tile.shape[:1] == (len(self),):
                meta[key] = per_tile[index]  # one value per tile: it follows the tiles
        return Detections(
            boxes=self.boxes[index],
            quads=self.quads[index],
            codes=self.codes[index],
            confidence=self.confidence[index],
            embeddings=None if self.embeddings is None else self.embeddings[index],
            meta=meta,
            probs=None if self.probs is None else self.probs[index],
            classes=self.classes,
        )

    def joined(self, other: Detections) -> Detections:
        """These tiles, then ``other``'s (read by the same classifier): embeddings and
        probabilities are kept where both have them; a per-tile ``meta['objectness']`` is kept
        where both have one."""
        if not len(other):
            return self
        if not len(self):
            return other

        def both(a: FloatArray | None, b: FloatArray | None) -> FloatArray | None:
            return None if a is None or b is None else np.concatenate([a, b]).astype(np.float32)

        meta = dict(self.meta)
        mine, theirs = self.meta.get("objectness"), other.meta.get("objectness")
        if isinstance(mine, np.ndarray) and isinstance(theirs, np.ndarray):
            meta["objectness"] = np.concatenate([mine, theirs])
        else:
            meta.pop("objectness", None)
        return Detections(
            boxes=np.concatenate([self.boxes, other.boxes]).astype(np.float32),
            quads=np.concatenate([self.quads, other.quads]).astype(np.float32),
            codes=np.concatenate([self.codes, other.codes]),
            confidence=np.concatenate([self.confidence, other.confidence]).astype(np.float32),
            embeddings=both(self.embeddings, other.embeddings),
            meta=meta,
            probs=both(self.probs, other.probs),
            classes=self.classes or other.classes,
        )

    @property
    def centres(self) -> FloatArray:
        centres: FloatArray = self.quads.mean(axis=1).astype(np.float32)
        return centres

    def to_json(self) -> list[dict[str, Any]]:
        """The ``tiles`` list of the ``detect`` command's JSON."""
        out = []
        for i in range(len(self)):
            out.append(
                {
                    "code": str(self.codes[i]),
                    "box": [round(float(v), 1) for v in self.boxes[i]],
                    "quad": [[round(float(x), 1), round(float(y), 1)] for x, y in self.quads[i]],
                    "confidence": round(float(self.confidence[i]), 4),
                }
            )
        return out
