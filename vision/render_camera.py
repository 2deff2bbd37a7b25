"""The phone that looks at a synthetic table (:mod:`vision.render`): where it stands
(:class:`View`, :func:`random_view`), the homography from the table's millimetres to its pixels
(:func:`camera_homography`), and the table top warped into its view as a sensor sums the light
(:func:`camera_warp`).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from vision.layout import Layout

Image = npt.NDArray[np.uint8]

CAMERA_SUPERSAMPLE = 3
"""Point samples per pixel side when the table is warped into the camera's view: each pixel is
the mean of 3 x 3 samples over its area.  A far tile 8 px wide is the table top's 40 px shrunk
five-fold; sampled once per pixel it aliases (the table classifier read such tiles at 0.71 on the
benchmark's tables, 0.83 with this; twenty-first session, docs/table.md)."""


@dataclass(frozen=True)
class View:
    """Where the phone is: the table edge it stands at, its tilt from vertical and image size."""

    side: str = "bottom"  # bottom | right | top | left
    tilt_deg: float = 50.0
    size: tuple[int, int] = (1280, 720)
    hfov_deg: float = 66.0  # horizontal field of view of the phone's camera
    roll_deg: float = 0.0
    aim_mm: tuple[float, float] = (0.0, 0.0)  # aim offset from the table centre


def _look_at(cam: npt.NDArray[np.float64], target: npt.NDArray[np.float64], roll_deg: float) -> npt.NDArray[np.float64]:
    """World-to-camera rotation (OpenCV axes) for a camera at ``cam`` looking at ``target``."""
    z = target - cam
    z /= np.linalg.norm(z)
    x = np.cross(z, [0.0, 0.0, -1.0])  # the table frame's z points down into the table
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    a = np.deg2rad(roll_deg)
    x, y = np.cos(a) * x + np.sin(a) * y, -np.sin(a) * x + np.cos(a) * y
    return np.stack([x, y, z])


def camera_homography(layout: Layout, view: View) -> npt.NDArray[np.float64]:
    """Table millimetres -> image pixels for a phone at ``view``.

    The phone looks at the aim point with the view's tilt from vertical and horizontal field
    of view; it stands as close as it can while the whole table and its markers stay in frame.
    """
    w, h = layout.table_mm
    n = np.asarray({"bottom": (0, 1), "top": (0, -1), "right": (1, 0), "left": (-1, 0)}[view.side], np.float64)
    target = np.array([w / 2 + view.aim_mm[0], h / 2 + view.aim_mm[1], 0.0])
    th = np.deg2rad(view.tilt_deg)
    ray = np.array([n[0] * np.sin(th), n[1] * np.sin(th), -np.cos(th)])
    iw, ih = view.size
    f = (iw / 2) / np.tan(np.deg2rad(view.hfov_deg) / 2)
    k = np.array([[f, 0, iw / 2], [0, f, ih / 2], [0, 0, 1]])
    m = layout.marker_mm
    pts = np.array([[-m, -m, 1], [w + m, -m, 1], [w + m, h + m, 1], [-m, h + m, 1]], np.float64)

    def homography(dist: float) -> npt.NDArray[np.float64]:
        cam = target + ray * dist
        rot = _look_at(cam, target, view.roll_deg)
        return np.asarray(k @ np.column_stack([rot[:, 0], rot[:, 1], -rot @ cam]), np.float64)

    def fits(hm: npt.NDArray[np.float64]) -> bool:
        p = (hm @ pts.T).T
        if (p[:, 2] <= 0).any():
            return False
        u, v = p[:, 0] / p[:, 2], p[:, 1] / p[:, 2]
        return bool((u > 0.02 * iw).all() and (u < 0.98 * iw).all() and (v > 0.02 * ih).all() and (v < 0.98 * ih).all())

    lo, hi = 100.0, 20000.0
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if fits(homography(mid)) else (mid, hi)
    hm = homography(hi)
    return np.asarray(hm / hm[2, 2], np.float64)


def camera_warp(canvas: Image, m: npt.NDArray[np.float64], size: tuple[int, int], floor: tuple[float, ...],
                 supersample: int) -> Image:
    """``canvas`` seen through the homography ``m`` at ``size``, each pixel the mean over its area
    of ``supersample`` x ``supersample`` point samples (1: one sample at the pixel's centre)."""
    if supersample == 1:
        return np.asarray(cv2.warpPerspective(canvas, m, size, flags=cv2.INTER_LINEAR, borderValue=floor), np.uint8)
    k = supersample
    # fine pixel X stands for view coordinate (X - (k - 1) / 2) / k, so the k fine pixels that
    # INTER_AREA averages into view pixel x sit evenly about x itself: the truth's quads stay put
    c = (k - 1) / 2
    fine = np.array([[k, 0, c], [0, k, c], [0, 0, 1]], np.float64) @ m
    big = cv2.warpPerspective(canvas, fine, (size[0] * k, size[1] * k), flags=cv2.INTER_LINEAR, borderValue=floor)
    return np.asarray(cv2.resize(big, size, interpolation=cv2.INTER_AREA), np.uint8)


def random_view(seed: int, size: tuple[int, int] = (1280, 720), side: str | None = None) -> View:
    rng = np.random.default_rng(seed + 7919)
    return View(
        side=side or str(rng.choice(["bottom", "bottom", "right", "left", "top"])),
        tilt_deg=float(rng.uniform(30, 70)),
        size=size,
        hfov_deg=float(rng.uniform(58, 78)),
        roll_deg=float(rng.normal(0, 3)),
        aim_mm=(float(rng.normal(0, 40)), float(rng.normal(0, 40))),
    )
