"""The shipped practice card: loads, is playable, holds the spec's 11 hands and every feature."""

from __future__ import annotations

import re
from pathlib import Path

from companion.rules.card import load_card
from companion.rules.matcher import rack_viability

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "calibration" / "cards" / "example.mjcard"
EXAMPLE = Path(__file__).parent / "data" / "example-card.mjcard"


def test_shipped_card_is_playable() -> None:
    card = load_card(SHIPPED)
    assert len(card.hands) >= 40
    assert all(25 <= h.value <= 75 for h in card.hands)
    exposed = [h for h in card.hands if not h.concealed]
    assert len(exposed) >= 30
    assert len({h.id for h in card.hands}) == len(card.hands)
    # no duplicate hands; the only warning is the spec's own qn2 (4 jokers for two sextets)
    assert [w for w in card.warnings if "same instances" in w] == []


def test_shipped_card_contains_the_spec_example_unchanged() -> None:
    shipped = {h.id: h for h in load_card(SHIPPED).hands}
    for hand in load_card(EXAMPLE).hands:
        twin = shipped[hand.id]
        assert (twin.name, twin.value, twin.concealed, twin.instances) == (
            hand.name, hand.value, hand.concealed, hand.instances)


def test_shipped_card_covers_every_language_feature() -> None:
    text = SHIPPED.read_text(encoding="utf-8")
    bodies = [ln.split(":", 1)[1] for ln in text.splitlines() if ln.startswith("hand ")]
    features = {
        "alternative": r"\S\|\S", "pattern alternative": r"\|\|", "no-joker": r"!\w",
        "explicit": r"\((RD|GD|WD)\*\d\)", "any dragon": r"\(anyD\*", "any wind": r"\(anyW\*",
        "free colour": r"\?", "zero": r"\b\d*0\d*[rgb]\b|\b000\b", "chow": r"~", "concealed": r";\s*concealed\s*;",
        "alias X": r";\s*X\s*;", "alias C": r";\s*C\s*;", "shift any": r"shift=any", "shift even": r"shift=even",
        "jokerless yes": r"jokerless=yes", "jokerless no": r"jokerless=no", "note": r'note="',
        "where =": r"where [^;]*\b[xyzuv]=[xyzuv]\b", "where +": r"=[xyzuv]\+\d", "where -": r"=[xyzuv]-\d",
        "where !=": r"!=", "where in": r" in \d", "where even": r" even", "where odd": r" odd",
        "where <=": r"<=", "where >=": r">=", "quint": r"\b(\w)\1{4}[rgb]?\b", "sextet": r"\b(\w)\1{5}[rgb]?\b",
    }
    missing = [name for name, rx in features.items() if not any(re.search(rx, b) for b in bodies)]
    assert missing == []


def test_common_first_exposures_are_viable() -> None:
    card = load_card(SHIPPED)
    for exposure in (["F", "F", "F"], ["N", "N", "N"], ["5C", "5C", "J"], ["RD", "RD", "RD", "RD"], ["2B", "J", "2B"]):
        assert not rack_viability(card, [exposure]).dead, exposure
