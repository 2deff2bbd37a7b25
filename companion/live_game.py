"""The followed game: corrections, flags, racks, discards, scoreboard and the event log.

The player's corrections (:class:`companion.live_corrections.Corrections`: a tile put right, one
the camera missed added, one it made up taken out) rewrite each observation, so the rules see
corrected readings.  :class:`LiveGame` turns stable observations into events (via
:func:`companion.live_events.diff`), keeps flags with their timestamps and dismiss/confirm state,
and renders the JSON view that ``/api/state`` serves.  It serialises to JSON for resuming.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from companion.live_corrections import Corrections, ZoneEdit
from companion.live_events import GameEvent, diff
from companion.live_score import DEAD_KINDS, mahjong_record, score
from companion.rules.tiles import validate_code
from companion.rules.variants import get_variant
from companion.table import Flag, TableObservation, ZoneReading

MAX_LOG = 200
Checker = Callable[[TableObservation], TableObservation]


class LiveGame:
    """The state of one followed game, fed with smoothed, corrected stable observations."""

    def __init__(self, variant: str = "mjm", checker: Checker | None = None) -> None:
        self.variant = variant
        self.checker = checker
        self.corrections = Corrections()
        self.last: TableObservation | None = None
        self.raw: TableObservation | None = None
        self.flags: list[dict[str, Any]] = []
        self.log: list[GameEvent] = []
        self.record: list[dict[str, Any]] = []  # settle entries (companion.live_score)
        self.scores: dict[str, int] = {}
        self._flag_seq = 0
        self._claimer: int | None = None
        self._dead_racks: set[str] = set()
        self._discarder: int | None = None

    # feeding ------------------------------------------------------------------------------
    def observe(self, obs: TableObservation, t: float | None = None) -> list[GameEvent]:
        """Apply corrections, diff against the last stable view, record and return the events."""
        now = time.time() if t is None else t
        self.raw = obs
        corrected = self._checked(obs)
        events = [self._attribute(ev, corrected) for ev in diff(self.last, corrected, now)]
        self.last = corrected
        self._sync_flags(corrected.flags, now)
        for ev in events:
            if ev.kind == "mahjong":
                self._score_mahjong(ev, corrected)
        self.log = (self.log + events)[-MAX_LOG:]
        return events

    def _attribute(self, ev: GameEvent, obs: TableObservation) -> GameEvent:
        """Name the discarder when the zone does not: the one player whose rack tiles went down,
        else the player who just exposed (a claimer discards next), else the other player."""
        if ev.kind == "exposure" and ev.player is not None:
            self._claimer = ev.player
        if ev.kind != "discard" or ev.player is not None:
            return ev
        before, after = _per_player(self.last), _per_player(obs)
        fewer = [p for p in after if after[p] < before.get(p, after[p])]
        players = sorted(after)
        if len(fewer) == 1:
            who: int | None = fewer[0]
        elif self._claimer is not None:
            who = self._claimer
        elif self._discarder is not None and len(players) == 2:
            who = players[1] if self._discarder == players[0] else players[0]
        else:
            who = None
        self._claimer, self._discarder = None, who
        if who is None:
            return ev
        return replace(ev, player=who, message=ev.message.replace("a player", f"player {who}", 1))

    def _checked(self, obs: TableObservation) -> TableObservation:
        corrected = self.corrections.apply(obs, get_variant(self.variant), judged=self.checker is not None)
        return self.checker(corrected) if self.checker is not None else corrected

    def reapply(self) -> list[GameEvent]:
        """Re-read the last observation after a correction or a new card: the view and the flags
        change, and a display judged again on the player's word is scored again; the only event is
        a Mah Jongg scored now (returned, and logged), none is made up."""
        if self.raw is None:
            return []
        before, self.last = self.last, self._checked(self.raw)
        self._sync_flags(self.last.flags, time.time())
        events = self._rescore_displays(before, self.last)
        self.log = (self.log + events)[-MAX_LOG:]
        return events

    def _rescore_displays(self, before: TableObservation | None, after: TableObservation) -> list[GameEvent]:
        """The record follows a display's Mah Jongg judged again: scored now (it read weakly, or its
        flowers as jokers), scored as another hand, or taken back (the player's tile makes no hand)."""
        events: list[GameEvent] = []
        old = before.mahjong if before else {}
        changed = [n for n in sorted(set(old) | set(after.mahjong)) if old.get(n) != after.mahjong.get(n)]
        for name in changed:
            now, z = after.mahjong.get(name), after.zones.get(name)
            mine = [i for i, r in enumerate(self.record) if r.get("type") == "mahjong" and r.get("rack") == name]
            # a score made before keeps whom it was claimed from; a new one, from the last discarder
            rec = mahjong_record(z.player if z else None, now if isinstance(now, dict) else None,
                                 None if mine else self._discarder)
            if mine and rec is None:
                del self.record[mine[-1]]
            elif mine and rec is not None:
                was = self.record[mine[-1]]
                self.record[mine[-1]] = {**rec, **{k: was[k] for k in ("claimed_from",) if k in was}, "rack": name}
            elif rec is not None:
                self.record.append({**rec, "rack": name})
                events.append(GameEvent("mahjong", name, z.player if z else None, z.tiles if z else (),
                                        f"Mah Jongg on {name}: {rec['hand']} (on the player's word)", time.time()))
        if changed:
            self._rescore()
        return events

    def _sync_flags(self, flags: tuple[Flag, ...], now: float) -> None:
        active = {(f.kind, f.zone, f.message) for f in flags}
        known = {(f["kind"], f["zone"], f["message"]): f for f in self.flags}
        for f in flags:
            if (f.kind, f.zone, f.message) not in known:
                self._flag_seq += 1
                self.flags.append({"id": self._flag_seq, "t": now, "kind": f.kind, "zone": f.zone,
                                   "message": f.message, "status": "open", "active": True})
        for rec in self.flags:
            rec["active"] = (rec["kind"], rec["zone"], rec["message"]) in active

    def _score_mahjong(self, ev: GameEvent, obs: TableObservation) -> None:
        entry = obs.mahjong.get(ev.zone or "")
        rec = mahjong_record(ev.player, entry if isinstance(entry, dict) else None, self._discarder)
        if rec is not None:
            self.record.append({**rec, "rack": ev.zone})
            self._rescore()

    def players(self) -> list[str]:
        zones = self.last.zones.values() if self.last else ()
        return sorted({str(z.player) for z in zones if z.kind == "rack" and z.player is not None})

    def rescore(self) -> None:
        """Scores from the settle record under the current variant."""
        self._rescore()

    def _rescore(self) -> None:
        result = score(self.variant, self.players(), self.record)
        self.scores = {p: int(v) for p, v in result["totals"].items()}

    def set_flag_status(self, flag_id: int, status: str) -> dict[str, Any]:
        if status not in ("open", "dismissed", "confirmed"):
            raise ValueError(f"unknown flag status: {status!r}")
        for rec in self.flags:
            if rec["id"] == flag_id:
                if status == "confirmed" and rec["status"] != "confirmed" and rec["kind"] in DEAD_KINDS:
                    self._confirm_dead(rec["zone"])
                rec["status"] = status
                return rec
        raise KeyError(f"no flag {flag_id}")

    def _confirm_dead(self, zone: str | None) -> None:
        """A confirmed rack-killing flag counts as a dead hand for the settlement (once per rack)."""
        z = self.last.zones.get(zone or "") if self.last else None
        if z is None or z.player is None or zone in self._dead_racks:
            return
        self._dead_racks.add(zone or "")
        self.record.append({"type": "dead", "player": str(z.player), "rack": zone})
        self._rescore()

    def _edit(self, zone: str) -> tuple[tuple[str, ...], ZoneEdit]:
        """The zone's tiles as the camera reads them now, and the player's edit of them."""
        if self.raw is None or zone not in self.raw.zones:
            raise KeyError(f"no zone {zone!r} in the current reading")
        tiles = self.raw.zones[zone].tiles
        return tiles, self.corrections.edit_of(zone, tiles)

    def _origin(self, zone: str, index: int) -> tuple[tuple[str, ...], ZoneEdit, tuple[bool, int]]:
        tiles, edit = self._edit(zone)
        origins = edit.origins()
        if not 0 <= index < len(origins):
            raise KeyError(f"zone {zone!r} has no tile {index}")
        return tiles, edit, origins[index]

    def correct(self, zone: str, index: int, code: str) -> None:
        """Correct tile ``index`` of ``zone`` (as shown now, the player's edits in) to ``code``;
        raises ValueError/KeyError."""
        tiles, edit, (added, i) = self._origin(zone, index)
        if added:
            put = tuple((a, validate_code(code), new) if k == i else (a, c, new)
                        for k, (a, c, new) in enumerate(edit.added))
            self.corrections.edit(zone, replace(edit, added=put))
        else:
            self.corrections.set(zone, i, tiles[i], code)

    def add_tile(self, zone: str, index: int, code: str, new: bool = False) -> None:
        """A tile ``code`` the camera missed, just after tile ``index`` of ``zone`` as shown now (-1:
        before the first; in an empty zone, its first tile), in that tile's exposure, or (``new``)
        starting an exposure of its own, which tiles added after it then join."""
        _, edit = self._edit(zone)
        origins = edit.origins()
        if not -1 <= index < len(origins):
            raise KeyError(f"zone {zone!r} has no tile {index}")
        after, count = -1, 0  # the camera's tile it follows, and how many added tiles lie between
        for mine, i in origins[:index + 1]:
            after, count = (after, count + 1) if mine else (i, 0)
        same = [k for k, a in enumerate(edit.added) if a[0] == after]
        added = list(edit.added)
        added.insert(same[count] if count < len(same) else len(added), (after, validate_code(code), new))
        self.corrections.edit(zone, replace(edit, added=tuple(added)))

    def remove_tile(self, zone: str, index: int) -> None:
        """Tile ``index`` of ``zone`` as shown now is no tile (a phantom), or, one the player added, is
        taken back."""
        _, edit, (added, i) = self._origin(zone, index)
        if added:
            self.corrections.edit(zone, replace(edit, added=edit.added[:i] + edit.added[i + 1:]))
        else:
            self.corrections.edit(zone, replace(edit, removed=edit.removed | {i}))

    def act(self, action: str, zone: str, index: int, code: str = "") -> None:
        """The dashboard's corrections by name: ``correct``, ``add`` (after ``index``, in its
        exposure), ``add_new`` (after it, starting an exposure), ``remove`` or ``restore``
        (:meth:`correct`, :meth:`add_tile`, :meth:`remove_tile`, :meth:`restore`)."""
        if action == "correct":
            self.correct(zone, index, code)
        elif action in ("add", "add_new"):
            self.add_tile(zone, index, code, new=action == "add_new")
        elif action == "remove":
            self.remove_tile(zone, index)
        elif action == "restore":
            self.restore(zone)
        else:
            raise ValueError(f"unknown correction {action!r}: expected correct, add, add_new, remove or restore")

    def restore(self, zone: str) -> None:
        """Forget the player's tiles added to and taken out of ``zone``: the camera's tiles again."""
        tiles, _ = self._edit(zone)
        self.corrections.edit(zone, ZoneEdit(tiles))

    # view ---------------------------------------------------------------------------------
    def _rack_status(self, name: str) -> str:
        if self.last is not None and self.last.mahjong.get(name):
            return "mahjong"
        dead = any(f["zone"] == name and f["active"] and f["status"] != "dismissed"
                   and f["kind"] in DEAD_KINDS for f in self.flags)
        return "dead" if dead else "alive"

    def _zone_view(self, name: str, z: ZoneReading) -> dict[str, Any]:
        raw = self.raw.zones[name].tiles if self.raw and name in self.raw.zones else z.tiles
        edit = self.corrections.edit_of(name, raw)
        origins = edit.origins()
        if len(origins) != len(z.tiles):  # not the reading the edit was made on: shown as read
            origins = [(False, i) for i in range(len(z.tiles))]
        tiles = []
        for i, (code, (added, at)) in enumerate(zip(z.tiles, origins, strict=True)):
            raw_code = None if added else raw[at] if at < len(raw) else code
            tiles.append({"index": i, "code": code, "raw": raw_code, "added": added,
                          "corrected": code != raw_code, "uncertain": i in z.uncertain})
        return {"zone": name, "kind": z.kind, "player": z.player, "hand": z.hand, "tiles": tiles,
                "exposures": [list(e) for e in z.exposures], "face_down": z.face_down,
                "removed": [raw[i] for i in sorted(edit.removed) if i < len(raw)]}

    def view(self) -> dict[str, Any]:
        zones = self.last.zones if self.last else {}
        racks, discards = [], []
        for name, z in sorted(zones.items()):
            v = self._zone_view(name, z)
            if z.kind == "rack":
                v["status"] = self._rack_status(name)
                mj = self.last.mahjong.get(name) if self.last else None
                v["mahjong"] = mj
                racks.append(v)
            else:
                discards.append(v)
        return {
            "variant": self.variant,
            "homography": self.last.homography if self.last else "missing",
            "racks": racks,
            "discards": discards,
            "flags": sorted(self.flags, key=lambda f: -f["t"]),
            "events": [e.to_json() for e in reversed(self.log[-60:])],
            "scores": dict(self.scores),
        }

    # persistence --------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {"variant": self.variant, "flags": self.flags, "scores": self.scores,
                "record": self.record, "dead_racks": sorted(self._dead_racks),
                "corrections": self.corrections.to_json(), "flag_seq": self._flag_seq,
                "last": observation_to_json(self.last) if self.last else None,
                "raw": observation_to_json(self.raw) if self.raw else None}

    @classmethod
    def from_json(cls, d: dict[str, Any], log: list[GameEvent] | None = None,
                  checker: Checker | None = None) -> LiveGame:
        g = cls(str(d.get("variant", "mjm")), checker)
        g.flags = list(d.get("flags", []))
        g.scores = {str(k): int(v) for k, v in d.get("scores", {}).items()}
        g.record = list(d.get("record", []))
        g._dead_racks = set(d.get("dead_racks", []))
        g.corrections.load(d.get("corrections", []))
        g._flag_seq = int(d.get("flag_seq", 0))
        g.last = observation_from_json(d["last"]) if d.get("last") else None
        g.raw = observation_from_json(d["raw"]) if d.get("raw") else g.last
        g.log = list(log or [])
        return g


def _per_player(obs: TableObservation | None) -> dict[int, int]:
    """Tiles seen on each player's racks (face up and face down)."""
    out: dict[int, int] = {}
    for z in (obs.zones.values() if obs else ()):
        if z.kind == "rack" and z.player is not None:
            out[z.player] = out.get(z.player, 0) + len(z.tiles) + z.face_down
    return out


def observation_to_json(obs: TableObservation) -> dict[str, Any]:
    return {
        "homography": obs.homography,
        "zones": {n: {"kind": z.kind, "tiles": list(z.tiles), "exposures": [list(e) for e in z.exposures],
                      "face_down": z.face_down, "player": z.player, "hand": z.hand,
                      "uncertain": list(z.uncertain)} for n, z in obs.zones.items()},
        "flags": [{"kind": f.kind, "zone": f.zone, "message": f.message, "cause": f.cause} for f in obs.flags],
        "mahjong": obs.mahjong,
    }


def observation_from_json(d: dict[str, Any]) -> TableObservation:
    zones = {
        str(n): ZoneReading(
            name=str(n), kind=str(z.get("kind", "rack")), tiles=tuple(z.get("tiles", ())),
            exposures=tuple(tuple(e) for e in z.get("exposures", ())),
            face_down=int(z.get("face_down", 0)), player=z.get("player"), hand=z.get("hand"),
            uncertain=tuple(z.get("uncertain", ())),
        )
        for n, z in d.get("zones", {}).items()
    }
    flags = tuple(Flag(str(f["kind"]), f.get("zone"), str(f["message"]), str(f.get("cause", "")))
                  for f in d.get("flags", ()))
    return TableObservation(zones=zones, homography=d.get("homography", "missing"), flags=flags,
                            mahjong=dict(d.get("mahjong", {})))
