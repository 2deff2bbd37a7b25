"""Drawing a frame's reading on it: zones, tile boxes and codes, and the rules' flags.

``annotate(frame, detections, observation=..., layout=..., calibration=...)`` returns a new image;
the input frame is never modified.  Zones are drawn through the calibration (red when flagged),
tiles as their quads with their code (orange when read below the confidence threshold), flags
as a list on a dark banner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import cv2
import numpy as np
import numpy.typing as npt

from vision.calibrate import Calibration
from vision.layout import Layout
from vision.types import Detections

if TYPE_CHECKING:
    from companion.table_types import TableObservation

Image = npt.NDArray[np.uint8]
ZONE_COLOURS = {"rack": (255, 200, 0), "discards": (0, 220, 255)}
FLAG_COLOUR = (40, 40, 255)


def _text(
    img: Image, text: str, org: tuple[int, int], colour: tuple[int, int, int], scale: float = 0.45, thick: int = 1
) -> None:
    cv2.putText(img, text, (org[0] + thick, org[1] + thick), cv2.FONT_HERSHEY_SIMPLEX, scale, (0, 0, 0), thick,
                cv2.LINE_AA)
    cv2.putText(img, text, org, cv2.FONT_HERSHEY_SIMPLEX, scale, colour, thick, cv2.LINE_AA)


def _grow(img: Image) -> float:
    """How much larger than on a 1920-pixel frame the zones' names and the flags are written."""
    return float(max(1.0, max(img.shape[:2]) / 1920))


def line_width(img: Image) -> int:
    """Pixels an outline is drawn wide: 1 on a 640-pixel photo or a 1280x720 frame, 3 on a phone's
    4032-pixel still, so that it shows at any size the picture is looked at."""
    return int(max(1, round(max(img.shape[:2]) / 1400)))


def draw_zones(img: Image, layout: Layout, calibration: Calibration, flagged: set[str]) -> None:
    for zone in layout.zones:
        poly = calibration.to_image(np.asarray(zone.polygon_mm, np.float32))
        colour = FLAG_COLOUR if zone.name in flagged else ZONE_COLOURS.get(zone.kind, (200, 200, 200))
        thick = 2 * line_width(img)
        cv2.polylines(img, [np.round(poly).astype(np.int32)], True, colour, thick, cv2.LINE_AA)
        x, y = poly.min(axis=0)
        _text(img, zone.name, (int(x), int(y) - 2 * thick), colour, 0.45 * _grow(img), line_width(img))


def draw_tiles(img: Image, detections: Detections, min_confidence: float = 0.6) -> None:
    scale = max(0.3, min(1.5, max(img.shape[:2]) / 2400))  # a code about a third of a tile wide
    thick = line_width(img)
    for i in range(len(detections)):
        quad = np.round(detections.quads[i]).astype(np.int32)
        low = float(detections.confidence[i]) < min_confidence
        colour = (0, 140, 255) if low else (60, 220, 60)
        cv2.polylines(img, [quad], True, colour, thick, cv2.LINE_AA)
        x, y = quad.min(axis=0)
        label = str(detections.codes[i]) + ("?" if low else "")
        _text(img, label, (int(x), int(y) - 2 * thick), colour, scale, thick)


def draw_flags(img: Image, observation: TableObservation) -> None:
    lines = [f"homography: {observation.homography}"]
    lines += [f"{f.kind}: {f.message}" for f in observation.flags]
    for name, mj in observation.mahjong.items():
        if mj:
            lines.append(f"{name}: Mah Jongg {mj.get('hand')} = {mj.get('value')}")
    g = _grow(img)
    step = round(18 * g)
    h = step * len(lines) + 8
    banner = img[:h, :]
    banner[:] = (banner * 0.35).astype(np.uint8)
    for k, line in enumerate(lines):
        colour = FLAG_COLOUR if k and k <= len(observation.flags) else (240, 240, 240)
        _text(img, line[:160], (8, step + step * k), colour, 0.5 * g, line_width(img))


def annotate(
    frame: Image,
    detections: Detections | None = None,
    observation: TableObservation | None = None,
    layout: Layout | None = None,
    calibration: Calibration | None = None,
    min_confidence: float = 0.6,
) -> Image:
    """A copy of ``frame`` with zones, tiles and flags drawn on it."""
    img = np.ascontiguousarray(frame.copy())
    flagged = {f.zone for f in observation.flags if f.zone} if observation is not None else set()
    if layout is not None and calibration is not None:
        draw_zones(img, layout, calibration, {z for z in flagged if z is not None})
    if detections is not None:
        draw_tiles(img, detections, min_confidence)
    if observation is not None:
        draw_flags(img, observation)
    return img
