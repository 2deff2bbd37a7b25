"""Each flag kind from rendered tables read with their true detections, and racks left alone."""

from __future__ import annotations

import numpy as np
import pytest
from table_helpers import CARD, exps, flags_of, player, read, read_at, table, tile_index

from companion.rules.tiles import ALL_CODES
from companion.table import TableReader
from vision.layout import load_layout
from vision.render import RackScene, RenderedTable, View
from vision.types import Detections

LN1 = exps("7C 7C 7C", "7B 7B 7B", "7D 7D 7D 7D", "N N N N")


def test_correct_racks_are_not_flagged() -> None:
    r = table(player("P1", exps("8C 8C J", "N N N N"), exps("1D 1D 1D")), player("P2", exps("GD GD GD GD", "4C 4C 4C 4C")))
    obs = read(r)
    assert obs.homography == "fresh"
    assert obs.flags == ()
    assert [list(e) for e in obs.zones["P1-A"].exposures] == [["8C", "8C", "J"], ["N", "N", "N", "N"]]
    assert obs.zones["P2-A"].exposures == exps("GD GD GD GD", "4C 4C 4C 4C")
    assert obs.zones["P1-A"].face_down + obs.zones["P1-B"].face_down == 27 - 10


def test_wrong_rack_is_a_dead_hand() -> None:
    r = table(player("P1", exps("8C 8C J"), exps("N N N", "E E E")))
    obs = read(r)
    assert flags_of(obs, "wrong_rack") == ["P1-B"]
    assert "dead" in next(f.message for f in obs.flags if f.kind == "wrong_rack")


def test_uncertain_tile_gives_unreadable_never_a_dead_hand() -> None:
    r = table(player("P1", exps("5D J"), exps("N N N", "E E E")))
    obs = read(r, low=(tile_index(r, "P1-B", "E"), tile_index(r, "P1-A", "J")))
    assert sorted(f.kind for f in obs.flags) == ["unreadable", "unreadable"]  # racks not judged
    assert sorted(flags_of(obs, "unreadable")) == ["P1-A", "P1-B"]
    assert "#2 (read J)" in next(f.message for f in obs.flags if f.zone == "P1-A")


def test_exposure_of_impossible_size() -> None:
    obs = read(table(player("P1", exps("5D 5D"))))
    assert flags_of(obs, "tile_count") == ["P1-A"]
    assert flags_of(obs, "wrong_rack") == []


def test_joker_in_a_pair() -> None:
    obs = read(table(player("P1", exps("5D J"))))
    assert flags_of(obs, "joker") == ["P1-A"]


def test_a_joker_pair_with_a_weak_tile_is_flagged_only_when_every_reading_keeps_it() -> None:
    """A rack with an uncertain tile is not judged dead, but a joker in a pair that every
    plausible reading of that tile keeps is flagged all the same; a reading in which the tile
    would join the next group (a sextet of 6 Dots with jokers) withholds it."""
    from companion.table_flags import rack_flags
    from companion.table_types import ZoneReading

    ctx = TableReader(load_layout("siamese-2"), card=CARD).ctx
    kong = ("6D", "J", "6D", "6D")
    pairs = tuple((kong, (code, "J")) for code in ("5D", "J", "4C", "?"))
    rack = ZoneReading("P1-A", "rack", kong + ("5D", "J"), (kong, ("5D", "J")), player=1, hand="A",
                       uncertain=(4,), readings=pairs)
    flags = rack_flags(rack, ctx)[0]
    assert [f.kind for f in flags] == ["unreadable", "joker"], flags
    assert "[5D J]" in flags[1].message and "#5" in flags[1].message
    merged = ZoneReading("P1-A", "rack", rack.tiles, rack.exposures, player=1, hand="A", uncertain=(4,),
                         readings=pairs + ((kong + ("J", "J"),),))
    assert [f.kind for f in rack_flags(merged, ctx)[0]] == ["unreadable"]
    unlisted = ZoneReading("P1-A", "rack", rack.tiles, rack.exposures, player=1, hand="A", uncertain=(4,))
    assert [f.kind for f in rack_flags(unlisted, ctx)[0]] == ["unreadable"]  # too many readings to list


def test_too_many_copies_in_view() -> None:
    r = table(player("P1", exps("3D 3D 3D 3D")), discards="3D 2B")
    msgs = [f.message for f in read(r).flags if f.kind == "tile_count"]
    assert len(msgs) == 1 and "5 x 3D" in msgs[0]
    assert read(r, tile_set="royale-4").flags == ()  # two sets hold 8


def test_a_fifth_copy_read_short_of_sure_is_not_counted() -> None:
    """A lone discard read at 0.8 (above the uncertain-tile threshold 0.75, below the copies
    threshold 0.9) does not make "5 x 3D in view"; read at 0.95 it does."""
    r = table(player("P1", exps("3D 3D 3D 3D")), discards="3D 2B")
    disc = tile_index(r, "discards", "3D")
    assert flags_of(read_at(r, disc, 0.8), "tile_count") == []
    assert flags_of(read_at(r, disc, 0.95), "tile_count") == ["P1-A"]


def test_no_copy_count_while_any_tile_of_that_code_reads_weakly() -> None:
    """Seven sure 3 Dots on the racks are too many; with an eighth read as a 3 Dot weakly anywhere on
    the table, the classifier is confusing that code here, and the count is not claimed."""
    r = table(player("P1", exps("3D 3D 3D 3D"), exps("3D 3D 3D")), discards="3D 2B")
    disc = tile_index(r, "discards", "3D")

    def counts(conf: float) -> list[str]:
        return [f.message for f in read_at(r, disc, conf).flags if f.kind == "tile_count"]

    assert any("8 x 3D" in m for m in counts(0.95))
    assert not any(" x 3D" in m for m in counts(0.8))


def test_player_total_off_the_count() -> None:
    obs = read(table(p2=player("P2", exps("1D 1D 1D"), total=30)))
    assert flags_of(obs, "tile_count") == ["P2-A"]
    assert "too many" in obs.flags[0].message
    assert read(table(p2=player("P2", total=28))).flags == ()  # on-turn count is fine


@pytest.mark.parametrize(("total", "weak", "flagged"), [
    (30, 1, "too many"),  # 29 even if the weak tile is a phantom
    (29, 1, None),  # 28, on-turn, if it is one
    (25, 1, "too few"),  # 26 even if the weak tile hides two tiles read as one
    (26, 1, None),
    (30, 0, "too many"),
    (26, 0, "too few"),
])
def test_a_player_count_is_judged_when_it_is_off_whatever_the_weak_tiles_are(
        total: int, weak: int, flagged: str | None) -> None:
    from companion.table_flags import totals_flags
    from companion.table_types import ZoneReading

    ctx = TableReader(load_layout("siamese-2"), card=CARD).ctx
    faces = ("5D", "5D", "5D", "N", "N", "N")
    zones = {"P2-A": ZoneReading("P2-A", "rack", faces, (faces[:3], faces[3:]), face_down=total - len(faces) - 5,
                                 player=2, hand="A", uncertain=tuple(range(weak))),
             "P2-B": ZoneReading("P2-B", "rack", (), (), face_down=5, player=2, hand="B")}
    flags = totals_flags(zones, ctx)
    assert [f.kind for f in flags] == (["tile_count"] if flagged else [])
    if flagged:
        assert flagged in flags[0].message and f"shows {total} tiles" in flags[0].message


def test_displayed_mahjong_scored() -> None:
    obs = read(table(player("P1", LN1, total=27)))
    assert obs.mahjong["P1-A"] == {"hand": "ln1", "value": 50, "jokerless": True, "card_value": 25}
    assert obs.mahjong["P1-B"] is None
    assert obs.flags == ()
    with_joker = exps("7C 7C 7C", "7B J 7B", "7D 7D 7D 7D", "N N N N")
    obs = read(table(player("P1", with_joker, total=27)))
    assert obs.mahjong["P1-A"] == {"hand": "ln1", "value": 25, "jokerless": False, "card_value": 25}


def _with_probs(r: RenderedTable, weak: list[int], alt: str, p_alt: float) -> Detections:
    """The true detections with class probabilities: every tile sure of its code, the tiles
    ``weak`` torn between their code and ``alt``."""
    det = r.detections()
    probs = np.full((len(det), len(ALL_CODES)), 0.001, np.float32)
    for i, code in enumerate(det.codes):
        probs[i, ALL_CODES.index(str(code))] = 0.98
    for i in weak:
        probs[i] = 0.001
        probs[i, ALL_CODES.index(str(det.codes[i]))] = 1.0 - p_alt
        probs[i, ALL_CODES.index(alt)] = p_alt
    probs /= probs.sum(axis=1, keepdims=True)
    conf = probs[np.arange(len(det)), [ALL_CODES.index(str(c)) for c in det.codes]].astype(np.float32)
    return Detections(det.boxes, det.quads, det.codes, conf, probs=probs, classes=ALL_CODES)


def test_a_display_read_weakly_is_scored_when_no_other_reading_makes_another_hand() -> None:
    r = table(player("P1", LN1, total=27))
    # a pung read weakly: its run's tiles do not vouch for each other
    weak = [i for i, t in enumerate(r.tiles) if t.zone == "P1-A" and t.code == "7B"]
    assert len(weak) == 3
    # the weak 7 Bams may be 8 Bams, which make no hand: the display is scored, and flagged
    obs = TableReader(r.layout, card=CARD).read(r.image, _with_probs(r, weak, "8B", 0.45))
    assert obs.mahjong["P1-A"] is not None
    entry = obs.mahjong["P1-A"]
    assert (entry["hand"], entry["value"], entry["jokerless"]) == ("ln1", 50, True) and entry["uncertain"]
    assert flags_of(obs, "unreadable") == ["P1-A"] and flags_of(obs, "wrong_rack") == []
    assert "Mah Jongg scored, but tile(s) #" in next(f.message for f in obs.flags if f.zone == "P1-A")
    # ... or jokers, with which it is the same hand at another value: not scored, not judged
    obs = TableReader(r.layout, card=CARD).read(r.image, _with_probs(r, weak, "J", 0.45))
    assert obs.mahjong["P1-A"] is None
    assert flags_of(obs, "unreadable") == ["P1-A"] and flags_of(obs, "wrong_rack") == []
    assert "too uncertain to judge" in next(f.message for f in obs.flags if f.zone == "P1-A")


def test_a_display_whose_weak_readings_cannot_be_listed_is_scored_up_to_half_weak() -> None:
    # the other player's exposures and the discards keep the frame's weak share under 40 %
    r = table(player("P1", LN1, total=27), player("P2", exps("2B 2B 2B", "GD GD GD"), exps("5C 5C 5C 5C")),
              discards="1D 2D 3D 4D 6B 9C")
    rack = [i for i, t in enumerate(r.tiles) if t.zone == "P1-A"]
    obs = read(r, low=tuple(rack[:7]))  # no probabilities: the weak tiles' other readings are unknown
    assert obs.mahjong["P1-A"] is not None and obs.mahjong["P1-A"]["hand"] == "ln1"
    assert obs.mahjong["P1-A"]["uncertain"] == list(range(1, 8))
    assert flags_of(obs, "unreadable") == ["P1-A"]
    obs = read(r, low=tuple(rack[:8]))
    assert obs.mahjong["P1-A"] is None and flags_of(obs, "unreadable") == ["P1-A"]


def test_mahjong_in_error_and_oversized_display() -> None:
    wrong = exps("7C 7C 7C", "7B 7B 7B", "6D 6D 6D 6D", "N N N N")
    obs = read(table(player("P1", wrong)))
    assert obs.mahjong["P1-A"] is None
    assert flags_of(obs, "wrong_rack") == ["P1-A"]
    r = table(player("P1", LN1 + exps("2B"), total=28))
    assert "P1-A" in flags_of(read(r), "tile_count")
    # the 15th tile read weakly (a phantom in a gap, say): unreadable, no count claim resting on it
    obs = read(r, low=(tile_index(r, "P1-A", "2B"),))
    assert "P1-A" not in flags_of(obs, "tile_count") and "P1-A" in flags_of(obs, "unreadable")


def test_royale_mahjong_rack_holds_only_14() -> None:
    royale = load_layout("royale-4")
    racks = {"P1-A": RackScene(LN1, 3), "P1-B": RackScene((), 10)}
    obs = read(table(racks, {}, layout=royale), variant="royale", count_backs=False)
    assert flags_of(obs, "tile_count") == ["P1-A"]
    racks = {"P1-A": RackScene(LN1, 0), "P1-B": RackScene((), 13)}
    obs = read(table(racks, {}, layout=royale), variant="royale", count_backs=False)
    # no rule flag; at 1280x720 the far players' racks of the bigger Royale table look too small
    assert [f.kind for f in obs.flags if f.kind != "view"] == []
    assert flags_of(obs, "view") and "P1-A" not in flags_of(obs, "view")


def test_a_zone_whose_tiles_look_too_small_gets_a_view_flag() -> None:
    from companion.table import MIN_VIEW_PX

    steep = table(view=View("bottom", 70.0, (1280, 720)))  # a phone lying almost flat at the near edge
    obs = read(steep)
    assert sorted(flags_of(obs, "view")) == ["P2-A", "P2-B", "discards"]
    assert "move the camera closer" in next(f.message for f in obs.flags if f.kind == "view")
    reader = TableReader(steep.layout, card=CARD)
    cal, _ = reader.calibrator.update(steep.image)
    px = reader.zone_tile_px(cal)
    assert px["P2-A"] < MIN_VIEW_PX <= px["P1-A"]
    good = read(table(view=View("bottom", 40.0, (1920, 1080))))
    assert flags_of(good, "view") == []
    assert good.flags == ()


def test_joker_taken_from_a_declared_mahjong() -> None:
    before = exps("7C 7C 7C", "7B J 7B", "7D 7D 7D 7D", "N N N N")
    after = exps("7C 7C 7C", "7B 7B 7B", "7D 7D 7D 7D", "N N N N")
    reader = TableReader(table().layout, card=CARD, variant="mjm")
    first = read(table(player("P1", before)), reader=reader)
    assert flags_of(first, "joker") == []
    second = read(table(player("P1", after), seed=2), reader=reader)
    assert flags_of(second, "joker") == ["P1-A"]


def test_chinese_chows_and_a_joker_not_in_the_set() -> None:
    r = table(player("P1", exps("1B 2B 3B", "E E E"), total=13), player("P2", exps("J 5D 5D"), total=13))
    obs = read(r, variant="chinese", card=None)
    assert obs.zones["P1-A"].exposures == exps("1B 2B 3B", "E E E")
    assert [f.kind for f in obs.flags] == ["tile_count"]
    flowers = table(player("P1", exps("FL1", "SE3", "N N N N"), total=15), player("P2", total=13))
    assert read(flowers, variant="wp", card=None, count_backs=False).flags == ()
    assert flags_of(read(flowers, variant="mjm", card=None, tile_set="chinese"), "tile_count")
    assert any("J in view" in f.message for f in obs.flags if f.kind == "tile_count")


def test_ambiguous_joker_between_touching_exposures_never_kills_the_hand() -> None:
    # [7C 7C 7C J][N N N N] fits ln1; [7C 7C 7C][J N N N N] fits nothing.  Touching, the joker
    # could belong to either: the reader must take the reading that keeps the hand alive.
    racks = {"P1-A": RackScene(exps("7C 7C 7C J", "N N N N"), 9, touching=True), "P1-B": RackScene((), 10)}
    obs = read(table(racks))
    assert flags_of(obs, "wrong_rack") == []
    assert obs.zones["P1-A"].exposures == exps("7C 7C 7C J", "N N N N")


def test_recognition_runs_on_the_zones_only_and_maps_back() -> None:
    r = table(player("P1", exps("8C 8C J")))
    truth = r.detections()
    seen: list[tuple[int, int]] = []

    class Cropped:
        """A recogniser that finds the true tiles inside whatever crop it is given."""

        def detect(self, image: object) -> object:
            h, w = image.shape[:2]  # type: ignore[attr-defined]
            seen.append((w, h))
            x0, y0 = reader.zones_box(reader.calibrator.last, r.image.shape)[:2]  # type: ignore[arg-type]
            return type(truth)(truth.boxes - [x0, y0, x0, y0], truth.quads - [x0, y0], truth.codes, truth.confidence)

    reader = TableReader(r.layout, Cropped(), card=CARD)
    obs = reader.read(r.image)
    assert seen and seen[0][0] * seen[0][1] < 0.9 * 1280 * 720
    assert obs.zones["P1-A"].exposures == exps("8C 8C J") and obs.flags == ()


def test_recogniser_is_told_the_tile_size_from_the_homography() -> None:
    from vision.render import TILE_W_MM

    r = table(player("P1", exps("8C 8C J")))
    truth = r.detections()
    told: list[float] = []

    class Sized:
        """A recogniser that takes ``tile_px`` and records it."""

        def detect(self, image: object, tile_px: float | None = None) -> object:
            assert tile_px is not None
            told.append(tile_px)
            x0, y0 = reader.zones_box(reader.calibrator.last, r.image.shape)[:2]  # type: ignore[arg-type]
            return type(truth)(truth.boxes - [x0, y0, x0, y0], truth.quads - [x0, y0], truth.codes, truth.confidence)

    reader = TableReader(r.layout, Sized(), card=CARD)
    obs = reader.read(r.image)
    widths = [float(np.linalg.norm(np.subtract(t.quad_px[1], t.quad_px[0]))) for t in r.tiles]
    assert TILE_W_MM == 24.0 and len(told) == 1
    assert min(widths) * 0.8 <= told[0] <= max(widths) * 1.25  # the rendered tiles' width, give or take perspective
    assert obs.zones["P1-A"].exposures == exps("8C 8C J")


def test_two_stage_recogniser_localises_top_down_and_reads_snapped_tiles() -> None:
    """Localise on the zones seen from above (tiles one size), read each tile cut in perspective."""
    import cv2

    from companion.table import RECTIFIED_PX_PER_MM, TILE_MM

    r = table(player("P1", exps("8C 8C J")))
    truth = r.detections()
    calls: dict[str, object] = {}

    class TwoStage:
        def localize(self, image: np.ndarray, tile_px: float | None = None) -> tuple[np.ndarray, np.ndarray]:
            calls["top"], calls["tile_px"] = image.shape, tile_px
            _, to_table = reader.rectified_zones(r.image, reader.calibrator.last)  # type: ignore[arg-type]
            mm = reader.calibrator.last.to_table(truth.quads)  # type: ignore[union-attr]
            top = cv2.perspectiveTransform(mm.reshape(-1, 1, 2), np.linalg.inv(to_table)).reshape(mm.shape)
            # a sloppy localiser: axis-aligned boxes around the tiles, a little too big
            lo, hi = top.min(axis=1) - 2, top.max(axis=1) + 2
            boxes = np.stack([lo, np.stack([hi[:, 0], lo[:, 1]], axis=1), hi,
                              np.stack([lo[:, 0], hi[:, 1]], axis=1)], axis=1)
            return boxes.astype(np.float32), np.ones(len(boxes), np.float32)

        def classify(self, image: np.ndarray, quads: np.ndarray, tile_px: float | None = None) -> object:
            calls["quads"] = quads
            return type(truth).from_quads(quads, list(truth.codes), truth.confidence)

    reader = TableReader(r.layout, TwoStage(), card=CARD)
    obs = reader.read(r.image)
    assert calls["tile_px"] == TILE_MM[0] * RECTIFIED_PX_PER_MM
    pts = np.concatenate([np.asarray(z.polygon_mm) for z in r.layout.zones])
    span = (pts.max(axis=0) - pts.min(axis=0) + 40) * RECTIFIED_PX_PER_MM
    assert abs(calls["top"][1] - span[0]) <= 2 and abs(calls["top"][0] - span[1]) <= 2  # type: ignore[index]
    # the quads read are the tiles' own outlines in the frame (snapped), not the sloppy boxes
    q = np.asarray(calls["quads"])
    centre_err = np.linalg.norm(q.mean(axis=1) - truth.quads.mean(axis=1), axis=1)
    widths = [np.linalg.norm(t[1] - t[0]) for t in truth.quads]
    assert centre_err.max() < 0.15 * min(widths)
    in_mm = reader.calibrator.last.to_table(q)  # type: ignore[union-attr]
    sides = np.linalg.norm(np.roll(in_mm, -1, axis=1) - in_mm, axis=2)
    assert np.allclose(np.sort(sides, axis=1), [[TILE_MM[0]] * 2 + [TILE_MM[1]] * 2], atol=0.5)
    assert obs.zones["P1-A"].exposures == exps("8C 8C J") and obs.flags == ()


def test_a_view_flag_does_not_flicker_near_the_threshold(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from companion.table import MIN_VIEW_PX, VIEW_CLEAR_PX

    r = table()
    reader = TableReader(r.layout, card=CARD)
    sizes = {"P1-A": 20.0, "P1-B": 20.0, "P2-A": MIN_VIEW_PX - 0.1, "P2-B": 20.0, "discards": 20.0}
    monkeypatch.setattr(reader, "zone_tile_px", lambda cal: dict(sizes))
    assert flags_of(read(r, reader=reader), "view") == ["P2-A"]
    sizes["P2-A"] = (MIN_VIEW_PX + VIEW_CLEAR_PX) / 2  # jitter back over the line: still flagged
    assert flags_of(read(r, reader=reader), "view") == ["P2-A"]
    sizes["P2-A"] = VIEW_CLEAR_PX + 0.1  # clearly readable now
    assert flags_of(read(r, reader=reader), "view") == []
    sizes["P2-A"] = (MIN_VIEW_PX + VIEW_CLEAR_PX) / 2  # a fresh zone in the band is not flagged
    assert flags_of(read(r, reader=reader), "view") == []


def test_an_overexposed_frame_read_weakly_is_not_judged_but_sure_white_faces_are() -> None:
    """Burnt-out faces are misread surely beside the weak ones, so an over-exposed frame whose
    reader is unsure of a quarter of its tiles raises no rule flag and says what helps; the same
    over-exposed picture read surely (white faces a set may have) is judged, as is the daylight
    one read weakly."""
    from vision.light import OVEREXPOSED, clipped_share, poorly_taken

    r = table(player("P1", exps("5D 5D"), exps("N N N", "E E E")))
    burnt = type(r)(**{**r.__dict__, "image": poorly_taken(r.image, "over")})
    det = r.detections()
    faces = det.quads[np.array([str(c) != "BK" for c in det.codes])]
    assert clipped_share(burnt.image, faces) >= OVEREXPOSED > clipped_share(r.image, faces)
    weak = (tile_index(r, "P1-B", "N"), tile_index(r, "P1-B", "E"), tile_index(r, "P1-B", "N") + 1)
    assert flags_of(read(r, low=weak), "tile_count") == ["P1-A"]  # daylight, read weakly: judged
    assert flags_of(read(burnt), "tile_count") == ["P1-A"]  # over-exposed, read surely: judged
    obs = read(burnt, low=weak)
    assert not [f for f in obs.flags if f.kind in ("wrong_rack", "tile_count", "joker")]
    why = next(f for f in obs.flags if f.kind == "unreadable" and f.zone == "P1-A")
    assert why.cause == "picture" and "over-exposed" in why.message and "exposure" in why.message
