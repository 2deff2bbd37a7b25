"""Grouping rack tiles into exposures: pure cases, then rendered racks with gaps and touching runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from table_helpers import CARD, exps, flags_of, player, read, table

from companion.rules.card import load_card
from companion.rules.card_model import Card
from companion.rules.tiles import parse_tiles
from companion.table import TableReader
from companion.table_group import (
    SeenTile,
    group_exposures,
    grouping_options,
    merge_chows,
    open_ends,
    split_kinds,
    touching_runs,
)
from vision.layout import load_layout
from vision.render import RackScene

SIAMESE_LAYOUT = load_layout("siamese-2")


@pytest.mark.parametrize(
    ("codes", "groups"),
    [
        ("5D 5D 5D", [[0, 1, 2]]),
        ("5D 5D 5D 8C 8C", [[0, 1, 2], [3, 4]]),
        ("5D 5D J 8C 8C 8C", [[0, 1, 2], [3, 4, 5]]),  # a joker changes no kind: the group goes on
        ("5D 5D 5D J 8C 8C 8C", [[0, 1, 2, 3], [4, 5, 6]]),  # a full pung keeps it too
        ("5D 5D 5D J J 8C 8C 8C", [[0, 1, 2, 3, 4], [5, 6, 7]]),
        ("J J 5D", [[0, 1, 2]]),
        ("5D J J", [[0, 1, 2]]),
        ("J", [[0]]),
    ],
)
def test_split_kinds(codes: str, groups: list[list[int]]) -> None:
    assert split_kinds(parse_tiles(codes)) == groups


def test_chows_merge_only_sequences_of_one_suit() -> None:
    codes = parse_tiles("1B 2B 3B 4C 5D 6D")
    assert merge_chows(codes, split_kinds(codes)) == [[0, 1, 2], [3], [4], [5]]


def _row(codes: str, gaps: list[float]) -> list[SeenTile]:
    out, x = [], 0.0
    for code, gap in zip(parse_tiles(codes), [0.0, *gaps], strict=True):
        x += gap + 24.0
        out.append(SeenTile(code, x, 0.0, 24.0, 32.0))
    return out


def test_gap_splits_same_kind_and_order_follows_the_rack() -> None:
    tiles = _row("2C 2C 2C 2C J J", [1, 1, 12, 1, 1])
    assert group_exposures(tiles) == [[0, 1, 2], [3, 4, 5]]
    assert group_exposures(list(reversed(tiles))) == [[5, 4, 3], [2, 1, 0]]


@pytest.mark.parametrize(
    ("codes", "gaps", "options"),
    [
        # a kong whose middle gap measured 7 mm (the localiser's error): one kind, one exposure,
        # and the cut reading is kept as an option for the rules to weigh
        ("6B 6B 6B 6B", [1, 7, 1], [[[0, 1, 2, 3]], [[0, 1], [2, 3]]]),
        ("5B 5B 5B J", [1, 1, 7], [[[0, 1, 2, 3]], [[0, 1, 2], [3]]]),  # a joker alone is no exposure
        ("5B 5B 5B 7D 7D 7D", [1, 1, 7, 1, 1], [[[0, 1, 2], [3, 4, 5]]]),  # a change of kind cuts
        ("6B 6B 6B 6B", [1, 20, 1], [[[0, 1], [2, 3]]]),  # past 1.6 widths: apart, whatever the kinds
        # 1.5 widths (a 12 mm gap): apart, unless a side is too short to be an exposure alone
        ("6B 6B 6B 6B", [1, 1, 12], [[[0, 1, 2, 3]], [[0, 1, 2], [3]]]),
        ("5B 5B 5B 5B J J", [1, 1, 12, 1, 1], [[[0, 1, 2], [3, 4, 5]]]),
        ("6B 6B 6B 6B", [1, 2, 1], [[[0, 1, 2, 3]]]),  # below it: touching
        # a hole about one tile wide (2.0 widths): a tile may be missing, so a short side may join
        ("6D 6D J", [25, 1], [[[0, 1, 2]], [[0], [1, 2]]]),
        ("6D 6D 6D 6D J", [1, 1, 25, 1], [[[0, 1, 2, 3, 4]], [[0, 1, 2], [3, 4]]]),
        ("6D 6D 6D 6D 6D 6D", [1, 1, 25, 1, 1], [[[0, 1, 2], [3, 4, 5]]]),  # both sides exposures
        ("5B 5B 6D J", [1, 25, 1], [[[0, 1], [2, 3]]]),  # other kinds
        ("6D 6D J", [34, 1], [[[0], [1, 2]]]),  # 2.4 widths: apart
    ],
)
def test_a_gap_in_the_soft_band_is_read_both_ways(codes: str, gaps: list[float], options: list[list[list[int]]]) -> None:
    assert grouping_options(_row(codes, gaps)) == options


def test_each_gap_is_judged_on_the_runs_it_parts_before_any_join() -> None:
    """A kong of 3 Bams parted by a weak gap from its fourth tile, then a soft gap to a 5 Dot and a
    hole to the other: joining the 5 Dots first must not make the 3 Bam's side look long enough to
    stand alone (seventeenth session, ``km-jade`` enrolled at 1280x720: the kong was lost)."""
    options = grouping_options(_row("3B 3B 3B 3B 5D 5D", [1, 1, 9, 8, 27]))
    assert [[0, 1, 2, 3], [4, 5]] in options
    assert [[0, 1, 2], [3], [4, 5]] in options


@pytest.mark.parametrize(("codes", "gaps", "groups"), [
    # a soft gap (1.21 widths) before a joker that the short group before it needs: read touching
    ("8B 8B J 6B 6B 6B 6B", [1, 5, 1, 1, 1, 1], [[0, 1, 2], [3, 4, 5, 6]]),
    ("S J S S S 8B 8B J 6B 6B 6B 6B", [1, 1, 1, 1, 5, 1, 5, 1, 1, 1, 1], [[0, 1, 2, 3, 4], [5, 6, 7], [8, 9, 10, 11]]),
    # cut as before: the group before is whole, the kind after is no pung without the joker, or apart
    ("8B 8B 8B J 6B 6B 6B", [1, 1, 5, 1, 1, 1], [[0, 1, 2], [3, 4, 5, 6]]),
    ("8B 8B J 6B 6B", [1, 5, 1, 1], [[0, 1], [2, 3, 4]]),
    ("8B 8B J 6B 6B 6B 6B", [1, 20, 1, 1, 1, 1], [[0, 1], [2, 3, 4, 5, 6]]),
])
def test_a_soft_gap_is_not_cut_before_the_jokers_a_short_group_needs(codes: str, gaps: list[float],
                                                                     groups: list[list[int]]) -> None:
    """A gap the localiser may have widened (within SOFT_GAP) before a joker: read as touching,
    as the grouping rule reads touching tiles, where the group before it is too short to be an
    exposure and the kind after the joker makes one without it (``american:km-jade`` table 28 at
    1920x1080: ``8B 8B J`` was read ``8B 8B | J 6B 6B 6B 6B`` and a pair was flagged)."""
    assert group_exposures(_row(codes, gaps)) == groups


def test_a_runs_end_is_open_only_towards_a_near_run() -> None:
    """Runs 6 mm (1.25 widths, centre to centre) and 12 mm (1.5) apart may be one exposure split by the localiser;
    20 mm (1.83) apart they are not: the chain weighs an exposure's length only at closed ends."""
    tiles = _row("5B 5B 5B 5B 7D 7D 7D 7D", [1, 1, 6, 1, 12, 1, 20])
    runs = [[0, 1, 2], [3, 4], [5, 6], [7]]
    assert touching_runs(tiles, list(range(8))) == runs
    assert open_ends(tiles, runs) == [(False, True), (True, True), (True, False), (False, False)]


def test_two_rows_are_read_separately() -> None:
    front = _row("N N N", [1, 1])
    back = [SeenTile(t.code, t.along, 34.0, 24.0, 32.0) for t in _row("E E E", [1, 1])]
    assert group_exposures(front + back) == [[0, 1, 2], [3, 4, 5]]


def test_rendered_gaps_and_touching_runs() -> None:
    p1 = {"P1-A": RackScene(exps("2C 2C 2C", "2C J J"), 5), "P1-B": RackScene(exps("5D 5D 5D", "J 8C 8C", "N N N N"), 5, touching=True)}
    obs = read(table(p1, player("P2", exps("W W W"), exps("6B 6B 6B 6B"))), count_backs=False)
    assert obs.zones["P1-A"].exposures == exps("2C 2C 2C", "2C J J")
    # laid touching, the joker may end the kong of 5s or start the pung of 8s: read the second way
    # the hand is dead on this card, read the first a pair is exposed; as many flags either way,
    # and no card hand takes either, so the joker goes on with the group before it
    assert obs.zones["P1-B"].exposures == exps("5D 5D 5D J", "8C 8C", "N N N N")
    assert [f.kind for f in obs.flags if f.zone == "P1-B"] == ["tile_count"]
    unambiguous = read(table({**p1, "P1-B": RackScene(exps("5D 5D 5D", "J 8C 8C", "N N N N"), 5)},
                             player("P2", exps("W W W"), exps("6B 6B 6B 6B"))), count_backs=False)
    assert unambiguous.zones["P1-B"].exposures == exps("5D 5D 5D", "J 8C 8C", "N N N N")  # laid apart
    assert [f.kind for f in unambiguous.flags if f.zone == "P1-B"] == ["wrong_rack"]
    # player 2 faces player 1: their reading order runs the other way across the image
    assert obs.zones["P2-A"].exposures == exps("W W W")
    assert obs.zones["P2-B"].exposures == exps("6B 6B 6B 6B")


@pytest.mark.parametrize("card", [None, CARD])
def test_a_joker_at_a_seam_goes_on_with_the_group_before_it_where_the_rules_cannot_tell(card: Card | None) -> None:
    """``4D 4D 4D 4D J 3C 3C 3C 3C`` and ``8C 8C 8C J W W W W J 9B 9B 9B`` laid touching: both
    ways of reading each are legal groups, and no card hand (or no card) tells them apart, so the
    joker goes on with the group before it, as a run of one kind plus jokers is read until a tile
    of another kind starts the next."""
    p1 = {"P1-A": RackScene(exps("4D 4D 4D 4D J", "3C 3C 3C 3C"), 5, touching=True),
          "P1-B": RackScene(exps("8C 8C 8C J", "W W W W J", "9B 9B 9B"), 1, touching=True)}
    obs = read(table(p1), card=card, count_backs=False)
    assert obs.zones["P1-A"].exposures == exps("4D 4D 4D 4D J", "3C 3C 3C 3C")
    assert obs.zones["P1-B"].exposures == exps("8C 8C 8C J", "W W W W J", "9B 9B 9B")


@pytest.mark.parametrize("more", ["quint of flowers", "quint of twos"])
def test_the_card_does_not_move_a_seam_joker_against_the_grouping_rule(tmp_path: Path, more: str) -> None:
    """``F F F F J 2B 2B 2B 2B`` laid touching: the joker makes a quint of flowers or of 2s.  Two
    hands of the card take one of them with a kong of the other and one hand the other way round;
    both readings are alive, so no flag chooses, and the grouping rule reads the run: the joker
    goes on with the flowers, whichever way more hands go (the card chose until the twenty-sixth
    session).  Where only one reading is alive, that one is read."""
    flowers_quint = ['hand a1 "A1" : FFFFF 2222g 333r NN ; exposed ; 25\n',
                     'hand a2 "A2" : FFFFF 2222g 444r SS ; exposed ; 25\n']
    twos_quint = ['hand b1 "B1" : FFFF 22222g 333r NN ; exposed ; 25\n',
                  'hand b2 "B2" : FFFF 22222g 444r SS ; exposed ; 25\n']
    lines = flowers_quint + twos_quint[:1] if more == "quint of flowers" else flowers_quint[:1] + twos_quint
    card = tmp_path / "seam.mjcard"
    card.write_text('card "seam" copies=4\n' + "".join(lines))
    rack = RackScene(exps("F F F F J", "2B 2B 2B 2B"), 5, touching=True)
    obs = read(table({"P1-A": rack, "P1-B": RackScene((), 13)}), card=load_card(card), count_backs=False)
    assert obs.zones["P1-A"].exposures == exps("F F F F J", "2B 2B 2B 2B")
    assert not flags_of(obs, "wrong_rack")
    only_twos = tmp_path / "twos.mjcard"
    only_twos.write_text('card "twos" copies=4\n' + "".join(twos_quint))
    obs = read(table({"P1-A": rack, "P1-B": RackScene((), 13)}), card=load_card(only_twos), count_backs=False)
    assert obs.zones["P1-A"].exposures == exps("F F F F", "J 2B 2B 2B 2B")  # the rule's reading is dead here
    assert not flags_of(obs, "wrong_rack")


def _top_down_row(spans: list[tuple[float, float]], seams: bool = True,
                  face: tuple[int, int, int] = (200, 225, 235)) -> tuple[np.ndarray, np.ndarray]:
    """A top-down view of the whole siamese-2 table at 0.83 px/mm, felt green, with tiles of colour
    ``face`` at ``spans`` (mm along P1-A's row, about its centre), a dark seam between touching
    tiles and a dark print on each face; returns the image and its pixels-to-mm homography."""
    import cv2

    from companion.table import RECTIFIED_PX_PER_MM, TILE_MM

    s = RECTIFIED_PX_PER_MM
    wmm, hmm = SIAMESE_LAYOUT.table_mm
    top = np.zeros((round(hmm * s), round(wmm * s), 3), np.uint8)
    top[:] = (40, 110, 30)
    zone = next(z for z in SIAMESE_LAYOUT.zones if z.name == "P1-A")
    axis, perp = (v.astype(np.float64) for v in SIAMESE_LAYOUT.reading_axes(zone))
    centre = np.asarray(zone.polygon_mm, np.float64).mean(axis=0)
    for a, b in spans:
        for k in range(round((b - a + 0.8) / (TILE_MM[0] + 0.8))):
            u0 = a + k * (TILE_MM[0] + 0.8)
            quad = np.stack([centre + axis * u + perp * v for u, v in
                             ((u0, -16), (u0 + TILE_MM[0], -16), (u0 + TILE_MM[0], 16), (u0, 16))]) * s
            cv2.fillConvexPoly(top, np.round(quad).astype(np.int32), face)
            if seams:
                cv2.polylines(top, [np.round(quad).astype(np.int32)], True, (90, 110, 120), 1)
            print_at = (centre + axis * (u0 + TILE_MM[0] / 2)) * s
            cv2.circle(top, tuple(int(round(v)) for v in print_at), 5, (60, 40, 30), -1)
    return top, np.diag([1 / s, 1 / s, 1.0])


def test_row_extents_finds_the_runs_on_the_picture() -> None:
    from companion.table import RECTIFIED_PX_PER_MM
    from companion.table_extents import row_extents, zone_background

    top, to_table = _top_down_row([(-100.0, -1.6), (12.0, 86.4)])  # four tiles, 13.6 mm, three tiles
    zone = next(z for z in SIAMESE_LAYOUT.zones if z.name == "P1-A")
    axis, perp = (v.astype(np.float64) for v in SIAMESE_LAYOUT.reading_axes(zone))
    centre = np.asarray(zone.polygon_mm, np.float64).mean(axis=0)
    to_top = np.linalg.inv(to_table)
    background = zone_background(top, to_top, zone, np.zeros((0, 4, 2)))
    assert background is not None
    lo, hi = np.array([-90.0, 60.0]), np.array([-66.0, 84.0])  # two boxes, one in each run
    got = row_extents(top, to_top, axis, perp, float(centre @ perp), lo + centre @ axis, hi + centre @ axis, background)
    spans = [(a - centre @ axis, b - centre @ axis) for a, b, closed in got if closed]
    assert len(spans) == 2, got
    assert spans[0] == pytest.approx((-100.0, -1.6), abs=2.0)
    assert spans[1] == pytest.approx((12.0, 86.4), abs=2.0)
    # the localiser found only the first tile of each run: the runs are still measured to their ends
    first = row_extents(top, to_top, axis, perp, float(centre @ perp), np.array([-100.0, 12.0]) + centre @ axis,
                        np.array([-76.0, 36.0]) + centre @ axis, background)
    assert [(round(a - centre @ axis), round(b - centre @ axis)) for a, b, closed in first if closed] == [
        (round(x), round(y)) for x, y in spans]
    # a face with a broad band of dark print across it, 0.3 of the way from the table's colour: a tile
    # still, not a gap between two (under 4 mm of it is table)
    import cv2

    u = (-100.0 + 2 * 24.8 + 9.0, -100.0 + 2 * 24.8 + 15.0)  # 6 mm of the third tile
    band = np.stack([centre + axis * a + perp * v for a, v in ((u[0], -16), (u[1], -16), (u[1], 16), (u[0], 16))])
    cv2.fillConvexPoly(top, np.round(band * RECTIFIED_PX_PER_MM).astype(np.int32), (88, 144, 92))
    got = row_extents(top, to_top, axis, perp, float(centre @ perp), lo + centre @ axis, hi + centre @ axis, background)
    assert [round(b - a) for a, b, closed in got if closed][:1] == [98], got
    # tiles too like the table to tell their ends: nothing measured
    top, _ = _top_down_row([(-100.0, -1.6), (12.0, 86.4)], seams=False, face=(52, 125, 40))
    assert row_extents(top, to_top, axis, perp, float(centre @ perp), lo + centre @ axis, hi + centre @ axis,
                       zone_background(top, to_top, zone, np.zeros((0, 4, 2)))) == []


def test_refit_racks_counts_a_run_from_the_picture() -> None:
    from companion.table_extents import refit_racks

    top, to_table = _top_down_row([(-50.0, 49.2)])  # four touching tiles
    zone = next(z for z in SIAMESE_LAYOUT.zones if z.name == "P1-A")
    axis, perp = (v.astype(np.float64) for v in SIAMESE_LAYOUT.reading_axes(zone))
    centre = np.asarray(zone.polygon_mm, np.float64).mean(axis=0)

    def quad(u0: float, u1: float) -> np.ndarray:
        a, b = centre + axis * u0, centre + axis * u1
        return np.stack([a - perp * 16, b - perp * 16, b + perp * 16, a + perp * 16])

    # three boxes squeezed over the first three tiles: their own length says three
    quads = np.stack([quad(-50.0, -26.0), quad(-27.0, -3.0), quad(-2.0, 22.0)])
    weight = np.array([0.8, 0.5, 0.6], np.float32)
    assert len(refit_racks(SIAMESE_LAYOUT, quads, weight)[0]) == 3
    out, w = refit_racks(SIAMESE_LAYOUT, quads, weight, top, to_table)
    along = sorted(float((q.mean(axis=0) - centre) @ axis) for q in out)
    assert along == pytest.approx([-37.6, -12.8, 12.0, 36.8], abs=2.0)
    assert np.allclose(w, weight.mean())

    # two pungs 14 mm apart, each found right, and a phantom box on the table between them: it
    # goes, and nothing else moves
    top, to_table = _top_down_row([(-80.0, -6.4), (7.6, 81.2)])
    starts = [-80.0, -55.2, -30.4, 7.6, 32.4, 57.2]
    quads = np.stack([quad(a, a + 24.0) for a in starts] + [quad(-11.4, 12.6)])
    out, w = refit_racks(SIAMESE_LAYOUT, quads, np.full(7, 0.7, np.float32), top, to_table)
    assert len(out) == 6 and np.allclose(out, quads[:6])

    # a long row of eight backs of which the localiser found the last two: the row runs past the
    # four tiles sampled beyond them, so it is sampled again as far as the rack (Royale table 3)
    top, to_table = _top_down_row([(-100.0, 93.6)], face=(40, 120, 240))
    quads = np.stack([quad(44.8, 68.8), quad(69.6, 93.6)])
    out, _ = refit_racks(SIAMESE_LAYOUT, quads, np.full(2, 0.4, np.float32), top, to_table)
    along = sorted(float((q.mean(axis=0) - centre) @ axis) for q in out)
    assert along == pytest.approx([-100.0 + 12.0 + 24.8 * k for k in range(8)], abs=2.0)

    # four backs and a box on the bare felt 30 mm past them: it goes; a back standing there is kept
    four = [quad(-50.0 + 24.8 * k, -26.0 + 24.8 * k) for k in range(4)] + [quad(79.2, 103.2)]
    top, to_table = _top_down_row([(-50.0, 49.2)], face=(40, 120, 240))
    assert len(refit_racks(SIAMESE_LAYOUT, np.stack(four), np.full(5, 0.5, np.float32), top, to_table)[0]) == 4
    top, to_table = _top_down_row([(-50.0, 49.2), (79.2, 103.2)], face=(40, 120, 240))
    assert len(refit_racks(SIAMESE_LAYOUT, np.stack(four), np.full(5, 0.5, np.float32), top, to_table)[0]) == 5


def test_refit_racks_lays_a_miscounted_run_again_on_its_rack() -> None:
    from companion.table_extents import refit_racks

    zone = next(z for z in SIAMESE_LAYOUT.zones if z.name == "P1-A")
    axis, perp = (v.astype(np.float64) for v in SIAMESE_LAYOUT.reading_axes(zone))
    centre = np.asarray(zone.polygon_mm, np.float64).mean(axis=0)

    def quad(u0: float, u1: float) -> np.ndarray:
        a, b = centre + axis * u0, centre + axis * u1
        t = perp * 16.0
        return np.stack([a - t, b - t, b + t, a + t])

    # three touching tiles seen as one wide box and one normal box, plus a discard elsewhere
    discard = np.array([[400.0, 400.0], [424.0, 400.0], [424.0, 432.0], [400.0, 432.0]])
    quads = np.stack([quad(-37.0, 12.0), quad(13.5, 37.0), discard])
    out, weight = refit_racks(SIAMESE_LAYOUT, quads, np.array([0.6, 0.8, 0.9], np.float32))
    assert len(out) == 4
    assert np.allclose(out[0], discard) and weight[0] == pytest.approx(0.9)
    along = sorted(float((q.mean(axis=0) - centre) @ axis) for q in out[1:])
    assert along == pytest.approx([-74 / 3, 0.0, 74 / 3], abs=0.01)
    assert np.allclose(weight[1:], 0.7)


def test_loose_tiles_are_turned_to_their_edges_and_rack_tiles_left_square() -> None:
    import cv2

    from companion.table import RECTIFIED_PX_PER_MM, TILE_MM, turn_loose_tiles
    from vision.detect import quad_params, rect_quads

    s = RECTIFIED_PX_PER_MM  # a top-down image of the whole table, (0, 0) mm at pixel (0, 0)
    to_table = np.diag([1 / s, 1 / s, 1.0])
    top = np.zeros((round(900 * s), round(900 * s), 3), np.uint8)
    top[:] = (40, 110, 30)
    centres_mm = np.array([[300.0, 400.0], [500.0, 500.0], [400.0, 845.0]])  # two discards, a rack tile
    angles = np.radians([25.0, -40.0, 15.0])
    w, h = TILE_MM[0] * s, TILE_MM[1] * s
    drawn = rect_quads(centres_mm[:, 0] * s, centres_mm[:, 1] * s, np.full(3, w), np.full(3, h), angles)
    for q in drawn:
        cv2.fillConvexPoly(top, q.astype(np.int32), (215, 230, 235))
    upright = rect_quads(centres_mm[:, 0] * s, centres_mm[:, 1] * s, np.full(3, w), np.full(3, h), np.zeros(3))
    in_mm = (upright / s).astype(np.float32)
    q_top, q_mm = turn_loose_tiles(SIAMESE_LAYOUT, top, upright, in_mm, to_table)
    got = np.degrees(quad_params(q_top)[:, 4])
    assert abs(got[0] - 25) < 3 and abs(got[1] + 40) < 3, got
    assert np.allclose(q_top[2], upright[2])  # on a rack: snap_quads squares it to the rack
    assert np.allclose(q_mm, q_top / s, atol=1e-3)
    empty = np.zeros((0, 4, 2), np.float32)
    assert turn_loose_tiles(SIAMESE_LAYOUT, top, empty, empty, to_table)[0].shape == (0, 4, 2)


def test_a_tile_missed_inside_an_exposure_makes_no_false_flag() -> None:
    """The camera misses the second 5 Dot of ``5D 5D 5D J``: the hole is about one tile wide, so
    ``5D | 5D J`` is also read ``5D 5D J``, and the rack is not flagged for a single exposed or a
    joker in a pair; the player's count, one short, is (seventeenth session: ``km-jade`` enrolled,
    1280x720, a kong of 6 Dots flagged twice)."""
    r = table(player("P1", exps("5B J 5B", "5D 5D 5D J")))
    whole = read(r)
    assert whole.zones["P1-A"].exposures == exps("5B J 5B", "5D 5D 5D J")
    assert not [f for f in whole.flags if f.kind != "view"]
    det = r.detections()
    fives = [i for i, t in enumerate(r.tiles) if t.zone == "P1-A" and t.code == "5D"]
    missed = TableReader(r.layout, card=CARD).read(r.image, det[np.arange(len(det)) != fives[1]])
    assert missed.zones["P1-A"].exposures == exps("5B J 5B", "5D 5D J")
    judged = [f.message for f in missed.flags if f.kind in ("tile_count", "joker", "wrong_rack")]
    assert len(judged) == 1 and judged[0].startswith("player 1 shows 26 tiles")  # the count alone


def test_a_loose_tile_with_a_faint_outline_on_a_busy_cloth_is_turned_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """A light tile on a mottled cloth of nearly its shade: under the photos' bar (ANGLE_COHERENCE)
    too little of the gradient energy around it agrees on its edges, and it stays upright; a discard,
    which lies any way, is turned at LOOSE_TILE_COHERENCE."""
    import cv2

    import companion.table_zones as zones
    from companion.table import RECTIFIED_PX_PER_MM, TILE_MM, turn_loose_tiles
    from vision.detect import ANGLE_COHERENCE, quad_params, rect_quads

    s = RECTIFIED_PX_PER_MM
    to_table = np.diag([1 / s, 1 / s, 1.0])
    rng = np.random.default_rng(0)
    cloth = cv2.GaussianBlur(rng.normal(0, 1, (round(900 * s), round(900 * s))).astype(np.float32), (0, 0), 2.0)
    cloth = 80 + 20 * cloth / cloth.std()
    x, y, w, h = 300 * s, 400 * s, TILE_MM[0] * s, TILE_MM[1] * s
    tile = rect_quads(np.array([x]), np.array([y]), np.array([w]), np.array([h]), np.radians([25.0]))[0]
    face = np.zeros(cloth.shape, np.uint8)
    cv2.fillConvexPoly(face, tile.astype(np.int32), 1)
    grey = np.clip(np.where(face > 0, 0.3 * cloth + 105, cloth), 0, 255).astype(np.uint8)
    top = np.repeat(grey[..., None], 3, axis=2)
    upright = rect_quads(np.array([x]), np.array([y]), np.array([w]), np.array([h]), np.zeros(1)).astype(np.float32)

    def angle() -> float:
        q_top, _ = turn_loose_tiles(SIAMESE_LAYOUT, top, upright, upright / s, to_table)
        return float(np.degrees(quad_params(q_top)[0, 4]))

    assert abs(angle() - 25) < 3
    monkeypatch.setattr(zones, "LOOSE_TILE_COHERENCE", ANGLE_COHERENCE)
    assert angle() == pytest.approx(0.0, abs=0.5)
