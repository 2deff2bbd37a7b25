"""Calibration: image pixels <-> table millimetres, from four ArUco markers or four clicked corners.

Four printed ``DICT_4X4_50`` markers, ids 0..3, have their centres on the corners (0,0), (W,0),
(W,H), (0,H) of the table frame (x to the right, y towards player 1 at the bottom edge; id 3 at
player 1's left hand).  :class:`Calibration` holds the homography; :class:`Calibrator` finds it
in every frame with ``update(frame)`` and keeps the last good one when a hand covers a marker
(its state is then ``"stale"``).  :func:`rectify` makes the top-down table image on demand.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import cv2
import numpy as np
import numpy.typing as npt

from vision.layout import Layout

MARKER_DICT = cv2.aruco.DICT_4X4_50
CalibrationState = Literal["fresh", "stale", "missing"]
MARKER_IDS = (0, 1, 2, 3)
FloatArray = npt.NDArray[np.float32]


class CalibrationError(ValueError):
    """Markers or corners that cannot give a homography; the message says what was found."""


def table_corners(table_mm: tuple[float, float]) -> FloatArray:
    """The table-frame corners for marker ids 0, 1, 2, 3."""
    w, h = table_mm
    return np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)


@dataclass(frozen=True)
class Calibration:
    """A homography from image pixels to table millimetres (and back)."""

    image_to_table: npt.NDArray[np.float64]
    table_mm: tuple[float, float]
    image_size: tuple[int, int]  # (width, height) of the frames it applies to
    source: str = "markers"  # "markers" | "markers-3" (three markers and their size) | "corners"
    corners_px: tuple[tuple[float, float], ...] = ()

    def __post_init__(self) -> None:
        if self.image_to_table.shape != (3, 3):
            raise CalibrationError(f"homography must be 3x3, got {self.image_to_table.shape}")

    @classmethod
    def from_corners(
        cls,
        points_px: npt.ArrayLike,
        table_mm: tuple[float, float],
        image_size: tuple[int, int] = (0, 0),
        source: str = "corners",
    ) -> Calibration:
        """Four image points of the table corners (0,0), (W,0), (W,H), (0,H), in that order."""
        pts = np.asarray(points_px, np.float32).reshape(-1, 2)
        if pts.shape != (4, 2):
            raise CalibrationError(f"need 4 corner points [[x, y], ...], got {pts.shape[0]}")
        if not cv2.isContourConvex(pts):
            raise CalibrationError(f"corner points do not form a convex quadrilateral in order: {pts.tolist()}")
        if abs(cv2.contourArea(pts)) < 100.0:
            raise CalibrationError(f"corner points enclose almost no area: {pts.tolist()}")
        h = cv2.getPerspectiveTransform(pts, table_corners(table_mm))
        corners = tuple((float(x), float(y)) for x, y in pts)
        return cls(np.asarray(h, np.float64), (float(table_mm[0]), float(table_mm[1])), image_size, source, corners)

    @property
    def table_to_image(self) -> npt.NDArray[np.float64]:
        return np.asarray(np.linalg.inv(self.image_to_table), np.float64)

    def to_table(self, points_px: npt.ArrayLike) -> FloatArray:
        """Image points (..., 2) -> table millimetres."""
        pts = np.asarray(points_px, np.float32)
        out = cv2.perspectiveTransform(pts.reshape(-1, 1, 2), self.image_to_table)
        return out.reshape(pts.shape).astype(np.float32)

    def to_image(self, points_mm: npt.ArrayLike) -> FloatArray:
        """Table millimetres (..., 2) -> image points."""
        pts = np.asarray(points_mm, np.float32)
        out = cv2.perspectiveTransform(pts.reshape(-1, 1, 2), self.table_to_image)
        return out.reshape(pts.shape).astype(np.float32)

    def to_json(self) -> dict[str, object]:
        return {
            "image_to_table": np.round(self.image_to_table, 12).tolist(),
            "table_mm": list(self.table_mm),
            "image_size": list(self.image_size),
            "source": self.source,
            "corners_px": [list(p) for p in self.corners_px],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], source: str = "<calibration>") -> Calibration:
        """Read :meth:`to_json` output back (a stored calibration); errors name ``source``."""
        try:
            hm = np.asarray(data["image_to_table"], np.float64)
            table = (float(data["table_mm"][0]), float(data["table_mm"][1]))
            size = (int(data.get("image_size", [0, 0])[0]), int(data.get("image_size", [0, 0])[1]))
            corners = tuple((float(x), float(y)) for x, y in data.get("corners_px", []))
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise CalibrationError(f"{source}: not a calibration ({exc!r})") from exc
        if hm.shape != (3, 3) or not np.isfinite(hm).all() or abs(np.linalg.det(hm)) < 1e-15:
            raise CalibrationError(f"{source}: image_to_table must be an invertible 3x3 matrix")
        return cls(hm, table, size, str(data.get("source", "corners")), corners)


def _detector(crop: bool = False) -> cv2.aruco.ArucoDetector:
    """The marker detector; ``crop=True`` for windows where a marker fills a good part."""
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    # Far markers of a phone propped at the table edge are small and foreshortened.
    params.minMarkerPerimeterRate = 0.008
    params.polygonalApproxAccuracyRate = 0.06
    params.perspectiveRemovePixelPerCell = 8
    params.minCornerDistanceRate = 0.02
    params.adaptiveThreshWinSizeMin, params.adaptiveThreshWinSizeMax = 5, 25
    params.adaptiveThreshWinSizeStep = 20  # two thresholding passes instead of three
    if crop:
        params.minMarkerPerimeterRate = 0.3
    return cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(MARKER_DICT), params)


def find_markers(image: npt.NDArray[np.uint8], detector: cv2.aruco.ArucoDetector | None = None) -> dict[int, FloatArray]:
    """Centres (and corners) of the markers 0..3 found in ``image``: ``{id: (4, 2) corners}``."""
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    corners, ids, _ = (detector or _detector()).detectMarkers(gray)
    found: dict[int, FloatArray] = {}
    if ids is None:
        return found
    for c, i in zip(corners, ids.reshape(-1), strict=True):
        if int(i) in MARKER_IDS and int(i) not in found:
            found[int(i)] = np.asarray(c, np.float32).reshape(4, 2)
    return found


SHARPEN = (1.5, 2.0)
"""Unsharp mask (amount, Gaussian sigma in px) of the second look for markers a soft picture hides:
on 25 rendered tables blurred as ``vision.light.POOR_PICTURES`` ``blur`` does (sigma 1.5 px), all
four markers were found in 16 frames of 25 at 1280x720 and 11 of 15 at 1920x1080 by the first
look, in 18 and 15 with this one added (21 against 20 of 25 over-exposed at 1280x720; in daylight
the first look finds all four in every frame and this one is never made; twenty-ninth session)."""


SMALL_FRAME = 1000
"""A picture no longer than this (a webcam's 640x480) whose markers are not all found is looked at
again enlarged twice: a far marker there may be 10-15 pixels across, too few for the
detector's cells.  On 50 rendered tables at 640x480 (``scripts/bench_table.py``'s views), all
four markers were found in 32 frames by the first two looks and in 40 with these (4-34 ms
more, only where one is missing; fifty-first session)."""
FIRST_FRAME = 1280
"""Until a table is first calibrated (and for a single picture, :func:`calibrate_from_markers`), a
picture up to this long is looked at enlarged too: at 1280x720, over-exposed (``vision.light``'s
``over``), 24 of 25 rendered tables show all four markers so against 21 (9-49 ms more where one is
missing; blurred, 18 either way).  Once calibrated, a 1280x720 frame that misses a marker (a hand
over it) keeps its budget: the last calibration stands in."""


def find_markers_soft(
    image: npt.NDArray[np.uint8], detector: cv2.aruco.ArucoDetector | None = None, enlarge: bool | None = None
) -> dict[int, FloatArray]:
    """:func:`find_markers`, and where it misses one of the four, a second look at the picture
    sharpened (:data:`SHARPEN`) and, where ``enlarge`` (by default: on a small picture,
    :data:`SMALL_FRAME`), the same two looks at it enlarged twice: the markers any look found, an
    earlier look's kept where two found one."""
    found = find_markers(image, detector)
    if len(found) == len(MARKER_IDS):
        return found
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    amount, sigma = SHARPEN
    sharp = cv2.addWeighted(gray, 1 + amount, cv2.GaussianBlur(gray, (0, 0), sigma), -amount, 0)
    found = {**find_markers(np.asarray(sharp, np.uint8), detector), **found}
    if enlarge is None:
        enlarge = max(gray.shape[:2]) <= SMALL_FRAME
    if len(found) == len(MARKER_IDS) or not enlarge:
        return found
    big = np.asarray(cv2.resize(gray, None, fx=2, fy=2, interpolation=cv2.INTER_CUBIC), np.uint8)
    # a pixel centre x of the enlarged picture is (x + 0.5) / 2 - 0.5 of the picture
    enlarged = {i: np.asarray((c + 0.5) / 2 - 0.5, np.float32)
                for i, c in find_markers_soft(big, detector, enlarge=False).items()}
    return {**enlarged, **found}


def _from_three(
    found: dict[int, FloatArray], table_mm: tuple[float, float], marker_mm: float, size: tuple[int, int]
) -> Calibration | None:
    """Three markers: their centres and corners (each marker's turn on the table unknown, tried)."""
    ids = [i for i in MARKER_IDS if i in found]
    half = marker_mm / 2
    offsets = np.array([[-half, -half], [half, -half], [half, half], [-half, half]], np.float32)
    table = table_corners(table_mm)
    src = np.concatenate([np.concatenate([found[i].mean(axis=0, keepdims=True), found[i]]) for i in ids])
    best: tuple[float, npt.NDArray[np.float64]] | None = None
    for turns in np.ndindex(*(4,) * len(ids)):
        dst = np.concatenate(
            [np.concatenate([table[i : i + 1], table[i] + np.roll(offsets, -t, axis=0)]) for i, t in zip(ids, turns, strict=True)]
        )
        hm, _ = cv2.findHomography(src, dst, 0)
        if hm is None:
            continue
        back = cv2.perspectiveTransform(dst.reshape(-1, 1, 2), np.linalg.inv(hm)).reshape(-1, 2)
        err = float(np.sqrt(np.mean(np.sum((back - src) ** 2, axis=1))))
        if best is None or err < best[0]:
            best = (err, np.asarray(hm, np.float64))
    if best is None or best[0] > 2.5:
        return None
    corners = cv2.perspectiveTransform(table.reshape(-1, 1, 2), np.linalg.inv(best[1])).reshape(4, 2)
    return Calibration(np.asarray(best[1], np.float64), table_mm, size, "markers-3",
                       tuple((float(x), float(y)) for x, y in corners))


def solve_markers(
    found: dict[int, FloatArray], table_mm: tuple[float, float], size: tuple[int, int], marker_mm: float | None = None
) -> Calibration | None:
    """A calibration from the markers found: all four centres, or three markers and their size."""
    if all(i in found for i in MARKER_IDS):
        centres = np.stack([found[i].mean(axis=0) for i in MARKER_IDS])
        try:
            return Calibration.from_corners(centres, table_mm, size, source="markers")
        except CalibrationError:
            return None
    if marker_mm and sum(i in found for i in MARKER_IDS) == 3:
        return _from_three(found, table_mm, marker_mm, size)
    return None


def find_markers_near(
    image: npt.NDArray[np.uint8], calibration: Calibration, marker_mm: float,
    detector: cv2.aruco.ArucoDetector | None = None,
) -> dict[int, FloatArray]:
    """Markers searched only in windows around where ``calibration`` puts them (fast tracking)."""
    found: dict[int, FloatArray] = {}
    h, w = image.shape[:2]
    for mid, corner in zip(MARKER_IDS, table_corners(calibration.table_mm), strict=True):
        box = calibration.to_image(corner + np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], np.float32) * marker_mm * 1.6)
        x0, y0 = np.floor(box.min(axis=0)).astype(int)
        x1, y1 = np.ceil(box.max(axis=0)).astype(int)
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
        if x1 - x0 < 8 or y1 - y0 < 8:
            continue
        sub = find_markers(np.ascontiguousarray(image[y0:y1, x0:x1]), detector)
        if mid in sub:
            found[mid] = sub[mid] + np.array([x0, y0], np.float32)
    return found


def calibrate_from_markers(
    image: npt.NDArray[np.uint8], table_mm: tuple[float, float], marker_mm: float | None = None
) -> Calibration:
    """One calibration from one image; raises :class:`CalibrationError` naming the missing ids."""
    found = find_markers_soft(image, enlarge=max(image.shape[:2]) <= FIRST_FRAME)
    cal = solve_markers(found, table_mm, (image.shape[1], image.shape[0]), marker_mm)
    if cal is None:
        missing = [i for i in MARKER_IDS if i not in found]
        raise CalibrationError(
            f"ArUco markers missing: ids {missing} (found {sorted(found)}); print them with "
            "'python -m companion markers' or calibrate from 4 clicked corners"
        )
    return cal


class Calibrator:
    """Finds the homography in every frame and keeps the last good one.

    ``update(frame)`` returns ``(calibration or None, state)`` with state ``"fresh"`` (all four
    markers seen in this frame), ``"stale"`` (not: the last good calibration, ``stale_frames``
    frames old) or ``"missing"`` (never calibrated).  Three markers and their printed size stand
    in only when there is no earlier calibration.  A fixed calibration (clicked corners) is
    always fresh.
    """

    def __init__(
        self, table_mm: tuple[float, float], fixed: Calibration | None = None, marker_mm: float | None = None
    ) -> None:
        self.table_mm = table_mm
        self.marker_mm = marker_mm
        self.fixed = fixed
        self.last: Calibration | None = fixed
        self.stale_frames = 0
        self._detector = _detector()
        self._crop_detector = _detector(crop=True)

    @classmethod
    def for_layout(cls, layout: Layout, fixed: Calibration | None = None) -> Calibrator:
        return cls(layout.table_mm, fixed, layout.marker_mm)

    def update(self, frame: npt.NDArray[np.uint8]) -> tuple[Calibration | None, CalibrationState]:
        if self.fixed is not None:
            return self.fixed, "fresh"
        size = (frame.shape[1], frame.shape[0])
        found: dict[int, FloatArray] = {}
        if self.last is not None and self.marker_mm and self.last.image_size == size:
            found = find_markers_near(frame, self.last, self.marker_mm, self._crop_detector)
        if len(found) < len(MARKER_IDS):
            first = self.last is None and max(frame.shape[:2]) <= FIRST_FRAME
            found = find_markers_soft(frame, self._detector, enlarge=True if first else None)
        # Three markers extrapolate poorly to the far corner: the last four-marker fit is better.
        cal = solve_markers(found, self.table_mm, size, self.marker_mm if self.last is None else None)
        if cal is not None:
            self.last, self.stale_frames = cal, 0
            return cal, "fresh"
        if self.last is None:
            return None, "missing"
        self.stale_frames += 1
        return self.last, "stale"


def rectify(
    image: npt.NDArray[np.uint8], calibration: Calibration, px_per_mm: float = 1.0, margin_mm: float = 0.0
) -> npt.NDArray[np.uint8]:
    """The top-down table image: pixel (u, v) shows table point ((u / s) - margin, (v / s) - margin)."""
    w, h = calibration.table_mm
    s = float(px_per_mm)
    shift = np.array([[s, 0, s * margin_mm], [0, s, s * margin_mm], [0, 0, 1]], np.float64)
    size = (int(round((w + 2 * margin_mm) * s)), int(round((h + 2 * margin_mm) * s)))
    return np.asarray(cv2.warpPerspective(image, shift @ calibration.image_to_table, size, flags=cv2.INTER_LINEAR), np.uint8)


def marker_image(marker_id: int, side_px: int, border_bits: int = 1) -> npt.NDArray[np.uint8]:
    """One marker as a grayscale image with a white quiet zone of one module around it."""
    if marker_id not in range(50):
        raise ValueError(f"marker id out of range 0..49: {marker_id!r}")
    dictionary = cv2.aruco.getPredefinedDictionary(MARKER_DICT)
    img = cv2.aruco.generateImageMarker(dictionary, marker_id, side_px, borderBits=border_bits)
    return np.asarray(img, np.uint8)


def marker_bits(marker_id: int) -> npt.NDArray[np.uint8]:
    """The 6x6 black(0)/white(1) module grid of a marker including its black border."""
    img = marker_image(marker_id, 6 * 10)
    return (img[5::10, 5::10] > 127).astype(np.uint8)
