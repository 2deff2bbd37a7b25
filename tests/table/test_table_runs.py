"""A rack row's runs recounted from their length and from the picture's stretches of tile."""

from __future__ import annotations

import pytest

from companion.table_runs import refit_extents, refit_runs

W = 24.0


def _extents(*extents: tuple[float, float]) -> tuple[list[float], list[float]]:
    return [a for a, _ in extents], [b for _, b in extents]


def test_refit_runs_splits_two_tiles_found_as_one() -> None:
    # three touching tiles (0-24, 25-49, 50-74): the first two found as one wide box
    lo, hi = _extents((0.0, 49.0), (50.5, 74.0))
    fits = refit_runs(lo, hi, W, 0.72 * W)
    assert len(fits) == 1
    run, centres = fits[0]
    assert run == [0, 1]
    assert [round(c) for c in centres] == [12, 37, 62]


def test_refit_runs_merges_one_tile_found_twice() -> None:
    # three touching tiles, the middle one found twice (centres 9 mm apart)
    lo, hi = _extents((0.0, 24.0), (21.0, 45.0), (30.0, 54.0), (50.0, 74.0))
    fits = refit_runs(lo, hi, W, 0.72 * W)
    assert len(fits) == 1 and fits[0][0] == [0, 1, 2, 3]
    assert [round(c) for c in fits[0][1]] == [12, 37, 62]


def test_refit_runs_lays_evenly_a_run_whose_count_fits_but_two_centres_crowd() -> None:
    # White Dragon, White Dragon, Joker (1920x1080 table 30; true centres 346, 370, 396): three
    # boxes over three tiles, but two of them 14 mm apart.  Thinning to one tile per pitch would
    # drop a real tile, so the three are laid evenly over the run instead
    fits = refit_runs(*_extents((340.6, 363.6), (353.0, 378.8), (385.2, 408.7)), W, 0.72 * W)
    assert len(fits) == 1 and fits[0][0] == [0, 1, 2]
    assert [round(c) for c in fits[0][1]] == [352, 375, 397]


def test_refit_runs_keeps_a_run_whole_across_a_gap_in_its_boxes() -> None:
    # four 3 Bams (1920x1080 table 30): five boxes, one tile found twice, and a 5 mm gap between
    # two boxes' ends; their centres lie 30 mm apart, closer than two exposures' tiles
    fits = refit_runs(*_extents((417.5, 443.1), (442.7, 466.1), (455.8, 480.7), (486.0, 511.0), (492.2, 517.9)),
                      W, 0.72 * W)
    assert len(fits) == 1 and fits[0][0] == [0, 1, 2, 3, 4]
    assert [round(c) for c in fits[0][1]] == [430, 455, 480, 505]


def test_refit_runs_leaves_consistent_and_unexplained_runs_alone() -> None:
    # a correct run, then 12 mm further a second correct run: nothing to refit
    assert refit_runs(*_extents((0.0, 24.0), (25.0, 49.0), (61.0, 85.0), (86.0, 110.0)), W, 0.72 * W) == []
    # a run 2.5 tiles long is no whole number of tiles: not trusted
    assert refit_runs(*_extents((0.0, 24.0), (36.0, 62.0)), W, 0.72 * W) == []
    # three boxes over what measures four tiles, evenly spaced (no hole, no long box): not refitted
    assert refit_runs(*_extents((0.0, 30.0), (33.0, 64.0), (66.0, 98.0)), W, 0.72 * W) == []
    assert refit_runs([], [], W, 0.72 * W) == []


def test_refit_extents_counts_a_run_from_the_picture_not_from_its_boxes() -> None:
    # four 3 Bams on black faces (fluffy-black, 1280x720, table 2): the localiser squeezed four
    # boxes over three tiles and missed the fourth; the picture shows tile from -642 to -541 mm,
    # then 6 mm of table, then three 5 Dots whose boxes agree with their stretch
    lo, hi = _extents((-618, -594), (-605, -580), (-591, -567), (-567, -541), (-533, -508), (-506, -485), (-482, -457))
    w = [0.7, 0.5, 0.4, 0.5, 0.9, 0.9, 0.9]
    fits = refit_extents(lo, hi, w, [(-642.5, -540.5, True), (-534.5, -456.5, True)], W, 0.72 * W)
    assert len(fits) == 1
    run, centres = fits[0]
    assert run == [0, 1, 2, 3]
    assert [round(c) for c in centres] == [-630, -604, -579, -553]


def test_refit_extents_lays_a_run_whose_boxes_are_off_their_tiles() -> None:
    # three tiles, 0-74 mm; the boxes sit a third of a tile off (a bamboo's sticks taken for edges)
    boxes = _extents((7.6, 31.6), (32.6, 56.6), (57.6, 81.6))
    fits = refit_extents(*boxes, [0.5] * 3, [(0.0, 74.0, True)], W, 0.72 * W)
    assert fits == [([0, 1, 2], pytest.approx([12.33, 37.0, 61.67], abs=0.01))]
    # five tiles whose boxes leave a gap of 8 mm inside the run, one the picture does not show
    # (fluffy-regular, 1920x1080, table 41: read `6B 6B | 6B 6B J`, flagged as a pair exposed)
    boxes = _extents((-546, -523), (-524, -497), (-489, -467), (-470, -446), (-444, -419))
    fits = refit_extents(*boxes, [0.8] * 5, [(-544.0, -418.0, True)], W, 0.72 * W)
    assert fits == [([0, 1, 2, 3, 4], pytest.approx([-531.4, -506.2, -481.0, -455.8, -430.6]))]
    # the same boxes on their tiles: left alone
    assert refit_extents(*_extents((0, 24), (25, 49), (50, 74)), [0.5] * 3, [(0.0, 74.0, True)], W, 0.72 * W) == []


def test_refit_extents_distrusts_stretches_it_cannot_measure() -> None:
    lo, hi = _extents((0, 24), (25, 49))
    # a stretch that runs out of the sampled span (no table at one end): not counted
    assert refit_extents(lo, hi, [0.5, 0.5], [(-10.0, 90.0, False)], W, 0.72 * W) == []
    # no whole number of tiles (2.5): not counted
    assert refit_extents(lo, hi, [0.5, 0.5], [(0.0, 62.0, True)], W, 0.72 * W) == []
    # a box overrunning the stretch's end by half a tile: a seam or a dark face was taken for table
    assert refit_extents(lo, hi, [0.5, 0.5], [(0.0, 37.0, True), (44.0, 95.0, True)], W, 0.72 * W) == []
    # ... or reaching into the next stretch by a third of a tile
    lo, hi = _extents((0, 24), (40, 64), (75, 99))
    assert refit_extents(lo, hi, [0.5] * 3, [(0.0, 49.0, True), (50.0, 99.0, True)], W, 0.72 * W) == []


def test_refit_extents_drops_a_phantom_on_the_table_between_two_runs() -> None:
    # two runs 14 mm apart and a box centred in the gap (1920x1080, table 35)
    lo, hi = _extents((0, 24), (25, 49), (50, 74), (64, 88), (89, 113), (114, 138))
    fits = refit_extents(lo, hi, [0.9] * 6, [(0.0, 49.0, True), (63.0, 137.0, True)], W, 0.72 * W)
    assert ([2], []) in fits
    assert all(2 not in run for run, placed in fits if placed)
    assert refit_extents(lo, hi, [0.9] * 6, [], W, 0.72 * W) == []  # nothing measured: nothing dropped
    # a sliver of a tile with no detection of its own beside the gap (a light face's end, 1280x720,
    # table 31: 8 Dots whose first tile read as a phantom)
    lo2, hi2 = _extents((-699, -677), (-677, -651), (-651, -627), (-624, -600))
    fits = refit_extents(lo2, hi2, [0.9] * 4, [(-699.0, -694.0, True), (-681.0, -600.0, True)], W, 0.72 * W)
    assert all(run != [0] for run, _ in fits)
    # a neighbour that is no whole number of tiles (a dark print split a tile, 1920x1080, table 13)
    fits = refit_extents(lo, hi, [0.9] * 6, [(0.0, 49.0, True), (63.0, 125.0, True)], W, 0.72 * W)
    assert all(run != [2] for run, _ in fits)
    # a gap a tile wide may hold a tile the picture could not tell from the table: kept
    lo, hi = _extents((0, 24), (25, 49), (50, 74), (76, 100), (101, 125), (126, 150))
    fits = refit_extents(lo, hi, [0.9] * 6, [(0.0, 49.0, True), (75.0, 149.0, True)], W, 0.72 * W)
    assert fits == []


def test_refit_extents_drops_a_tile_found_on_the_bare_rack_past_the_row() -> None:
    # four backs, 0-99 mm, found right, and a weak peak on the table 30 mm past their end (centre
    # 130 mm), as the localiser finds one at 3840x2160: it goes, and the row's tiles stay
    row = [(0.0, 24.0), (24.8, 48.8), (49.6, 73.6), (74.4, 98.4)]
    seen, bare = [(0.0, 99.2, True)], [(-60.0, -1.0), (100.5, 190.0)]
    phantom = _extents(*row, (118.0, 142.0))
    assert refit_extents(*phantom, [0.8] * 4 + [0.4], seen, W, 0.72 * W, table=bare) == [([4], [])]
    assert refit_extents(*_extents((-50.0, -26.0), *row), [0.4] + [0.8] * 4, seen, W, 0.72 * W,
                         table=bare) == [([0], [])]
    # not where the picture shows tile under it, nor a colour between tile and table (a green back
    # on green felt), nor where the row's end is not seen
    assert refit_extents(*phantom, [0.8] * 5, seen + [(118.0, 142.0, True)], W, 0.72 * W,
                         table=[(-60.0, -1.0), (100.5, 117.0)]) == []
    assert refit_extents(*phantom, [0.8] * 5, seen, W, 0.72 * W, table=[(-60.0, -1.0), (100.5, 120.0)]) == []
    # the felt's texture passing the table's bar here and there: two thirds of the middle half will do
    speckled = [(100.5, 127.0), (129.0, 133.0), (134.0, 190.0)]  # 9 of 124-136 mm
    assert refit_extents(*phantom, [0.8] * 5, seen, W, 0.72 * W, table=speckled) == [([4], [])]
    assert refit_extents(*phantom, [0.8] * 5, seen, W, 0.72 * W, table=[(100.5, 127.0), (131.0, 190.0)]) == [([4], [])]
    assert refit_extents(*phantom, [0.8] * 5, seen, W, 0.72 * W, table=[(100.5, 126.0), (132.0, 190.0)]) == []
    assert refit_extents(*phantom, [0.8] * 5, [(0.0, 99.2, False)], W, 0.72 * W, table=bare) == []
    # a peak on the felt overlapping the row's end tile (3840x2160, table 9: its centre 8 mm past
    # the row's measured end) goes too; not one centred within a quarter tile of that end
    assert refit_extents(*_extents(*row, (95.2, 119.2)), [0.8] * 5, seen, W, 0.72 * W, table=bare) == [([4], [])]
    assert refit_extents(*_extents(*row, (93.0, 117.0)), [0.8] * 5, seen, W, 0.72 * W, table=bare) == []
    # a row's only detection, on a row that shows no tile but table under it: the bare rack too
    assert refit_extents([118.0], [142.0], [0.4], [], W, 0.72 * W, table=[(90.0, 170.0)]) == [([0], [])]
    assert refit_extents([118.0], [142.0], [0.4], [], W, 0.72 * W, table=[]) == []
