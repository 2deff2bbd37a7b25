"""Legality checks over a :class:`GameState`: claim priority (SIA-23, NMJ-08), joker exchange
(SIA-21, NMJ-04), exposures (NMJ-02/05, NMJ-03) and game end (SIA-15/16/25).

Each check returns a list of problems (empty = legal) or a value; none raises.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from companion.rules.state_events import JokerExchange
from companion.rules.state_types import GameState, Phase, PlayerState, RackStatus
from companion.rules.tiles import JOKER, rank_of, suit_of

CLAIM_KINDS = ("double_mahjong", "mahjong", "exposure", "chow")


@dataclass(frozen=True)
class Claim:
    """A claim for the last discard: ``kind`` one of :data:`CLAIM_KINDS`."""

    player: int
    kind: str

    def __post_init__(self) -> None:
        if self.kind not in CLAIM_KINDS:
            raise ValueError(f"unknown claim kind {self.kind!r} (known: {', '.join(CLAIM_KINDS)})")


def turn_distance(discarder: int, player: int, n_players: int) -> int:
    """1 for the next player after the discarder, 2 for the one after, ..."""
    return (player - discarder) % n_players


def resolve_claims(priority: str, discarder: int, n_players: int, claims: Sequence[Claim]) -> Claim | None:
    """The winning claim.  ``nmjl``: Mah Jongg beats exposure beats chow, then turn order.
    ``turn_order`` (MJM): a double Mah Jongg first, then the closest in turn order."""
    valid = [c for c in claims if c.player != discarder]
    if not valid:
        return None

    def key(c: Claim) -> tuple[int, int]:
        dist = turn_distance(discarder, c.player, n_players)
        if priority == "turn_order":
            return (0 if c.kind == "double_mahjong" else 1, dist)
        rank = {"double_mahjong": 0, "mahjong": 0, "exposure": 1, "chow": 2}[c.kind]
        return (rank, dist)

    return min(valid, key=key)


def exposure_problems(state: GameState, player: int, tiles: tuple[str, ...]) -> list[str]:
    """Claiming the last discard for an exposure (NMJ-02, NMJ-03, NMJ-05; chows for Chinese)."""
    d = state.last_discard
    if d is None or state.last_discarder is None:
        return ["there is no discard to claim"]
    if state.last_discarder == player:
        return ["a player cannot claim their own discard"]
    if d == JOKER:
        return ["a discarded joker is dead and cannot be claimed (NMJ-03)"]
    if d not in tiles:
        return [f"the exposure must include the claimed discard {d}"]
    if _is_chow(tiles):
        if state.rules.name != "chinese":
            return ["chows may be claimed only for Mah Jongg in this variant"]
        if turn_distance(state.last_discarder, player, len(state.players)) != 1:
            return ["only the next player may claim a discard for a chow (CHN-04)"]
        return []
    naturals = {t for t in tiles if t != JOKER}
    if len(tiles) < 3 or len(naturals) != 1:
        return [f"not an exposable group (3+ identical tiles, jokers allowed): {' '.join(tiles)}"]
    if JOKER in tiles and not state.rules.tiles.copies_of(JOKER):
        return ["this variant has no jokers"]
    return []


def _is_chow(tiles: tuple[str, ...]) -> bool:
    if len(tiles) != 3 or any(suit_of(t) is None for t in tiles) or len({suit_of(t) for t in tiles}) != 1:
        return False
    ranks = sorted(int(rank_of(t) or 0) for t in tiles)
    return ranks == [ranks[0], ranks[0] + 1, ranks[0] + 2]


def joker_exchange_problems(state: GameState, ex: JokerExchange) -> list[str]:
    """SIA-21 + NMJ-04: own turn after a draw or exposure; natural identical to what the joker
    represents; never from a declared Mah Jongg; from a dead hand only if that exposure did not
    cause the death; not with the current discard."""
    me, owner = state.index(ex.player), state.index(ex.owner)
    problems = []
    if state.turn != me or state.phase is not Phase.DISCARD:
        problems.append("joker exchange only on your own turn, after drawing or exposing")
    if ex.from_discard:
        problems.append("the current discard cannot redeem a joker")
    racks = state.players[owner].racks
    if not 0 <= ex.rack < len(racks):
        return problems + [f"{ex.owner} has no rack {ex.rack}"]
    rack = racks[ex.rack]
    exp = rack.exposure(ex.exposure)
    if rack.status is RackStatus.MAHJONG:
        problems.append("never from a declared Mah Jongg")
    elif rack.status is RackStatus.DEAD and ex.exposure in rack.dead_cause:
        problems.append("this exposure caused the dead hand; its jokers cannot be exchanged")
    if exp is None:
        return problems + [f"no exposure {ex.exposure} on {ex.owner}'s rack {ex.rack}"]
    if JOKER not in exp.tiles:
        problems.append(f"exposure {ex.exposure} holds no joker")
    elif exp.kind != ex.natural:
        problems.append(f"the joker stands for {exp.kind}, not {ex.natural}")
    return problems


def active_players(state: GameState) -> list[int]:
    return [i for i, p in enumerate(state.players) if not p.out]


def end_reason(state: GameState, player: PlayerState) -> str | None:
    """Why the game ends after ``player`` changed (SIA-15, SIA-25), or None."""
    if player.mahjongs >= 2:
        return "two_mahjongs"
    if player.dead_racks == len(player.racks) and state.rules.two_dead != "continue":
        return "two_dead_hands"
    if not active_players(state):
        return "no_players_left"
    return None


def player_is_out(player: PlayerState) -> bool:
    """No rack left alive: one MJ + one dead hand (SIA-16), two dead hands, or two MJs."""
    return all(r.status is not RackStatus.ALIVE for r in player.racks)
