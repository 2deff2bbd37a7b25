"""``settle``: settle a Siamese game record (JSON on stdin) under a variant."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

NAME = "settle"
HELP = "settle a Siamese game record read as JSON on stdin (grad, mjm, wp, royale)"
VARIANT_CHOICES = ("grad", "mjm", "wp", "royale")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--variant", choices=VARIANT_CHOICES, default="grad", help="ruleset (default grad)")
    p.add_argument("--json", action="store_true", help="print JSON (default: a short text table)")
    p.add_argument("--input", metavar="FILE", help="read the record from FILE instead of stdin")


def read_json(path: str | None) -> dict[str, Any]:
    """The JSON object on stdin (or in ``path``); ValueError naming the problem otherwise."""
    text = sys.stdin.read() if path is None else open(path, encoding="utf-8").read()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        source = path or "stdin"
        raise ValueError(f"invalid JSON on {source}: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    return data


def run(args: argparse.Namespace) -> int:
    from companion.rules.settle import settle_record
    from companion.rules.variants import get_variant

    record = read_json(args.input)
    options = record.get("options", {})
    if not isinstance(options, dict):
        raise ValueError(f"'options' must be an object, got {options!r}")
    rules = get_variant(args.variant, **options)
    result = settle_record(rules, record).to_dict()
    if args.json:
        print(json.dumps(result))
        return 0
    for player, total in result["totals"].items():
        print(f"{player}: {total} points, net {result['net'][player]:+d}")
    for pay in result["payments"]:
        print(f"{pay['from']} pays {pay['to']} {pay['amount']}")
    return 0
