"""``tiles``: list the tile notation and the physical sets."""

from __future__ import annotations

import argparse
import json

from companion.rules.tiles import ALL_CODES, TILE_SETS, parse_tiles, sort_tiles

NAME = "tiles"
HELP = "list the tile codes and set sizes, or normalise a tile string (--parse)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--parse", metavar="TILES", help="validate and sort a space-separated tile string")
    p.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    if args.parse is not None:
        codes = sort_tiles(parse_tiles(args.parse))
        print(json.dumps(codes) if args.json else " ".join(codes))
        return 0
    sets = {name: s.total for name, s in TILE_SETS.items()}
    if args.json:
        print(json.dumps({"codes": list(ALL_CODES), "sets": sets}))
    else:
        print("codes:", " ".join(ALL_CODES))
        for name, total in sets.items():
            print(f"set {name}: {total} tiles")
    return 0
