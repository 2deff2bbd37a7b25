"""``check-card``: load a card file and print its summary, or every error as FILE:LINE:COL."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

NAME = "check-card"
HELP = "check a card file (.mjcard): print hands, instances and warnings, or every error"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="the card file to check")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--canonical", action="store_true",
                   help="print the card's canonical JSON (rules-spec 4.8) instead of a summary")


def run(args: argparse.Namespace) -> int:
    from companion.rules.card import CardError, load_card

    try:
        card = load_card(args.file)
    except CardError as exc:
        for issue in exc.issues:
            print(issue, file=sys.stderr)
        print(f"{len(exc.issues)} error(s) in {args.file}", file=sys.stderr)
        return 2
    if args.canonical:
        from companion.rules.card_json import dumps

        print(dumps(Path(args.file).read_text(encoding="utf-8"), args.file))
        return 0
    if args.json:
        hands = [{"id": h.id, "name": h.name, "section": h.section, "value": h.value,
                  "concealed": h.concealed, "jokerless": h.jokerless_mode, "instances": len(h.instances)}
                 for h in card.hands]
        print(json.dumps({"card": card.name, "copies": card.copies, "hands": hands,
                          "warnings": list(card.warnings)}))
        return 0
    total = sum(len(h.instances) for h in card.hands)
    print(f"card {card.name!r} (copies={card.copies}): {len(card.hands)} hands, {total} instances")
    print(f"{'hand':<8} {'value':>5}  {'type':<9} {'instances':>9}  {'section':<22} name")
    for h in card.hands:
        kind = "concealed" if h.concealed else "exposed"
        print(f"{h.id:<8} {h.value:>5}  {kind:<9} {len(h.instances):>9}  {h.section:<22} {h.name}")
    for w in card.warnings:
        print(w)
    print(f"ok: {len(card.hands)} hands, {len(card.warnings)} warning(s)")
    return 0
