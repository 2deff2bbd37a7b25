"""End to end with the real recogniser on a rendered table (skipped while models/*.onnx are absent)."""

from __future__ import annotations

from pathlib import Path

import pytest
from table_helpers import CARD, exps, player, table

from companion.table import TableReader
from vision.render import View

MODELS = Path(__file__).resolve().parents[2] / "models"
pytestmark = pytest.mark.skipif(
    not ((MODELS / "localizer.onnx").is_file() and (MODELS / "classifier.onnx").is_file()),
    reason="models/localizer.onnx and models/classifier.onnx not committed yet",
)


@pytest.fixture(scope="module")
def reader() -> TableReader:
    from vision.pipeline import TileRecognizer

    return TableReader(table().layout, TileRecognizer(MODELS), card=CARD, variant="mjm")


def test_correct_table_read_by_the_models_is_never_called_dead(reader: TableReader) -> None:
    from vision.artwork import tile_faces

    faces = tile_faces("american-synth")
    p1 = player("P1", exps("8C 8C J", "N N N N"), exps("1D 1D 1D"))
    r = table(p1, discards="3B 5C", faces=faces, view=View("bottom", 40.0, (1920, 1080)))
    obs = reader.read(r.image)
    assert obs.homography == "fresh"
    assert [f for f in obs.flags if f.kind == "wrong_rack"] == []
    seen = [e for z in ("P1-A", "P1-B") for e in obs.zones[z].exposures]
    truth = list(exps("8C 8C J", "N N N N", "1D 1D 1D"))
    right = sum(1 for e in truth if e in seen)
    assert right >= 1, f"read {seen}, expected {truth}"
