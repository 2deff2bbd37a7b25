"""Siamese settlement: a game record (Mah Jonggs, dead hands, wall games) -> scores and payments.

Covers Grad, MahJong Masters, Wright-Patterson (Option 2, plus Option 1 incomplete-hand points)
and the Royale pot payout (rules-spec 3.1-3.3, 3.5).  A record may hold several games in a row:
a game ends on a player's 2nd Mah Jongg (2P), two dead hands (2P) or a wall game, and the next
event starts a new game.  Scores accumulate; 2-player tables then pay the difference.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from companion.rules.variants import SiameseRules

POT = "pot"
WP_TIERS = {"single": 1, "double": 2, "triple": 3}


@dataclass(frozen=True)
class Payment:
    """``amount`` moves from ``payer`` to ``payee`` (either may be ``"pot"``)."""

    payer: str
    payee: str
    amount: int

    def to_dict(self) -> dict[str, Any]:
        return {"from": self.payer, "to": self.payee, "amount": self.amount}


@dataclass(frozen=True)
class Settlement:
    """Scores (``totals``), who pays whom, each player's net, the pot left, Royale payouts."""

    totals: dict[str, int]
    payments: tuple[Payment, ...]
    net: dict[str, int]
    pot: int = 0
    payouts: dict[str, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "totals": self.totals,
            "payments": [p.to_dict() for p in self.payments],
            "net": self.net,
            "pot": self.pot,
        }
        if self.payouts is not None:
            d["payouts"] = self.payouts
        return d


@dataclass
class _Game:
    """Mutable bookkeeping while one game of the record is replayed."""

    mj: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # (scored, printed)
    dead: dict[str, int] = field(default_factory=dict)
    pending_simultaneous: str | None = None


@dataclass
class _Ledger:
    totals: dict[str, int]
    payments: list[Payment] = field(default_factory=list)
    pot: int = 0


def _flag(event: Mapping[str, Any], *names: str, default: bool = False) -> bool:
    for name in names:
        if name in event:
            value = event[name]
            if not isinstance(value, bool):
                raise ValueError(f"event field {name!r} must be true or false, got {value!r}")
            return value
    return default


def _player(event: Mapping[str, Any], players: Sequence[str], key: str = "player") -> str:
    p = event.get(key)
    if p not in players:
        raise ValueError(f"event {event!r}: {key} {p!r} is not one of {list(players)}")
    return str(p)


def hand_value(rules: SiameseRules, event: Mapping[str, Any]) -> int:
    """The base value of one Mah Jongg: card points, or a WP tier times the limit."""
    if rules.name == "wp" and "tier" in event:
        tier = event["tier"]
        if tier not in WP_TIERS:
            raise ValueError(f"wp tier {tier!r} is not one of {list(WP_TIERS)}")
        return WP_TIERS[tier] * rules.limit
    value = event.get("value")
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"mahjong event needs a non-negative integer 'value': {dict(event)!r}")
    return value


def bonus_eligible(rules: SiameseRules, event: Mapping[str, Any]) -> bool:
    """Jokerless double allowed: the matcher's ``bonus_eligible`` (default true), not
    singles-and-pairs (option), not a Royale quint (8 copies)."""
    if not _flag(event, "bonus_eligible", default=True):
        return False
    if rules.jokerless_sp_excluded and _flag(event, "singles_and_pairs", "singles_pairs"):
        return False
    return not (rules.royale_quint_no_bonus and rules.copies >= 8 and _flag(event, "has_quint"))


def mj_score(rules: SiameseRules, event: Mapping[str, Any], order_factor: int) -> int:
    """card value x 2 (jokerless, eligible) x order factor (2nd MJ or simultaneous double)."""
    jokerless = _flag(event, "jokerless") and bonus_eligible(rules, event)
    return hand_value(rules, event) * (2 if jokerless else 1) * order_factor


def _apply_mahjong(rules: SiameseRules, game: _Game, led: _Ledger, ev: Mapping[str, Any],
                   players: Sequence[str]) -> bool:
    """Score one MJ; return True when it ends the game."""
    p = _player(ev, players)
    earlier = game.mj.setdefault(p, [])
    simultaneous = game.pending_simultaneous == p or _flag(ev, "simultaneous_with_next")
    second = simultaneous or len(earlier) == 1
    factor = 2 if second else 1
    earlier.append((mj_score(rules, ev, factor), hand_value(rules, ev)))
    led.totals[p] += earlier[-1][0]
    if led.pot:
        led.payments.append(Payment(POT, p, led.pot))
        led.pot = 0
    claimed = ev.get("claimed_from")
    if claimed is not None:
        src = _player(ev, players, "claimed_from")
        if second and src != p:
            led.totals[src] -= rules.discard_penalty
    if second and not claimed and _flag(ev, "self_picked"):
        led.totals[p] += rules.second_mj_self_pick_bonus
    game.pending_simultaneous = p if _flag(ev, "simultaneous_with_next") else None
    return game.pending_simultaneous is None and len(earlier) >= 2


def _two_dead(rules: SiameseRules, game: _Game, led: _Ledger, dead: str,
              players: Sequence[str]) -> bool:
    """Apply the two-dead-hands rule; return True when the game ends."""
    if rules.two_dead == "continue":
        return False
    if rules.two_dead == "-100":
        led.totals[dead] -= 100
        return True
    opp = next(p for p in players if p != dead)
    opp_mj = game.mj.get(opp, [])
    if rules.two_dead == "limit":
        amount = (3 if opp_mj else 2) * rules.limit
    elif opp_mj:
        scored, printed = opp_mj[-1]
        amount = 4 * (scored if rules.two_dead_value == "scored" else printed)
    else:
        amount = 4 * rules.lowest_card_value
    # [interp] the penalty replaces the opponent's MJ score for this game, not adds to it.
    led.totals[opp] += amount - sum(score for score, _ in opp_mj)
    return True


def _apply_event(rules: SiameseRules, game: _Game, led: _Ledger, ev: Mapping[str, Any],
                 players: Sequence[str]) -> bool:
    """Apply one event; True when the current game is over."""
    kind = ev.get("type")
    if kind == "mahjong":
        return _apply_mahjong(rules, game, led, ev, players)
    if kind == "dead":
        p = _player(ev, players)
        game.dead[p] = game.dead.get(p, 0) + 1
        if game.dead[p] > rules.racks_per_player:
            raise ValueError(f"player {p!r} has more dead hands than racks")
        return game.dead[p] == rules.racks_per_player and _two_dead(rules, game, led, p, players)
    if kind == "wall_game":
        for p in players:
            led.totals[p] += rules.wall_game_bonus
            if rules.wall_pot:
                led.payments.append(Payment(p, POT, rules.wall_pot))
                led.pot += rules.wall_pot
        return True
    if kind == "end_game":
        return True
    if kind == "bouquet":
        p = _player(ev, players)
        led.payments.extend(Payment(o, p, rules.bouquet_value) for o in players if o != p)
        return False
    if kind == "incomplete":
        if rules.name != "wp" or rules.wp_option != 1:
            raise ValueError("'incomplete' hand points need variant wp with option wp_option=1")
        pts = ev.get("points")
        if isinstance(pts, bool) or not isinstance(pts, int):
            raise ValueError(f"incomplete event needs integer 'points': {dict(ev)!r}")
        led.totals[_player(ev, players)] += int(round(pts / 10.0) * 10)
        return False
    raise ValueError(f"unknown event type {kind!r} in {dict(ev)!r}")


def _net(players: Sequence[str], payments: Sequence[Payment]) -> dict[str, int]:
    net = {p: 0 for p in players}
    for pay in payments:
        if pay.payer in net:
            net[pay.payer] -= pay.amount
        if pay.payee in net:
            net[pay.payee] += pay.amount
    return net


def _difference(totals: Mapping[str, int], players: Sequence[str]) -> list[Payment]:
    """2 players: the lower total pays the higher the difference."""
    a, b = players
    diff = totals[a] - totals[b]
    if diff > 0:
        return [Payment(b, a, diff)]
    if diff < 0:
        return [Payment(a, b, -diff)]
    return []


def pot_payout(rules: SiameseRules, scores: Mapping[str, int],
               contribution_cents: int | None = None) -> dict[str, int]:
    """Nat's Royale payout (rules-spec 3.3): multiply, subtract the lowest, pay down, split rest."""
    c = rules.pot_contribution_cents if contribution_cents is None else contribution_cents
    pot = c * len(scores)
    scaled = {p: s * rules.royale_multiplier for p, s in scores.items()}
    low = min(scaled.values())
    order = sorted(scores, key=lambda p: (-scaled[p], list(scores).index(p)))
    paid = {p: 0 for p in scores}
    for p in order:
        amount = min(pot, (scaled[p] - low) * rules.cents_per_point)
        paid[p] += amount
        pot -= amount
    share, rest = divmod(pot, len(scores))
    for p in scores:
        paid[p] += share
    paid[order[0]] += rest  # [interp] the rounding remainder goes to the highest scorer
    return paid


def settle(rules: SiameseRules, players: Sequence[str], events: Sequence[Mapping[str, Any]],
           start_scores: Mapping[str, int] | None = None, pot: int = 0) -> Settlement:
    """Replay ``events`` for ``players`` under ``rules`` and settle."""
    if len(set(players)) != len(players) or not players:
        raise ValueError(f"players must be distinct names: {list(players)!r}")
    if rules.settlement == "difference" and len(players) != 2:
        raise ValueError(f"variant {rules.name!r} settles 2 players, got {len(players)}")
    led = _Ledger({p: int((start_scores or {}).get(p, 0)) for p in players}, pot=pot)
    game = _Game()
    for ev in events:
        if not isinstance(ev, Mapping):
            raise ValueError(f"event must be an object: {ev!r}")
        if _apply_event(rules, game, led, ev, players):
            game = _Game()
    payments = list(led.payments)
    payouts = None
    if rules.settlement == "pot":
        payouts = pot_payout(rules, led.totals)
        payments += [Payment(POT, p, a) for p, a in payouts.items() if a]
        net = {p: a - rules.pot_contribution_cents for p, a in payouts.items()}
    else:
        payments += _difference(led.totals, players)
        net = _net(players, payments)
    return Settlement(dict(led.totals), tuple(payments), net, led.pot, payouts)


def settle_record(rules: SiameseRules, record: Mapping[str, Any]) -> Settlement:
    """Settle a JSON game record ``{"players": [...], "events": [...], "scores"?, "pot"?}``."""
    players = record.get("players")
    events = record.get("events", [])
    if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
        raise ValueError(f"record needs 'players': a list of names, got {players!r}")
    if not isinstance(events, list):
        raise ValueError(f"record 'events' must be a list, got {events!r}")
    scores = record.get("scores", {})
    if not isinstance(scores, dict) or set(scores) - set(players):
        raise ValueError(f"record 'scores' must map players to points, got {scores!r}")
    pot = record.get("pot", 0)
    if isinstance(pot, bool) or not isinstance(pot, int):
        raise ValueError(f"record 'pot' must be an integer, got {pot!r}")
    return settle(rules, players, events, scores, pot)
