"""Every committed model is named in the model card with its sha256, and its .sha256 file agrees."""

from __future__ import annotations

from pathlib import Path

import pytest

from vision.runtime import sha256_of

MODELS = Path(__file__).resolve().parents[1] / "models"
ONNX = sorted(MODELS.glob("*.onnx"))


@pytest.mark.parametrize("path", ONNX, ids=[p.name for p in ONNX])
def test_model_card_names_each_model_and_its_sha256(path: Path) -> None:
    card = (MODELS / "MODEL_CARD.md").read_text()
    digest = sha256_of(path)
    assert f"`{path.name}`" in card, f"{path.name} is not in models/MODEL_CARD.md"
    assert digest in card, f"{path.name}'s sha256 {digest} is not in models/MODEL_CARD.md"
    assert (path.parent / (path.name + ".sha256")).read_text().split()[0] == digest


def test_there_are_models() -> None:
    assert {"localizer.onnx", "classifier.onnx"} <= {p.name for p in ONNX}
