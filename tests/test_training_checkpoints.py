"""The committed ONNX models as training checkpoints: loaded into the torch nets (run in a
subprocess; nothing under tests/ imports torch) and exported again, alone or grown by residual
blocks, they compute what the committed files compute; a grown localiser is not trained as an
ungrown one, and an ONNX file of another net is refused.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from training_helpers import REPO, needs_torch, run_script

from vision.runtime import OnnxModel

_ROUND_TRIPS = """
import sys, traceback
from pathlib import Path
import torch
from scripts.onnx_weights import load_onnx_weights

def round_trip(kind, src, dst):
    torch.manual_seed(0)
    if kind.startswith("classifier"):
        from scripts.classifier_export import export, extra_blocks, load_into
        from scripts.classifier_net import TileNet
        grow = int(kind.partition("+")[2] or 0)  # "classifier+1": one residual block more than the file
        net = TileNet(extra=extra_blocks(src) + grow)
        load_into(net, src, lambda: torch.rand(64, 3, 64, 48))
        export(net, dst, {})
    else:
        from scripts.localizer_export import export_onnx
        from scripts.localizer_net import GROWN, GROWN_TWICE, LocNet, grown_file
        was = grown_file(src)
        net = LocNet(grow=was)
        load_onnx_weights(net, src, torch.rand(4, 3, 320, 320) * 255)
        if kind == "localizer+grow":  # grown once more than the file (--grow), the new blocks at zero
            grown = LocNet(grow=was + 1)
            missing = grown.load_state_dict(net.state_dict(), strict=False).missing_keys
            assert {k.split(".")[0] for k in missing} == set((GROWN, GROWN_TWICE)[was]), missing
            net = grown
        export_onnx(net, dst / "localizer.onnx")

args = sys.argv[1:]
for kind, src, dst in zip(args[0::3], args[1::3], args[2::3]):  # each case on its own: one failing stops none
    dst = Path(dst)
    dst.mkdir(parents=True, exist_ok=True)
    try:
        round_trip(kind, Path(src), dst)
    except Exception:
        (dst / "error.txt").write_text(traceback.format_exc())
"""
CASES = [
    ("classifier", "classifier.onnx", (6, 3, 64, 48)),
    ("classifier+1", "classifier.onnx", (6, 3, 64, 48)),  # grown by a block that starts as the identity
    ("localizer", "localizer-table.onnx", (1, 3, 320, 320)),
    ("localizer", "localizer.onnx", (1, 3, 320, 320)),  # a file grown by --grow
    ("localizer+grow", "localizer-table.onnx", (1, 3, 320, 320)),  # grown by --grow, before it is trained
    ("localizer+grow", "localizer.onnx", (1, 3, 320, 320)),  # grown once more
]


REFUSED = ("localizer", "classifier.onnx", "refused")
"""An ONNX file of another net, loaded as a localiser: the last case the subprocess runs."""


@pytest.fixture(scope="module")
def round_trips(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every case of :data:`CASES` loaded and exported again, and :data:`REFUSED`, in one subprocess
    (torch imported once): case ``k``'s files, or its ``error.txt``, under ``k/``."""
    out = tmp_path_factory.mktemp("round-trips")
    cases = [(kind, model, str(k)) for k, (kind, model, _) in enumerate(CASES)] + [REFUSED]
    run_script(["-c", _ROUND_TRIPS, *(str(a) for kind, model, name in cases
                                      for a in (kind, REPO / "models" / model, out / name))])
    return out


@needs_torch
@pytest.mark.parametrize(("case", "kind", "model", "shape"), [(k, *c) for k, c in enumerate(CASES)])
def test_committed_model_is_a_checkpoint(round_trips: Path, case: int, kind: str, model: str, shape: tuple[int, ...]) -> None:
    """Training can start from the committed ONNX file (its BatchNorms were folded on export):
    loaded into the torch net and exported again, it computes what the committed file computes;
    so does the net grown by a residual block (the localiser by ``--grow``'s), before it is trained."""
    made = round_trips / str(case)
    if (made / "error.txt").is_file():
        pytest.fail((made / "error.txt").read_text())
    again = made / ("classifier.onnx" if kind.startswith("classifier") else "localizer.onnx")
    x = np.random.default_rng(1).uniform(0, 1 if kind == "classifier" else 255, shape).astype(np.float32)
    want = OnnxModel(REPO / "models" / model).run(x)
    got = OnnxModel(again).run(x)
    for w, g in zip(want, got, strict=True):
        assert w.shape == g.shape
        np.testing.assert_allclose(g, w, atol=1e-3 * max(1.0, float(np.abs(w).max())))


@needs_torch
def test_a_grown_localiser_is_not_trained_as_an_ungrown_one(tmp_path: Path) -> None:
    """The committed photo localiser holds ``--grow``'s blocks: training from it without ``--grow``
    stops with a message that says so, before anything is written; so does a run's checkpoint grown
    more than the run asks for."""
    res = subprocess.run([sys.executable, "scripts/train_localizer.py", "--init", "models/localizer.onnx",
                          "--out", str(tmp_path / "run"), "--export", str(tmp_path / "run" / "l.onnx"),
                          "--epochs", "1", "--steps", "1"], cwd=REPO,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=240)
    assert res.returncode != 0 and "pass --grow" in res.stderr, res.stderr[-500:]
    assert not (tmp_path / "run" / "last.pt").exists()
    # nor a run's checkpoint of a net grown twice, trained as one grown once (its blocks would be dropped)
    ckpt = tmp_path / "grown2.pt"
    run_script(["-c", "import sys, torch; from scripts.localizer_net import LocNet; "
          "torch.save({'model': LocNet(grow=2).state_dict()}, sys.argv[1])", str(ckpt)])
    res = subprocess.run([sys.executable, "scripts/train_localizer.py", "--init", str(ckpt), "--grow",
                          "--out", str(tmp_path / "run2"), "--export", str(tmp_path / "run2" / "l.onnx"),
                          "--epochs", "1", "--steps", "1"], cwd=REPO,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=240)
    assert res.returncode != 0 and "pass --grow 2" in res.stderr, res.stderr[-500:]


@needs_torch
def test_an_onnx_file_of_another_net_is_refused(round_trips: Path) -> None:
    error = round_trips / "refused" / "error.txt"
    assert error.is_file(), "the classifier's file was loaded as a localiser"
    text = error.read_text()
    assert "ValueError" in text and "classifier.onnx" in text, text
