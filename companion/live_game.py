"""The followed game: corrections, flags, racks, discards, scoreboard and the event log.

:class:`Corrections` remembers a user's click-correction of one tile (zone + position) while the
tile the camera reads there stays the same, and rewrites observations with it, so the rules see
corrected readings.  :class:`LiveGame` turns stable observations into events (via
:func:`companion.live_events.diff`), keeps flags with their timestamps and dismiss/confirm state,
and renders the JSON view that ``/api/state`` serves.  It serialises to JSON for resuming.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from companion.live_events import GameEvent, diff
from companion.live_score import DEAD_KINDS, mahjong_record, score
from companion.rules.tiles import validate_code
from companion.rules.variants import get_variant
from companion.table import Flag, TableObservation, ZoneReading
from companion.table_decode import WILD
from companion.table_exposures import exposure_flags
from companion.table_flags import MJ_SIZE, judged_on_tiles, unreadable_flag

MAX_LOG = 200
FRAME_HOLDS = ("frame", "picture")
"""Causes of a hold on a whole frame's reading (most tiles read weakly, or over-exposed), which a
player's correction of a tile of a displayed Mah Jongg lifts for that display: they have looked at it."""
Checker = Callable[[TableObservation], TableObservation]


class Corrections:
    """Per-tile corrections keyed by (zone, index), kept while the raw reading there is unchanged."""

    def __init__(self) -> None:
        self._by_tile: dict[tuple[str, int], tuple[str, str]] = {}

    def set(self, zone: str, index: int, raw: str, code: str) -> None:
        self._by_tile[(zone, index)] = (raw, validate_code(code))

    def clear(self) -> None:
        self._by_tile.clear()

    def __len__(self) -> int:
        return len(self._by_tile)

    def corrected(self, zone: str, index: int) -> str | None:
        hit = self._by_tile.get((zone, index))
        return hit[1] if hit else None

    def apply(self, obs: TableObservation, chows: bool = False, judged: bool = False) -> TableObservation:
        """``obs`` with the player's corrections; ``chows``: the variant's (WP / Chinese) exposure rules.

        ``judged``: the live game's checker judges a display (:meth:`companion.live_rules.RackRules.flags`).
        A Mah Jongg display (14 tiles or more) a tile of which the player corrected then loses the
        score and the flags the reader gave its tiles (:func:`companion.table_flags.judged_on_tiles`)
        or the frame's reading (:data:`FRAME_HOLDS`), and is scored or called in error again on the
        player's word; a player's count off (``count``) stays, and withholds a call in error
        (:meth:`companion.live_rules.RackRules.flags`)."""
        zones = dict(obs.zones)
        for (name, index), (raw, code) in list(self._by_tile.items()):
            z = zones.get(name)
            if z is None or index >= len(z.tiles) or z.tiles[index] != raw:
                del self._by_tile[(name, index)]  # the tile moved: forget its correction
                continue
            zones[name] = _replace_tile(z, index, code)
        changed = {n for n, z in zones.items() if z is not obs.zones[n]}
        displays = {n for n in changed if judged and len(zones[n].tiles) >= MJ_SIZE}
        # a rack whose every uncertain tile was corrected by the player can be judged again (not
        # while the player's tile count is off: a correction does not find a missed tile)
        cleared = {n for n, z in zones.items() if obs.zones[n].uncertain and not z.uncertain}
        # a dead call the reader made on every plausible reading of a doubtful rack is void once
        # the player has corrected a tile of it: the rules judge the corrected rack again, and
        # one still holding uncertain tiles is left unjudged
        redo = {n for n in changed - displays if obs.zones[n].uncertain}
        flags = tuple(f for f in obs.flags
                      if not (f.kind == "unreadable" and f.zone in cleared and f.cause != "count")
                      and not (f.kind == "wrong_rack" and f.zone in redo)
                      and not (f.zone in changed and f.cause == "check")  # the player's word, not a second reading
                      and not (f.zone in displays and (judged_on_tiles(f) or f.cause in FRAME_HOLDS)))
        have = {(f.kind, f.zone) for f in flags}
        flags += tuple(unreadable_flag(zones[n]) for n in sorted(redo)
                       if zones[n].uncertain and ("unreadable", n) not in have)
        # a rack not judged for its weakly read jokers is judged again on the player's word for its
        # tiles (a joker confirmed reads 1.0; a flower put right is no joker)
        jokers = {f.zone for f in obs.flags if f.cause == "joker" and f.zone in changed
                  and len(zones[f.zone].tiles) < MJ_SIZE}
        flags = tuple(f for f in flags if not (f.cause == "joker" and f.zone in jokers))
        flags += tuple(f for n in sorted(jokers) for f in exposure_flags(zones[n], chows) if f not in flags)
        mahjong = {n: e for n, e in obs.mahjong.items() if n not in displays}
        return replace(obs, zones=zones, flags=flags, mahjong=mahjong)

    def to_json(self) -> list[list[Any]]:
        return [[z, i, raw, code] for (z, i), (raw, code) in self._by_tile.items()]

    def load(self, items: list[list[Any]]) -> None:
        for z, i, raw, code in items:
            self._by_tile[(str(z), int(i))] = (str(raw), str(code))


def _replace_tile(z: ZoneReading, index: int, code: str) -> ZoneReading:
    tiles = list(z.tiles)
    tiles[index] = code
    exposures = z.exposures
    if sum(len(e) for e in exposures) == len(tiles) and tuple(t for e in exposures for t in e) == z.tiles:
        out, pos = [], 0
        for e in exposures:
            out.append(tuple(tiles[pos:pos + len(e)]))
            pos += len(e)
        exposures = tuple(out)
    uncertain = tuple(i for i in z.uncertain if i != index)  # the player's word is certain
    confidence = tuple(1.0 if i == index else c for i, c in enumerate(z.confidence))
    own = tuple(1.0 if i == index else c for i, c in enumerate(z.own_confidence))
    # the plausible readings left are those that read the corrected tile as the player said; where
    # none names that code, those that held it as any other tile (WILD), with the code put in
    flat = [tuple(t for e in r for t in e) for r in z.readings]
    fits = [len(f) == len(tiles) for f in flat]
    named = {f[index] for f, ok in zip(flat, fits, strict=True) if ok}
    readings = tuple(r for r, f, ok in zip(z.readings, flat, fits, strict=True) if ok and f[index] == code)
    if code not in named and WILD in named:
        readings = tuple(_put(r, index, code) for r, f, ok in zip(z.readings, flat, fits, strict=True)
                         if ok and f[index] == WILD)
    return replace(z, tiles=tuple(tiles), exposures=exposures, uncertain=uncertain, confidence=confidence,
                   readings=readings, own_confidence=own)


def _put(exposures: tuple[tuple[str, ...], ...], index: int, code: str) -> tuple[tuple[str, ...], ...]:
    """``exposures`` with the tile at ``index`` (counted across them) made ``code``."""
    out, pos = [], 0
    for e in exposures:
        out.append(tuple(code if pos + k == index else t for k, t in enumerate(e)))
        pos += len(e)
    return tuple(out)


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
        corrected = self.corrections.apply(obs, chows=get_variant(self.variant).chows, judged=self.checker is not None)
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

    def correct(self, zone: str, index: int, code: str) -> None:
        """Correct tile ``index`` of ``zone`` (as read now) to ``code``; raises ValueError/KeyError."""
        if self.raw is None or zone not in self.raw.zones:
            raise KeyError(f"no zone {zone!r} in the current reading")
        tiles = self.raw.zones[zone].tiles
        if not 0 <= index < len(tiles):
            raise KeyError(f"zone {zone!r} has no tile {index}")
        self.corrections.set(zone, index, tiles[index], code)

    # view ---------------------------------------------------------------------------------
    def _rack_status(self, name: str) -> str:
        if self.last is not None and self.last.mahjong.get(name):
            return "mahjong"
        dead = any(f["zone"] == name and f["active"] and f["status"] != "dismissed"
                   and f["kind"] in DEAD_KINDS for f in self.flags)
        return "dead" if dead else "alive"

    def _zone_view(self, name: str, z: ZoneReading) -> dict[str, Any]:
        raw = self.raw.zones.get(name) if self.raw else None
        tiles = []
        for i, code in enumerate(z.tiles):
            raw_code = raw.tiles[i] if raw and i < len(raw.tiles) else code
            tiles.append({"index": i, "code": code, "raw": raw_code,
                          "corrected": code != raw_code, "uncertain": i in z.uncertain})
        return {"zone": name, "kind": z.kind, "player": z.player, "hand": z.hand, "tiles": tiles,
                "exposures": [list(e) for e in z.exposures], "face_down": z.face_down}

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
