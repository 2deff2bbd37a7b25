"""The vision benchmark's altered photos: valid's photos enlarged, tinted, taken poorly and laid together.

:func:`enlarged_photos` reads every Nth photo enlarged 2x; :func:`lamp_photos` under each lamp's
tint, :func:`poor_photos` as each poor picture (both through :func:`altered_photos`);
:func:`laid_photos` laid N x N to one picture, shrunk or at their own size.  Ours beside the peer
(:func:`scripts.bench_vision_runs.peer_beside`).  Run by ``scripts/bench_vision.py``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from scripts.bench_vision_runs import peer_beside, run_ours
from scripts.bench_vision_tally import mislabelled, print_summary
from scripts.photos import PhotoSample


def enlarged_photos(photos: list[PhotoSample], args: argparse.Namespace) -> None:
    """Every ``args.enlarged``th of ``photos`` enlarged 2x (1280x1280, bicubic, boxes alike), the
    same close-up as a phone at a higher resolution takes it, read by ours."""
    big, t_big, _ = run_ours(photos[:: args.enlarged], args.models, args.threads, enlarge=2.0)
    print(f"\nvalid photos enlarged 2x (1 in {args.enlarged}: {len(photos[:: args.enlarged])} photos; bicubic, "
          "boxes scaled alike)")
    print_summary("ours 1280x1280", big, t_big)


def lamp_photos(photos: list[PhotoSample], args: argparse.Namespace) -> None:
    """``photos`` under each lamp of :data:`vision.light.LAMP_TINTS`, read by ours as it is, by
    ours keeping the tint, and by the peer (:func:`altered_photos`)."""
    from vision.light import LAMP_TINTS, tinted

    print(f"\nvalid photos under a lamp the camera does not correct for (1 in {args.lamp}: {len(photos)} photos; "
          "factors on B, G, R)")
    for lamp, factors in LAMP_TINTS.items():
        tag = f"{lamp} {'/'.join(f'{f:g}' for f in factors)}"
        altered_photos(photos, args, tag, lambda img, lamp=lamp: tinted(img, lamp), "keeping the tint")
    plain, t_plain, _ = run_ours(photos, args.models, args.threads)
    print_summary("ours, the same untinted", plain, t_plain)


def poor_photos(photos: list[PhotoSample], args: argparse.Namespace) -> None:
    """``photos`` as each poor picture of :data:`vision.light.POOR_PICTURES` (over-exposed, washed
    out, lit from one side, blurred), read by ours and the peer; a washed-out one also by ours
    without its levels stretched (the one of them taken out before reading)."""
    from vision.light import POOR_PICTURES, poorly_taken

    print(f"\nvalid photos taken poorly (1 in {args.poor}: {len(photos)} photos)")
    for kind in POOR_PICTURES:
        altered_photos(photos, args, kind, lambda img, kind=kind: poorly_taken(img, kind),
                       "not stretched" if kind == "washed" else "")


def laid_photos(photos: list[PhotoSample], args: argparse.Namespace, k: int, shrink: bool) -> None:
    """The valid photos (the mislabelled ones aside) laid ``k`` x ``k`` to one picture, read by ours
    and the peer.  ``shrink``: each photo shrunk to ``1 / k`` of its side (area averaging; boxes
    alike), a 640x640 picture: a phone held ``k`` times further from the table, whose tiles come
    out that much smaller at the same resolution.  Otherwise each at its own 640x640: a still photo
    ``k`` times larger, of a wider part of the table, with tiles as big as in the photos."""
    import tempfile

    side = 640 // k if shrink else 640
    kept = [s for s in photos if not mislabelled(s)]
    groups = [kept[i : i + k * k] for i in range(0, len(kept) - k * k + 1, k * k)]
    what = f"each shrunk to 1/{k}" if shrink else f"{side * k}x{side * k}"
    print(f"\nvalid photos laid {k}x{k}, {what}: {len(groups)} pictures ({len(groups) * k * k} photos, "
          "the mislabelled ones aside)")
    with tempfile.TemporaryDirectory(prefix="bench-laid-") as tmp:
        laid = []
        for n, group in enumerate(groups):
            canvas = np.zeros((side * k, side * k, 3), np.uint8)
            boxes, codes = [], []
            for j, s in enumerate(group):
                img = cv2.imread(str(s.image_path))
                h, w = img.shape[:2]
                oy, ox = (j // k) * side, (j % k) * side
                canvas[oy : oy + side, ox : ox + side] = cv2.resize(img, (side, side), interpolation=cv2.INTER_AREA)
                boxes.append(s.boxes * np.array([side / w, side / h, side / w, side / h], np.float32)
                             + np.array([ox, oy, ox, oy], np.float32))
                codes += list(s.codes)
            path = Path(tmp) / f"{n:04d}.png"
            cv2.imwrite(str(path), canvas)
            laid.append(PhotoSample(path, side * k, side * k, np.concatenate(boxes).astype(np.float32), tuple(codes),
                                    tuple(None for _ in codes)))
        ours, t_ours, _ = run_ours(laid, args.models, args.threads)
        print_summary(f"ours, {k}x{k}", ours, t_ours)
        peer_beside(laid, args)


def altered_photos(
    photos: list[PhotoSample], args: argparse.Namespace, tag: str, alter: Any, kept: str
) -> None:
    """``photos`` altered by ``alter`` (written to a temporary folder, losslessly), read by ours,
    by ours without :mod:`vision.light`'s corrections when ``kept`` names that line, and by the
    peer, in one run."""
    import tempfile
    from dataclasses import replace

    with tempfile.TemporaryDirectory(prefix="bench-light-") as tmp:
        lit = []
        for i, s in enumerate(photos):
            path = Path(tmp) / f"{i:04d}.png"
            cv2.imwrite(str(path), alter(cv2.imread(str(s.image_path))))
            lit.append(replace(s, image_path=path))
        ours, t_ours, _ = run_ours(lit, args.models, args.threads)
        print_summary(f"ours, {tag}", ours, t_ours)
        if kept:
            plain, t_plain, _ = run_ours(lit, args.models, args.threads, lamp=False)
            print_summary(f"  ours {kept}", plain, t_plain)
        peer_beside(lit, args)
