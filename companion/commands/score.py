"""``score``: score a winning hand read as JSON on stdin (Chinese-style, seed 004)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from companion.commands.settle import read_json

NAME = "score"
HELP = "score a winning hand read as JSON on stdin (--rules chinese)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rules", choices=("chinese",), default="chinese", help="scoring rules (chinese)")
    p.add_argument("--json", action="store_true", help="print JSON (default: a short text summary)")
    p.add_argument("--input", metavar="FILE", help="read the hand from FILE instead of stdin")


def _limit(data: dict[str, Any], default: int) -> int:
    limit = data.get("limit", default)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        raise ValueError(f"'limit' must be a positive integer, got {limit!r}")
    return limit


def _losers(data: dict[str, Any]) -> dict[str, int] | None:
    losers = data.get("losers")
    if losers is None:
        return None
    if not isinstance(losers, dict) or not all(
        k in ("E", "S", "W", "N") and isinstance(v, int) and not isinstance(v, bool) for k, v in losers.items()
    ):
        raise ValueError(f"'losers' must map seat winds (E S W N) to integer points, got {losers!r}")
    return losers


def run(args: argparse.Namespace) -> int:
    from companion.rules.chinese import hand_from_dict, score_hand, settle_chinese
    from companion.rules.variants import get_variant

    data = read_json(args.input)
    options = data.get("options", {})
    if not isinstance(options, dict):
        raise ValueError(f"'options' must be an object, got {options!r}")
    rules = get_variant("chinese", **options)
    hand = hand_from_dict(data)
    result = score_hand(hand, _limit(data, rules.limit), rules.seven_pairs_repeat)
    out = result.to_dict()
    losers = _losers(data)
    if losers is not None and result.winning:
        pays = settle_chinese(hand.seat, result.score, losers, rules.chinese_settlement, rules.east_double)
        out["payments"] = [p.to_dict() for p in pays]
    if args.json:
        print(json.dumps(out))
    else:
        print(f"score {out['score']} (points {out['points']}, limit hand: {out['limit_hand']})")
        for d in out["doubles"]:
            print(f"  x{d['factor']} {d['name']}")
        if not result.winning:
            print(result.reason)
    return 0 if result.winning else 1
