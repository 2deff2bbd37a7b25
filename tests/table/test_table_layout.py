"""Layout files: the shipped ones load; bad ones fail with a message naming the file and zone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vision.layout import LAYOUTS_DIR, LayoutError, load_layout, parse_layout

GOOD: dict[str, Any] = {
    "table_mm": [900, 900],
    "zones": [
        {"name": "P1-A", "kind": "rack", "player": 1, "hand": "A", "polygon_mm": [[100, 800], [800, 800], [800, 880], [100, 880]]},
        {"name": "discards", "kind": "discards", "polygon_mm": [[100, 200], [800, 200], [800, 800], [100, 800]]},
    ],
}


@pytest.mark.parametrize("path", sorted(LAYOUTS_DIR.glob("*.json")), ids=lambda p: p.stem)
def test_shipped_layouts_load(path: Path) -> None:
    layout = load_layout(path)
    players = {"siamese-2": 2, "royale-3": 3, "royale-4": 4}[path.stem]
    assert layout.players == tuple(range(1, players + 1))
    assert len(layout.racks) == 2 * players
    assert {z.hand for z in layout.racks} == {"A", "B"}


def test_assign_points_to_zones() -> None:
    layout = parse_layout(GOOD)
    got = layout.assign([[450, 840], [450, 500], [50, 50], [450, 800.5]])
    assert got.tolist() == [0, 1, -1, 0]


def test_reading_axes_face_the_owner() -> None:
    layout = load_layout("royale-4")
    right, up = layout.reading_axes(layout.zone("P3-A"))  # player 3 sits at the top edge
    assert np.allclose(up, [0, 1]) and np.allclose(right, [-1, 0])
    right, up = layout.reading_axes(layout.zone("P2-B"))  # player 2 at the right edge
    assert np.allclose(up, [-1, 0]) and np.allclose(right, [0, -1])


def _bad(**change: Any) -> dict[str, Any]:
    raw = json.loads(json.dumps(GOOD))
    for key, value in change.items():
        if key.startswith("z0_"):
            raw["zones"][0][key[3:]] = value
        else:
            raw[key] = value
    return raw


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (_bad(colour="red"), "unknown key(s) ['colour']"),
        (_bad(z0_shape="box"), "zones[0] ('P1-A'): unknown key(s) ['shape']"),
        (_bad(z0_polygon_mm=[[100, 800], [800, 880], [800, 800], [100, 880]]), "crosses itself"),
        (_bad(z0_polygon_mm=[[100, 800], [800, 800]]), "at least 3 points"),
        (_bad(z0_polygon_mm=[[100, 800], [950, 800], [800, 880]]), "outside the table"),
        (_bad(z0_polygon_mm=[[100, 700], [800, 700], [800, 880], [100, 880]]), "'P1-A' and 'discards' overlap"),
        (_bad(z0_kind="shelf"), "kind must be one of"),
        (_bad(z0_player=None), "a rack zone needs a 'player'"),
        (_bad(z0_name="discards"), "duplicate zone name(s) ['discards']"),
        (_bad(table_mm=[900]), "table_mm must be [width, height]"),
        (_bad(zones=[]), "zones must be a non-empty list"),
    ],
)
def test_bad_layouts_are_refused(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(LayoutError) as err:
        parse_layout(raw, "my.json")
    assert message in str(err.value)
    assert str(err.value).startswith("my.json")


def test_duplicate_names_and_json_syntax(tmp_path: Path) -> None:
    raw = json.loads(json.dumps(GOOD))
    raw["zones"][1]["name"] = "P1-A"
    with pytest.raises(LayoutError, match="duplicate zone name"):
        parse_layout(raw)
    f = tmp_path / "broken.json"
    f.write_text('{"table_mm": [900, 900],\n "zones": [}\n')
    with pytest.raises(LayoutError, match=r"broken.json:2:\d+: not valid JSON"):
        load_layout(f)
    with pytest.raises(LayoutError, match="layout file not found"):
        load_layout(tmp_path / "missing.json")
