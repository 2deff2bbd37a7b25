"""Frame sources: folders and playlists, phone queue, URL/file dispatch, reconnect with backoff."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.capture import (
    CAMERA_SIZE,
    DEMO_DIR,
    FolderSource,
    Frame,
    PhoneQueue,
    Resilient,
    SourceError,
    VideoSource,
    decode_jpeg,
    open_source,
    parse_size,
)


def _write(folder: Path, name: str, value: int) -> None:
    cv2.imwrite(str(folder / name), np.full((20, 30, 3), value, np.uint8))


def test_folder_in_name_order_and_loops(tmp_path: Path) -> None:
    for name, v in (("b.png", 20), ("a.png", 10), ("c.txt", 0)):
        if name.endswith(".png"):
            _write(tmp_path, name, v)
        else:
            (tmp_path / name).write_text("not an image")
    src = FolderSource(tmp_path, loop=True)
    it = src.frames()
    got = [next(it) for _ in range(4)]
    assert [f.source for f in got] == ["a.png", "b.png", "a.png", "b.png"]
    assert [int(f.image[0, 0, 0]) for f in got] == [10, 20, 10, 20]
    assert [f.index for f in got] == [0, 1, 2, 3]


def test_folder_names_a_file_it_cannot_read_and_stops_where_none_reads(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _write(tmp_path, "a.png", 10)
    (tmp_path / "b.heic").write_bytes(b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + b"\x00" * 64)
    with caplog.at_level("WARNING"):
        names = [f.source for f in FolderSource(tmp_path).frames()]
    assert names == ["a.png"]
    assert "b.heic" in caplog.text and "HEIC/HEIF photo" in caplog.text
    (tmp_path / "a.png").unlink()
    with pytest.raises(SourceError, match="no readable image"):
        next(FolderSource(tmp_path, loop=True).frames())


def test_playlist_repeats_files(tmp_path: Path) -> None:
    _write(tmp_path, "x.png", 1)
    _write(tmp_path, "y.png", 2)
    (tmp_path / "playlist.txt").write_text("x.png\nx.png\n# comment\ny.png\n")
    names = [f.source for f in FolderSource(tmp_path).frames()]
    assert names == ["x.png", "x.png", "y.png"]


def test_empty_folder_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=str(tmp_path.name)):
        FolderSource(tmp_path)


def test_demo_source_opens_the_bundled_recording() -> None:
    src = open_source("demo", demo_fps=0)
    frame = next(src.frames())
    assert frame.image.shape == (1080, 1920, 3)
    assert (DEMO_DIR / "readings.json").is_file()


def test_open_source_dispatch(tmp_path: Path) -> None:
    assert isinstance(open_source("3"), VideoSource)
    assert isinstance(open_source("rtsp://example.invalid/stream"), VideoSource)
    phone = PhoneQueue()
    assert open_source("phone", phone=phone) is phone
    _write(tmp_path, "a.png", 5)
    assert isinstance(open_source(str(tmp_path)), FolderSource)
    with pytest.raises(SourceError, match="nope"):
        open_source(str(tmp_path / "nope"))


def test_video_file_source(tmp_path: Path) -> None:
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 5, (64, 48))
    for v in (0, 100, 200):
        writer.write(np.full((48, 64, 3), v, np.uint8))
    writer.release()
    src = open_source(str(path))
    it = src.frames()
    frames = [next(it) for _ in range(3)]
    assert [round(float(f.image.mean()) / 100) for f in frames] == [0, 1, 2]
    with pytest.raises(SourceError, match="stopped"):
        next(it)
    src.close()


def test_decode_rejects_corrupt_bytes() -> None:
    with pytest.raises(ValueError, match="corrupt image"):
        decode_jpeg(b"\xff\xd8not really a jpeg")
    ok, buf = cv2.imencode(".jpg", np.zeros((8, 8, 3), np.uint8))
    assert decode_jpeg(buf.tobytes()).shape == (8, 8, 3)


def test_phone_queue_drops_oldest_and_skips_corrupt() -> None:
    q = PhoneQueue(maxsize=2, timeout=0.05)
    frames = []
    for v in (10, 20, 30):
        ok, buf = cv2.imencode(".png", np.full((4, 4, 3), v, np.uint8))
        q.push(buf.tobytes())
    q.push(b"garbage")  # drops 20, keeps 30 + garbage
    it = q.frames()
    frames.append(next(it))
    assert int(frames[0].image[0, 0, 0]) == 30
    q.close()


class _Flaky:
    """A source that fails to open ``fail_opens`` times, then yields two frames and ends."""

    name = "flaky"

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def frames(self) -> Iterator[Frame]:
        self.log.append("open")
        if self.log.count("open") <= 2:
            raise SourceError("camera unplugged")
        for i in range(2):
            yield Frame(np.zeros((2, 2, 3), np.uint8), i, 0.0, "flaky")

    def close(self) -> None:
        self.log.append("close")


def test_resilient_retries_with_backoff_and_keeps_counting() -> None:
    log: list[str] = []
    delays: list[float] = []
    said: list[str] = []
    src = Resilient(lambda: _Flaky(log), "flaky", base_delay=0.5, max_delay=1.5, sleep=delays.append,
                    on_error=said.append)
    it = src.frames()
    got = [next(it) for _ in range(4)]  # 2 failures, 2 frames, source ends, reopen, 2 more
    assert delays[:2] == [0.5, 1.0]
    assert [f.index for f in got] == [0, 1, 2, 3]
    assert src.failures >= 3
    assert "ended" in src.last_error
    # each failure is told as it comes, with the wait, and cleared at the next frame
    assert said == ["camera unplugged; retrying in 0.5 s", "camera unplugged; retrying in 1 s", "",
                    "source 'flaky' ended; retrying in 0.5 s", ""]
    src.close()


def test_the_dashboard_says_why_no_frame_comes_while_the_source_is_retried(tmp_path: Path) -> None:
    """A folder of frames holding only an iPhone's HEIC photo: the live status names it while the
    loop waits and retries, rather than showing the last frame rate and no reason."""
    from companion.live import Live, LiveConfig
    from companion.live_readers import NullReader

    folder = tmp_path / "frames"
    folder.mkdir()
    (folder / "IMG_0001.HEIC").write_bytes(b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + b"\x00" * 64)
    live = Live(LiveConfig(source=str(folder), data_dir=str(tmp_path / "data")), reader=NullReader())
    live.start()
    try:
        deadline = time.monotonic() + 10
        while not live.hub.state()["status"]["source_error"] and time.monotonic() < deadline:
            time.sleep(0.05)
        status = live.hub.state()["status"]
    finally:
        live.stop()
    error = status["source_error"]
    assert "no readable image in folder" in error and "IMG_0001.HEIC: a HEIC/HEIF photo" in error
    assert "retrying in" in error
    assert status["fps"] == 0.0 and status["frames"] == 0


def test_a_camera_is_asked_for_the_chosen_size(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: dict[int, float] = {}

    class FakeCapture:
        def __init__(self, spec: object) -> None:
            self.spec = spec

        def isOpened(self) -> bool:  # noqa: N802 (cv2's name)
            return True

        def set(self, prop: int, value: float) -> bool:
            asked[prop] = value
            return True

        def read(self) -> tuple[bool, np.ndarray]:
            return True, np.zeros((4, 4, 3), np.uint8)

        def release(self) -> None:
            pass

    monkeypatch.setattr(cv2, "VideoCapture", FakeCapture)
    src = open_source("0")
    next(src.frames())
    assert (asked[cv2.CAP_PROP_FRAME_WIDTH], asked[cv2.CAP_PROP_FRAME_HEIGHT]) == CAMERA_SIZE == (1920, 1080)
    asked.clear()
    next(open_source("0", camera_size=parse_size("1280x720")).frames())
    assert (asked[cv2.CAP_PROP_FRAME_WIDTH], asked[cv2.CAP_PROP_FRAME_HEIGHT]) == (1280, 720)
    asked.clear()
    next(open_source("rtsp://example.invalid/s").frames())
    assert asked == {}  # a stream or a file is read at its own size


@pytest.mark.parametrize("bad", ["1920", "x1080", "1920x", "big", "0x0", "1920x1080x3", "-1x5"])
def test_a_bad_camera_size_is_named(bad: str) -> None:
    with pytest.raises(ValueError, match="WIDTHxHEIGHT"):
        parse_size(bad)
