"""Siamese game state as pure values driven by events: ``apply(state, event) -> (state, flags)``.

An illegal event leaves the state unchanged and comes back as a ``RuleFlag`` with severity
``error`` (a misread never crashes the live loop).  Values live in :mod:`state_types`, events
in :mod:`state_events`, counts in :mod:`state_counts`, legality checks in :mod:`state_checks`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from companion.rules.state_checks import (
    Claim,
    active_players,
    end_reason,
    exposure_problems,
    joker_exchange_problems,
    player_is_out,
    resolve_claims,
)
from companion.rules.state_counts import (
    CountCheck,
    check_count,
    check_deal,
    check_rack_counts,
    expected_total,
)
from companion.rules.state_events import (
    Correct,
    Count,
    Dead,
    DeclareMahjong,
    Discard,
    Draw,
    Event,
    Expose,
    Flower,
    JokerExchange,
    Kong,
    WallGame,
    event_from_dict,
    event_to_dict,
)
from companion.rules.state_types import (
    Exposure,
    GameState,
    Phase,
    PlayerState,
    RackState,
    RackStatus,
    RuleFlag,
    new_game,
)
from companion.rules.tiles import CHINESE_FLOWERS, JOKER, SEASONS

__all__ = [
    "Claim", "CountCheck", "Exposure", "GameState", "Phase", "PlayerState", "RackState",
    "RackStatus", "RuleFlag", "apply", "apply_all", "check_count", "check_deal",
    "check_rack_counts", "event_from_dict", "event_to_dict", "expected_total", "new_game",
    "resolve_claims",
]

Result = tuple[GameState, list[RuleFlag]]


class _Rejected(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _reject_if(problems: list[str], kind: str) -> None:
    if problems:
        raise _Rejected(kind, "; ".join(problems))


def _next_active(state: GameState, after: int) -> int:
    n = len(state.players)
    for step in range(1, n + 1):
        i = (after + step) % n
        if not state.players[i].out:
            return i
    return after


def _on_turn(state: GameState, i: int, phase: Phase) -> None:
    if state.turn != i:
        raise _Rejected("turn", f"it is {state.players[state.turn].name}'s turn")
    if state.phase is not phase:
        wanted = "draw (or claim)" if state.phase is Phase.DRAW else "discard"
        raise _Rejected("turn", f"{state.players[i].name} must {wanted} first")


def _rack(state: GameState, i: int, rack: int) -> RackState:
    racks = state.players[i].racks
    if not 0 <= rack < len(racks):
        raise _Rejected("rack", f"{state.players[i].name} has no rack {rack}")
    return racks[rack]


def _alive(state: GameState, i: int, rack: int) -> RackState:
    r = _rack(state, i, rack)
    if r.status is not RackStatus.ALIVE:
        raise _Rejected("rack", f"{state.players[i].name}'s rack {rack} is {r.status.value}")
    return r


def _draw(state: GameState, ev: Draw) -> Result:
    i = state.index(ev.player)
    _on_turn(state, i, Phase.DRAW)
    if state.wall <= 0:
        raise _Rejected("wall", "the wall is empty")
    p = state.players[i]
    new = state.with_player(i, replace(p, held=p.held + 1))
    return replace(new, wall=state.wall - 1, phase=Phase.DISCARD, last_discard=None,
                   last_discarder=None), []


def _kill_pending(p: PlayerState) -> tuple[PlayerState, list[RuleFlag]]:
    """MJM correction window closed: racks with an uncorrected invalid exposure die."""
    flags = []
    for r_i, rack in enumerate(p.racks):
        if rack.pending_invalid and rack.status is RackStatus.ALIVE:
            dead = replace(rack, status=RackStatus.DEAD, dead_cause=rack.pending_invalid,
                           dead_reason="invalid exposure not corrected before the discard",
                           pending_invalid=())
            p = p.with_rack(r_i, dead)
            flags.append(RuleFlag("dead_hand", "exposure not corrected before discarding: hand dead",
                                  p.name, r_i, "error"))
    return p, flags


def _discard(state: GameState, ev: Discard) -> Result:
    i = state.index(ev.player)
    _on_turn(state, i, Phase.DISCARD)
    p, flags = _kill_pending(state.players[i])
    p = replace(p, held=p.held - 1)
    p = replace(p, out=player_is_out(p))
    new = state.with_player(i, p)
    if ev.tile == JOKER:
        flags.append(RuleFlag("joker", "a discarded joker is dead (NMJ-03)", p.name, None, "info"))
    new = replace(new, last_discard=ev.tile, last_discarder=i, phase=Phase.DRAW,
                  dead_jokers=state.dead_jokers + (ev.tile == JOKER), turn=_next_active(new, i))
    if new.wall <= 0:
        new = replace(new, over=True, end_reason="wall_exhausted")
    elif not active_players(new):
        new = replace(new, over=True, end_reason="no_players_left")
    return new, flags


def _viability_flags(state: GameState, i: int, rack_i: int, rack: RackState,
                     eid: int, viable: bool | None) -> tuple[RackState, list[RuleFlag]]:
    """SIA-12 per ``auto_dead_call``: flag = dead now; warn = warn (MJM: dead at the discard
    unless corrected); on_call = dead only when the opponent calls it (a Dead event)."""
    if viable is not False:
        return rack, []
    name = state.players[i].name
    mode = state.rules.auto_dead_call
    if mode == "flag" and not state.rules.correction_before_discard:
        dead = replace(rack, status=RackStatus.DEAD, dead_cause=(eid,),
                       dead_reason="exposures match no hand on the card")
        return dead, [RuleFlag("wrong_rack", "exposures match no hand: hand dead", name, rack_i, "error")]
    if state.rules.correction_before_discard:
        msg = "exposures match no hand: move the exposure before discarding or the hand is dead"
        return replace(rack, pending_invalid=rack.pending_invalid + (eid,)), [
            RuleFlag("wrong_rack", msg, name, rack_i, "warning")]
    msg = "exposures match no hand" + (" (dead if the opponent calls it)" if mode == "on_call" else "")
    return rack, [RuleFlag("wrong_rack", msg, name, rack_i, "warning")]


def _expose(state: GameState, ev: Expose) -> Result:
    i = state.index(ev.player)
    rack = _alive(state, i, ev.rack)
    _reject_if(exposure_problems(state, i, ev.tiles), "claim")
    eid = state.next_eid
    rack = replace(rack, exposures=rack.exposures + (Exposure(eid, ev.tiles),))
    rack, flags = _viability_flags(state, i, ev.rack, rack, eid, ev.viable)
    p = state.players[i].with_rack(ev.rack, rack)
    new = state.with_player(i, replace(p, held=p.held + 1))
    return replace(new, next_eid=eid + 1, turn=i, phase=Phase.DISCARD, last_discard=None,
                   last_discarder=None), flags


def _correct(state: GameState, ev: Correct) -> Result:
    i = state.index(ev.player)
    if not state.rules.correction_before_discard:
        raise _Rejected("correction", f"variant {state.rules.name!r} has no correction window")
    _on_turn(state, i, Phase.DISCARD)
    p = state.players[i]
    src = next((r for r, rack in enumerate(p.racks) if ev.exposure in rack.pending_invalid), None)
    if src is None:
        raise _Rejected("correction", f"exposure {ev.exposure} is not awaiting correction")
    target = _alive(state, i, ev.to_rack)
    moved = p.racks[src].exposure(ev.exposure)
    assert moved is not None
    left = replace(p.racks[src], exposures=tuple(e for e in p.racks[src].exposures if e.eid != ev.exposure),
                   pending_invalid=tuple(e for e in p.racks[src].pending_invalid if e != ev.exposure))
    p = p.with_rack(src, left)
    target = replace(p.racks[ev.to_rack], exposures=p.racks[ev.to_rack].exposures + (moved,))
    target, flags = _viability_flags(state, i, ev.to_rack, target, ev.exposure, ev.viable)
    return state.with_player(i, p.with_rack(ev.to_rack, target)), flags


def _joker_exchange(state: GameState, ev: JokerExchange) -> Result:
    _reject_if(joker_exchange_problems(state, ev), "joker")
    o = state.index(ev.owner)
    rack = state.players[o].racks[ev.rack]
    exp = rack.exposure(ev.exposure)
    assert exp is not None
    tiles = list(exp.tiles)
    tiles[tiles.index(JOKER)] = ev.natural
    new_exp = replace(exp, tiles=tuple(tiles))
    rack = replace(rack, exposures=tuple(new_exp if e.eid == exp.eid else e for e in rack.exposures))
    return state.with_player(o, state.players[o].with_rack(ev.rack, rack)), []


def _claim_mahjong(state: GameState, i: int) -> GameState:
    if state.last_discard is None or state.last_discarder in (None, i):
        raise _Rejected("claim", "there is no opponent's discard to claim for Mah Jongg")
    if state.last_discard == JOKER:
        raise _Rejected("claim", "a discarded joker is dead and cannot complete a Mah Jongg (NMJ-03)")
    p = state.players[i]
    new = state.with_player(i, replace(p, held=p.held + 1))
    return replace(new, turn=i, phase=Phase.DISCARD, last_discard=None, last_discarder=None)


def _declare(state: GameState, ev: DeclareMahjong) -> Result:
    i = state.index(ev.player)
    rack = _alive(state, i, ev.rack)
    if ev.tiles and len(ev.tiles) != 14:
        raise _Rejected("mahjong", f"a Mah Jongg shows 14 tiles, got {len(ev.tiles)}")
    state = _claim_mahjong(state, i) if ev.claimed else state
    _on_turn(state, i, Phase.DISCARD)
    p = state.players[i]
    rack = replace(rack, status=RackStatus.MAHJONG, hand_id=ev.hand_id, jokerless=ev.jokerless,
                   value=ev.value, order=p.mahjongs + 1, simultaneous=ev.simultaneous,
                   mj_tiles=ev.tiles, pending_invalid=())
    p = p.with_rack(ev.rack, rack)
    new = state.with_player(i, p)
    reason = end_reason(new, p)
    if reason:
        return replace(new, over=True, end_reason=reason), []
    return new, [RuleFlag("mahjong", f"{p.name}: Mah Jongg on rack {ev.rack}; discard to finish the turn",
                          p.name, ev.rack, "info")]


def _dead(state: GameState, ev: Dead) -> Result:
    i = state.index(ev.player)
    rack = _alive(state, i, ev.rack)
    known = {e.eid for e in rack.exposures}
    unknown = [c for c in ev.cause if c not in known]
    if unknown:
        raise _Rejected("dead", f"cause exposure(s) {unknown} are not on that rack")
    rack = replace(rack, status=RackStatus.DEAD, dead_cause=ev.cause, dead_reason=ev.reason,
                   pending_invalid=())
    p = state.players[i].with_rack(ev.rack, rack)
    p = replace(p, out=player_is_out(p))
    new = state.with_player(i, p)
    reason = end_reason(new, p)
    if reason:
        return replace(new, over=True, end_reason=reason), []
    if p.out and new.turn == i:
        new = replace(new, turn=_next_active(new, i), phase=Phase.DRAW)
    return new, [RuleFlag("dead_hand", f"{p.name}'s rack {ev.rack} is dead", p.name, ev.rack, "warning")]


def _flower(state: GameState, ev: Flower) -> Result:
    i = state.index(ev.player)
    if not state.rules.kong_replacement or ev.tile not in CHINESE_FLOWERS + SEASONS:
        raise _Rejected("flower", f"{ev.tile} is not a bonus flower in variant {state.rules.name!r}")
    rack = _rack(state, i, ev.rack)
    return state.with_player(i, state.players[i].with_rack(ev.rack, replace(rack, flowers=rack.flowers + (ev.tile,)))), []


def _kong(state: GameState, ev: Kong) -> Result:
    i = state.index(ev.player)
    if not state.rules.kong_replacement:
        raise _Rejected("kong", "no replacement tile for kongs in this variant (NMJ-07)")
    p = state.players[i]
    return state.with_player(i, replace(p, kongs=p.kongs + 1, held=p.held + 1)), []


def _wall_game(state: GameState, ev: WallGame) -> Result:
    any_mj = any(p.mahjongs for p in state.players)
    return replace(state, over=True, end_reason="wall_exhausted" if any_mj else "wall_game"), []


def _count(state: GameState, ev: Count) -> Result:
    i = state.index(ev.player)
    on_turn = state.turn == i and state.phase is Phase.DISCARD
    check = check_count(state.rules, state.players[i], ev.held, on_turn)
    if check.ok:
        return state, []
    severity = "error" if check.dead else "warning"
    return state, [RuleFlag("tile_count", check.message(ev.player), ev.player, None, severity)]


_HANDLERS: dict[type[Any], Callable[[GameState, Any], Result]] = {
    Draw: _draw, Discard: _discard, Expose: _expose, Correct: _correct,
    JokerExchange: _joker_exchange, DeclareMahjong: _declare, Dead: _dead, Flower: _flower,
    Kong: _kong, WallGame: _wall_game, Count: _count,
}


def _allowed_after_end(state: GameState, event: Event) -> bool:
    """After the last discard of an exhausted wall, that discard may still be claimed for MJ."""
    if isinstance(event, Count):
        return True
    return (state.end_reason == "wall_exhausted" and isinstance(event, DeclareMahjong)
            and event.claimed and state.last_discard is not None)


def apply(state: GameState, event: Event) -> Result:
    """The state after ``event`` and what the rules say about it."""
    if state.over and not _allowed_after_end(state, event):
        return state, [RuleFlag("game_over", f"the game is over ({state.end_reason})", None, None, "error")]
    try:
        new, flags = _HANDLERS[type(event)](state, event)
    except _Rejected as rej:
        player = getattr(event, "player", None)
        return state, [RuleFlag(rej.kind, str(rej), player, getattr(event, "rack", None), "error")]
    except ValueError as exc:
        return state, [RuleFlag("invalid_event", str(exc), None, None, "error")]
    if state.over and new.end_reason is None:
        new = replace(new, over=True, end_reason=state.end_reason)
    return replace(new, log=new.log + (type(event).__name__,)), flags


def apply_all(state: GameState, events: list[Event]) -> Result:
    """Apply events in order, collecting every flag."""
    flags: list[RuleFlag] = []
    for ev in events:
        state, more = apply(state, ev)
        flags.extend(more)
    return state, flags
