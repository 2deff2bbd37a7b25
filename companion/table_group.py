"""Grouping the face-up tiles of one rack into exposures.

Tiles are ordered along the rack's long axis (row by row when a rack holds two rows).  A run of
touching tiles of one kind plus jokers is one exposure; a gap, or a change of kind inside a
touching run, starts the next.  Jokers between two kinds go to the group that still needs them
to reach a pung.  With ``chows=True`` (Chinese-style and WP tables) three touching singles of one
suit in sequence form one chow.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from companion.rules.tiles import JOKER, rank_of, suit_of

TOUCH_RATIO = 1.22
"""Neighbours whose centres are closer than this many tile widths touch (a gap of ~5 mm)."""
SOFT_GAP = (1.15, 1.36)
"""Neighbours this many tile widths apart (centre to centre) may or may not touch.  Tiles of one
exposure lie 1.01-1.06 widths apart and exposures 10-20 mm apart (1.42-1.83 widths), but the
localiser's centres are off by about 1.7 mm along a rack (std, rendered 1280x720 tables), so a
gap measured in this band is read both ways (:func:`run_options`); beyond it, runs are apart."""
WEAK_GAP = 1.6
"""A gap past :data:`SOFT_GAP` but under this many tile widths still parts two runs by default,
but where one side is too short to be an exposure (under 3 tiles) and both sides are one kind,
joining them is an option too: the rules then prefer whichever reading flags less."""
HOLE_GAP = (1.9, 2.3)
"""Two runs this many tile widths apart (centre to centre: a gap about one tile wide, wider than
any gap between exposures) have room for a tile between them that the camera missed or a hand
hides.  Where one side is too short to be an exposure and both are one kind, joining them is an
option too, as across a :data:`WEAK_GAP`: a kong of 6 Dots whose third tile the localiser lost
read ``6D | 6D J`` and was flagged twice (a single exposed, a joker in a pair; ``km-jade``
enrolled, 1280x720, seventeenth session)."""
MAX_SOFT = 4
"""A row with more soft gaps than this is cut at each as the default choice says (no options)."""


@dataclass(frozen=True)
class SeenTile:
    """One detected tile in table coordinates: position along the rack and across it, its size."""

    code: str
    along: float
    across: float
    width: float  # extent along the rack, mm
    height: float  # extent across the rack, mm
    confidence: float = 1.0


def _median(values: Sequence[float], default: float) -> float:
    vals = sorted(v for v in values if v > 0)
    return vals[len(vals) // 2] if vals else default


def order_rows(tiles: Sequence[SeenTile]) -> list[list[int]]:
    """Indexes of ``tiles`` split into rows across the rack, each row ordered along it."""
    if not tiles:
        return []
    h = _median([t.height for t in tiles], 32.0)
    by_across = sorted(range(len(tiles)), key=lambda i: tiles[i].across)
    rows: list[list[int]] = [[by_across[0]]]
    for i in by_across[1:]:
        if tiles[i].across - tiles[rows[-1][-1]].across > 0.55 * h:
            rows.append([])
        rows[-1].append(i)
    return [sorted(r, key=lambda i: tiles[i].along) for r in rows]


def thin_row(along: Sequence[float], weight: Sequence[float], min_pitch: float) -> list[int]:
    """The heaviest subset of a row's tiles whose neighbours lie at least ``min_pitch`` apart.

    ``along`` are positions along the rack (any order), ``weight`` how sure the localiser is of
    each (positive).  Tiles on a rack cannot overlap, so two detections closer than a tile's
    pitch are one tile found twice, or a phantom between two real ones; weighted interval
    scheduling keeps the set that explains the row best.  Returns indexes in ``along`` order.
    """
    order = sorted(range(len(along)), key=lambda i: along[i])
    best: list[float] = []  # best[k]: heaviest choice among order[:k + 1] that takes order[k]
    back: list[int] = []
    for k, i in enumerate(order):
        prev = [j for j in range(k) if along[i] - along[order[j]] >= min_pitch]
        j = max(prev, key=lambda m: best[m], default=-1)
        best.append(weight[i] + (best[j] if j >= 0 else 0.0))
        back.append(j)
    if not order:
        return []
    k = max(range(len(order)), key=lambda m: best[m])
    kept = []
    while k >= 0:
        kept.append(order[k])
        k = back[k]
    return kept[::-1]


def touching_runs(tiles: Sequence[SeenTile], row: Sequence[int]) -> list[list[int]]:
    """Split one ordered row where neighbours do not touch."""
    if not row:
        return []
    w = _median([tiles[i].width for i in row], 24.0)
    runs: list[list[int]] = [[row[0]]]
    for prev, cur in zip(row, row[1:], strict=False):
        if tiles[cur].along - tiles[prev].along > TOUCH_RATIO * w:
            runs.append([])
        runs[-1].append(cur)
    return runs


def open_ends(tiles: Sequence[SeenTile], runs: Sequence[Sequence[int]]) -> list[tuple[bool, bool]]:
    """For each touching run of one row (:func:`touching_runs`), whether its first and its last
    exposure may go on into the neighbouring run: the gap lies within :data:`WEAK_GAP`."""
    w = _median([tiles[i].width for run in runs for i in run], 24.0)
    near = [tiles[b[0]].along - tiles[a[-1]].along <= WEAK_GAP * w for a, b in zip(runs, runs[1:], strict=False)]
    return [(j > 0 and near[j - 1], j < len(near) and near[j]) for j in range(len(runs))]


def _cut_default(codes: Sequence[str], segments: list[list[int]]) -> list[bool]:
    """For each soft gap between ``segments`` (positions into ``codes``): cut there by default?

    Two sides of one kind (or a side of jokers only) are one exposure split by the localiser's
    error: an exposure is one kind plus jokers, and no hand exposes the same tile twice.  Nor is
    a soft gap cut before jokers that a group too short to be an exposure needs, where the kind
    after them makes one without them (``8B 8B`` soft gap ``J 6B 6B 6B 6B``: read as touching,
    the rule's ``8B 8B J | 6B 6B 6B 6B``, not a pair; sixty-fourth session, :func:`_short_before_jokers`).
    """
    def kinds(seg: list[int]) -> list[str]:
        return [codes[i] for i in seg if codes[i] != JOKER]

    cuts = []
    for left, right in zip(segments, segments[1:], strict=False):
        a, b = kinds(left), kinds(right)
        cuts.append(bool(a and b and a[-1] != b[0]) and not _short_before_jokers([codes[i] for i in left],
                                                                                 [codes[i] for i in right]))
    return cuts


def _short_before_jokers(left: list[str], right: list[str]) -> bool:
    """``left``'s last group (its last kind and the jokers among it) is under a pung (3), and with the
    jokers that start ``right`` it is one, while the rest of ``right``'s first kind makes one too."""
    jokers = next((k for k, c in enumerate(right) if c != JOKER), len(right))
    kind = next((c for c in reversed(left) if c != JOKER), None)
    tail = 0
    for c in reversed(left):
        if c not in (kind, JOKER):
            break
        tail += 1
    rest = 0
    for c in right[jokers:]:
        if c not in (right[jokers], JOKER):
            break
        rest += 1
    return 0 < jokers and tail < 3 <= tail + jokers and rest >= 3  # 3: a pung


def run_options(tiles: Sequence[SeenTile], row: Sequence[int], limit: int = 16) -> list[list[list[int]]]:
    """Ways to cut one ordered row into touching runs, the default first.

    A gap wider than :data:`SOFT_GAP` always cuts, a narrower one never does; each gap within the
    band may go either way.  The default cuts a soft gap unless its two sides are one kind or
    one side is jokers only (:func:`_cut_default`).
    """
    if not row:
        return []
    w = _median([tiles[i].width for i in row], 24.0)
    lo, hi = SOFT_GAP
    hard: list[list[int]] = [[row[0]]]
    soft: list[list[int]] = [[]]  # per hard run: positions k (into the run) with a soft gap before
    weak: list[int] = []  # positions into ``hard`` (k > 0) whose gap before is weak
    for prev, cur in zip(row, row[1:], strict=False):
        gap = (tiles[cur].along - tiles[prev].along) / w
        if gap > hi:
            if gap <= WEAK_GAP or HOLE_GAP[0] <= gap <= HOLE_GAP[1]:
                weak.append(len(hard))
            hard.append([])
            soft.append([])
        elif gap > lo:
            soft[-1].append(len(hard[-1]))
        hard[-1].append(cur)
    hard, soft = _join_weak(tiles, hard, soft, weak)
    options: list[list[list[int]]] = [[]]
    for run, ks in zip(hard, soft, strict=True):
        codes = [tiles[i].code for i in run]
        bounds = [0, *ks, len(run)]
        segments = [list(range(a, b)) for a, b in zip(bounds, bounds[1:], strict=False)]
        default = _cut_default(codes, segments)
        choices = [default]
        if 0 < len(ks) <= MAX_SOFT:
            choices += [[bool(b >> j & 1) for j in range(len(ks))] for b in range(2 ** len(ks))]
            choices = [c for n, c in enumerate(choices) if c not in choices[:n]]
        cut_runs = []
        for cut in choices:
            parts: list[list[int]] = [[]]
            for j, seg in enumerate(segments):
                if j > 0 and cut[j - 1]:
                    parts.append([])
                parts[-1].extend(run[i] for i in seg)
            cut_runs.append(parts)
        options = [o + c for o in options for c in cut_runs][:limit]
    return options


def _join_weak(tiles: Sequence[SeenTile], hard: list[list[int]], soft: list[list[int]],
               weak: list[int]) -> tuple[list[list[int]], list[list[int]]]:
    """Hard runs parted by a weak gap (:data:`WEAK_GAP`, :data:`HOLE_GAP`) joined again, the gap
    made soft and cut by default, where one side is under 3 tiles and both sides are one kind (or
    one is jokers)."""
    def joinable(k: int) -> bool:  # judged on the runs as the gaps part them, before any join
        left, right = [tiles[i].code for i in hard[k - 1]], [tiles[i].code for i in hard[k]]
        a, b = [c for c in left if c != JOKER], [c for c in right if c != JOKER]
        return min(len(left), len(right)) < 3 and not (a and b and a[-1] != b[0])

    for k in sorted([k for k in weak if joinable(k)], reverse=True):
        at = len(hard[k - 1])
        soft[k - 1] = soft[k - 1] + [at] + [at + j for j in soft[k]]
        hard[k - 1] = hard[k - 1] + hard[k]
        del hard[k], soft[k]
    return hard, soft


def _segments(codes: Sequence[str]) -> tuple[list[list[int]], list[list[int]]]:
    """Runs of one natural kind, and the jokers lying before each run (plus trailing jokers)."""
    runs: list[list[int]] = []
    jokers: list[list[int]] = [[]]
    kind: str | None = None
    for i, code in enumerate(codes):
        if code == JOKER:
            jokers[-1].append(i)
        elif code == kind and not jokers[-1]:
            runs[-1].append(i)
        elif code == kind:
            runs[-1].extend(jokers[-1] + [i])
            jokers[-1] = []
        else:
            runs.append([i])
            jokers.append([])
            kind = code
    # jokers[0] lead, jokers[k] lie between runs k-1 and k, jokers[len(runs)] trail.
    return runs, jokers


def split_options(codes: Sequence[str], limit: int = 64) -> list[list[list[int]]]:
    """Every way to split one touching run by kind; jokers between two kinds may go either way.

    The first option gives boundary jokers to the earlier group, as the grouping rule reads from
    the start of the run: a run of one kind plus jokers is one group, and a tile of another kind
    starts the next (a joker changes no kind).  Physically the jokers are ambiguous: the caller
    picks the option the rules like best (never a dead hand when another reading is alive), and
    takes the first only where the rules cannot tell.
    """
    runs, jokers = _segments(codes)
    if not runs:
        return [[list(range(len(codes)))]] if codes else []
    lead, between, trail = jokers[0], jokers[1 : len(runs)], jokers[len(runs)]
    splits: list[list[int]] = [[]]
    for js in between:
        splits = [s + [m] for s in splits for m in range(len(js) + 1)][:limit]
    options = []
    for split in splits:
        groups = [list(lead) + runs[0]]
        for k, (js, m) in enumerate(zip(between, split, strict=True)):
            groups[-1].extend(js[:m])
            groups.append(js[m:] + runs[k + 1])
        groups[-1].extend(trail)
        options.append([sorted(g) for g in groups])
    default = _default_split(between, runs, lead, trail)
    options.sort(key=lambda o: o != default)
    return options


def _default_split(between: list[list[int]], runs: list[list[int]], lead: list[int],
                   trail: list[int]) -> list[list[int]]:
    groups = [list(lead) + runs[0]]
    for k, js in enumerate(between):
        groups[-1].extend(js)  # a joker changes no kind: the group goes on to the next kind
        groups.append(list(runs[k + 1]))
    groups[-1].extend(trail)
    return [sorted(g) for g in groups]


def split_kinds(codes: Sequence[str]) -> list[list[int]]:
    """Positions of one touching run split where the natural kind changes; jokers attached."""
    options = split_options(codes)
    return options[0] if options else []


def _is_chow(codes: Sequence[str]) -> bool:
    suits = {suit_of(c) for c in codes}
    ranks = sorted(rank_of(c) or 0 for c in codes)
    return len(codes) == 3 and len(suits) == 1 and None not in suits and ranks == list(range(ranks[0], ranks[0] + 3))


def merge_chows(codes: Sequence[str], groups: list[list[int]]) -> list[list[int]]:
    """Three consecutive single-tile groups of one suit in sequence become one chow."""
    out: list[list[int]] = []
    k = 0
    while k < len(groups):
        window = groups[k : k + 3]
        if len(window) == 3 and all(len(g) == 1 for g in window) and _is_chow([codes[g[0]] for g in window]):
            out.append([g[0] for g in window])
            k += 3
        else:
            out.append(groups[k])
            k += 1
    return out


def grouping_options(tiles: Sequence[SeenTile], chows: bool = False, limit: int = 64) -> list[list[list[int]]]:
    """Every plausible grouping of a rack's face-up tiles (indexes), the default one first.

    Options differ where a gap may or may not part two runs (:func:`run_options`) and where
    jokers sit between two kinds in a touching run (:func:`split_options`).
    """
    options: list[list[list[int]]] = [[]]
    for row in order_rows(tiles):
        row_options: list[list[list[int]]] = []
        for runs in run_options(tiles, row):
            per_run: list[list[list[int]]] = [[]]
            for run in runs:
                codes = [tiles[i].code for i in run]
                choices = []
                for groups in split_options(codes):
                    if chows:
                        groups = merge_chows(codes, groups)
                    choices.append([[run[j] for j in g] for g in groups])
                per_run = [o + c for o in per_run for c in choices][:limit]
            row_options += per_run
        options = [o + c for o in options for c in row_options][:limit]
    seen: dict[tuple[tuple[int, ...], ...], list[list[int]]] = {}
    for o in options:
        seen.setdefault(tuple(tuple(g) for g in o), o)
    return list(seen.values())


def group_exposures(tiles: Sequence[SeenTile], chows: bool = False) -> list[list[int]]:
    """Exposures as lists of indexes into ``tiles`` (face-up tiles of one rack), in reading order."""
    return grouping_options(tiles, chows)[0]
