"""Shared helpers of the dashboard tests: an enrollment photo to upload, a live companion served
to a browser page."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import cv2
import numpy as np

CHROMIUM = "/usr/bin/chromium"
"""Debian's chromium, which Playwright drives (``executable_path``)."""


def replayed_live(tmp_path: Path, zones: dict[str, Any], flags: list[dict[str, Any]],
                  mahjong: dict[str, Any]) -> Any:
    """A :class:`companion.live.Live` over eight frames of the demo's first picture, each read as
    ``zones``, ``flags`` and ``mahjong`` (a recording made for the test, replayed), keeping its
    game under ``tmp_path / "data"``."""
    from companion.live import Live, LiveConfig
    from companion.live_readers import ReplayReader
    from vision.capture import DEMO_DIR, FolderSource

    frames = tmp_path / "frames"
    frames.mkdir()
    shutil.copy(DEMO_DIR / "frames" / "f000.jpg", frames / "a.jpg")
    (frames / "playlist.txt").write_text("a.jpg\n" * 8)
    recording = tmp_path / "readings.json"
    recording.write_text(json.dumps({"frames": {"a.jpg": {"homography": "fresh", "zones": zones, "flags": flags,
                                                          "mahjong": mahjong}}}))
    return Live(LiveConfig(source="demo", data_dir=str(tmp_path / "data")),
                source=FolderSource(frames, loop=False, fps=20), reader=ReplayReader(recording))


@contextmanager
def served_page(browser: Any, live: Any) -> Iterator[tuple[Any, str]]:
    """``live`` (a :class:`companion.live.Live`) served on a free port and started, and a
    phone-sized page of ``browser``: ``(page, url)``; all closed and stopped afterwards."""
    from werkzeug.serving import make_server

    from companion.web import create_app

    srv = make_server("127.0.0.1", 0, create_app(live), threaded=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    live.start()
    ctx = browser.new_context(viewport={"width": 412, "height": 900})
    try:
        page = ctx.new_page()
        page.set_default_timeout(12_000)
        yield page, f"http://127.0.0.1:{srv.server_port}/"
    finally:
        ctx.close()
        srv.shutdown()
        live.stop()


def layout_jpeg(laid: dict[str, str], style: str | None = None) -> bytes:
    """A grid photo of a set (of artwork ``style``, else the first training style) laid out as the
    Chinese sheet asks, but for ``laid``: in each of its places, the tile that lies there instead."""
    from vision.artwork import TRAIN_STYLES, tile_faces
    from vision.enroll import grid_photo

    faces = {c: v[0] for c, v in tile_faces(style or TRAIN_STYLES[0]).items()}
    faces = {c: faces[laid.get(c, c)] for c in faces}
    image, _ = grid_photo(faces, "chinese", np.random.default_rng(0))
    return bytes(cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 95])[1])


SWAPPED = {"3B": "4B", "4B": "3B"}
"""3 Bams and 4 Bams laid in each other's places."""


DOUBTFUL = ("km-egypt", {"6B": "FL1", "FL1": "6B"})
"""A style whose 6 Bams and first flower, laid in each other's places, read each likelier as the
other's but not surely: named for the player to check, not moved."""
