"""``match``: which card hands 14 tiles complete, whether exposures are still viable, nearest hands."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from companion.rules.card import Card

NAME = "match"
HELP = "match 14 tiles (--tiles, --exposed) against a card, check exposures, or find nearest hands"
DEFAULT_CARD = Path(__file__).resolve().parents[2] / "calibration" / "cards" / "example.mjcard"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--card", metavar="FILE", default=str(DEFAULT_CARD),
                   help="card file (default: the shipped calibration/cards/example.mjcard)")
    p.add_argument("--tiles", metavar="CODES", help='concealed tiles, e.g. "F F F 2B 2B ..."')
    p.add_argument("--exposed", metavar="CODES", action="append", default=[],
                   help='one exposure on this rack, e.g. "8C J 8C 8C" (repeatable)')
    p.add_argument("--dead", metavar="CODES", default="",
                   help="tiles out of play elsewhere (discards, other exposures) for the viability test")
    p.add_argument("--nearest", metavar="N", type=int, help="print the N hands nearest to a partial rack")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--jsonl", action="store_true",
                   help='read {"tiles": "...", "exposed": ["..."]} per line on stdin, write one result per line')


def _codes(value: Any, what: str) -> list[str]:
    from companion.rules.tiles import parse_tiles

    if isinstance(value, str):
        return parse_tiles(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return parse_tiles(" ".join(value))
    raise ValueError(f"{what} must be a tile string, got {value!r}")


def evaluate(card: Card, tiles: str | None, exposed: list[str], dead: str = "",
             nearest_n: int | None = None) -> dict[str, Any]:
    """One query as the JSON object the command prints."""
    from companion.rules.matcher import match, nearest, rack_viability

    exps = [_codes(e, "an exposure") for e in exposed]
    if tiles is None:
        if not exps:
            raise ValueError("give --tiles, --exposed or both")
        v = rack_viability(card, exps, _codes(dead, "dead tiles"))
        return {"viable": list(v.viable), "dead": v.dead}
    if nearest_n is not None:
        found = nearest(card, _codes(tiles, "tiles"), exps, nearest_n)
        return {"nearest": [{"hand": n.hand_id, "missing": n.missing, "missing_tiles": list(n.missing_tiles)}
                            for n in found]}
    values = {h.id: h.value for h in card.hands}
    found_m = match(card, _codes(tiles, "tiles"), exps)
    return {"matches": [{"hand": m.hand_id, "value": values[m.hand_id], "jokerless": m.jokerless}
                        for m in found_m]}


def _jsonl(card: Card, nearest_n: int | None) -> int:
    for raw in sys.stdin:
        if not raw.strip():
            continue
        try:
            try:
                query = json.loads(raw)
            except json.JSONDecodeError:
                raise ValueError(f"not a JSON object: {raw.strip()[:80]!r}") from None
            if not isinstance(query, dict):
                raise ValueError(f"expected a JSON object, got {raw.strip()!r}")
            exposed = query.get("exposed", [])
            if not isinstance(exposed, list):
                raise ValueError(f"'exposed' must be a list of tile strings, got {exposed!r}")
            result = evaluate(card, query.get("tiles"), exposed, query.get("dead", ""), nearest_n)
        except ValueError as exc:  # json.JSONDecodeError is a ValueError too
            result = {"error": str(exc)}
        print(json.dumps(result), flush=True)
    return 0


def _print_table(card: Card, result: dict[str, Any]) -> None:
    names = {h.id: h.name for h in card.hands}
    if "matches" in result:
        if not result["matches"]:
            print("no hand on the card matches these tiles (a Mah Jongg needs 14 tiles)")
        for m in result["matches"]:
            tag = "jokerless" if m["jokerless"] else "with jokers"
            print(f"{m['hand']:<8} {m['value']:>4}  {tag:<11} {names[m['hand']]}")
    elif "nearest" in result:
        for n in result["nearest"]:
            print(f"{n['hand']:<8} missing {n['missing']:>2}: {' '.join(n['missing_tiles'])}  ({names[n['hand']]})")
    else:
        state = "DEAD (no hand can use these exposures together)" if result["dead"] else "alive"
        print(f"rack {state}")
        if result["viable"]:
            print("viable hands:", " ".join(result["viable"]))


def run(args: argparse.Namespace) -> int:
    from companion.rules.card import load_card

    card = load_card(args.card)
    if args.jsonl:
        return _jsonl(card, args.nearest)
    result = evaluate(card, args.tiles, args.exposed, args.dead, args.nearest)
    if args.json:
        print(json.dumps(result))
    else:
        _print_table(card, result)
    return 0
