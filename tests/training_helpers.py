"""Shared helpers of the training tests (``test_training_*.py``): the repository root, the skip
marks for tests that need torch (the ``train`` extra) or the shared photo data, and ``run_script``, which
runs a script or ``-c`` code in a subprocess (the scripts import torch; nothing under tests/ does).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.photos import shared_data_dir

REPO = Path(__file__).resolve().parents[1]
needs_photos = pytest.mark.skipif(
    not (shared_data_dir() / "tiles-photos-v4" / "train").is_dir(),
    reason="shared photo data not present (../shared/data or $COMPANION_SHARED/data)",
)
needs_torch = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="torch is not installed (pip install -e '.[train]')"
)


def run_script(args: list[str], timeout: int = 240) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    res = subprocess.run([sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True,
                         timeout=timeout)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    return res
