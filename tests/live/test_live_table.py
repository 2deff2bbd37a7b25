"""The live loop over ``companion.table.TableReader``: rendered frames, the renderer's truth as detections.

This checks the meeting point end to end (markers -> calibration -> zones -> exposures -> card
rules -> flags -> events -> dashboard state) without trained models.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from companion.live import Live, LiveConfig
from companion.rules.card import load_card
from companion.table import TableObservation, TableReader
from vision.layout import load_layout
from vision.render import RackScene, RenderedTable, Scene, View, render_table

ROOT = Path(__file__).resolve().parents[2]
GOOD, WRONG, PUNG = ("5D", "5D", "J", "5D"), ("GD", "GD", "GD"), ("N", "N", "N")


def _scene(p1a: tuple[tuple[str, ...], ...]) -> Scene:
    shown = sum(map(len, p1a))
    return Scene({"P1-A": RackScene(p1a, 14 - shown), "P1-B": RackScene((), 13),
                  "P2-A": RackScene((PUNG,), 11), "P2-B": RackScene((), 13)}, ("3C", "W"))


class OracleReader:
    """TableReader fed with the renderer's true detections for each rendered frame."""

    def __init__(self, table: TableReader, shots: list[RenderedTable]) -> None:
        self.table, self.shots = table, shots

    def read(self, image: np.ndarray, name: str = "") -> TableObservation | None:
        shot = next(s for s in self.shots if s.image is image)
        return self.table.read(image, detections=shot.detections())


def test_wrong_rack_through_the_table_reader(tmp_path: Path) -> None:
    layout = load_layout("siamese-2")
    view = View(side="bottom", tilt_deg=40.0)
    shots = [render_table(layout, _scene(s), seed=3, view=view) for s in ((GOOD,), (GOOD, WRONG))]
    card = load_card(ROOT / "calibration" / "cards" / "example.mjcard")
    reader = OracleReader(TableReader(layout, None, card=card, variant="mjm"), shots)
    live = Live(LiveConfig(source="demo", data_dir=str(tmp_path)), reader=reader)
    for shot in shots:
        for _ in range(6):  # still frames: the gate opens, the smoother agrees
            live.process(shot.image, "frame")
    state = live.hub.state()
    racks = {r["zone"]: r for r in state["racks"]}
    assert racks["P1-A"]["exposures"] == [list(GOOD), list(WRONG)]
    assert racks["P1-A"]["status"] == "dead"
    assert racks["P2-A"]["exposures"] == [list(PUNG)]
    assert [f["kind"] for f in state["flags"]] == ["wrong_rack"]  # counts are right: no tile_count
    kinds = [(e["kind"], tuple(e["tiles"])) for e in reversed(state["events"])]
    assert kinds.index(("exposure", GOOD)) < kinds.index(("exposure", WRONG))
    assert state["homography"] == "fresh"
    live.store.close()
