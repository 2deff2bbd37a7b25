"""Every command-line script under scripts/ starts when run by its path from anywhere.

The README and docs name scripts by path (`python scripts/bench_table.py`) as well as by module
(`python -m scripts.bench_classifier`); until the twenty-sixth session two of them answered a run
by path with "No module named 'scripts'".  Each runs in a subprocess (the training scripts import
torch, which nothing under tests/ may).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p for p in (REPO / "scripts").glob("*.py")
                 if "argparse" in (text := p.read_text()) and '__name__ == "__main__"' in text)


def test_the_command_line_scripts_are_found() -> None:
    names = {p.stem for p in SCRIPTS}
    assert {"bench_classifier", "bench_table", "bench_vision", "train_classifier", "train_localizer"} <= names


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_a_script_run_by_its_path_answers_help(script: Path, tmp_path: Path) -> None:
    if "import torch" in script.read_text() and importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed (pip install -e '.[train]')")
    out = subprocess.run([sys.executable, str(script), "--help"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("usage:")
