"""Scoring a followed game with the variant's own settlement (:mod:`companion.rules.settle`).

The live game keeps a *settle record*: ``mahjong`` entries (the card value and jokerless flag of
the matched hand, the player, and ``claimed_from`` when the player before had just discarded),
``dead`` entries when the user confirms a flag that kills a rack, and ``end_game`` when a game is
closed.  :func:`score` replays a record under the variant and returns totals and payments; the
scoreboard, the session totals and the end-of-session payouts all come from it.
"""

from __future__ import annotations

from typing import Any

from companion.rules.settle import settle
from companion.rules.variants import get_variant

DEAD_KINDS = ("wrong_rack", "tile_count", "dead")


def mahjong_record(player: int | None, entry: dict[str, Any] | None,
                   last_discarder: int | None) -> dict[str, Any] | None:
    """The settle entry for a Mah Jongg display (None when the hand was not matched)."""
    if player is None or not entry:
        return None
    rec: dict[str, Any] = {"type": "mahjong", "player": str(player),
                           "value": int(entry.get("card_value", entry.get("value", 0))),
                           "jokerless": bool(entry.get("jokerless", False)),
                           "hand": str(entry.get("hand", ""))}
    if last_discarder is not None and last_discarder != player:
        rec["claimed_from"] = str(last_discarder)  # [interp] a discard just before: claimed
    return rec


def score(variant: str, players: list[str], record: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals and payments of ``record`` under ``variant``; players with no events score 0."""
    names = sorted(set(players) | {str(r["player"]) for r in record if "player" in r})
    if not names:
        return {"totals": {}, "payments": [], "net": {}}
    rules = get_variant(variant)
    if rules.settlement == "difference" and len(names) != 2:
        names = (names + ["1", "2"])[:2] if len(names) < 2 else names[:2]
    try:
        return settle(rules, names, record).to_dict()
    except ValueError as exc:  # a record the settlement rejects is reported, not raised
        return {"totals": {p: 0 for p in names}, "payments": [], "net": {}, "error": str(exc)}


def settle_session(variant: str, records: list[list[dict[str, Any]]], players: list[str]) -> dict[str, Any]:
    """The end-of-session settlement: every game's record in order, each closed by ``end_game``."""
    events: list[dict[str, Any]] = []
    for rec in records:
        events += rec
        if rec:
            events.append({"type": "end_game"})
    return score(variant, players, events)
