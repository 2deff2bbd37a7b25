"""Guards on a frame's rule flags: when the table reader does not judge what it saw.

A dead-hand call on a player whose tile count does not add up is withheld
(:func:`guard_dead_calls`), and so is every rule flag of a frame whose tiles mostly read weakly
(:func:`guard_weak_frame`) or that is over-exposed and read weakly (:func:`guard_overexposed`):
each rack then carries an ``unreadable`` flag that says why (:func:`withheld`).
:class:`companion.table.TableReader` applies them after the rules (:mod:`companion.table_flags`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from companion.rules.tiles import BACK
from companion.table_flags import MJ_SIZE, RuleContext, evaluate, player_totals
from companion.table_types import MIN_CONFIDENCE, Flag, ZoneReading
from vision.light import OVEREXPOSED, clipped_share
from vision.types import Detections

WEAK_FRAME_SHARE = 0.40
"""A frame in which this share of the face-up tiles read weakly (under the reader's minimum
confidence) is not judged at all: a classifier unsure of two tiles in five is out of its depth (an
unfamiliar tile set, glare, a blurred frame), and its sure readings there are no safer.  On 50
rendered tables of the held-out artwork style at 1280x720 (tenth session) the two false rule flags
(a dead hand from three 8 Craks read as 5 Craks, a fifth 6 Dot) came in frames with 0.50 and 0.58
of the tiles weak; in the eleventh session, a Mah Jongg called in error (four red Souths read as
red dragons at 0.79-0.94) in a frame with 0.41 weak, and with the Noto glyphs a dead hand (two
1 Craks read as Souths at 0.78-0.80) with 0.44 (0.45 until then).  Of the tables in the
benchmark's own style, no frame with a true flag had over 0.36 (0.33 in the eleventh session)."""

WEAK_FRAME_MIN_TILES = 12
"""The share above is taken only in a frame with at least this many face-up tiles."""

OVEREXPOSED_WEAK = 0.25
"""An over-exposed frame (:data:`vision.light.OVEREXPOSED`) is not judged when this share of its
face-up tiles read weakly, however few they are (:func:`guard_overexposed`).  White
faces that read surely are judged as usual: a set drawn pure white is no over-exposed picture."""


def withheld(zones: dict[str, ZoneReading], flags: list[Flag], why: str, cause: str) -> list[Flag]:
    """``flags`` without the rule flags (``wrong_rack``, ``tile_count``, ``joker``), and an
    ``unreadable`` flag of ``cause`` saying ``why`` on each rack with face-up tiles that has none:
    a frame the reader should not judge."""
    out = [f for f in flags if f.kind not in ("wrong_rack", "tile_count", "joker")]
    have = {(f.kind, f.zone) for f in out}
    for z in zones.values():
        if z.kind == "rack" and z.tiles and ("unreadable", z.name) not in have:
            out.append(Flag("unreadable", z.name, f"{z.name}: {why}", cause=cause))
    return out


def guard_dead_calls(zones: dict[str, ZoneReading], flags: list[Flag], ctx: RuleContext) -> list[Flag]:
    """No dead-hand call on a player whose tile count the camera did not see add up.

    A tile the camera missed, or a phantom it added, changes a group's size, and a group of
    the wrong size can make a live hand look dead.  Where backs are countable and a player's
    visible total is off, that player's racks with exposures are not judged: an ``unreadable``
    flag of cause ``"count"`` (which a player's correction of a tile does not clear) replaces
    any ``wrong_rack``; the ``tile_count`` flag still says what is off, so a true count error
    is flagged either way.  A count too many by no more than the player's doubtful backs
    (``ZoneReading.weak_backs``: read weakly, in a row of face-up tiles, or unlike the frame's
    other backs) is not off, as :func:`companion.table_flags.totals_flags` does not call it so:
    a phantom back lies outside every exposure and changes no group (docs/table.md, "A phantom
    back keeps no hand from being judged"); a count short by no more than its backs not counted as
    stray (``ZoneReading.stray_backs``) is not off either.  (A rack with an uncertain tile is judged only when
    every plausible reading of it is dead: :func:`companion.table_flags.rack_flags`.)

    A player shown short is not flagged for an exposure of one or two tiles either (a pair, a
    joker in a pair: cause ``small``, :data:`companion.table_exposures.SMALL_EXPOSURE`): the tiles
    missed may be its own.  ``american:km-jade``,
    1920x1080, table 65 of 200: a kong of 1 Dots read as two tiles, its player one short, was
    flagged "[1D 1D] is an exposure of 2 tile(s)" (sixty-fourth session).
    """
    if not ctx.count_backs:
        return flags
    off: dict[str, str] = {}
    short: set[str] = set()  # the racks of a player shown short
    for p, (total, expected, racks) in player_totals(zones, ctx).items():
        if not expected - sum(z.stray_backs for z in racks) <= total <= expected + 1 + sum(z.weak_backs for z in racks):
            for z in racks:
                if z.exposures:
                    off[z.name] = f"player {p} shows {total} tiles, not {expected} or {expected + 1}"
                if total < expected:
                    short.add(z.name)
    out = [f for f in flags if not (f.kind == "wrong_rack" and f.zone in off) and not (f.cause == "small" and f.zone in short)]
    for name, why in off.items():
        # a display is still scored (it makes a hand on any count); only a call in error waits
        what = "a Mah Jongg here is not called in error" if len(zones[name].tiles) >= MJ_SIZE else "not called dead"
        out.append(Flag("unreadable", name, f"{name}: {what} while {why} (a tile may be hidden or misread)",
                        cause="count"))
    return out


def second_reading_dead(zones: dict[str, ZoneReading], ctx: RuleContext) -> set[str]:
    """The racks a second reading (``zones``, :meth:`companion.table.TableReader._check_dead_calls`)
    finds dead, by the same rules and :func:`guard_dead_calls`; a 14-tile display called in error
    only when every tile of it reads surely on its own (``ZoneReading.own_confidence``, before its
    run's neighbours vouched for it: :data:`~companion.table_types.MIN_CONFIDENCE`).

    A misread tile makes almost any display match no hand (card hands are sparse among 14-tile
    multisets), so a call of Mah Jongg in error rests on all 14 tiles.  Fifty-ninth session,
    `xm-dorothys` (no model trained on it) enrolled, 2560x1440: a displayed ``6B 6B 6B J`` read as
    ``9D 9D 9D J`` by both readers, 0.77-0.78 by the first and 0.73-0.80 by the second on their
    own, 0.94-0.97 once the run was read together, and the Mah Jongg was called in error.  On 50
    tables of six face sets at 1280x720 and 1920x1080 this withholds 2 true calls (an
    ``unreadable`` flag of cause ``"check"`` asks the players to check the rack), and none on 20
    tables of four American sets at 2560x1440 and 3840x2160."""
    out = set()
    for f in guard_dead_calls(zones, evaluate(zones, ctx)[0], ctx):
        if f.kind != "wrong_rack" or f.zone is None:
            continue
        z = zones[f.zone]
        if len(z.tiles) == MJ_SIZE and min(z.own_confidence or z.confidence or (1.0,)) < MIN_CONFIDENCE:
            continue
        out.add(f.zone)
    return out


def found_apart(det: Detections, zone_names: Callable[[Detections], npt.NDArray[np.str_]]) -> dict[str, tuple[int, int]]:
    """Per zone (``zone_names``: the zone of each of some detections), the faces found among the
    backs by their colour (``det.meta["blank"]``, :func:`vision.blanks.blank_faces`) and how many
    of them read weakly; nothing to look up in a frame without one."""
    blank = det.meta.get("blank")
    if not isinstance(blank, np.ndarray) or blank.shape != (len(det),) or not blank.any():
        return {}
    found = det[blank]
    names, weak = zone_names(found), found.confidence < MIN_CONFIDENCE
    return {str(z): (int((names == z).sum()), int((weak & (names == z)).sum())) for z in set(names.tolist()) if z}


def guard_weak_frame(
    zones: dict[str, ZoneReading], flags: list[Flag], mahjong: dict[str, dict[str, Any] | None],
    apart: dict[str, tuple[int, int]] | None = None,
) -> tuple[list[Flag], dict[str, dict[str, Any] | None]]:
    """No rule flag and no score from a frame whose tiles mostly read weakly (:data:`WEAK_FRAME_SHARE`).

    The rule flags (``wrong_rack``, ``tile_count``, ``joker``) are withheld and every rack with
    face-up tiles gets an ``unreadable`` flag of cause ``"frame"`` that says why and what helps;
    displayed Mah Jonggs are not scored.

    The share is taken over the tiles the classifier read as faces: those it read as backs and
    their colour showed to be faces (``apart``: :func:`found_apart`) are left out, as they were
    before the sixty-third session found them.  They read weakly by nature (the classifier's
    next choice after a back it was sure of): on ``font-symbola``, white dragons so found tipped
    three frames past the share (17 of 42 weak, 18 of 41), three displays read right went
    unscored and a dead hand uncalled; left out, they are scored and called again, and no other
    figure of the benchmark moves (sixty-fourth session, docs/table.md, "A white face read as a back").
    """
    found = {name: (k, min(w, len(zones[name].uncertain))) for name, (k, w) in (apart or {}).items()
             if name in zones}
    n = sum(len(z.tiles) for z in zones.values()) - sum(k for k, _ in found.values())
    weak = sum(len(z.uncertain) for z in zones.values()) - sum(w for _, w in found.values())
    if n < WEAK_FRAME_MIN_TILES or weak < WEAK_FRAME_SHARE * n:
        return flags, mahjong
    why = (f"{weak} of the {n} face-up tiles in view read weakly, so this frame is not judged "
           "(an unfamiliar tile set reads better once enrolled: `companion enroll`; a closer, "
           "steadier camera or less glare also helps)")
    return withheld(zones, flags, why, "frame"), {name: None for name in mahjong}


def guard_overexposed(
    frame: npt.NDArray[np.uint8], det: Detections, zones: dict[str, ZoneReading], flags: list[Flag],
    mahjong: dict[str, dict[str, Any] | None],
) -> tuple[list[Flag], dict[str, dict[str, Any] | None]]:
    """No rule flag and no score from an over-exposed frame (:data:`vision.light.OVEREXPOSED`
    of its face-up tiles' pixels clipped white) in which :data:`OVEREXPOSED_WEAK` of the
    face-up tiles read weakly, as from a frame read weakly (:func:`guard_weak_frame`), each
    rack's ``unreadable`` flag of cause ``"picture"`` saying what helps.  Burnt-out faces are
    misread surely beside the weak ones: on 25 rendered tables over-exposed (``bench_table
    --poor over``, twenty-ninth session) the reader raised 2 false flags of 6 at 1280x720 and 1
    of 2 at 1920x1080 (a joker alone, a tile count), none in daylight; those frames had 0.75
    (of 8 tiles, too few for the weak-frame guard) and 0.39 of their tiles weak."""
    n = sum(len(z.tiles) for z in zones.values())
    if not n or sum(len(z.uncertain) for z in zones.values()) < OVEREXPOSED_WEAK * n:
        return flags, mahjong
    faces = det.quads[np.array([str(c) != BACK for c in det.codes], bool)] if len(det) else det.quads
    share = clipped_share(frame, faces)  # as the camera took it: a lamp's gains cannot unclip a pixel
    if share < OVEREXPOSED:
        return flags, mahjong
    why = (f"the picture is over-exposed ({share:.0%} of the tile faces' pixels are pure white), so this "
           "frame is not judged: turn the lamp away from the table or lower the camera's exposure")
    return withheld(zones, flags, why, "picture"), {name: None for name in mahjong}
