"""A few-step smoke run of each training script (the only training CI does).

The scripts import torch, so they run in a subprocess: nothing under tests/ imports torch. Each
run must train, checkpoint and export an ONNX model that our runtime loads and runs. Also here: the
localiser's worker processes drawing the same batches however many, and ``--device`` naming a GPU
that is not there. The training pieces are tested in the other ``test_training_*.py`` modules.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from training_helpers import REPO, needs_photos, needs_torch, run_script

from vision.runtime import OnnxModel


@needs_torch
@needs_photos
def test_localizer_training_smoke(tmp_path: Path) -> None:
    onnx = tmp_path / "loc.onnx"
    run_script(["scripts/train_localizer.py", "--out", str(tmp_path / "run"), "--epochs", "1", "--steps", "2",
          "--batch", "2", "--eval-photos", "2", "--export", str(onnx), "--threads", "1",
          "--synth", "0.5", "--american", "1.0", "--backs", "0.2", "--light", "0.5"])  # half synthetic scenes, each American
    assert list((tmp_path / "run").glob("*.pt")), "no checkpoint written"
    outs = OnnxModel(onnx).run(np.zeros((1, 3, 320, 320), np.float32))
    assert outs and all(np.isfinite(o).all() for o in outs)
    assert outs[0].shape[-2:] == (80, 80)  # stride-4 heatmap


@needs_torch
@needs_photos
def test_table_localizer_training_smoke(tmp_path: Path) -> None:
    """Windows cut from rendered tables, all of them seen top-down as the table reader localises,
    fine-tuning the committed table localiser (started from its ONNX file)."""
    onnx = tmp_path / "loc.onnx"
    res = run_script(["scripts/train_localizer.py", "--out", str(tmp_path / "run"), "--epochs", "1", "--steps", "2",
               "--batch", "2", "--eval-photos", "2", "--export", str(onnx), "--threads", "1", "--table", "1.0",
               "--table-frames", "2", "--top-down", "1.0", "--init", str(REPO / "models" / "localizer-table.onnx")])
    assert "initialised from" in res.stdout and "localizer-table.onnx" in res.stdout
    outs = OnnxModel(onnx).run(np.zeros((1, 3, 320, 320), np.float32))
    assert outs[0].shape[-2:] == (80, 80) and np.isfinite(outs[0]).all()


@needs_torch
@needs_photos
def test_classifier_training_smoke(tmp_path: Path) -> None:
    res = run_script(["-m", "scripts.train_classifier", "--epochs", "1", "--max-batches", "2", "--synth-per-class", "2",
               "--batch", "8", "--threads", "1", "--run-dir", str(tmp_path / "run"), "--out", str(tmp_path / "out"),
               "--init", str(REPO / "models" / "classifier.onnx"), "--drop-loose", "--photo-repeat", "2",
               "--localised-crops", "1", "--scene-crops", "3:0.5", "--view-scenes", "3:0.5", "--extra-table", "7:2:0.7:american-mix+wide-mix",
               "--recolour", "0.5", "--tiny", "0.5", "--light", "0.5", "--max-eval", "300"])
    assert "initialised from" in res.stdout  # a fine-tune of the committed model, started from its ONNX file
    # two rendered tables of sets drawn over training styles (and the Noto glyphs), cut as the table reader cuts
    assert int(res.stdout.split("from table frames")[0].rsplit("(", 1)[1]) > 20, res.stdout[:800]
    # the train photos whose boxes are the export's 45-degree turns are left out, the rest twice
    dropped = int(res.stdout.split("--drop-loose: ")[1].split()[0])
    photos = int(res.stdout.split("data: ")[1].split()[0])
    assert 0 < dropped and photos == 2 * (22548 - dropped), res.stdout[:500]
    # and the upright photos' tiles once more, cut at the photo localiser's quads as the pipeline cuts them
    assert int(res.stdout.split("--localised-crops: ")[1].split()[0]) > 10000, res.stdout[:500]
    assert "valid crops at localised quads" in res.stdout
    assert "each validation pool read on at most 300 of its crops" in res.stdout
    # and the tiles of synthetic scenes (some American) cut the same way, with American ones to validate on
    assert int(res.stdout.split("--scene-crops: ")[1].split()[0]) > 20, res.stdout[:800]
    assert "American scene crops" in res.stdout
    # and scenes drawn in view, as the benchmark draws them: some of their tiles cut by the picture's edge
    view = res.stdout.split("--view-scenes: ")[1]
    assert int(view.split()[0]) > 20 and int(view.split(", ")[1].split()[0]) > 0, view[:300]
    assert "American in-view scene crops" in res.stdout and "(cut by the edge " in res.stdout
    assert (tmp_path / "run" / "last.pt").is_file(), "no checkpoint written"
    model = OnnxModel(tmp_path / "out" / "classifier.onnx")  # also checks the written sha256
    logits, emb = model.run(np.zeros((3, 3, 64, 48), np.float32))
    assert logits.shape[0] == emb.shape[0] == 3 and np.isfinite(logits).all()


@needs_torch
@pytest.mark.parametrize("script", ["scripts/train_localizer.py", "scripts/train_classifier.py"])
def test_a_gpu_that_is_not_there_is_a_clear_error(script: str, tmp_path: Path) -> None:
    """``--device`` names where training runs (``auto``: a GPU when torch sees one); a GPU torch
    does not see stops the run at once, before any data is read, saying so."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    res = subprocess.run([sys.executable, script, "--device", "cuda:99", "--out", str(tmp_path / "x")], cwd=REPO,
                         env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode != 0
    assert "--device cuda:99: torch" in res.stderr and ("sees no GPU" in res.stderr or "GPU(s)" in res.stderr)
    assert not (tmp_path / "x").exists()


@needs_torch
@needs_photos
def test_the_localisers_worker_processes_draw_the_same_batches_for_any_number_of_them(tmp_path: Path) -> None:
    """``--workers N`` draws batch (epoch, step) from a stream of its own: two workers, or one then
    two across a resume, train the same file."""
    args = ["--epochs", "2", "--steps", "2", "--batch", "2", "--eval-photos", "1", "--threads", "1",
            "--synth", "0.5", "--american", "1.0"]
    files = []
    for run, workers, stop in (("a", "2", []), ("b", "1", ["--stop-epoch", "1"]), ("b", "2", [])):
        onnx = tmp_path / f"{run}{workers}.onnx"
        run_script(["scripts/train_localizer.py", "--out", str(tmp_path / run), *args, "--workers", workers, *stop,
              "--export", str(onnx)])
        files.append(onnx.read_bytes())
    assert files[0] == files[2]  # epoch 0 drawn by one worker or by two, epoch 1 by two, resumed or not
    assert files[1] != files[2]  # the first epoch's file, then the resumed run's
