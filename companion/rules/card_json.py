"""The canonical JSON form of a card (rules-spec 4.8): export from card text, and back to text.

:func:`card_to_json` emits what the parser read (before expansion) as plain JSON values;
:func:`json_to_card_text` writes card text from that JSON, so a card exported and imported again
loads to the same hands.  Errors in the text raise :class:`CardError` as :func:`parse_card` does.
"""

from __future__ import annotations

import json
from typing import Any

from companion.rules.card import parse_card
from companion.rules.card_model import CardError
from companion.rules.card_parse import HandSpec, Simple, parse_card_text


def _simple_json(s: Simple) -> dict[str, Any]:
    body = s.text[1:] if s.nojoker else s.text
    if s.explicit:
        return {"explicit": s.explicit, "count": s.count, "nojoker": s.nojoker}
    if body.startswith("~"):
        return {"chow": body[1:-1], "colour": s.colour, "nojoker": s.nojoker}
    return {"symbols": [b for b, _ in s.symbols], "colour": s.colour, "nojoker": s.nojoker}


def _hand_json(h: HandSpec) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": h.id, "name": h.name, "section": h.section, "value": h.value, "concealed": h.concealed,
        "jokerless": h.jokerless, "shift": h.shift or "none", "where": [c.text for c in h.where],
        "patterns": [[{"alts": [_simple_json(a) for a in g.alts]} for g in p.groups] for p in h.patterns],
    }
    if h.note:
        out["note"] = h.note
    return out


def card_to_json(text: str, filename: str = "<card>") -> dict[str, Any]:
    """The canonical JSON of a card; the card must load (else :class:`CardError`)."""
    parse_card(text, filename)
    spec = parse_card_text(text, filename)
    return {"card": spec.name or "", "copies": spec.copies, "hands": [_hand_json(h) for h in spec.hands]}


def _simple_text(alt: dict[str, Any]) -> str:
    bang = "!" if alt.get("nojoker") else ""
    if "explicit" in alt:
        return f"{bang}({alt['explicit']}*{int(alt['count'])})"
    colour = alt.get("colour") or ""
    if "chow" in alt:
        return f"{bang}~{alt['chow']}{colour}"
    return bang + "".join(str(s) for s in alt["symbols"]) + colour


def _quote(text: str) -> str:
    if '"' in text or "\n" in text:
        raise ValueError(f"a name or note may not hold a double quote or newline: {text!r}")
    return f'"{text}"'


def json_to_card_text(obj: dict[str, Any]) -> str:
    """Card text for canonical JSON; ValueError naming the bad field when it is malformed."""
    try:
        lines = [f"card {_quote(str(obj['card']))} copies={int(obj.get('copies', 4))}"]
        section = ""
        for h in obj["hands"]:
            if h.get("section", "") != section:
                section = h.get("section", "")
                lines.append(f"section {_quote(str(section))}")
            patterns = " || ".join(" ".join("|".join(_simple_text(a) for a in g["alts"]) for g in p)
                                   for p in h["patterns"])
            parts = [f"hand {h['id']} {_quote(str(h['name']))} : {patterns}",
                     "concealed" if h.get("concealed") else "exposed", str(int(h["value"]))]
            if h.get("where"):
                parts.append("where " + " & ".join(h["where"]))
            if h.get("shift", "none") != "none":
                parts.append(f"shift={h['shift']}")
            if h.get("jokerless", "auto") != "auto":
                parts.append(f"jokerless={h['jokerless']}")
            if h.get("note"):
                parts.append(f"note={_quote(str(h['note']))}")
            lines.append(" ; ".join(parts))
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"malformed card JSON: {exc!r}") from None
    return "\n".join(lines) + "\n"


def dumps(text: str, filename: str = "<card>") -> str:
    """The canonical JSON as a string (one line)."""
    return json.dumps(card_to_json(text, filename))


__all__ = ["CardError", "card_to_json", "dumps", "json_to_card_text"]
