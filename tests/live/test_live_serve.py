"""``python -m companion serve``: starts on the demo with no camera and no models; certificates."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from companion.cli import main
from companion.commands.serve import self_signed_cert

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_serve_with_no_camera_serves_the_demo(tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "COMPANION_NO_CAMERA": "1", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "companion", "serve", "--port", str(port),
                             "--data", str(tmp_path)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        state = None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and state is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=2) as r:
                    state = json.load(r)
            except OSError:
                time.sleep(0.3)
        assert state is not None, "serve did not answer within 20 s"
        assert state["settings"]["source"] == "demo"
        assert any("demo" in w for w in state["warnings"])
        assert (tmp_path / "demo" / "companion.sqlite3").is_file()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_unknown_variant_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--variant", "klingon", "--source", "demo"]) == 2
    assert "klingon" in capsys.readouterr().err


def test_bad_camera_size_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--camera-size", "1920by1080", "--source", "demo"]) == 2
    err = capsys.readouterr().err
    assert "--camera-size" in err and "1920by1080" in err


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl CLI not installed")
def test_self_signed_certificate_is_made_once(tmp_path: Path) -> None:
    cert, key = self_signed_cert(tmp_path, "192.168.1.20")
    assert cert.read_text().startswith("-----BEGIN CERTIFICATE-----")
    assert "PRIVATE KEY" in key.read_text()
    stamp = cert.stat().st_mtime_ns
    assert self_signed_cert(tmp_path, "192.168.1.20")[0].stat().st_mtime_ns == stamp
