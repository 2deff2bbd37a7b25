"""Canonical card JSON (rules-spec 4.8): the spec's rn2 entry, and export/import round trips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from companion.rules.card import parse_card
from companion.rules.card_json import card_to_json, json_to_card_text

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[2]
CARDS = [DATA / "example-card.mjcard", ROOT / "calibration" / "cards" / "example.mjcard"]

SPEC_RN2 = json.loads("""
{"id": "rn2", "name": "Dragon's Wake", "section": "Runs", "value": 30, "concealed": false,
 "jokerless": "auto", "shift": "none", "where": ["y=x+1"],
 "patterns": [[
   {"alts": [{"symbols": ["x","x"], "colour": "g", "nojoker": false}]},
   {"alts": [{"symbols": ["D","D","D","D"], "colour": "g", "nojoker": false}]},
   {"alts": [{"symbols": ["y","y","y","y"], "colour": "r", "nojoker": false}]},
   {"alts": [{"symbols": ["D","D","D","D"], "colour": "r", "nojoker": false}]}
 ]]}
""")


def test_spec_example_json() -> None:
    data = card_to_json((DATA / "example-card.mjcard").read_text(encoding="utf-8"))
    assert data["card"] == "Example practice card (original hands)" and data["copies"] == 4
    assert next(h for h in data["hands"] if h["id"] == "rn2") == SPEC_RN2


@pytest.mark.parametrize("path", CARDS, ids=lambda p: p.name)
def test_round_trip(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    data = card_to_json(text)
    again = json_to_card_text(json.loads(json.dumps(data)))
    assert card_to_json(again) == data
    a, b = parse_card(text), parse_card(again)
    assert [(h.id, h.section, h.value, h.concealed, h.jokerless_mode, h.note, h.instances) for h in a.hands] == \
           [(h.id, h.section, h.value, h.concealed, h.jokerless_mode, h.note, h.instances) for h in b.hands]


def test_malformed_json_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="malformed card JSON"):
        json_to_card_text({"card": "x", "hands": [{"id": "a"}]})
