"""Temporal stages: the motion gate (act only on still frames) and smoothing of table readings.

:class:`MotionGate` compares each frame with the one before on a small grey thumbnail; a frame is
*stable* once nothing has moved for ``still_frames`` frames, so a hand over the table pauses
reading.  :class:`ReadingSmoother` keeps the last ``window`` observations and, per zone, reports
the reading seen in a strict majority of them (a zone absent from a frame counts as a miss, the
"median with misses counted as 0" of Frigate), holding the previous reading otherwise.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, replace

import cv2
import numpy as np
import numpy.typing as npt

from companion.table import TableObservation, ZoneReading

Image = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class Motion:
    """The gate's verdict for one frame."""

    moving: bool
    stable: bool
    changed: float  # fraction of thumbnail pixels that changed
    still_for: int  # consecutive still frames so far


class MotionGate:
    """Stable-frame detection by thumbnail differencing.

    threshold:   grey-level change (0-255) that counts a pixel as changed
    min_area:    fraction of changed pixels that counts the frame as moving
    still_frames: frames without motion before the view is called stable
    """

    def __init__(
        self, threshold: int = 18, min_area: float = 0.004, still_frames: int = 3, size: int = 160
    ) -> None:
        self.threshold = threshold
        self.min_area = min_area
        self.still_frames = still_frames
        self.size = size
        self._prev: Image | None = None
        self._still = 0

    def _thumb(self, image: Image) -> Image:
        h, w = image.shape[:2]
        th = max(1, round(self.size * h / max(w, 1)))
        grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
        small = cv2.resize(grey, (self.size, th), interpolation=cv2.INTER_AREA)
        return np.asarray(cv2.GaussianBlur(small, (5, 5), 0), np.uint8)

    def update(self, image: Image) -> Motion:
        thumb = self._thumb(image)
        if self._prev is None or self._prev.shape != thumb.shape:
            changed = 1.0
        else:
            diff = cv2.absdiff(thumb, self._prev)
            changed = float(np.count_nonzero(diff > self.threshold)) / diff.size
        self._prev = thumb
        moving = changed > self.min_area
        self._still = 0 if moving else self._still + 1
        return Motion(moving, self._still >= self.still_frames, changed, self._still)

    def reset(self) -> None:
        self._prev = None
        self._still = 0


def _key(zone: ZoneReading) -> tuple[object, ...]:
    return (zone.tiles, zone.exposures, zone.face_down)


class ReadingSmoother:
    """Majority vote per zone over the last ``window`` observations, misses counted."""

    def __init__(self, window: int = 5) -> None:
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        self.window = window
        self._history: deque[TableObservation] = deque(maxlen=window)
        self._held: dict[str, ZoneReading] = {}

    def update_with_observation(self, obs: TableObservation) -> TableObservation:
        self._history.append(obs)
        names = {n for o in self._history for n in o.zones}
        zones: dict[str, ZoneReading] = {}
        for name in sorted(names):
            votes: Counter[tuple[object, ...] | None] = Counter()
            latest: dict[tuple[object, ...], ZoneReading] = {}
            for o in self._history:
                z = o.zones.get(name)
                if z is None:
                    votes[None] += 1
                else:
                    votes[_key(z)] += 1
                    latest[_key(z)] = z
            best, count = votes.most_common(1)[0]
            if count * 2 > len(self._history):
                if best is None:
                    self._held.pop(name, None)
                    continue
                self._held[name] = latest[best]
            if name in self._held:
                zones[name] = self._held[name]
        return replace(obs, zones=zones)

    def reset(self) -> None:
        self._history.clear()
        self._held.clear()
