"""The player's corrections of what the camera read: a tile put right, a tile it missed, one it made up.

:class:`Corrections` remembers a click-correction of one tile (zone + position) while the tile the
camera reads there stays the same, and a rack's tiles added or taken out (:class:`ZoneEdit`) while
the camera reads that zone the same; ``apply`` rewrites an observation with them, so the rules see
corrected readings: a rack edited is judged again on its own tiles, its player's count again, and a
Mah Jongg display edited or corrected is left for the live game's checker to judge
(:meth:`companion.live_rules.RackRules.flags`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from companion.rules.tiles import validate_code
from companion.rules.variants import SiameseRules
from companion.table import Flag, TableObservation, ZoneReading
from companion.table_decode import WILD
from companion.table_exposures import exposure_flags
from companion.table_flags import (
    MJ_SIZE,
    RuleContext,
    copies_flags,
    judged_on_tiles,
    rack_flags,
    totals_flags,
    unreadable_flag,
)
from companion.table_guards import guard_dead_calls

FRAME_HOLDS = ("frame", "picture")
"""Causes of a hold on a whole frame's reading (most tiles read weakly, or over-exposed), which a
player's correction of a tile of a displayed Mah Jongg lifts for that display: they have looked at it."""

Origin = tuple[bool, int]
"""Where a tile of an edited zone comes from: ``(False, i)``, tile ``i`` of the camera's reading;
``(True, k)``, the player's ``k``-th added tile (:attr:`ZoneEdit.added`)."""

Added = tuple[int, str, bool]
"""A tile the player added: ``(after, code, new)``, after the camera's tile at index ``after`` of
:attr:`ZoneEdit.raw` (-1 for before the first), starting an exposure of its own when ``new``
(else in the exposure of the tile before it)."""


@dataclass(frozen=True)
class ZoneEdit:
    """Tiles the player took out of a zone as the camera read it (``removed``: indexes of ``raw``)
    and tiles they added (``added``: each an :data:`Added`), kept while the camera reads the zone
    as ``raw``."""

    raw: tuple[str, ...]
    removed: frozenset[int] = frozenset()
    added: tuple[Added, ...] = ()

    def origins(self) -> list[Origin]:
        """The zone's tiles once edited, each named by its origin, in order."""
        out: list[Origin] = [(True, k) for k, a in enumerate(self.added) if a[0] < 0]
        for i in range(len(self.raw)):
            if i not in self.removed:
                out.append((False, i))
            out += [(True, k) for k, a in enumerate(self.added) if a[0] == i]
        return out

    def starts(self) -> set[int]:
        """The added tiles (their indexes in :attr:`added`) that start an exposure of their own."""
        return {k for k, a in enumerate(self.added) if a[2]}

    def code(self, origin: Origin) -> str | None:
        """The code of an added tile (None for one of the camera's)."""
        added, k = origin
        return self.added[k][1] if added else None


class Corrections:
    """Per-tile corrections keyed by (zone, index), kept while the raw reading there is unchanged,
    and per-zone edits (tiles added or taken out), kept while the zone's raw reading is."""

    def __init__(self) -> None:
        self._by_tile: dict[tuple[str, int], tuple[str, str]] = {}
        self._edits: dict[str, ZoneEdit] = {}

    def set(self, zone: str, index: int, raw: str, code: str) -> None:
        self._by_tile[(zone, index)] = (raw, validate_code(code))

    def edit(self, zone: str, edit: ZoneEdit) -> None:
        """Keep ``edit`` of ``zone`` (one with nothing added or taken out forgets the zone's)."""
        for _, code, _ in edit.added:
            validate_code(code)
        if edit.removed or edit.added:
            self._edits[zone] = edit
        else:
            self._edits.pop(zone, None)

    def edit_of(self, zone: str, raw: tuple[str, ...]) -> ZoneEdit:
        """The edit kept for ``zone`` read as ``raw`` (an empty one if none, or the zone reads otherwise)."""
        e = self._edits.get(zone)
        return e if e is not None and e.raw == raw else ZoneEdit(raw)

    def clear(self) -> None:
        self._by_tile.clear()
        self._edits.clear()

    def __len__(self) -> int:
        return len(self._by_tile) + len(self._edits)

    def corrected(self, zone: str, index: int) -> str | None:
        hit = self._by_tile.get((zone, index))
        return hit[1] if hit else None

    def apply(self, obs: TableObservation, rules: SiameseRules, judged: bool = False) -> TableObservation:
        """``obs`` with the player's corrections, judged by the variant's ``rules``.

        ``judged``: the live game's checker judges a display (:meth:`companion.live_rules.RackRules.flags`).
        A Mah Jongg display (14 tiles or more) a tile of which the player corrected, added or took
        out then loses the score and the flags the reader gave its tiles
        (:func:`companion.table_flags.judged_on_tiles`) or the frame's reading (:data:`FRAME_HOLDS`),
        and is scored or called in error again on the player's word; a player's count off
        (``count``) stays, and withholds a call in error (:meth:`companion.live_rules.RackRules.flags`).
        A rack in play the player added tiles to or took tiles out of is judged again on its tiles
        (but for dead calls: the checker's), and so are its player's count and the copies of each
        tile in view."""
        ctx = RuleContext(rules, rules.tiles, None)
        zones = dict(obs.zones)
        for (name, index), (raw, code) in list(self._by_tile.items()):
            z = zones.get(name)
            if z is None or index >= len(z.tiles) or z.tiles[index] != raw:
                del self._by_tile[(name, index)]  # the tile moved: forget its correction
                continue
            zones[name] = _replace_tile(z, index, code)
        edited = set()
        for name, e in list(self._edits.items()):
            if name not in zones or obs.zones[name].tiles != e.raw:
                del self._edits[name]  # the camera reads the zone otherwise now: forget the edit
                continue
            zones[name] = edit_zone(zones[name], e)
            edited.add(name)
        changed = {n for n, z in zones.items() if z is not obs.zones[n]}
        displays = {n for n in changed if judged and len(zones[n].tiles) >= MJ_SIZE}
        # a rack whose every uncertain tile was corrected by the player can be judged again (not
        # while the player's tile count is off: correcting a tile adds none; adding one does, and
        # its player's count is judged again, below)
        cleared = {n for n, z in zones.items() if obs.zones[n].uncertain and not z.uncertain}
        # a dead call the reader made on every plausible reading of a doubtful rack is void once
        # the player has corrected a tile of it: the rules judge the corrected rack again, and
        # one still holding uncertain tiles is left unjudged
        redo = {n for n in changed - displays if obs.zones[n].uncertain}
        # a rack in play the player added tiles to or took tiles out of is judged again on its tiles,
        # but not in a frame held whole (the player vouched for the tiles they edited, not the rest)
        rejudge = {n for n in edited - displays if zones[n].kind == "rack"}
        held = {f.zone for f in obs.flags if f.cause in FRAME_HOLDS}
        flags = tuple(f for f in obs.flags
                      if not (f.kind == "unreadable" and f.zone in cleared and f.cause != "count")
                      and not (f.kind == "wrong_rack" and f.zone in redo)
                      and not (f.zone in changed and f.cause == "check")  # the player's word, not a second reading
                      and not (f.zone in displays and (judged_on_tiles(f) or f.cause in FRAME_HOLDS))
                      and not (f.zone in rejudge and judged_on_tiles(f)))
        have = {(f.kind, f.zone) for f in flags}
        flags += tuple(unreadable_flag(zones[n]) for n in sorted(redo - rejudge)
                       if zones[n].uncertain and ("unreadable", n) not in have)
        flags += tuple(f for n in sorted(rejudge - held) for f in rack_flags(zones[n], ctx)[0])
        # a rack not judged for its weakly read jokers is judged again on the player's word for its
        # tiles (a joker confirmed reads 1.0; a flower put right is no joker)
        jokers = {f.zone for f in obs.flags if f.cause == "joker" and f.zone in changed - rejudge
                  and len(zones[f.zone].tiles) < MJ_SIZE}
        flags = tuple(f for f in flags if not (f.cause == "joker" and f.zone in jokers))
        flags += tuple(f for n in sorted(jokers) for f in exposure_flags(zones[n], ctx.chows) if f not in flags)
        flags = _recount(obs, zones, flags, {zones[n].player for n in edited}, ctx)
        if edited and not held:  # the copies in view counted again: a fifth copy taken out, or one added
            flags = tuple(f for f in flags if f.cause != "copies") + tuple(copies_flags(zones, ctx))
        mahjong = {n: e for n, e in obs.mahjong.items() if n not in displays | edited}
        return replace(obs, zones=zones, flags=flags, mahjong=mahjong)

    def to_json(self) -> list[list[Any]]:
        tiles: list[list[Any]] = [[z, i, raw, code] for (z, i), (raw, code) in self._by_tile.items()]
        edits: list[list[Any]] = [[z, "edit", list(e.raw), sorted(e.removed), [list(a) for a in e.added]]
                                  for z, e in self._edits.items()]
        return tiles + edits

    def load(self, items: list[list[Any]]) -> None:
        for item in items:
            if len(item) == 5 and item[1] == "edit":
                z, _, raw, removed, added = item
                # an added tile saved before it could start an exposure ([after, code]) joins the one before it
                self._edits[str(z)] = ZoneEdit(tuple(str(t) for t in raw), frozenset(int(i) for i in removed),
                                               tuple((int(a[0]), str(a[1]), bool(a[2]) if len(a) > 2 else False)
                                                     for a in added))
            else:
                z, i, raw, code = item
                self._by_tile[(str(z), int(i))] = (str(raw), str(code))


def _recount(obs: TableObservation, zones: dict[str, ZoneReading], flags: tuple[Flag, ...],
             players: set[int | None], ctx: RuleContext) -> tuple[Flag, ...]:
    """``flags`` with the count of each player in ``players`` (whose racks the player edited) judged
    again on the edited racks, as the table reader judges it (:func:`companion.table_flags.totals_flags`,
    and :func:`companion.table_guards.guard_dead_calls`'s hold on their racks, under which a rack is
    not called dead).  A player whose racks a whole frame's hold covers (:data:`FRAME_HOLDS`) gets
    no count flag of the rules, as the reader gives none there."""
    mine = {n: z for n, z in zones.items() if z.kind == "rack" and z.player in players - {None}}
    if not mine:
        return flags
    unseen = {f.zone for f in obs.flags if f.kind == "view" and f.zone}
    held = any(f.zone in mine and f.cause in FRAME_HOLDS for f in obs.flags)
    # both give only count flags: a player's total (``total``) and the holds on their racks (``count``)
    again = ([] if held else totals_flags(mine, ctx, unseen)) + guard_dead_calls(mine, [], ctx)
    off = {f.zone for f in again if f.cause == "count"}
    return tuple(f for f in flags if not (f.zone in mine and f.cause in ("total", "count"))
                 and not (f.kind == "wrong_rack" and f.zone in off)) + tuple(again)


def edit_zone(z: ZoneReading, e: ZoneEdit) -> ZoneReading:
    """``z`` (read as ``e.raw``, its tiles perhaps corrected) with ``e``'s tiles taken out and added:
    an added tile joins the exposure of the tile it follows (the first one's when put first) or
    starts one of its own (:data:`Added`), and reads as sure as the player's word."""
    origins = e.origins()
    n = len(z.tiles)
    group = _groups(z.exposures, n)

    def pick(values: tuple[Any, ...], fill: Any) -> tuple[Any, ...]:
        return tuple(fill if added else values[i] for added, i in origins) if len(values) == n else values

    tiles = tuple(e.code(o) or z.tiles[o[1]] for o in origins)
    place = {i: k for k, (added, i) in enumerate(origins) if not added}
    uncertain = tuple(place[i] for i in z.uncertain if i in place)
    starts = e.starts()
    exposures = _regroup(tiles, origins, group, starts) if z.exposures else z.exposures
    readings = []
    for r in z.readings:
        flat = tuple(t for g in r for t in g)
        if len(flat) == n:
            mixed = tuple(e.code(o) or flat[o[1]] for o in origins)
            readings.append(_regroup(mixed, origins, _groups(r, n), starts))
    return replace(z, tiles=tiles, exposures=exposures, uncertain=uncertain, readings=tuple(readings),
                   confidence=pick(z.confidence, 1.0), own_confidence=pick(z.own_confidence, 1.0))


def _groups(exposures: tuple[tuple[str, ...], ...], n: int) -> list[int]:
    """Each of ``n`` tiles' exposure number (all in one when the exposures do not spell them out)."""
    out = [k for k, e in enumerate(exposures) for _ in e]
    return out if len(out) == n else [0] * n


def _regroup(tiles: tuple[str, ...], origins: list[Origin], group: list[int],
             starts: set[int]) -> tuple[tuple[str, ...], ...]:
    """``tiles`` (in ``origins``' order) grouped as their origins were; an added tile joins the group
    of the tile before it (the first kept tile's when it comes first), or, one of ``starts``, starts
    a group of its own, which the added tiles after it join."""
    first = next((group[i] for added, i in origins if not added), 0)
    out: list[list[str]] = []
    last: int | None = None
    for t, (added, i) in zip(tiles, origins, strict=True):
        if added and i in starts:
            g = -1 - i  # camera groups count from 0: a number of its own
        else:
            g = (last if last is not None else first) if added else group[i]
        if g != last or not out:
            out.append([])
        out[-1].append(t)
        last = g
    return tuple(tuple(g) for g in out)


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
