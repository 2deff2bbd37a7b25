"""The flags an exposure raises on its own: a joker in a pair or single, an exposure of only jokers
(``joker``), an exposure of a size no group has (``tile_count``); and which exposures a hand can be
judged on (:func:`well_formed`).  :mod:`companion.table_flags` raises them for each rack.
"""

from __future__ import annotations

from companion.rules.matcher import joker_problems
from companion.rules.tiles import CHINESE_FLOWERS, FLOWER, JOKER, SEASONS
from companion.table_types import Flag, ZoneReading

JOKER_SURE = 0.9
"""A flag that holds only if an exposure's jokers are jokers (one of only jokers; one longer than any
group, which the next group's tiles read as jokers may have joined) is raised only when each of them
reads at least this sure, jointly and on its own; otherwise that rack is ``unreadable`` (cause
``joker``). Tiles alike that are not jokers, a set's flowers, make a legal group. A joker in a pair
or single beside a natural tile is flagged whatever it is: two tiles are no group. The bar of a
copies count (``COPIES_CONFIDENCE``). On the font sets, whose flowers the bench draws as a plain "F"
read as jokers at 0.77-0.90 on their own, the false flags went from 16 / 18 to 0 / 0 (``font-noto``)
and 9 / 15 to 0 / 1 (``font-symbola``) over 50 tables at 1280x720 / 1920x1080, no true flag lost,
and every flag of four American sets the same. The cost: a true ``J J J`` added to those sets'
tables is flagged 117 times of 229, and left to check the rest (sixtieth session, docs/table.md,
"Jokers read weakly")."""


SMALL_EXPOSURE = 3
"""An exposure under this many tiles (a pung) is too small for any group: a pair, a single, a joker
in a pair.  Its flag's cause is ``small``, which a player shown short of tiles does not get
(:func:`companion.table_guards.guard_dead_calls`: the tiles missed may be its own)."""


def _weakest(z: ZoneReading) -> list[float]:
    """Per tile of ``z``, the lower of its joint and its own reading (empty for a zone no camera read)."""
    conf = z.confidence if len(z.confidence) == len(z.tiles) else ()
    own = z.own_confidence if len(z.own_confidence) == len(z.tiles) else conf
    return [min(c, o) for c, o in zip(conf, own, strict=True)]


def jokers_doubtful(z: ZoneReading, span: range) -> bool:
    """A joker at ``span`` of ``z`` read under :data:`JOKER_SURE`, jointly or on its own."""
    read = _weakest(z)
    return any(z.tiles[i] == JOKER and read[i] < JOKER_SURE for i in span if read)


MAX_JOKERS_SWAPPED = 6
"""At most this many of a display's weakly read jokers (the weakest) are tried as flowers
(:func:`jokers_as_flowers`)."""


def jokers_as_flowers(z: ZoneReading) -> list[tuple[str, ...]]:
    """``z``'s tiles with some of its jokers read under :data:`JOKER_SURE` taken as flowers instead:
    every such choice but none, over its weakest :data:`MAX_JOKERS_SWAPPED` jokers.  A set's flowers
    are what an unfamiliar set's jokers are most often read for, and the other way round."""
    read = _weakest(z)
    weak = sorted((i for i, r in enumerate(read) if z.tiles[i] == JOKER and r < JOKER_SURE),
                  key=lambda i: read[i])[:MAX_JOKERS_SWAPPED]
    out = []
    for mask in range(1, 1 << len(weak)):
        tiles = list(z.tiles)
        for k, i in enumerate(weak):
            if mask >> k & 1:
                tiles[i] = FLOWER
        out.append(tuple(tiles))
    return out


def exposure_flags(z: ZoneReading, chows: bool, first: list[tuple[str, int, str]] | None = None,
                    why: str = "") -> list[Flag]:
    """The flags of ``first`` (default: the problems of ``z``'s exposures), each message followed
    by ``why``; a problem that rests on jokers read doubtfully makes the rack ``unreadable``."""
    flags: list[Flag] = []
    spans, doubt = z.exposure_spans(), set[int]()
    for kind, i, message in exposure_problems(z.exposures, chows) if first is None else first:
        exp = z.exposures[i]
        if set(exp) == {JOKER} or (len(exp) > _max_size(chows) and JOKER in exp):
            if jokers_doubtful(z, spans[i]):
                if i not in doubt:
                    flags.append(Flag("unreadable", z.name, f"{z.name}: not judged: [{' '.join(exp)}] breaks a "
                                      "rule only if its jokers are jokers, and they read weakly (a flower of an "
                                      "unfamiliar set may look like one)", cause="joker"))
                doubt.add(i)
                continue
        flags.append(Flag(kind, z.name, f"{z.name}: {message}{why}", cause="small" if len(exp) < SMALL_EXPOSURE else ""))
    return flags


def _max_size(chows: bool) -> int:
    return 4 if chows else 6


def exposure_problems(exposures: tuple[tuple[str, ...], ...], chows: bool) -> list[tuple[str, int, str]]:
    """``(kind, index, message)`` for each exposure that breaks a rule on its own: a joker in a
    pair or single, an exposure of only jokers (``joker``), an exposure of a size no group has
    (``tile_count``)."""
    problems: list[tuple[str, int, str]] = []
    max_size = _max_size(chows)
    bonus = set(CHINESE_FLOWERS + SEASONS) | {FLOWER}
    for i, exp in enumerate(exposures):
        if chows and set(exp) <= bonus:
            continue  # WP / Chinese flowers and seasons are set aside singly, not exposed groups
        shown = " ".join(exp)
        for problem in joker_problems(exp) if JOKER in exp else []:
            if "joker" in problem:
                problems.append(("joker", i, f"[{shown}]: {problem}"))
        if len(exp) < 3 and JOKER not in exp:
            problems.append(("tile_count", i, f"[{shown}] is an exposure of {len(exp)} tile(s); "
                                                "only pungs, kongs, quints and sextets are exposed"))
        elif len(exp) > max_size:
            problems.append(("tile_count", i, f"[{shown}] is an exposure of {len(exp)} tiles; "
                                                f"no group is larger than {max_size}"))
    return problems


def exposure_flags_on_every_reading(z: ZoneReading, chows: bool) -> list[Flag]:
    """The exposure flags (``joker``, ``tile_count``) of a rack with uncertain tiles, each kind
    raised when it holds on the rack's reading and on every plausible reading (``z.readings``:
    each uncertain tile as each code it may be, grouped again).  A sure joker beside a weak tile
    read ``5D`` is a joker in a pair whether that tile is a 5 Dot, a 4 Crak or another joker, but
    not when, read as a joker, it would join the next group (``6D J 6D 6D J J``).  The message
    names the reading's exposure.  Nothing when the readings were too many to enumerate."""
    if not z.readings:
        return []
    first = exposure_problems(z.exposures, chows)
    held = {kind for kind, _, _ in first}
    for exposures in z.readings:
        held &= {kind for kind, _, _ in exposure_problems(exposures, chows)}
        if not held:
            return []
    shown = ", ".join(f"#{i + 1}" for i in z.uncertain)
    return exposure_flags(z, chows, [p for p in first if p[0] in held],
                           f" (so on every reading of the uncertain tile(s) {shown})")


def well_formed(exposure: tuple[str, ...]) -> bool:
    """An exposure of a size some group has, one kind plus jokers (no joker pair)."""
    return 3 <= len(exposure) <= 6 and not joker_problems(exposure)
