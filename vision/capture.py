"""Frame sources as iterators: camera index, video file, image folder, URL stream, phone uploads, demo.

Every source yields :class:`Frame` values (a BGR image, its index and a timestamp).  Opening a
source never blocks forever, and :class:`Resilient` wraps any source so that a dropped camera or
a corrupt frame is logged and retried with exponential backoff: the live loop never dies because
of its input.  ``open_source(spec)`` turns the ``--source`` text of ``serve`` into a source.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import cv2
import numpy as np
import numpy.typing as npt

from vision.io import ImageLoadError, load_image

log = logging.getLogger(__name__)

Image = npt.NDArray[np.uint8]
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff", ".avif", ".heic", ".heif")
"""The file names read as images from a folder (any case): a folder of frames, ``detect``'s folders.
A phone's HEIC photo is listed too, so that it is named with the reason it cannot be read
(:data:`vision.io.UNDECODED`) rather than passed over in silence."""


def image_files(folder: Path) -> list[Path]:
    """The image files in ``folder`` (:data:`IMAGE_SUFFIXES`), sorted by name, not its subfolders."""
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)


class SourceError(OSError):
    """A frame source that cannot be opened or has stopped delivering; names the source."""


@dataclass(frozen=True)
class Frame:
    """One image from a source: BGR pixels, a running index and the capture time (``time.time()``)."""

    image: Image
    index: int
    timestamp: float
    source: str = ""


class FrameSource(Protocol):
    name: str

    def frames(self) -> Iterator[Frame]: ...

    def close(self) -> None: ...


def decode_jpeg(data: bytes) -> Image:
    """Decode image bytes (JPEG/PNG) to BGR; raises ValueError naming the size on corrupt data."""
    arr = np.frombuffer(data, np.uint8)
    img = cv2.imdecode(arr, cv2.IMREAD_COLOR) if arr.size else None
    if img is None:
        raise ValueError(f"corrupt image ({len(data)} bytes)")
    return np.asarray(img, np.uint8)


CAMERA_SIZE = (1920, 1080)
"""The size a camera is asked for.  The table reader localises on a top-down view of fixed scale,
so a 1920x1080 frame costs it about what a 1280x720 one does, and the far racks' tiles are half as
wide again: on 50 rendered tables, exposure accuracy 91.8% against 84.5% (``scripts/bench_table.py``)."""


def parse_size(text: str) -> tuple[int, int]:
    """``"1920x1080"`` -> ``(1920, 1080)``; ValueError naming the text otherwise."""
    w, sep, h = text.strip().lower().partition("x")
    if not sep or not w.isdigit() or not h.isdigit() or not (16 <= int(w) <= 8192 and 16 <= int(h) <= 8192):
        raise ValueError(f"camera size must be WIDTHxHEIGHT in pixels, e.g. 1920x1080, got {text!r}")
    return int(w), int(h)


class VideoSource:
    """A camera index, a video file or a network stream (MJPEG/RTSP/HTTP) through ``cv2.VideoCapture``.

    A camera (an index) is asked for ``size``; it delivers the nearest size it has.
    """

    def __init__(self, spec: int | str, loop: bool = False, size: tuple[int, int] = CAMERA_SIZE) -> None:
        self.spec = spec
        self.loop = loop
        self.size = size
        self.name = f"camera {spec}" if isinstance(spec, int) else str(spec)
        self._cap: cv2.VideoCapture | None = None

    def _open(self) -> cv2.VideoCapture:
        cap = cv2.VideoCapture(self.spec)
        if not cap.isOpened():
            cap.release()
            raise SourceError(f"cannot open source {self.name!r}")
        if isinstance(self.spec, int):
            cap.set(cv2.CAP_PROP_FRAME_WIDTH, self.size[0])
            cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self.size[1])
        return cap

    def frames(self) -> Iterator[Frame]:
        self._cap = self._open()
        index = 0
        while True:
            ok, img = self._cap.read()
            if not ok or img is None:
                if self.loop and index > 0:
                    self._cap.set(cv2.CAP_PROP_POS_FRAMES, 0)
                    ok, img = self._cap.read()
                if not ok or img is None:
                    raise SourceError(f"source {self.name!r} stopped delivering frames")
            yield Frame(np.asarray(img, np.uint8), index, time.time(), self.name)
            index += 1

    def close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None


class FolderSource:
    """The images of a folder in name order, optionally looped and paced at ``fps``.

    A ``playlist.txt`` in the folder (one file name a line, repeats allowed) sets the order instead:
    the bundled demo holds each still table state for several frames without storing copies.
    """

    def __init__(self, folder: str | Path, loop: bool = False, fps: float = 0.0) -> None:
        self.folder = Path(folder)
        self.loop = loop
        self.fps = fps
        self.name = str(self.folder)
        self.files: list[Path] = []
        playlist = self.folder / "playlist.txt"
        if playlist.is_file():
            self.files = [self.folder / line.strip() for line in playlist.read_text().splitlines()
                          if line.strip() and not line.startswith("#")]
        elif self.folder.is_dir():
            self.files = image_files(self.folder)
        if not self.files:
            raise SourceError(f"no images in folder {self.name!r}")

    def frames(self) -> Iterator[Frame]:
        index = 0
        next_at = time.monotonic()
        cache: dict[Path, Image] = {}
        while True:
            start, why = index, ""
            for path in self.files:
                img = cache.get(path)
                if img is None:
                    try:
                        img = load_image(path)
                    except ImageLoadError as exc:
                        log.warning("skipping %s", exc)
                        why = why or f"{path.name}: {exc.reason}"
                        continue
                    if len(cache) < 64:
                        cache[path] = img
                if self.fps > 0:
                    next_at += 1.0 / self.fps
                    time.sleep(max(0.0, next_at - time.monotonic()))
                yield Frame(np.asarray(img, np.uint8), index, time.time(), path.name)
                index += 1
            if index == start:  # not one file read: a loop would only repeat the warnings
                raise SourceError(f"no readable image in folder {self.name!r} ({why})")
            if not self.loop:
                return

    def close(self) -> None:
        return None


class PhoneQueue:
    """Frames pushed by the dashboard's ``/camera`` page (JPEG bytes over HTTP), read as a source.

    ``push`` never blocks: when the loop is behind, the oldest frame is dropped.
    """

    def __init__(self, maxsize: int = 2, timeout: float = 10.0) -> None:
        self.name = "phone"
        self.timeout = timeout
        self._q: queue.Queue[bytes] = queue.Queue(maxsize=maxsize)
        self._closed = threading.Event()

    def push(self, data: bytes) -> None:
        while True:
            try:
                self._q.put_nowait(data)
                return
            except queue.Full:
                try:
                    self._q.get_nowait()
                except queue.Empty:
                    pass

    def frames(self) -> Iterator[Frame]:
        index = 0
        while not self._closed.is_set():
            try:
                data = self._q.get(timeout=self.timeout)
            except queue.Empty:
                continue  # a phone that is not streaming yet is not an error
            try:
                img = decode_jpeg(data)
            except ValueError as exc:
                log.warning("phone frame dropped: %s", exc)
                continue
            yield Frame(img, index, time.time(), self.name)
            index += 1

    def close(self) -> None:
        self._closed.set()


class Resilient:
    """Wrap a source factory: on any failure, log, wait (backoff doubling to ``max_delay``), reopen.

    ``on_error(message)`` is called at each failure before the wait, and ``on_error("")`` at the
    first frame after one, so that a caller shows why no frame comes while it waits (``last_error``
    keeps the last failure's message)."""

    def __init__(
        self,
        factory: Callable[[], FrameSource],
        name: str,
        base_delay: float = 0.5,
        max_delay: float = 10.0,
        sleep: Callable[[float], None] = time.sleep,
        on_error: Callable[[str], None] | None = None,
    ) -> None:
        self.factory = factory
        self.name = name
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.sleep = sleep
        self.on_error = on_error
        self.failures = 0
        self.last_error = ""
        self._closed = False
        self._current: FrameSource | None = None

    def frames(self) -> Iterator[Frame]:
        index = 0
        delay = self.base_delay
        failing = False
        while not self._closed:
            try:
                self._current = self.factory()
                for frame in self._current.frames():
                    if failing and self.on_error is not None:
                        self.on_error("")  # frames again after a failure
                    delay, failing = self.base_delay, False
                    yield Frame(frame.image, index, frame.timestamp, frame.source)
                    index += 1
                    if self._closed:
                        return
                self.last_error = f"source {self.name!r} ended"
            except Exception as exc:  # a camera may fail in any way; the loop must survive it
                self.last_error = str(exc)
            self.failures += 1
            log.warning("%s; retrying in %.1f s", self.last_error, delay)
            failing = True
            if self.on_error is not None:
                self.on_error(f"{self.last_error}; retrying in {delay:g} s")
            self._close_current()
            self.sleep(delay)
            delay = min(self.max_delay, delay * 2)

    def _close_current(self) -> None:
        if self._current is not None:
            try:
                self._current.close()
            except Exception:  # closing a broken capture may raise; nothing more to do
                pass
            self._current = None

    def close(self) -> None:
        self._closed = True
        self._close_current()


def repo_root() -> Path:
    return Path(__file__).resolve().parents[1]


DEMO_DIR = repo_root() / "calibration" / "demo"


def open_source(spec: str, phone: PhoneQueue | None = None, demo_fps: float = 8.0,
                camera_size: tuple[int, int] = CAMERA_SIZE) -> FrameSource:
    """Turn a ``--source`` value into a frame source (not yet opened; iterate ``frames()``)."""
    text = spec.strip()
    if text == "demo":
        return FolderSource(DEMO_DIR / "frames", loop=True, fps=demo_fps)
    if text == "phone":
        return phone if phone is not None else PhoneQueue()
    if text.isdigit():
        return VideoSource(int(text), size=camera_size)
    if "://" in text:
        return VideoSource(text)
    path = Path(text)
    if path.is_dir():
        return FolderSource(path)
    if path.is_file():
        return VideoSource(str(path))
    raise SourceError(f"unknown source {spec!r}: not a camera index, URL, file, folder, 'phone' or 'demo'")


def probe(spec: str) -> bool:
    """Whether a camera index / URL / file opens and yields one frame (used to fall back to the demo)."""
    try:
        src = open_source(spec)
        it = src.frames()
        next(it)
        src.close()
        return True
    except (Exception, StopIteration):
        return False
