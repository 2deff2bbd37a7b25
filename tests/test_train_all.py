"""scripts/train_all.py: the chain that trains every committed model with one command.

The plan is checked against the training scripts' own command lines (a renamed or mistyped flag
fails) and against its own order (a step that reads what no earlier step wrote fails), for the
real runs and the smoke runs alike.  The training scripts import torch, so the check runs in a
subprocess (nothing under tests/ imports torch), as does the plan, which needs none; the chain itself takes about ten hours and is
not run here (`--smoke` runs it at a batch or two a run: docs/recognition.md, "Train it").
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
COMMITTED = ("localizer.onnx", "localizer-table.onnx", "classifier.onnx", "classifier-table.onnx",
             "classifier-table-check.onnx", "classifier-int8.onnx")

needs_torch = pytest.mark.skipif(  # the check reads the training scripts' own command lines
    importlib.util.find_spec("torch") is None, reason="torch is not installed (pip install -e '.[train]')"
)


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)


def _script(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "scripts/train_all.py", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=300)


@needs_torch
def test_the_plan_passes_its_check_and_makes_every_committed_file() -> None:
    out = _script("--check")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 problem(s)" in out.stdout and all(name in out.stdout for name in COMMITTED)
    assert sorted(p.name for p in (REPO / "models").glob("*.onnx")) == sorted(COMMITTED)


@needs_torch
def test_the_check_finds_a_mistyped_flag_a_step_out_of_order_and_a_file_never_made() -> None:
    code = """
from dataclasses import replace
import scripts.train_all as t
plan = list(t.PLAN)
ids = [s.id for s in plan]
c9 = ids.index("C9")
plan[c9] = replace(plan[c9], args=tuple(a.replace("--synth-per-class", "--synth-per-klass") for a in plan[c9].args))
c1, c2 = ids.index("C1"), ids.index("C2")
plan[c1], plan[c2] = plan[c2], plan[c1]
plan = [s for s in plan if s.id != "K1"]
for line in t.check(plan):
    print(line)
"""
    out = _python(code)
    assert out.returncode == 0, out.stderr
    assert "C9: " in out.stdout and "--synth-per-klass" in out.stdout
    assert "C2 reads {runs}/classifier/last.pt, which no step before it writes" in out.stdout
    assert "no step makes classifier-table-check.onnx" in out.stdout


def test_only_one_file_runs_the_steps_it_needs_in_the_plans_order() -> None:
    out = _script("--dry-run", "--only", "localizer-table.onnx", "--out", "/tmp/x")
    assert out.returncode == 0, out.stderr
    ids = [line.split(":")[0] for line in out.stdout.splitlines()]
    assert ids == ["L1.1", "L1.2", "L1.3", "LT1", "LT2", "LT3", "LT3p"]
    assert "--init /tmp/x/loc/stage3/last.pt" in out.stdout  # the recipe's stage 3, as the card's runs/loc3
    full = _script("--dry-run", "--only", "classifier-int8.onnx").stdout
    ids = [line.split(":")[0] for line in full.splitlines()]
    assert ids[-1] == "Q1" and {"C15", "R1", "C16", "L2", "L2p", "C19", "C19p"} <= set(ids)
    assert not {"T1", "T4", "LT1", "K1"} & set(ids)
    assert ids.index("L2p") < ids.index("C19") and ids.index("R1") < ids.index("C16")
    bad = _script("--dry-run", "--only", "nothing.onnx")
    assert bad.returncode != 0 and "not a committed model" in bad.stderr


def test_the_seed_moves_every_runs_seed_and_no_data_seed() -> None:
    plain = _script("--dry-run", "--only", "localizer.onnx").stdout
    moved = _script("--dry-run", "--only", "localizer.onnx", "--seed", "5").stdout
    assert "--seed 1 " in plain and "--seed 6 " in moved and "--seed 71 " in plain and "--seed 76 " in moved
    clf = _script("--dry-run", "--only", "classifier.onnx", "--seed", "5").stdout
    assert "--synth-seed 9 " in clf and "--scene-crops 3000:0.5:25" in clf and "--seed 27 " in clf


def test_a_copy_step_carries_the_model_its_json_and_its_digest(tmp_path: Path) -> None:
    src = tmp_path / "run" / "classifier.onnx"
    src.parent.mkdir()
    src.write_bytes(b"onnx")
    src.with_suffix(".json").write_text("{}")
    (tmp_path / "run" / "classifier.onnx.sha256").write_text("abc123  classifier.onnx\n")
    code = f"""
from pathlib import Path
import scripts.train_all as t
t.copy_model(Path({str(src)!r}), Path({str(tmp_path / 'models' / 'classifier-table.onnx')!r}))
"""
    out = _python(code)
    assert out.returncode == 0, out.stderr
    dst = tmp_path / "models"
    assert (dst / "classifier-table.onnx").read_bytes() == b"onnx" and (dst / "classifier-table.json").is_file()
    assert (dst / "classifier-table.onnx.sha256").read_text() == "abc123  classifier-table.onnx\n"
