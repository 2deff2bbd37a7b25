"""Game events from the difference between two stable table observations.

``diff(prev, cur)`` compares what the camera saw before and after a change and names it: a new
discard (with the discarding player when the zone says whose side it is), a new exposure on a
rack, a joker exchange (a joker in an exposure replaced by a natural), a Mah Jongg display, a
tile or exposure moved off a rack, and new rule flags.  Events are values; ``companion.live``
feeds them to the rules and the store.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from companion.table import Flag, TableObservation, ZoneReading

KINDS = ("discard", "exposure", "joker_exchange", "mahjong", "tile_removed", "flag")


@dataclass(frozen=True)
class GameEvent:
    """One thing that happened at the table, in the tile notation."""

    kind: str
    zone: str | None
    player: int | None
    tiles: tuple[str, ...]
    message: str
    t: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown event kind: {self.kind!r}")

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["tiles"] = list(self.tiles)
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> GameEvent:
        return cls(
            kind=str(d["kind"]),
            zone=d.get("zone"),
            player=d.get("player"),
            tiles=tuple(d.get("tiles", ())),
            message=str(d.get("message", "")),
            t=float(d.get("t", 0.0)),
        )


def _who(zone: ZoneReading) -> str:
    return f"player {zone.player}" if zone.player is not None else "a player"


def _multiset_added(before: tuple[str, ...], after: tuple[str, ...]) -> list[str]:
    return list((Counter(after) - Counter(before)).elements())


def _joker_exchange(old: tuple[str, ...], new: tuple[str, ...]) -> str | None:
    """The natural that replaced a joker when ``new`` is ``old`` with one J swapped, else None."""
    if len(old) != len(new):
        return None
    changes = [(a, b) for a, b in zip(old, new, strict=True) if a != b]
    if len(changes) == 1 and changes[0][0] == "J" and changes[0][1] != "J":
        return changes[0][1]
    return None


def _rack_events(name: str, old: ZoneReading | None, new: ZoneReading, t: float) -> list[GameEvent]:
    events: list[GameEvent] = []
    before = list(old.exposures) if old else []
    after = list(new.exposures)
    remaining = list(before)
    for exp in after:
        if exp in remaining:
            remaining.remove(exp)
            continue
        swapped = next(((o, n) for o in remaining if (n := _joker_exchange(o, exp))), None)
        if swapped is not None:
            remaining.remove(swapped[0])
            events.append(GameEvent("joker_exchange", name, new.player, exp,
                                    f"joker exchanged for {swapped[1]} on {name}", t))
        else:
            events.append(GameEvent("exposure", name, new.player, exp,
                                    f"{_who(new)} exposed {' '.join(exp)} on {name}", t))
    for exp in remaining:
        events.append(GameEvent("tile_removed", name, new.player, exp,
                                f"exposure {' '.join(exp)} left {name}", t))
    return events


def _discard_events(name: str, old: ZoneReading | None, new: ZoneReading, t: float) -> list[GameEvent]:
    added = _multiset_added(old.tiles if old else (), new.tiles)
    return [GameEvent("discard", name, new.player, (code,), f"{_who(new)} discarded {code}", t)
            for code in added]


def _flag_key(f: Flag) -> tuple[str, str | None, str]:
    return (f.kind, f.zone, f.message)


def diff(prev: TableObservation | None, cur: TableObservation, t: float = 0.0) -> list[GameEvent]:
    """The events that turn ``prev`` into ``cur`` (``prev=None``: the first stable view)."""
    events: list[GameEvent] = []
    old_zones = prev.zones if prev else {}
    for name, zone in sorted(cur.zones.items()):
        old = old_zones.get(name)
        if zone.kind == "rack":
            events += _rack_events(name, old, zone, t)
        elif zone.kind == "discards":
            events += _discard_events(name, old, zone, t)
    old_mj = prev.mahjong if prev else {}
    for name, mj in sorted(cur.mahjong.items()):
        if mj and not old_mj.get(name):
            hand = str(mj.get("hand", "")) if isinstance(mj, dict) else ""
            player = cur.zones[name].player if name in cur.zones else None
            tiles = cur.zones[name].tiles if name in cur.zones else ()
            events.append(GameEvent("mahjong", name, player, tiles,
                                    f"Mah Jongg on {name}" + (f": {hand}" if hand else ""), t))
    seen = {_flag_key(f) for f in (prev.flags if prev else ())}
    for f in cur.flags:
        if _flag_key(f) not in seen:
            player = cur.zones[f.zone].player if f.zone in cur.zones else None
            events.append(GameEvent("flag", f.zone, player, (), f"{f.kind}: {f.message}", t))
    return events
