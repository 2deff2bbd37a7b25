"""scripts/quantize_model.py: the 8-bit photo classifier made from its float master."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vision.classify import TileClassifier

MODELS = Path(__file__).resolve().parents[1] / "models"


def test_quantize_writes_an_8_bit_model_its_checksum_and_spec(tmp_path: Path) -> None:
    pytest.importorskip("onnx")  # the train extra: quantizing is a training step
    from scripts.quantize_model import quantize_classifier

    crops = np.random.default_rng(0).integers(0, 256, (40, 64, 48, 3), dtype=np.uint8)
    out = tmp_path / "classifier-int8.onnx"
    digest = quantize_classifier(MODELS / "classifier.onnx", out, crops)
    assert b"QuantizeLinear" in out.read_bytes() and out.stat().st_size < (MODELS / "classifier.onnx").stat().st_size
    clf = TileClassifier(out)  # loading checks the written sha256
    assert clf.spec["sha256"] == digest and clf.spec["quantized"]["calibration_crops"] == 40
    assert clf.classes == TileClassifier(MODELS / "classifier.onnx").classes
    res = clf.run(crops[:3])
    assert res.probs.shape == (3, 45) and np.isfinite(res.probs).all()
    with pytest.raises(ValueError, match="no calibration crops"):
        quantize_classifier(MODELS / "classifier.onnx", tmp_path / "again.onnx", crops[:0])
