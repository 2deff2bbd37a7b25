"""What the localiser is taught on a window: a photo's labels as quads (:func:`photo_quads`) and
whether their sizes are trusted (:func:`loose_boxes`), the tiles its labels leave out (face-down
backs, :func:`unlabelled_backs`; face-up piles, :func:`unlabelled_tiles_mask`,
:func:`one_per_tile`) and the heatmap and regression targets (:func:`make_targets`,
:func:`unlabelled_weight`).  Torch-free.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from scripts.localizer_augment import SIZE
from scripts.photos import PhotoSample
from vision.detect import STRIDE, quad_iou_boxes, quad_params, suppress_overlaps


def photo_quads(s: PhotoSample) -> np.ndarray:
    """Quads for a photo's tiles: polygon rows via minAreaRect, others as their box."""
    quads = []
    for box, poly in zip(s.boxes, s.polygons, strict=True):
        if poly is not None and len(poly) >= 4:
            quads.append(cv2.boxPoints(cv2.minAreaRect(poly.astype(np.float32))))
        else:
            x1, y1, x2, y2 = box
            quads.append(np.array([[x1, y1], [x2, y1], [x2, y2], [x1, y2]], np.float32))
    return np.asarray(quads, np.float32).reshape(-1, 4, 2)


def loose_boxes(boxes: np.ndarray) -> bool:
    """True for photos whose boxes overlap like the export's +-45 degree turns (boxes of turned
    tiles): their sizes and angles are not trusted, only their centres (577 of 1350 train photos,
    0 of 296 valid photos at this threshold)."""
    if len(boxes) < 2:
        return False
    iou = quad_iou_boxes(boxes.astype(np.float32), boxes.astype(np.float32))
    np.fill_diagonal(iou, 0)
    return bool(np.median(iou.max(axis=1)) > 0.2)


BACK_COLOURS: dict[str, tuple[tuple[int, int, int], tuple[int, int, int]]] = {
    "blue": ((90, 70, 110), (115, 255, 255)),
    "magenta": ((145, 90, 60), (175, 255, 255)),
}
"""OpenCV HSV bounds of the backs of the sets in tiles-photos-v4 whose face-down tiles its labels
leave out: the light blue of the automatic tables' sets (141 of the 1,350 train/ photos show 0.5 %
or more of such pixels outside every box) and a magenta-pink (86 photos)."""


def unlabelled_backs(img: np.ndarray, boxes: np.ndarray, colours: tuple[str, ...] = ("blue",)) -> np.ndarray:
    """Where a photo shows face-down tiles of the :data:`BACK_COLOURS` ``colours``, which its labels
    leave out (uint8 0/1).

    Trained as they are, such photos teach the localiser that a plain back is no tile, against the
    synthetic scenes' ``BK``.  Regions of a back's colour of at least 300 pixels after a 5x5
    opening (a tile's own coloured print is smaller), outside every labelled box."""
    hsv = cv2.cvtColor(img, cv2.COLOR_BGR2HSV)
    found = np.zeros(img.shape[:2], np.uint8)
    for name in colours:
        lo, hi = BACK_COLOURS[name]
        found |= cv2.inRange(hsv, np.array(lo, np.uint8), np.array(hi, np.uint8))
    found = cv2.morphologyEx(found, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(found, connectivity=8)
    big = np.zeros(n, np.uint8)
    big[1:] = stats[1:, cv2.CC_STAT_AREA] >= 300
    out = big[labels]
    for b in np.asarray(boxes, np.float64).reshape(-1, 4).astype(int):
        out[max(b[1], 0) : max(b[3], 0), max(b[0], 0) : max(b[2], 0)] = 0
    return out


def unlabelled_tiles_mask(
    shape: tuple[int, ...], quads: np.ndarray, mask: np.ndarray | None = None
) -> np.ndarray:
    """``mask`` (or a blank one of the photo's ``shape``) with the ``quads`` of tiles its labels
    leave out filled (uint8 0/1; ``scripts.localised_crops.unlabelled_photo_tiles``)."""
    out = np.zeros(shape[:2], np.uint8) if mask is None else mask.copy()
    for q in np.asarray(quads, np.float32).reshape(-1, 4, 2):
        cv2.fillConvexPoly(out, np.round(q).astype(np.int32), 1)
    return out


def one_per_tile(quads: np.ndarray, iou: float = 0.3) -> np.ndarray:
    """``quads`` less each one whose bounds overlap an earlier one's by more than ``iou``
    (:func:`vision.detect.suppress_overlaps`, the earlier kept): one quad a tile where several
    readings found it (``scripts.localised_crops.unlabelled_photo_tiles``)."""
    q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    earlier_first = np.arange(len(q), 0, -1).astype(np.float32)
    return q[np.sort(suppress_overlaps(q, earlier_first, iou))]


def backs_colours(text: str) -> tuple[str, ...]:
    """``--backs-ignored``'s colours, each one of :data:`BACK_COLOURS`."""
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in BACK_COLOURS]
    if unknown:
        raise SystemExit(f"--backs-ignored: unknown colour(s) {', '.join(unknown)} (known: {', '.join(BACK_COLOURS)})")
    return names


def unlabelled_weight(weight: np.ndarray, mask: np.ndarray, heat: np.ndarray) -> np.ndarray:
    """``weight`` with the heat loss ignored on grid cells a quarter or more covered by ``mask``
    (SIZE x SIZE, 0/1), save at a labelled tile's own centre."""
    g = weight.shape[0]
    cover = cv2.resize(mask.astype(np.float32), (g, g), interpolation=cv2.INTER_AREA)
    return np.where((cover >= 0.25) & (heat[0] < 1.0), 0.0, weight).astype(np.float32)


def keep_visible(quads: np.ndarray, size: int = SIZE) -> tuple[np.ndarray, np.ndarray]:
    """Split quads into kept (centre inside, >= 45% visible) and ignored (partly visible)."""
    if len(quads) == 0:
        return quads, quads
    lo, hi = quads.min(axis=1), quads.max(axis=1)
    area = np.prod(hi - lo, axis=1)
    vis = np.prod(np.clip(np.minimum(hi, size) - np.maximum(lo, 0), 0, None), axis=1)
    frac = vis / np.maximum(area, 1e-6)
    keep = frac >= 0.45
    ignore = (~keep) & (frac > 0.05)
    return quads[keep], quads[ignore]


def make_targets(
    quads: np.ndarray, ignored: np.ndarray, size: int = SIZE
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Heatmap (1,H,W), regression (6,H,W), regression mask (H,W), heat-loss weight (H,W)."""
    g = size // STRIDE
    heat = np.zeros((g, g), np.float32)
    reg = np.zeros((6, g, g), np.float32)
    mask = np.zeros((g, g), np.float32)
    weight = np.ones((g, g), np.float32)
    yy, xx = np.mgrid[0:g, 0:g].astype(np.float32)
    px, py = xx * STRIDE + (STRIDE - 1) / 2, yy * STRIDE + (STRIDE - 1) / 2
    for q in ignored:
        lo, hi = (q.min(axis=0) / STRIDE).astype(int), (q.max(axis=0) / STRIDE).astype(int)
        weight[max(lo[1], 0) : hi[1] + 1, max(lo[0], 0) : hi[0] + 1] = 0.0
    if len(quads) == 0:
        return heat[None], reg, mask, weight
    params = quad_params(quads)
    for q, (cx, cy, short, long, theta) in zip(quads, params, strict=True):
        bw, bh = np.ptp(q[:, 0]), np.ptp(q[:, 1])
        sgx, sgy = max(0.6, bw / STRIDE / 6), max(0.6, bh / STRIDE / 6)
        gx, gy = (cx - (STRIDE - 1) / 2) / STRIDE, (cy - (STRIDE - 1) / 2) / STRIDE
        x0, x1 = max(int(gx - 3 * sgx), 0), min(int(gx + 3 * sgx) + 2, g)
        y0, y1 = max(int(gy - 3 * sgy), 0), min(int(gy + 3 * sgy) + 2, g)
        if x0 >= x1 or y0 >= y1:
            continue
        sub = np.exp(
            -((xx[y0:y1, x0:x1] - gx) ** 2) / (2 * sgx**2)
            - ((yy[y0:y1, x0:x1] - gy) ** 2) / (2 * sgy**2)
        )
        ix, iy = min(max(int(round(gx)), 0), g - 1), min(max(int(round(gy)), 0), g - 1)
        if x0 <= ix < x1 and y0 <= iy < y1:
            sub[iy - y0, ix - x0] = 1.0
        cur = heat[y0:y1, x0:x1]
        own = (sub >= 0.5) & (sub > cur)
        heat[y0:y1, x0:x1] = np.maximum(cur, sub)
        m = np.zeros_like(mask, dtype=bool)
        m[y0:y1, x0:x1] = own
        reg[0][m] = (cx - px[m]) / STRIDE
        reg[1][m] = (cy - py[m]) / STRIDE
        reg[2][m] = math.log(max(short, 2.0) / STRIDE)
        reg[3][m] = math.log(max(long, 2.0) / STRIDE)
        reg[4][m] = math.cos(2 * theta)
        reg[5][m] = math.sin(2 * theta)
        mask[m] = 1.0
    return heat[None], reg, mask, weight
