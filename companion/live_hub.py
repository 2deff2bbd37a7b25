"""Snapshots shared between the live loop and the web: the latest JPEG and the latest state.

:class:`LiveHub` is written by the loop and read by requests (MJPEG, SSE, ``/api/state``) under
two conditions, so a request never touches the loop's objects and an SSE client is woken the
moment a new state is published.  :func:`annotate` draws the loop's status on a copy of a frame.
"""

from __future__ import annotations

import threading
from typing import Any

import cv2
import numpy as np

from companion.table import TableObservation
from vision.track import Motion


class LiveHub:
    """Snapshots shared between the loop (writer) and web requests (readers), under conditions."""

    def __init__(self) -> None:
        self._frame_cv = threading.Condition()
        self._state_cv = threading.Condition()
        self._jpeg = b""
        self._frame_seq = 0
        self._state: dict[str, Any] = {}
        self._state_seq = 0

    def put_frame(self, jpeg: bytes) -> None:
        with self._frame_cv:
            self._jpeg = jpeg
            self._frame_seq += 1
            self._frame_cv.notify_all()

    def frame(self, after: int = -1, timeout: float = 1.0) -> tuple[int, bytes]:
        with self._frame_cv:
            self._frame_cv.wait_for(lambda: self._frame_seq > after, timeout)
            return self._frame_seq, self._jpeg

    def put_state(self, state: dict[str, Any]) -> int:
        with self._state_cv:
            self._state_seq += 1
            self._state = {**state, "seq": self._state_seq}
            self._state_cv.notify_all()
            return self._state_seq

    def state(self) -> dict[str, Any]:
        with self._state_cv:
            return self._state

    def wait_state(self, after: int, timeout: float = 15.0) -> tuple[int, dict[str, Any]]:
        with self._state_cv:
            self._state_cv.wait_for(lambda: self._state_seq > after, timeout)
            return self._state_seq, self._state


def annotate(image: np.ndarray, obs: TableObservation | None, motion: Motion, banner: str) -> np.ndarray:
    """Draw the loop's status and the zones' readings on a copy of the frame."""
    out = image.copy()
    h, w = out.shape[:2]
    colour = (0, 0, 255) if motion.moving else (0, 200, 0)
    cv2.rectangle(out, (0, 0), (w, 34), (30, 30, 30), -1)
    state = "moving: reading paused" if motion.moving else ("stable" if motion.stable else "settling")
    cv2.putText(out, f"{state}  {banner}", (10, 24), cv2.FONT_HERSHEY_SIMPLEX, 0.7, colour, 2)
    if obs is not None:
        y = h - 10
        for name, z in sorted(obs.zones.items(), reverse=True):
            text = f"{name}: {' '.join(z.tiles)[:90]}"
            cv2.putText(out, text, (10, y), cv2.FONT_HERSHEY_SIMPLEX, 0.55, (0, 0, 0), 4)
            cv2.putText(out, text, (10, y), cv2.FONT_HERSHEY_SIMPLEX, 0.55, (255, 255, 255), 1)
            y -= 24
    return out
