"""A rack row's runs laid again where the localiser's count and the run's length disagree.

The localiser can box two touching tiles as one, or one tile twice.  :func:`refit_runs` recounts a
touching run from its extent on the rack; :func:`refit_extents` from the stretches of tile that
:func:`companion.table_extents.row_extents` measures on the picture, and drops a detection that
lies on the table between two runs.  Both lay the run's tiles again, evenly, over its length
(docs/table.md, "Runs recounted from their length" and "Runs counted on the picture");
:func:`companion.table_extents.refit_racks` applies them.
"""

from __future__ import annotations

from collections.abc import Sequence

from companion.table_group import SOFT_GAP, thin_row

RUN_TOUCH_MM = 4.0
"""Localised tiles of one rack row whose extents come within this many millimetres of each other
lie in one touching run (tiles of an exposure lie 0.3-1.5 mm apart, exposures about 10 mm)."""
RUN_STEP = 1.3
"""... and so do neighbours whose centres lie within this many tile widths, whatever their
extents: the localiser's boxes can leave 5-9 mm between two touching tiles (eighteenth session,
1920x1080 table 30), where two exposures' neighbouring tiles lie 1.42-1.83 widths apart."""
RUN_SLACK = 0.25
"""A run is recounted from its extent only when the extent is within this many tiles of a whole
number of them."""
RUN_JOINT_MM = 0.8
"""The gap assumed between touching tiles when a run's extent is turned into a count."""


def refit_runs(lo: Sequence[float], hi: Sequence[float], width: float, min_pitch: float,
               touch: float = RUN_TOUCH_MM, slack: float = RUN_SLACK,
               joint: float = RUN_JOINT_MM, step: float = RUN_STEP) -> list[tuple[list[int], list[float]]]:
    """Touching runs of one rack row whose detections contradict the run's length.

    ``lo``/``hi``: each localised tile's extent along the row (mm); ``width``: a tile's width;
    ``min_pitch``: the closest two tiles of a row can lie (centre to centre).  Tiles on a rack
    touch edge to edge, so a run that spans about n tile widths holds n tiles.  A run is refitted
    only when its extent is within ``slack`` of a whole number n of tiles and the detections show
    that they are miscounted or misplaced: for n no more than the detections, two centres closer
    than ``min_pitch`` (one tile found twice, a phantom between two, or, where the count agrees,
    a tile found off its place, which thinning to one tile per pitch would drop); for more, a hole
    of over 1.5 widths between neighbours or one box over 1.5 widths long (two tiles found as
    one).  Returns ``(indexes of the run's detections, centres along the row of the n tiles laid
    evenly over its extent)`` for each refitted run.
    """
    order = sorted(range(len(lo)), key=lambda i: (lo[i] + hi[i]) / 2)
    runs: list[list[int]] = []
    end, last = -float("inf"), -float("inf")
    for i in order:
        mid = (lo[i] + hi[i]) / 2
        if not runs or (lo[i] - end > touch and mid - last > step * width):
            runs.append([])
            end = hi[i]
        runs[-1].append(i)
        end, last = max(end, hi[i]), mid
    out: list[tuple[list[int], list[float]]] = []
    for run in runs:
        start, stop = min(lo[i] for i in run), max(hi[i] for i in run)
        span = stop - start
        x = (span + joint) / (width + joint)
        n = max(1, round(x))
        if abs(x - n) > slack:
            continue
        centres = sorted((lo[i] + hi[i]) / 2 for i in run)
        steps = [b - a for a, b in zip(centres, centres[1:], strict=False)]
        if n <= len(run):
            explained = bool(steps) and min(steps) < min_pitch
        else:
            explained = (bool(steps) and max(steps) > 1.5 * width) or max(hi[i] - lo[i] for i in run) > 1.5 * width
        if explained:
            out.append((sorted(run, key=lambda i: (lo[i] + hi[i]) / 2),
                        [start + span * (k + 0.5) / n for k in range(n)]))
    return out


EXTENT_SLACK = 0.2
"""A run's extent measured on the picture is trusted as a count only within this many tiles of a
whole number of them (a gap between two exposures, 10-20 mm, adds 0.37-0.77 of a tile)."""
EXTENT_OFF = 0.3
"""... and where the localiser's count agrees with it, the run is laid again only when a detection
lies this many tile widths off its place in the evenly laid run."""
PHANTOM_SLACK = 0.3
"""Two stretches each within this many tiles of a whole number of them (one or more, and each
holding a detection) part two runs for sure: a detection between them is a phantom.  A dark print
splits a tile into stretches of 2.5 and 0.4 (1920x1080, table 13), a light face's end shows as a
stretch of 0.23 tiles with none (1280x720, table 31)."""

BARE_SLACK = 0.25
"""A detection whose centre lies past a rack row's outermost stretch of tile, by this many tile
widths or more of table, is the bare rack the localiser took for a tile (:func:`refit_extents`) ..."""
BARE_SHARE = 2 / 3
"""... where this share of its middle half shows bare table (a sample or two of the felt's
texture can pass the table's bar: 9 mm of 12 on `american-synth`, 2560x1440, table 18)."""


def refit_extents(lo: Sequence[float], hi: Sequence[float], weight: Sequence[float],
                  extents: Sequence[tuple[float, float, bool]], width: float, min_pitch: float,
                  slack: float = EXTENT_SLACK, off: float = EXTENT_OFF, gap: float = SOFT_GAP[0],
                  joint: float = RUN_JOINT_MM, table: Sequence[tuple[float, float]] = ()
                  ) -> list[tuple[list[int], list[float]]]:
    """Touching runs of one rack row counted from their extents as the picture shows them.

    ``lo``/``hi``/``weight``: each of the row's detections' extent along it (mm) and how sure the
    localiser is of it; ``extents``: stretches along the row (mm) where the picture shows tile,
    not table, and whether table shows at both their ends (:func:`companion.table_extents.row_extents`).
    Tiles on a rack touch edge to edge, so a stretch about n tile widths long holds n tiles,
    whatever the localiser's boxes say: bamboo sticks and dark faces pull its boxes between
    tiles, squeeze four into three or lose the end one (`fluffy-black` faces at 1280x720,
    twentieth session).  A closed stretch holding at least one detection's centre and within
    ``slack`` of a whole number n of tiles is laid again when the row, thinned to one tile per
    ``min_pitch``, holds another number of tiles there, or as many with one of them ``off`` tile
    widths from its place or two of them a gap apart (:data:`SOFT_GAP`) that the picture does not
    show.  A stretch that one of its boxes overruns by a third of a tile, or another box reaches
    into by a quarter (a seam or a dark face taken for table), is not trusted.  A detection
    centred in a gap of table too narrow for a tile, between two stretches that each hold a
    detection's centre and measure a whole number of tiles, one or more (:data:`PHANTOM_SLACK`),
    is a phantom between two runs, and goes; so does one on the bare rack past the row's ends
    (``table``: where the picture shows bare table along the row, :func:`_bare`).
    Returns ``(indexes of the stretch's detections, centres of the n tiles laid evenly over it)``
    for each stretch laid again, and ``([index], [])`` for each phantom.
    """
    centres = [(a + b) / 2 for a, b in zip(lo, hi, strict=True)]
    ordered = sorted(extents)
    counts = [(b - a + joint) / (width + joint) for a, b, _ in ordered]
    whole = [round(x) >= 1 and abs(x - round(x)) <= PHANTOM_SLACK
             and any(a <= c <= b for c in centres) for x, (a, b, _) in zip(counts, ordered, strict=True)]
    narrow = [(a[1], b[0]) for k, (a, b) in enumerate(zip(ordered, ordered[1:], strict=False))
              if b[0] - a[1] < 0.9 * width and whole[k] and whole[k + 1]]
    out: list[tuple[list[int], list[float]]] = [([i], []) for i, c in enumerate(centres)
                                                if any(a < c < b for a, b in narrow)]
    out += _bare(centres, ordered, whole, width, table)
    for (start, stop, closed), x in zip(ordered, counts, strict=True):
        members = [i for i, c in enumerate(centres) if start <= c <= stop]
        n = max(1, round(x))
        if not closed or not members or abs(x - n) > slack:
            continue
        crossed = any(lo[i] < start - width / 3 or hi[i] > stop + width / 3 if start <= centres[i] <= stop
                      else min(hi[i], stop) - max(lo[i], start) > width / 4 for i in range(len(centres)))
        if crossed:
            continue
        span = stop - start
        placed = [start + span * (k + 0.5) / n for k in range(n)]
        kept = [members[k] for k in thin_row([centres[i] for i in members], [weight[i] for i in members], min_pitch)]
        if len(kept) == n:
            seen = sorted(centres[i] for i in kept)
            gaps = [b - a for a, b in zip(seen, seen[1:], strict=False)]
            if (max(abs(a - b) for a, b in zip(seen, placed, strict=True)) <= off * width
                    and max(gaps, default=0.0) <= gap * width):
                continue
        out.append((sorted(members, key=lambda i: centres[i]), placed))
    return out


def _bare(centres: Sequence[float], ordered: Sequence[tuple[float, float, bool]], whole: Sequence[bool],
          width: float, table: Sequence[tuple[float, float]],
          slack: float = BARE_SLACK) -> list[tuple[list[int], list[float]]]:
    """Phantoms on the bare rack: each detection whose middle half lies on bare ``table`` (mm
    along the row; :data:`BARE_SHARE` of it), centred ``slack`` tile widths or more beyond the
    row's first or last stretch of tile, where that stretch is closed and holds a whole number of
    tiles with a detection (``whole``); or a row's only detection, where the row shows no tile at
    all.  In 2560x1440 and 3840x2160 frames the localiser finds a weak peak on the bare rack past
    a row of backs, read as one more back (sixty-second session, docs/table.md, "A back on the
    bare rack past its row")."""
    def bare(c: float) -> bool:  # the share of the middle half of a tile at c on table
        lo, hi = c - width / 4, c + width / 4
        return sum(max(0.0, min(hi, b) - max(lo, a)) for a, b in table) >= BARE_SHARE * (hi - lo)

    if not ordered:
        return [([0], [])] if len(centres) == 1 and bare(centres[0]) else []
    (first, _, shut0), (_, last, shut1) = ordered[0], ordered[-1]
    return [([i], []) for i, c in enumerate(centres)
            if bare(c) and ((c < first - slack * width and shut0 and whole[0])
                            or (c > last + slack * width and shut1 and whole[-1]))]
