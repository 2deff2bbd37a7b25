"""Tile localisation: an image -> tile quads and objectness, with no knowledge of tile codes.

The model (``models/localizer.onnx``, trained by ``scripts/train_localizer.py``) is a small fully
convolutional CenterNet-style net at stride 4.  Input: float32 BGR 0..255, NCHW, any H and W that
are multiples of 32.  Outputs: ``peaks`` (N, 1, H/4, W/4) the centre heatmap already passed through
a 3x3 max-pool peak test (non-peaks are 0), and ``reg`` (N, 6, H/4, W/4) per cell: centre offset
(dx, dy) in cells, log(short side / 4), log(long side / 4), cos 2θ, sin 2θ, where θ is the angle of
the tile's long axis from the image's vertical.  Decoding (peak threshold, box/angle decoding and
a final overlap suppression) is numpy here.

Quads are tile corners clockwise from the top-left of an upright (portrait) tile; a tile's 180
degree ambiguity is left to the classifier, which is trained to be invariant to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from vision.runtime import OnnxModel

STRIDE = 4
MULTIPLE = 32
PEAK_THRESHOLD = 0.3
"""The heatmap value from which a peak is a tile (:func:`decode`, :class:`TileLocalizer`)."""
FloatArray = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Localized:
    """Tiles found by the localiser, in the input image's pixel coordinates.

    quads: (N, 4, 2) float32 corners clockwise from an upright tile's top-left
    score: (N,) float32 objectness in [0, 1]
    """

    quads: FloatArray
    score: FloatArray

    def __post_init__(self) -> None:
        n = len(self.score)
        if self.quads.shape != (n, 4, 2):
            raise ValueError(f"quads must be ({n}, 4, 2), got {self.quads.shape}")

    def __len__(self) -> int:
        return len(self.score)


def rect_quads(
    cx: FloatArray, cy: FloatArray, short: FloatArray, long: FloatArray, theta: FloatArray
) -> FloatArray:
    """Rotated rectangles -> (N, 4, 2) corners tl, tr, br, bl of the upright tile.

    ``theta`` is the long axis's angle from the image vertical (radians, 0 = portrait tile).
    """
    up = np.stack([np.sin(theta), -np.cos(theta)], axis=1) * (long / 2)[:, None]
    right = np.stack([np.cos(theta), np.sin(theta)], axis=1) * (short / 2)[:, None]
    c = np.stack([cx, cy], axis=1)
    quads = np.stack([c + up - right, c + up + right, c - up + right, c - up - right], axis=1)
    return quads.astype(np.float32)


def quad_params(quads: FloatArray) -> FloatArray:
    """(N, 4, 2) quads in any corner order -> (N, 5) ``cx, cy, short, long, theta``."""
    q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    e = np.roll(q, -1, axis=1) - q  # edges p0p1, p1p2, p2p3, p3p0
    lens = np.linalg.norm(e, axis=2)
    a = (lens[:, 0] + lens[:, 2]) / 2
    b = (lens[:, 1] + lens[:, 3]) / 2
    first_long = a >= b
    axis = np.where(
        first_long[:, None], e[:, 0] - e[:, 2], e[:, 1] - e[:, 3]
    )  # both long edges summed
    theta = np.arctan2(axis[:, 0], -axis[:, 1])
    theta = (theta + np.pi / 2) % np.pi - np.pi / 2
    c = q.mean(axis=1)
    return np.stack([c[:, 0], c[:, 1], np.minimum(a, b), np.maximum(a, b), theta], axis=1).astype(
        np.float32
    )


ANGLE_COHERENCE = 0.3
""":func:`refine_angles` turns a quad only where this share of the gradient energy around it agrees
on one square orientation (a tile's edges; a blank or busy patch does not)."""
ANGLE_REACH = 1.2
"""... over a square patch reaching this many half long sides from the tile's centre."""


def refine_angles(
    image_bgr: npt.NDArray[np.uint8],
    quads: FloatArray,
    coherence: float = ANGLE_COHERENCE,
    reach: float = ANGLE_REACH,
    work_long_side: int = 256,
) -> FloatArray:
    """Quads turned to the orientation of the tile edges around them; centres and sizes kept.

    The localiser's angle head learned little beyond the quarter turns (its photos have upright
    boxes), so a tile lying at 20 degrees comes back upright: its crop cuts the face's corners and
    takes in its neighbours.  A quad is turned (:func:`edge_turns`) where at least ``coherence``
    of the gradient energy around it agrees on one square orientation.
    """
    q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    turned, strength = edge_turns(image_bgr, q, reach, work_long_side)
    return np.where((strength >= coherence)[:, None, None], turned, as_rects(q)).astype(np.float32)


def as_rects(quads: FloatArray) -> FloatArray:
    """Quads redrawn as the rotated rectangles :func:`quad_params` measures (corners from the
    upright tile's top-left, as :func:`rect_quads` orders them)."""
    p = quad_params(np.asarray(quads, np.float32).reshape(-1, 4, 2))
    return rect_quads(p[:, 0], p[:, 1], p[:, 2], p[:, 3], p[:, 4])


@dataclass(frozen=True)
class EdgeField:
    """A picture's edge field for :func:`edge_turns`: the integral image (``(h + 1, w + 1, 3)``,
    float64) of its gradients' fourth power (real, imaginary) and energy, taken on the picture
    shrunk by a whole factor; ``scale``: field pixels per picture pixel."""

    sums: npt.NDArray[np.float64]
    scale: float


def edge_field(image_bgr: npt.NDArray[np.uint8], work_long_side: int = 256) -> EdgeField:
    """``image_bgr``'s :class:`EdgeField`, on the picture shrunk by the whole factor that brings it
    nearest ``work_long_side`` (about 4 ms for a 640x640 photo on a slow 2-core machine): it
    depends on the picture alone, so a photo read at several scales needs it once, and it can be
    made while the localiser runs (:class:`vision.photo_turns.EdgeFields`)."""
    h, w = image_bgr.shape[:2]
    k = max(1, min(round(max(h, w) / work_long_side), h // 8, w // 8))  # a whole factor: fast
    grey = cv2.cvtColor(
        np.ascontiguousarray(image_bgr[: h // k * k, : w // k * k]), cv2.COLOR_BGR2GRAY
    )
    if k > 1:
        grey = cv2.resize(grey, (w // k, h // k), interpolation=cv2.INTER_AREA)
    g = grey.astype(np.float32)
    gx = cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3)
    # (gx + i gy)^4 / |g|^2, from c + i s = (gx + i gy)^2: magnitude |g|^2, angle 4x the gradient's
    gx2, gy2 = cv2.multiply(gx, gx), cv2.multiply(gy, gy)
    c = cv2.subtract(gx2, gy2)
    si = cv2.multiply(gx, gy, scale=2.0)
    # |c + i s| = gx^2 + gy^2, summed exactly (whole numbers under 2^24): cv2.magnitude's square
    # root rounded its last bit one way or the other with where its arrays lay in memory, so a
    # field made on another thread could differ (fifty-third session)
    energy = cv2.add(gx2, gy2)
    inv = 1.0 / np.maximum(energy, 1e-6)
    stacked = cv2.merge([(c * c - si * si) * inv, 2 * c * si * inv, energy])
    return EdgeField(np.asarray(cv2.integral(stacked, sdepth=cv2.CV_64F), np.float64), 1.0 / k)


def edge_turns(
    image_bgr: npt.NDArray[np.uint8],
    quads: FloatArray,
    reach: float = ANGLE_REACH,
    work_long_side: int = 256,
    field: EdgeField | None = None,
) -> tuple[FloatArray, FloatArray]:
    """``(turned (N, 4, 2), strength (N,))``: each quad turned to the orientation of the edges
    around it, and the share of the gradient energy there that agrees on it (0 where the patch is
    too small or blank).

    A tile's edges are two perpendicular families of gradients, so the fourth power of the
    gradient (as a complex number, normalised by its magnitude, summed over a square patch
    reaching ``reach`` half long sides from the tile's centre) points at four times their angle;
    the quad takes the nearest such angle to its own (the long axis stays the long axis).
    Gradients are taken once on the image shrunk by the whole factor that brings it nearest
    ``work_long_side`` (:func:`edge_field`; ``field``: already made for ``image_bgr``); patch sums
    come from its integral image, so it costs a few ms whatever the tile count.
    """
    q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    if len(q) == 0:
        return q, np.zeros(0, np.float32)
    if field is None:
        field = edge_field(image_bgr, work_long_side)
    sums, f = field.sums, field.scale
    sh, sw = sums.shape[0] - 1, sums.shape[1] - 1
    params = quad_params(q)
    cx, cy, r = params[:, 0] * f, params[:, 1] * f, reach * params[:, 3] / 2 * f
    x0, x1 = np.clip(cx - r, 0, sw).astype(int), np.clip(cx + r + 1, 0, sw).astype(int)
    y0, y1 = np.clip(cy - r, 0, sh).astype(int), np.clip(cy + r + 1, 0, sh).astype(int)
    re, im, total = (sums[y1, x1] - sums[y0, x1] - sums[y1, x0] + sums[y0, x0]).T
    usable = (x1 - x0 >= 3) & (y1 - y0 >= 3) & (total > 1e-6)
    strength = np.where(usable, np.hypot(re, im) / np.maximum(total, 1e-6), 0.0).astype(np.float32)
    # a tile whose long axis is theta from the vertical has edge normals at theta (mod 90 degrees)
    cand = (np.arctan2(im, re) / 4)[:, None] + np.arange(-3, 4) * (np.pi / 2)
    best = cand[np.arange(len(cand)), np.argmin(np.abs(cand - params[:, 4:5]), axis=1)]
    out = params.copy()
    out[:, 4] = np.where(usable, best, params[:, 4])
    return rect_quads(out[:, 0], out[:, 1], out[:, 2], out[:, 3], out[:, 4]), strength


def quad_iou_boxes(a: FloatArray, b: FloatArray) -> FloatArray:
    """IoU matrix between axis-aligned boxes a (N, 4) and b (M, 4)."""
    x1 = np.maximum(a[:, None, 0], b[None, :, 0])
    y1 = np.maximum(a[:, None, 1], b[None, :, 1])
    x2 = np.minimum(a[:, None, 2], b[None, :, 2])
    y2 = np.minimum(a[:, None, 3], b[None, :, 3])
    inter = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    iou: FloatArray = (inter / np.maximum(area_a[:, None] + area_b[None, :] - inter, 1e-6)).astype(
        np.float32
    )
    return iou


def decode(
    peaks: FloatArray,
    reg: FloatArray,
    threshold: float = PEAK_THRESHOLD,
    max_tiles: int = 300,
    snap_deg: float = 0.0,
) -> tuple[FloatArray, FloatArray]:
    """One image's model outputs (1, H, W) and (6, H, W) -> (quads in input pixels, scores).

    ``snap_deg``: angles within this many degrees of a quarter turn are set to it exactly (most
    tiles lie square to the camera; a small angle error would widen their boxes).
    """
    heat = peaks[0]
    ys, xs = np.nonzero(heat >= threshold)
    score = heat[ys, xs]
    if len(score) > max_tiles:
        keep = np.argsort(-score)[:max_tiles]
        ys, xs, score = ys[keep], xs[keep], score[keep]
    r = reg[:, ys, xs]
    cx = (xs + r[0]) * STRIDE + (STRIDE - 1) / 2
    cy = (ys + r[1]) * STRIDE + (STRIDE - 1) / 2
    short = np.exp(np.clip(r[2], -3, 6)) * STRIDE
    long = np.exp(np.clip(r[3], -3, 6)) * STRIDE
    theta = np.arctan2(r[5], r[4]) / 2
    if snap_deg > 0:
        quarter = np.round(theta / (np.pi / 2)) * (np.pi / 2)
        theta = np.where(np.abs(theta - quarter) < np.radians(snap_deg), quarter, theta)
    quads = rect_quads(cx, cy, short, np.maximum(long, short), theta)
    return quads, score.astype(np.float32)


def suppress_overlaps(
    quads: FloatArray, score: FloatArray, iou: float = 0.6
) -> npt.NDArray[np.int64]:
    """Greedy NMS on the quads' bounding boxes; returns kept indices, best first."""
    order = np.argsort(-score)
    boxes = np.concatenate([quads.min(axis=1), quads.max(axis=1)], axis=1)
    ious = quad_iou_boxes(boxes[order], boxes[order])
    keep: list[int] = []
    dead = np.zeros(len(order), bool)
    for i in range(len(order)):
        if dead[i]:
            continue
        keep.append(i)
        dead |= ious[i] > iou
    return order[np.asarray(keep, np.int64)] if keep else np.zeros(0, np.int64)


COVERED_SHARE = 0.6
""":func:`drop_covered` drops a quad when a surer one covers more than this share of its area."""


def drop_covered(
    quads: FloatArray, score: FloatArray, share: float = COVERED_SHARE
) -> npt.NDArray[np.int64]:
    """Indexes (in order) of the quads kept when each quad more than ``share`` covered by a surer
    kept quad is dropped: a second box on one tile.

    :func:`suppress_overlaps` compares upright bounding boxes, which two turned tiles side by side
    also overlap, so it lets a half-size box inside a tile's box through; the turned quads
    (:func:`refine_angles`) are compared here as polygons.  Tiles lie side by side, not on top of
    each other, so a neighbour covers a few percent at most.
    """
    q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    n = len(q)
    if n < 2:
        return np.arange(n, dtype=np.int64)
    lo, hi = q.min(axis=1), q.max(axis=1)
    meet = np.all(np.minimum(hi[:, None], hi[None]) > np.maximum(lo[:, None], lo[None]), axis=2)
    area = np.array([max(float(cv2.contourArea(x)), 1e-6) for x in q])
    kept = np.ones(n, bool)
    for j in np.argsort(-np.asarray(score), kind="stable"):
        for i in np.flatnonzero(meet[j] & kept):
            if i == j or score[i] < score[j] or (score[i] == score[j] and i > j):
                continue
            inter, _ = cv2.intersectConvexConvex(q[i], q[j])
            if inter > share * area[j]:
                kept[j] = False
                break
    return np.flatnonzero(kept).astype(np.int64)


def prepare(
    image_bgr: npt.NDArray[np.uint8], scale: float, exact: bool = False
) -> tuple[FloatArray, float, float]:
    """Resize by ``scale`` and pad to a multiple of 32: (1, 3, H, W) float32, sx, sy factors.
    ``exact``: area averaging all the way (:func:`shrink` otherwise)."""
    h, w = image_bgr.shape[:2]
    nw, nh = max(MULTIPLE, round(w * scale)), max(MULTIPLE, round(h * scale))
    if exact:
        small, (uw, uh) = cv2.resize(image_bgr, (nw, nh), interpolation=cv2.INTER_AREA), (w, h)
    else:
        small, (uw, uh) = shrink(image_bgr, nw, nh)
    ph, pw = -nh % MULTIPLE, -nw % MULTIPLE
    if ph or pw:
        small = cv2.copyMakeBorder(small, 0, ph, 0, pw, cv2.BORDER_CONSTANT, value=(0, 0, 0))
    batch = small.transpose(2, 0, 1)[None].astype(np.float32)
    return batch, nw / uw, nh / uh


def shrink(
    image: npt.NDArray[np.uint8], nw: int, nh: int
) -> tuple[npt.NDArray[np.uint8], tuple[int, int]]:
    """``image`` resized to ``nw`` x ``nh``, and the ``(width, height)`` of the part of it that
    was resized (the whole, or less by under a whole factor's pixels at its right and bottom).

    Area averaging (``INTER_AREA``) by a factor that is no whole number costs OpenCV 1.1-1.7 ms
    on a 640x640 photo; by a whole factor it takes 0.06 ms.  So the image is first averaged by the
    largest whole factor the shrink holds in both axes (cut to a multiple of it), then resized the
    rest of the way, under 2x, bilinearly (0.2 ms).  The localiser trained on photos shrunk
    bilinearly (``warpAffine``), so this is no further from its training.  On the 296 valid photos
    (twenty-fifth session, docs/recognition.md): 1-4 ms a photo less, tile F1 0.946 against
    0.944; a squeezed photo's unsqueezed copies read better exact (:func:`prepare`).
    """
    h, w = image.shape[:2]
    k = int(min(w / nw, h / nh))
    uw, uh = w, h
    if k >= 2:
        uw, uh = w // k * k, h // k * k
        image = np.asarray(cv2.resize(image[:uh, :uw], (uw // k, uh // k), interpolation=cv2.INTER_AREA), np.uint8)
    if image.shape[:2] != (nh, nw):
        # under 2x left in both axes: bilinear; more in one (a strip of an image whose short side
        # the 32-pixel floor holds up): area averaging, slow but rare
        rest = min(nw / image.shape[1], nh / image.shape[0])
        how = cv2.INTER_LINEAR if rest >= 0.5 else cv2.INTER_AREA
        image = np.asarray(cv2.resize(image, (nw, nh), interpolation=how), np.uint8)
    return np.asarray(image, np.uint8), (uw, uh)


class TileLocalizer:
    """Find tile quads in a BGR image with ``models/localizer.onnx``.

    ``input_long_side``: the image is resized so that its long side is this many pixels (tiles
    then span about 12-60 px, the range the model is trained on); 320 suits a 640x640 photo.
    """

    def __init__(
        self,
        path: str | Path = "models/localizer.onnx",
        input_long_side: int = 320,
        threshold: float = PEAK_THRESHOLD,
        threads: int = 1,
        snap_deg: float = 0.0,
    ) -> None:
        self.snap_deg = snap_deg
        self.model = OnnxModel(path, threads=threads, warmup_shape=(1, 3, 320, 320))
        self.input_long_side = input_long_side
        self.threshold = threshold

    def scale_for(self, shape: tuple[int, ...]) -> float:
        return self.input_long_side / max(shape[0], shape[1])

    def localize(
        self, image_bgr: npt.NDArray[np.uint8], scale: float | None = None, exact: bool = False
    ) -> Localized:
        """All tiles in one image; ``scale`` overrides the resize factor; ``exact`` as for
        :func:`prepare` (the photo pipeline sets it for a squeezed photo's unsqueezed copies)."""
        s = self.scale_for(image_bgr.shape) if scale is None else scale
        batch, sx, sy = prepare(image_bgr, s, exact)
        peaks, reg = self.model.run(batch)[:2]
        quads, score = decode(peaks[0], reg[0], self.threshold, snap_deg=self.snap_deg)
        keep = suppress_overlaps(quads, score)
        quads, score = quads[keep], score[keep]
        scaled = (quads / np.array([sx, sy], np.float32)).astype(np.float32)
        return Localized(scaled, score)
