"""Fixtures: a Live companion that has followed the bundled demo, its app and client.

The demo is followed once per test session; each test gets a copy of the resulting data folder
and a Live that resumes from it (a restart), which keeps the suite fast.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from companion.live import Live, LiveConfig
from companion.live_readers import ReplayReader
from companion.web import create_app
from vision.capture import DEMO_DIR

DEMO_FRAMES = len((DEMO_DIR / "frames" / "playlist.txt").read_text().split())  # one pass


@pytest.fixture(scope="session")
def followed_demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    data = tmp_path_factory.mktemp("demo-data")
    lv = Live(LiveConfig(source="demo", data_dir=str(data), demo_fps=0), reader=ReplayReader())
    lv.run(max_frames=DEMO_FRAMES)
    _, jpeg = lv.hub.frame(-1, 0)
    lv.store.close()
    return data, jpeg


@pytest.fixture
def live(tmp_path: Path, followed_demo: tuple[Path, bytes]) -> Iterator[Live]:
    data, jpeg = followed_demo
    shutil.copytree(data, tmp_path / "data")
    lv = Live(LiveConfig(source="demo", data_dir=str(tmp_path / "data"), demo_fps=0), reader=ReplayReader())
    lv.hub.put_frame(jpeg)
    yield lv
    lv.store.close()


@pytest.fixture
def app(live: Live) -> Flask:
    return create_app(live, {"max_upload": 64 * 1024})


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture(scope="module")
def pw() -> Iterator[object]:
    """Playwright, for the browser tests (skipped where it or Debian's chromium is missing)."""
    from web_helpers import CHROMIUM

    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed")
    with sync_api.sync_playwright() as p:
        yield p


@pytest.fixture(scope="module")
def browser(pw: object) -> Iterator[object]:
    from web_helpers import CHROMIUM

    b = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])  # type: ignore[attr-defined]
    yield b
    b.close()
