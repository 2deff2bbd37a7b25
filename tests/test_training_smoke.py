"""A few-step smoke run of each training script (the only training CI does).

The scripts import torch, so they run in a subprocess: nothing under tests/ imports torch. Each
run must train, checkpoint and export an ONNX model that our runtime loads and runs.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from vision.runtime import OnnxModel

REPO = Path(__file__).resolve().parents[1]
needs_torch = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="torch is not installed (pip install -e '.[train]')"
)


def _run(args: list[str], timeout: int = 240) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    res = subprocess.run([sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True,
                         timeout=timeout)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    return res


@needs_torch
def test_localizer_training_smoke(tmp_path: Path) -> None:
    onnx = tmp_path / "loc.onnx"
    _run(["scripts/train_localizer.py", "--out", str(tmp_path / "run"), "--epochs", "1", "--steps", "2",
          "--batch", "2", "--eval-photos", "2", "--export", str(onnx), "--threads", "1"])
    assert list((tmp_path / "run").glob("*.pt")), "no checkpoint written"
    outs = OnnxModel(onnx).run(np.zeros((1, 3, 320, 320), np.float32))
    assert outs and all(np.isfinite(o).all() for o in outs)
    assert outs[0].shape[-2:] == (80, 80)  # stride-4 heatmap


@needs_torch
def test_table_localizer_training_smoke(tmp_path: Path) -> None:
    """Windows cut from rendered tables, all of them seen top-down as the table reader localises."""
    onnx = tmp_path / "loc.onnx"
    _run(["scripts/train_localizer.py", "--out", str(tmp_path / "run"), "--epochs", "1", "--steps", "2",
          "--batch", "2", "--eval-photos", "2", "--export", str(onnx), "--threads", "1", "--table", "1.0",
          "--table-frames", "2", "--top-down", "1.0"])
    outs = OnnxModel(onnx).run(np.zeros((1, 3, 320, 320), np.float32))
    assert outs[0].shape[-2:] == (80, 80) and np.isfinite(outs[0]).all()


@needs_torch
def test_classifier_training_smoke(tmp_path: Path) -> None:
    _run(["-m", "scripts.train_classifier", "--epochs", "1", "--max-batches", "2", "--synth-per-class", "2",
          "--batch", "8", "--threads", "1", "--run-dir", str(tmp_path / "run"), "--out", str(tmp_path / "out")])
    assert (tmp_path / "run" / "last.pt").is_file(), "no checkpoint written"
    model = OnnxModel(tmp_path / "out" / "classifier.onnx")  # also checks the written sha256
    logits, emb = model.run(np.zeros((3, 3, 64, 48), np.float32))
    assert logits.shape[0] == emb.shape[0] == 3 and np.isfinite(logits).all()
