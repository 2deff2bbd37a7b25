"""What the rules say about one frame's zone readings: flags and displayed Mah Jonggs.

``evaluate(zones, ctx)`` returns ``(flags, mahjong)``.  Flag kinds:

* ``unreadable`` - a rack tile read with low confidence; that rack is then not judged (never
  called dead on a guess: the uncertain tile may also have split or merged its exposure), unless
  every plausible reading of its doubtful runs, each grouped again, is dead
  (``ZoneReading.readings``, :func:`companion.table_decode.plausible_runs`; a tile read as almost
  anything counts as any code).
* ``wrong_rack`` - the rack's exposures together fit no exposed card hand (SIA-12), or a 14-tile
  display matches no hand (Mah Jongg in error).
* ``tile_count`` - an exposure of an impossible size; a Mah Jongg rack not holding exactly 14;
  more copies of a tile in view than the set holds; a player's visible total (faces + backs)
  off the variant's count (rules-spec 2.4).
* ``joker`` - a joker in a pair or single, an exposure of only jokers.  (A joker taken from a
  declared Mah Jongg needs two frames: :class:`companion.table.TableReader` checks it.)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from companion.rules.card_model import Card
from companion.rules.matcher import match, rack_viability
from companion.rules.settle import mj_score
from companion.rules.tiles import BACK, CHINESE_FLOWERS, FLOWER, JOKER, SEASONS, TileSet
from companion.rules.variants import SiameseRules
from companion.table_decode import WILD
from companion.table_exposures import (
    exposure_flags,
    exposure_flags_on_every_reading,
    jokers_as_flowers,
    jokers_doubtful,
    well_formed,
)
from companion.table_types import Flag, ZoneReading

MJ_SIZE = 14


@dataclass(frozen=True)
class RuleContext:
    """The rules a reading is judged by."""

    rules: SiameseRules
    tileset: TileSet
    card: Card | None = None
    count_backs: bool = True

    @property
    def chows(self) -> bool:
        return self.rules.chows


RACK_CAUSES = ("", "small", "joker", "check")
"""The causes of the flags the rules raise on a rack's own tiles (:func:`rack_flags`, ``small`` for an
exposure of one or two tiles, and the second reading's doubt of a dead call, ``check``), which a player's correction of a tile of it voids; the
rest (``count``, ``frame``, a table's ``total`` or ``copies``, a joker taken from a display between two
frames, ``exchange``) hold whatever its tiles are."""


def judged_on_tiles(f: Flag) -> bool:
    """``f`` is a flag the rules raised on its rack's own tiles (:data:`RACK_CAUSES`)."""
    return f.kind in ("unreadable", "wrong_rack", "joker", "tile_count") and f.cause in RACK_CAUSES


def unreadable_flag(z: ZoneReading) -> Flag:
    """The rack ``z`` is not judged: its uncertain tiles named by place and reading."""
    shown = ", ".join(f"#{i + 1} (read {z.tiles[i]})" for i in z.uncertain)
    return Flag("unreadable", z.name, f"{z.name}: tile(s) {shown} too uncertain to judge this rack")


def _rack_dead_reason(z: ZoneReading, ctx: RuleContext) -> str | None:
    """Why the rack as read is dead; None when it is live, or holds a malformed exposure (flagged
    already: the rack is judged once it is fixed)."""
    if ctx.card is None or not z.exposures or not all(well_formed(e) for e in z.exposures):
        return None
    return _viability_reason(ctx.card, z.exposures)


def _wrong_rack(z: ZoneReading, ctx: RuleContext) -> list[Flag]:
    reason = _rack_dead_reason(z, ctx)
    return [] if reason is None else [Flag("wrong_rack", z.name, f"{z.name}: hand is dead: {reason}")]


def mahjong_entry(z: ZoneReading, ctx: RuleContext) -> dict[str, Any] | None:
    """The best-scoring card hand a 14-tile display matches, scored as a first Mah Jongg."""
    if ctx.card is None:
        return None
    try:
        found = match(ctx.card, list(z.tiles))
    except ValueError:
        return None
    best: dict[str, Any] | None = None
    for m in found:
        event = {"value": m.value, "jokerless": m.jokerless, "singles_and_pairs": m.singles_and_pairs,
                 "has_quint": m.has_quint}
        score = mj_score(ctx.rules, event, 1)
        if best is None or score > best["value"]:
            best = {"hand": m.hand_id, "value": score, "jokerless": m.jokerless, "card_value": m.value}
    return best


SCORE_KEYS = ("hand", "value", "jokerless")
"""What a Mah Jongg entry is scored by (:func:`_entry_on_every_reading` compares them)."""

MAX_WEAK_UNCHECKED = 7
"""A display whose weak tiles' plausible readings are too many to enumerate (a weak tile of an
unfamiliar set spreads its belief over many codes) is scored on its reading when at most this many
of its 14 tiles read weakly.  Card hands are sparse among 14-tile multisets, so a misread seldom
lands on one: on rendered tables at 1280x720 and 1920x1080 (50 each of seven face sets, 20 of a
Royale layout; twenty-third session), no display was scored as another hand or value, and none where
the truth holds no Mah Jongg, while the displays scored right went from 122 to 188 of 244
(docs/table.md, "Mah Jongg displays read with weak tiles")."""


def _entry_on_every_reading(z: ZoneReading, ctx: RuleContext) -> dict[str, Any] | None:
    """The Mah Jongg entry of a 14-tile display read with uncertain tiles: its reading's entry
    when that reading makes a card hand and no plausible reading of the uncertain tiles
    (``z.readings``) makes another hand, value or jokerless state; when those readings were too
    many to enumerate, when at most :data:`MAX_WEAK_UNCHECKED` tiles read weakly.  None otherwise.
    A plausible reading that makes no hand does not stop it: the display is declared, and a
    reading of it in error is never claimed on a weak tile; the rack stays flagged."""
    entry = mahjong_entry(z, ctx)
    if entry is None or (not z.readings and len(z.uncertain) > MAX_WEAK_UNCHECKED):
        return None
    key = tuple(entry[k] for k in SCORE_KEYS)
    for exposures in z.readings:
        tiles = tuple(c for e in exposures for c in e)
        if len(tiles) != MJ_SIZE:
            continue
        other = mahjong_entry(ZoneReading(z.name, z.kind, tiles, exposures), ctx)
        if other is not None and tuple(other[k] for k in SCORE_KEYS) != key:
            return None
    return dict(entry, uncertain=[i + 1 for i in z.uncertain])


def _other_hand_if_flowers(z: ZoneReading, ctx: RuleContext, entry: dict[str, Any]) -> Flag | None:
    """An ``unreadable`` flag (cause ``joker``) for a display scored as ``entry`` that scores as
    another hand or value when some of its weakly read jokers are flowers
    (:func:`~companion.table_exposures.jokers_as_flowers`); None when none does."""
    key = tuple(entry[k] for k in SCORE_KEYS)
    for tiles in jokers_as_flowers(z):
        other = mahjong_entry(ZoneReading(z.name, z.kind, tiles, ()), ctx)
        if other is not None and tuple(other[k] for k in SCORE_KEYS) != key:
            return Flag("unreadable", z.name, f"{z.name}: not scored: the display is {entry['hand']} ({entry['value']}) "
                        f"only if its jokers read weakly are jokers; as flowers they make {other['hand']} "
                        f"({other['value']}): check them", cause="joker")
    return None


def scored_weakly_flag(z: ZoneReading) -> Flag:
    """The ``unreadable`` flag of a display scored although some tiles read weakly."""
    shown = ", ".join(f"#{i + 1} (read {z.tiles[i]})" for i in z.uncertain)
    return Flag("unreadable", z.name, f"{z.name}: Mah Jongg scored, but tile(s) {shown} read weakly: "
                                      "check them (no other reading of them makes another hand)")


def _display_flags(z: ZoneReading, ctx: RuleContext, entry: dict[str, Any] | None) -> list[Flag]:
    flags: list[Flag] = []
    n = len(z.tiles)
    if n - len(z.uncertain) > MJ_SIZE:  # not on a weak read: a phantom in a gap is one (unreadable)
        flags.append(Flag("tile_count", z.name, f"{z.name}: {n} face-up tiles; a Mah Jongg display holds exactly 14"))
    if ctx.rules.mj_rack_exclusive and z.face_down:
        flags.append(Flag("tile_count", z.name, f"{z.name}: a Mah Jongg rack must hold only its 14 tiles; "
                                                f"{z.face_down} more lie on it"))
    if n == MJ_SIZE and entry is None and ctx.card is not None:
        small = [(e, span) for e, span in zip(z.exposures, z.exposure_spans(), strict=True) if JOKER in e and len(e) < 3]
        doubt = [" ".join(e) for e, span in small if jokers_doubtful(z, span)]
        if doubt:  # where no joker may stand: likelier tiles that look like jokers (a pair of flowers)
            if not z.uncertain:
                flags.append(Flag("unreadable", z.name, f"{z.name}: not judged: the 14 displayed tiles match no hand "
                                  f"as read, but [{'], ['.join(doubt)}] holds jokers read weakly where no joker may "
                                  "go (flowers of an unfamiliar set may look like jokers)", cause="joker"))
            return flags
        for exp, span in small:
            if not set(span) & set(z.uncertain):
                flags.append(Flag("joker", z.name, f"{z.name}: [{' '.join(exp)}]: a joker in a pair or single"))
        if not z.uncertain:
            flags.append(Flag("wrong_rack", z.name, f"{z.name}: the 14 displayed tiles match no hand on the card "
                                                    "(Mah Jongg in error)"))
    return flags


def _dead_reason(exposures: tuple[tuple[str, ...], ...], ctx: RuleContext) -> str | None:
    """Why a rack showing ``exposures`` is dead, judged on its well-formed exposures alone; None
    when it is not (or cannot be judged).

    An exposure of a size no group has, or a joker in a pair, is left out: exposures fit a card
    hand only as distinct groups of it, so a rack whose other exposures fit no hand fits none with
    that one too, whatever it truly holds.  An exposure holding a tile that may be anything
    (:data:`companion.table_decode.WILD`; the rest of it jokers, or more such tiles) is dead only
    if it is as every natural tile of the set, and, where two or more such tiles could be of
    different kinds (then no well-formed exposure), if the rest of the rack is; two such exposures
    on one rack are not judged.
    """
    assert ctx.card is not None
    usable = tuple(e for e in exposures if (WILD in e and 3 <= len(e) <= 6) or well_formed(e))
    wild = [e for e in usable if WILD in e]
    if not usable or len(wild) > 1:
        return None
    if not wild:
        return _viability_reason(ctx.card, usable)
    rest = tuple(e for e in usable if WILD not in e)
    if wild[0].count(WILD) > 1 and (not rest or _viability_reason(ctx.card, rest) is None):
        return None
    reason = None
    for code in ctx.tileset.counts:
        if code in (JOKER, BACK):
            continue
        reason = _viability_reason(ctx.card, (*rest, tuple(code if c == WILD else c for c in wild[0])))
        if reason is None:
            return None
    return reason


def _viability_reason(card: Card, exposures: tuple[tuple[str, ...], ...]) -> str | None:
    try:
        v = rack_viability(card, list(exposures))
    except ValueError:
        return None
    return v.reason if v.dead else None


def _dead_on_every_reading(z: ZoneReading, ctx: RuleContext) -> list[Flag]:
    """``wrong_rack`` for a rack with uncertain tiles when its reading is dead and so is each of
    its plausible readings (``z.readings``: every uncertain tile as each code it may be, a tile
    read as almost anything as any code, grouped again), judged on their well-formed exposures
    (:func:`_dead_reason`: a reading in which a weak tile would stand alone as a single, or a
    joker in a pair, is dead when the rest of the rack is)."""
    first = _rack_dead_reason(z, ctx)
    if first is None or not z.readings:
        return []  # the rack as read is live, or not well-formed, or too doubtful to enumerate
    for exposures in z.readings:
        if _dead_reason(exposures, ctx) is None:
            return []  # one live reading: the rack is not judged
    shown = ", ".join(f"#{i + 1}" for i in z.uncertain)
    return [Flag("wrong_rack", z.name, f"{z.name}: hand is dead: {first} (and on every other reading of the "
                                       f"uncertain tile(s) {shown}: {len(z.readings)} readings checked)")]


def rack_flags(z: ZoneReading, ctx: RuleContext) -> tuple[list[Flag], dict[str, Any] | None, bool]:
    """Flags for one rack, its Mah Jongg entry, and whether it shows a Mah Jongg display.

    A rack with uncertain tiles is ``unreadable``, unless every plausible reading of those tiles
    makes it dead: then it is ``wrong_rack`` all the same (no reading could make it live).
    """
    flags = [unreadable_flag(z)] if z.uncertain else []
    if len(z.tiles) >= MJ_SIZE:
        entry = None
        if len(z.tiles) == MJ_SIZE:
            entry = mahjong_entry(z, ctx) if not z.uncertain else _entry_on_every_reading(z, ctx)
        if entry is not None and z.uncertain:
            flags = [scored_weakly_flag(z)]
        doubt = _other_hand_if_flowers(z, ctx, entry) if entry is not None else None
        if doubt is not None:  # judged as scored (no "in error"), but no score is claimed
            return [doubt] + _display_flags(z, ctx, entry), None, True
        return flags + _display_flags(z, ctx, entry), entry, True
    if z.uncertain:
        dead = _dead_on_every_reading(z, ctx)
        # an uncertain tile may also have split or merged a group: only what every reading shows
        return (dead or flags) + exposure_flags_on_every_reading(z, ctx.chows), None, False
    return flags + exposure_flags(z, ctx.chows) + _wrong_rack(z, ctx), None, False


COPIES_CONFIDENCE = 0.9
"""A tile counts towards "more copies in view than the set holds" only when read at least this
sure, both in its run's joint reading and on its own (``ZoneReading.own_confidence``).  The flag
is a claim about the whole table resting on its weakest read, and a lone discard (any angle, no
run to agree with) misread at 0.77 made two false ones in 50 rendered tables at 1280x720 with the
uncertain-tile threshold (0.75).  The tiles of one run are one face under one light, misread
alike, so their agreement is no second witness: a kong of 4 Dots of an unfamiliar set read as 6
Dots at 0.94-0.98 after the chain made "5 x 6D in view", and no longer does with this rule
(fourteenth session, 1920x1080; three more such flags went too, and no right one)."""


def copies_flags(zones: dict[str, ZoneReading], ctx: RuleContext) -> list[Flag]:
    """More copies of a tile in view than the set holds (reads under :data:`COPIES_CONFIDENCE`
    not counted), unless some tile in view is read as that code under it: a classifier unsure
    of one tile it calls a 6 Dot is likely calling other tiles 6 Dots too.  On rendered tables
    of unfamiliar sets (tenth session), 7 of 9 false copy flags had such a weak one; the
    benchmark's own tables made no copy flag either way."""
    seen: Counter[str] = Counter()
    weak: set[str] = set()
    where: dict[str, str] = {}
    for z in zones.values():
        bad = set(z.uncertain)
        sure = [c >= COPIES_CONFIDENCE for c in z.confidence] if len(z.confidence) == len(z.tiles) else None
        if sure is not None and len(z.own_confidence) == len(z.tiles):
            sure = [s and o >= COPIES_CONFIDENCE for s, o in zip(sure, z.own_confidence, strict=True)]
        for i, code in enumerate(z.tiles):
            if i not in bad and code != BACK and (sure is None or sure[i]):
                seen[code] += 1
                where.setdefault(code, z.name)
            elif code != BACK:
                weak.add(code)
    flags = []
    for code, n in sorted(ctx.tileset.over_limit(seen.elements()).items()):
        if code in weak:
            continue
        have = ctx.tileset.copies_of(code)
        flags.append(Flag("tile_count", where[code], f"{n} x {code} in view; the {ctx.tileset.name} set holds {have}",
                          cause="copies"))
    return flags


def _player_total(racks: list[ZoneReading], ctx: RuleContext) -> tuple[int, int]:
    flowers = set(CHINESE_FLOWERS + SEASONS) | ({FLOWER} if ctx.chows else set())
    total = sum(z.face_down + sum(1 for c in z.tiles if c not in flowers) for z in racks)
    kongs = 0
    if ctx.rules.kong_replacement:
        kongs = sum(1 for z in racks for e in z.exposures if len(e) == 4 and len(set(e) - {JOKER}) == 1)
    return total, kongs


def player_totals(zones: dict[str, ZoneReading], ctx: RuleContext) -> dict[int, tuple[int, int, list[ZoneReading]]]:
    """Per player: the visible total (faces + backs on their racks), the off-turn count it should
    be (27, plus one per kong where kongs draw a replacement; on-turn one more), and the racks."""
    players: dict[int, list[ZoneReading]] = {}
    for z in zones.values():
        if z.kind == "rack" and z.player is not None:
            players.setdefault(z.player, []).append(z)
    out = {}
    for p, racks in sorted(players.items()):
        total, kongs = _player_total(racks, ctx)
        out[p] = (total, ctx.rules.hand_total + kongs, racks)
    return out


def totals_flags(zones: dict[str, ZoneReading], ctx: RuleContext, unseen: Collection[str] = ()) -> list[Flag]:
    """A player's visible total (faces + backs on their racks) against 27/28 (rules-spec 2.4),
    judged only when it is off whatever the weakly read tiles are: each face-up tile read weakly
    may be a phantom (one tile too many) or two tiles read as one (one too few), and each weakly
    read back (``ZoneReading.weak_backs``: a phantom between tiles reads as a weak back) may be a
    phantom.  So "too many" needs the excess to outnumber the weak faces and backs together, and
    "too few" the shortfall to outnumber the weak faces and the backs not counted as stray
    (``ZoneReading.stray_backs``: one past a face-up row's end is most likely the bare rack).  A
    player with a rack in ``unseen`` (the zones whose tiles look too small in the picture to read,
    flagged ``view``) is not called short:
    tiles missing there are most likely tiles the picture is too coarse to show (on 50 rendered
    tables at 640x480, the two false counts were "12 tiles" and "13 tiles", both so).  Nor is a
    player one of whose racks shows no tile at all while another holds some: a rack in play always
    holds a hand, so the camera missed its tiles (a rack of backs alone, sixtieth session); that
    rack gets an ``unreadable`` flag of cause ``count`` saying so."""
    if not ctx.count_backs:
        return []
    flags = []
    for p, (total, off, racks) in player_totals(zones, ctx).items():
        weak = sum(len(z.uncertain) for z in racks)
        short = total < off - weak - sum(z.stray_backs for z in racks)  # a stray back may have been a tile
        empty = [z.name for z in racks if not z.tiles and not z.face_down]
        if total == 0 or (short and any(z.name in unseen for z in racks)):
            continue
        if short and empty:
            flags += [Flag("unreadable", n, f"{n}: no tile seen on this rack, so player {p}'s count ({total}) is not "
                                            "judged: the camera may not see its tiles", cause="count") for n in empty]
            continue
        if not short and total <= off + 1 + weak + sum(z.weak_backs for z in racks):
            continue
        word = "too many" if total > off + 1 else "too few"
        doubt = f"; {weak} of them read weakly" if weak else ""
        flags.append(Flag("tile_count", racks[0].name, f"player {p} shows {total} tiles ({word}{doubt}): expected "
                                                       f"{off} off-turn or {off + 1} on-turn", cause="total"))
    return flags


def evaluate(zones: dict[str, ZoneReading], ctx: RuleContext,
             unseen: Collection[str] = ()) -> tuple[list[Flag], dict[str, dict[str, Any] | None]]:
    """All flags for one frame, and the Mah Jongg entry of every rack showing a display.
    ``unseen``: the zones whose tiles look too small to read (:func:`totals_flags`)."""
    flags: list[Flag] = []
    mahjong: dict[str, dict[str, Any] | None] = {}
    for z in zones.values():
        if z.kind != "rack":
            continue
        f, entry, is_display = rack_flags(z, ctx)
        flags += f
        mahjong[z.name] = entry if is_display else None
    flags += copies_flags(zones, ctx)
    flags += totals_flags(zones, ctx, unseen)
    return flags, mahjong
