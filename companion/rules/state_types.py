"""The values of a Siamese game in progress: :class:`GameState`, :class:`PlayerState`,
:class:`RackState`, :class:`Exposure`, :class:`RuleFlag`, and their JSON-able dict forms.

Tile counts are per player (``held`` = concealed + exposed + a declared Mah Jongg display,
flowers excluded), because concealed tiles move freely between a player's racks (SIA-10).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from companion.rules.tiles import JOKER
from companion.rules.variants import SiameseRules, rules_from_dict


class RackStatus(StrEnum):
    """ALIVE | DEAD(cause exposures) | MAHJONG(hand, jokerless, order, simultaneous)."""

    ALIVE = "alive"
    DEAD = "dead"
    MAHJONG = "mahjong"


class Phase(StrEnum):
    """``draw``: the player on turn must draw or someone claims; ``discard``: on-turn count."""

    DRAW = "draw"
    DISCARD = "discard"


@dataclass(frozen=True)
class RuleFlag:
    """Something the rules say about an event or a count.  ``severity`` ``error`` = rejected."""

    kind: str
    message: str
    player: str | None = None
    rack: int | None = None
    severity: str = "warning"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message, "player": self.player,
                "rack": self.rack, "severity": self.severity}


@dataclass(frozen=True)
class Exposure:
    """Tiles exposed on a rack; ``eid`` is unique in the game."""

    eid: int
    tiles: tuple[str, ...]

    @property
    def kind(self) -> str | None:
        """The natural tile the exposure is made of (what its jokers represent)."""
        naturals = {t for t in self.tiles if t != JOKER}
        return naturals.pop() if len(naturals) == 1 else None

    def to_dict(self) -> dict[str, Any]:
        return {"eid": self.eid, "tiles": list(self.tiles)}


@dataclass(frozen=True)
class RackState:
    """One rack = one hand."""

    status: RackStatus = RackStatus.ALIVE
    exposures: tuple[Exposure, ...] = ()
    dead_cause: tuple[int, ...] = ()
    dead_reason: str = ""
    pending_invalid: tuple[int, ...] = ()
    hand_id: str | None = None
    jokerless: bool = False
    value: int = 0
    order: int = 0
    simultaneous: bool = False
    mj_tiles: tuple[str, ...] = ()
    flowers: tuple[str, ...] = ()

    def exposure(self, eid: int) -> Exposure | None:
        return next((e for e in self.exposures if e.eid == eid), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status.value, "exposures": [e.to_dict() for e in self.exposures],
            "dead_cause": list(self.dead_cause), "dead_reason": self.dead_reason,
            "pending_invalid": list(self.pending_invalid), "hand_id": self.hand_id,
            "jokerless": self.jokerless, "value": self.value, "order": self.order,
            "simultaneous": self.simultaneous, "mj_tiles": list(self.mj_tiles),
            "flowers": list(self.flowers),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RackState:
        return cls(
            status=RackStatus(d["status"]),
            exposures=tuple(Exposure(int(e["eid"]), tuple(e["tiles"])) for e in d["exposures"]),
            dead_cause=tuple(d["dead_cause"]), dead_reason=d["dead_reason"],
            pending_invalid=tuple(d["pending_invalid"]), hand_id=d["hand_id"],
            jokerless=d["jokerless"], value=d["value"], order=d["order"],
            simultaneous=d["simultaneous"], mj_tiles=tuple(d["mj_tiles"]),
            flowers=tuple(d["flowers"]),
        )


@dataclass(frozen=True)
class PlayerState:
    """A player: their racks, ``held`` tile total, declared kongs (WP/Chinese), ``out`` of play."""

    name: str
    racks: tuple[RackState, ...]
    held: int
    kongs: int = 0
    out: bool = False

    @property
    def mahjongs(self) -> int:
        return sum(r.status is RackStatus.MAHJONG for r in self.racks)

    @property
    def dead_racks(self) -> int:
        return sum(r.status is RackStatus.DEAD for r in self.racks)

    def with_rack(self, index: int, rack: RackState) -> PlayerState:
        racks = list(self.racks)
        racks[index] = rack
        return replace(self, racks=tuple(racks))

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "racks": [r.to_dict() for r in self.racks],
                "held": self.held, "kongs": self.kongs, "out": self.out}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PlayerState:
        return cls(d["name"], tuple(RackState.from_dict(r) for r in d["racks"]),
                   int(d["held"]), int(d["kongs"]), bool(d["out"]))


@dataclass(frozen=True)
class GameState:
    """The whole game; player 0 is East.  Change it only through ``state.apply``."""

    rules: SiameseRules
    players: tuple[PlayerState, ...]
    turn: int = 0
    phase: Phase = Phase.DISCARD
    wall: int = 0
    last_discard: str | None = None
    last_discarder: int | None = None
    dead_jokers: int = 0
    next_eid: int = 1
    over: bool = False
    end_reason: str | None = None
    log: tuple[str, ...] = field(default=())

    def index(self, name: str) -> int:
        for i, p in enumerate(self.players):
            if p.name == name:
                return i
        raise ValueError(f"unknown player {name!r} (players: {[p.name for p in self.players]})")

    def with_player(self, index: int, player: PlayerState) -> GameState:
        players = list(self.players)
        players[index] = player
        return replace(self, players=tuple(players))

    def to_dict(self) -> dict[str, Any]:
        return {
            "rules": self.rules.to_dict(), "players": [p.to_dict() for p in self.players],
            "turn": self.turn, "phase": self.phase.value, "wall": self.wall,
            "last_discard": self.last_discard, "last_discarder": self.last_discarder,
            "dead_jokers": self.dead_jokers, "next_eid": self.next_eid, "over": self.over,
            "end_reason": self.end_reason, "log": list(self.log),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GameState:
        return cls(
            rules=rules_from_dict(d["rules"]),
            players=tuple(PlayerState.from_dict(p) for p in d["players"]),
            turn=int(d["turn"]), phase=Phase(d["phase"]), wall=int(d["wall"]),
            last_discard=d["last_discard"], last_discarder=d["last_discarder"],
            dead_jokers=int(d["dead_jokers"]), next_eid=int(d["next_eid"]), over=bool(d["over"]),
            end_reason=d["end_reason"], log=tuple(d["log"]),
        )


def _dealt(rules: SiameseRules, seat: int) -> int:
    """Tiles in a player's hand right after the deal (MJM: East draws the 28th afterwards)."""
    east, other = rules.deal
    return east if seat == 0 else other


def new_game(rules: SiameseRules, names: list[str] | tuple[str, ...]) -> GameState:
    """The state right after the deal: East (player 0) on turn."""
    if len(names) != rules.players or len(set(names)) != len(names):
        raise ValueError(f"variant {rules.name!r} needs {rules.players} distinct players, got {list(names)!r}")
    players = tuple(
        PlayerState(n, tuple(RackState() for _ in range(rules.racks_per_player)), _dealt(rules, i))
        for i, n in enumerate(names)
    )
    dealt = sum(p.held for p in players)
    dead_wall = 14 if rules.name == "chinese" else 0
    phase = Phase.DRAW if rules.east_draws else Phase.DISCARD
    return GameState(rules, players, turn=0, phase=phase, wall=rules.tiles.total - dealt - dead_wall)
