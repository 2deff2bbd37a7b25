"""The card language's public face: :func:`parse_card` and :func:`load_card`.

A card file (rules-spec 4.3-4.6, documented in ``docs/card-language.md``) is parsed by
:mod:`companion.rules.card_parse`, expanded and checked by :mod:`companion.rules.card_compile`,
and returned as a :class:`Card` value.  Every problem found is reported at once in a
:class:`CardError` whose lines read ``FILE:LINE:COL: message``.
"""

from __future__ import annotations

from pathlib import Path

from companion.rules.card_compile import card_warnings, compile_hand
from companion.rules.card_model import (
    Card,
    CardError,
    CardIssue,
    Group,
    Hand,
    Instance,
    JokerlessMode,
)
from companion.rules.card_parse import parse_card_text

__all__ = [
    "Card", "CardError", "CardIssue", "Group", "Hand", "Instance", "JokerlessMode",
    "load_card", "parse_card",
]


def parse_card(text: str, filename: str = "<card>") -> Card:
    """Parse and compile card text; raises :class:`CardError` listing every problem."""
    spec = parse_card_text(text, filename)
    issues = list(spec.issues)
    hands: list[Hand] = []
    first_line: dict[str, int] = {}
    for hs in spec.hands:
        if hs.id in first_line:
            issues.append(CardIssue(filename, hs.line, hs.col,
                                    f"hand id {hs.id!r} already used on line {first_line[hs.id]}"))
            continue
        first_line[hs.id] = hs.line
        hand, problems = compile_hand(hs, spec.copies, filename)
        issues.extend(problems)
        if hand is not None:
            hands.append(hand)
    if not spec.hands and not issues:
        issues.append(CardIssue(filename, 1, 1, "the card has no hands (expected lines 'hand ID \"NAME\" : ...')"))
    if issues:
        raise CardError(issues)
    warnings = card_warnings(hands, spec.copies, filename)
    return Card(spec.name or "", spec.copies, tuple(hands), tuple(warnings))


def load_card(path: str | Path) -> Card:
    """Read and parse a card file (UTF-8); errors name the file."""
    p = Path(path)
    return parse_card(p.read_text(encoding="utf-8"), str(p))
