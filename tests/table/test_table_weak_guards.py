"""The guards that keep a frame or a rack from being judged on weak evidence: a frame mostly read
weakly, a count that hangs on weak backs or on a rack that shows no tile, a sure back in a face-up
row, a run whose own evidence is weak, a run vouching for its own tiles; and readings folded into
the set in play."""

from __future__ import annotations

import numpy as np
import pytest
from table_helpers import CARD, CLASSES, exps, flags_of, player, probs, read, table, with_probs

from companion.rules.matcher import rack_viability
from companion.table import MIN_CONFIDENCE, TableReader
from companion.table_guards import WEAK_FRAME_SHARE, found_apart
from vision.layout import load_layout
from vision.types import Detections


@pytest.mark.parametrize("weak", [7, 8, 9])
def test_a_frame_mostly_read_weakly_is_not_judged(weak: int) -> None:
    """18 face-up tiles; with 8 or 9 of them weak (over WEAK_FRAME_SHARE, two in five) the sure
    dead hand on P1-B is withheld too and each rack with tiles says why; with 7 it is called."""
    r = table(player("P1", exps("8C 8C J"), exps("N N N", "E E E")), discards="1B 2B 3B 4B 5B 6B 7B 8B 9B")
    loose = [i for i, t in enumerate(r.tiles) if t.zone == "discards"]
    assert len(loose) == 9 and sum(len(t.code) > 0 and t.code != "BK" for t in r.tiles) >= 18
    obs = read(r, low=tuple(loose[:weak]))
    assert not obs.zones["P1-B"].uncertain  # the dead rack itself reads sure
    if weak == 7:
        assert flags_of(obs, "wrong_rack") == ["P1-B"]
        assert not [f for f in obs.flags if f.cause == "frame"]
    else:
        assert WEAK_FRAME_SHARE * 18 <= weak
        assert flags_of(obs, "wrong_rack") == [] and flags_of(obs, "tile_count") == []
        frame = [f for f in obs.flags if f.kind == "unreadable" and f.cause == "frame"]
        assert sorted(f.zone for f in frame) == ["P1-A", "P1-B"]
        assert all(f"{weak} of the 18 face-up tiles" in f.message and "companion enroll" in f.message for f in frame)


@pytest.mark.parametrize("found", [0, 3, 4])
def test_faces_found_among_the_backs_by_their_colour_are_left_out_of_the_weak_share(found: int) -> None:
    """The frame above with 9 of its 18 face-up tiles weak, ``found`` of them faces the classifier
    read as backs and their colour showed to be faces (``meta["blank"]``, vision.blanks): left
    out, 5 weak of 14 is under two in five and the dead hand is called; 6 of 15 is not."""
    r = table(player("P1", exps("8C 8C J"), exps("N N N", "E E E")), discards="1B 2B 3B 4B 5B 6B 7B 8B 9B")
    loose = [i for i, t in enumerate(r.tiles) if t.zone == "discards"]
    det = r.detections()
    conf, blank = det.confidence.copy(), np.zeros(len(det), bool)
    conf[loose] = 0.3
    blank[loose[:found]] = True
    given = Detections(det.boxes, det.quads, det.codes, conf, meta={"blank": blank})
    obs = TableReader(r.layout, card=CARD).read(r.image, given)
    frame = [f.zone for f in obs.flags if f.cause == "frame"]
    if found == 4:
        assert flags_of(obs, "wrong_rack") == ["P1-B"] and frame == []
    else:
        assert flags_of(obs, "wrong_rack") == [] and sorted(frame) == ["P1-A", "P1-B"]
    assert found_apart(given, lambda d: np.full(len(d), "discards")) == ({"discards": (found, found)} if found else {})
    assert given[np.array(loose[2:5])].meta["blank"].tolist() == [found > 2, found > 3, False]  # follows the tiles


@pytest.mark.parametrize("total, weak", [(29, 0), (29, 1), (30, 1), (30, 2), (25, 2)])
def test_a_count_that_hangs_on_weak_backs_is_not_judged(total: int, weak: int) -> None:
    """29 or 30 tiles in view for player 1 is too many (27 off-turn, 28 on), unless weakly read
    backs (a phantom between face-up tiles reads as one) make up the whole excess; too few stays
    too few, however the backs read."""
    r = table(player("P1", exps("8C 8C 8C"), total=total))
    backs = [i for i, t in enumerate(r.tiles) if t.zone in ("P1-A", "P1-B") and t.code == "BK"]
    obs = read(r, low=tuple(backs[:weak]))
    assert sum(obs.zones[z].weak_backs for z in ("P1-A", "P1-B")) == weak
    assert obs.zones["P1-A"].face_down + obs.zones["P1-B"].face_down + 3 == total
    judged = total < 27 or total - weak > 28
    assert flags_of(obs, "tile_count") == (["P1-A"] if judged else [])


def test_readings_are_folded_into_the_set_in_play() -> None:
    """An American set has no Chinese flowers or seasons: the ``F`` tile takes the surest of them, so
    a flower read as 'FL3' is an F (the flower classes' mass is not summed: a bamboo of an unfamiliar
    set spread over several flower classes stays what else it reads as); a Chinese set has no joker."""
    from companion.rules.tiles import TILE_SETS
    from companion.table_readings import fold_to_set

    p = probs({"FL3": 0.5, "SE1": 0.3, "8B": 0.15}, {"J": 0.6, "5D": 0.35}, {"BK": 0.9})
    det = Detections(np.zeros((3, 4), np.float32), np.zeros((3, 4, 2), np.float32),
                     np.array(["FL3", "J", "BK"]), np.array([0.5, 0.6, 0.9], np.float32),
                     probs=p.astype(np.float32), classes=CLASSES)
    american = fold_to_set(det, set(TILE_SETS["american"].counts))
    assert list(american.codes) == ["F", "J", "BK"]
    rest = 0.05 / (len(CLASSES) - 3)
    kept = 0.5 + 0.15 + rest * (len(CLASSES) - 3 - 1 - 6)  # F (as FL3), 8B, the rest but F and six flowers
    assert american.confidence[0] == pytest.approx(0.5 / kept, abs=1e-4)
    assert np.allclose(american.probs.sum(axis=1), 1.0)
    spread = Detections(det.boxes[:1], det.quads[:1], np.array(["8B"]), np.array([0.3], np.float32),
                        probs=probs({"FL1": 0.2, "FL3": 0.2, "SE2": 0.2, "8B": 0.3}).astype(np.float32),
                        classes=CLASSES)
    assert list(fold_to_set(spread, set(TILE_SETS["american"].counts)).codes) == ["8B"]
    chinese = fold_to_set(det, set(TILE_SETS["chinese"].counts))
    assert list(chinese.codes) == ["FL3", "5D", "BK"]  # no joker in a Chinese set
    assert chinese.confidence[1] > 0.8
    plain = Detections(det.boxes, det.quads, det.codes, det.confidence)  # no probabilities: as it was
    assert fold_to_set(plain, set(TILE_SETS["american"].counts)) is plain


@pytest.mark.parametrize("where", ["between", "end", "backs"])
def test_a_sure_back_in_a_face_up_row_makes_no_count_too_many(where: str) -> None:
    """Player 1 shows 28 tiles (on turn).  A 29th, read surely as a back, is a "too many" when it
    lies in the backs' row; lying in a face-up row (between two exposures, or past the row's end)
    it is most likely a gap the localiser took for a tile, and makes no count (it is still
    counted as a back)."""
    r = table(player("P1", exps("8C 8C 8C", "N N N"), total=28))
    det = r.detections()
    assert len(det) == len(r.tiles)
    a = [i for i, t in enumerate(r.tiles) if t.zone == "P1-A"]
    last_8c = max((i for i in a if r.tiles[i].code == "8C"), key=lambda i: det.quads[i][:, 0].mean())
    first_n = min((i for i in a if r.tiles[i].code == "N"), key=lambda i: det.quads[i][:, 0].mean())
    backs = [i for i in a if r.tiles[i].code == "BK"]
    if where == "between":
        q0, q1 = det.quads[last_8c], det.quads[first_n]
        gap = q1[:, 0].mean() - q0[:, 0].mean()
        quad = q0 + np.array([gap / 2, 0.0], np.float32)
    elif where == "end":  # past the face-up row's last tile
        end = max((i for i in a if r.tiles[i].code != "BK"), key=lambda i: det.quads[i][:, 0].mean())
        quad = det.quads[end] + (det.quads[end][1] - det.quads[end][0]) * 1.1
    else:  # one more back at the end of the backs' row
        end = max(backs, key=lambda i: det.quads[i][:, 0].mean())
        quad = det.quads[end] + (det.quads[end][1] - det.quads[end][0])
    box = np.concatenate([quad.min(axis=0), quad.max(axis=0)])
    more = type(det)(np.vstack([det.boxes, box[None]]).astype(np.float32),
                     np.concatenate([det.quads, quad[None]]).astype(np.float32),
                     np.append(det.codes, "BK"), np.append(det.confidence, 0.9).astype(np.float32))
    obs = TableReader(r.layout, card=CARD).read(r.image, more)
    assert obs.zones["P1-A"].face_down + obs.zones["P1-B"].face_down + 6 == 29
    assert flags_of(obs, "tile_count") == ([] if where != "backs" else ["P1-A"])


@pytest.mark.parametrize("cos", [0.99, 0.93])
def test_a_back_unlike_the_others_makes_no_count_too_many(cos: float) -> None:
    """A 29th tile read surely as a back at the end of the backs' row is a "too many" when it looks
    like the other backs (its embedding near theirs); looking unlike them (a cosine under
    BACK_LIKENESS: the bare rack, a misread face) it is still counted but makes no count."""
    r = table(player("P1", exps("8C 8C 8C", "N N N"), total=28))
    det = r.detections()
    rng = np.random.default_rng(3)
    backs = [i for i, t in enumerate(r.tiles) if t.zone == "P1-A" and t.code == "BK"]
    end = max(backs, key=lambda i: det.quads[i][:, 0].mean())
    quad = det.quads[end] + (det.quads[end][1] - det.quads[end][0])
    box = np.concatenate([quad.min(axis=0), quad.max(axis=0)])
    back = rng.normal(size=32)
    back /= np.linalg.norm(back)
    emb = rng.normal(size=(len(det) + 1, 32))
    for i in [i for i, c in enumerate(det.codes) if c == "BK"]:
        emb[i] = back + rng.normal(scale=0.02, size=32)
    side = rng.normal(size=32)
    side -= (side @ back) * back
    side /= np.linalg.norm(side)
    emb[-1] = cos * back + np.sqrt(1 - cos**2) * side
    more = type(det)(np.vstack([det.boxes, box[None]]).astype(np.float32),
                     np.concatenate([det.quads, quad[None]]).astype(np.float32),
                     np.append(det.codes, "BK"), np.append(det.confidence, 0.95).astype(np.float32),
                     emb.astype(np.float32))
    obs = TableReader(r.layout, card=CARD).read(r.image, more)
    assert obs.zones["P1-A"].face_down + obs.zones["P1-B"].face_down + 6 == 29
    alike = cos > 0.98
    assert sum(obs.zones[z].weak_backs for z in ("P1-A", "P1-B")) == (0 if alike else 1)
    assert flags_of(obs, "tile_count") == (["P1-A"] if alike else [])


@pytest.mark.parametrize(("east", "called"), [(0.66, False), (0.92, True)])
def test_a_run_whose_own_evidence_is_weak_is_not_made_sure_by_its_neighbours(east: float, called: bool) -> None:
    """P1-B's pung of 5 Dots (a live hand) reads as East, a dead one, on every tile alike.  At
    0.66 a tile the joint reading of three such tiles is over the minimum confidence (the chain
    counts three witnesses where there is one face misread three times); the tiles stay uncertain,
    the run's plausible readings (the live 5 Dots among them) are weighed, and the rack is not
    judged.  Read as East at 0.92 a tile, the dead call stands."""
    from companion.table_decode import read_run

    assert [not rack_viability(CARD, [[c] * 3]).dead for c in ("5D", "E")] == [True, False]
    row = {"E": east, "5D": 1 - east}
    joint = read_run(probs(*[row] * 3), CLASSES)
    assert joint.codes == ["E"] * 3 and min(joint.confidence) >= MIN_CONFIDENCE  # the chain alone is sure
    r = table(player("P1", exps("8C 8C J"), exps("5D 5D 5D")))
    obs = TableReader(r.layout, card=CARD).read(r.image, with_probs(r, "P1-B", "5D", row))
    z = obs.zones["P1-B"]
    assert z.exposures == exps("E E E")
    if called:
        assert flags_of(obs, "wrong_rack") == ["P1-B"] and not z.uncertain
    else:
        assert flags_of(obs, "wrong_rack") == [] and flags_of(obs, "unreadable") == ["P1-B"]
        assert len(z.uncertain) == 3 and max(z.confidence) < MIN_CONFIDENCE
        assert exps("5D 5D 5D") in z.readings  # weighed like any doubtful run: the live reading is seen


@pytest.mark.parametrize("own", [0.8, 0.95])
def test_a_run_vouching_for_its_own_tiles_is_no_witness_for_a_copy_count(own: float) -> None:
    """Four 3 Dots touching on a rack and a fifth among the discards: "5 x 3D in view".  Read each
    at 0.8 on its own, the rack's four come out of the joint reading over the copies bar (0.9),
    vouched for by each other; but one face under one light is misread alike, so the count rests on
    each tile's own reading and is not claimed.  Read at 0.95 each, it is."""
    r = table(player("P1", exps("3D 3D 3D 3D")), discards="3D 2B")
    det = r.detections()
    rack = [i for i, t in enumerate(r.tiles) if t.zone == "P1-A" and t.code == "3D"]
    rows = [{str(c): 0.99} for c in det.codes]
    for i in rack:
        rows[i] = {"3D": own, "4D": 0.97 - own}
    p = probs(*rows).astype(np.float32)
    conf = np.asarray([p[i, CLASSES.index(str(c))] for i, c in enumerate(det.codes)], np.float32)
    obs = TableReader(r.layout, card=CARD).read(
        r.image, Detections(det.boxes, det.quads, det.codes, conf, probs=p, classes=CLASSES))
    z = obs.zones["P1-A"]
    assert z.tiles == ("3D",) * 4 and min(z.confidence) >= 0.9  # the run vouched its tiles over the bar
    assert z.own_confidence == pytest.approx((own,) * 4, abs=0.01)  # renormalised to the set in play
    copies = [f.message for f in obs.flags if f.kind == "tile_count" and "3D in view" in f.message]
    assert copies == ([] if own < 0.9 else ["5 x 3D in view; the american set holds 4"])


# A weak tile between two exposures: 8B (sure), then a tile read 6B 0.55 / 8B 0.43, a sure joker,
# three sure 6B.  Alone, its 0.55 wins and leaves a single 8B: "8B | 6B J 6B 6B 6B".


@pytest.mark.parametrize("total", [25, 30])
def test_a_player_is_not_called_short_on_a_rack_too_small_to_read(monkeypatch, total: int) -> None:  # type: ignore[no-untyped-def]
    """A player's count short (tiles the picture is too coarse to show) is not judged while one of
    their racks is flagged ``view``; a count over still is, as is the other player's.  A 640x480
    frame made "player 2 shows 12 tiles" so."""
    r = table(p2=player("P2", exps("1D 1D 1D"), total=total))
    reader = TableReader(r.layout, card=CARD)
    sizes = {"P1-A": 20.0, "P1-B": 20.0, "P2-A": 20.0, "P2-B": 20.0, "discards": 20.0}
    monkeypatch.setattr(reader, "zone_tile_px", lambda cal: dict(sizes))
    assert flags_of(read(r, reader=reader), "tile_count") == ["P2-A"]
    sizes["P2-B"] = 5.0
    obs = read(r, reader=reader)
    assert flags_of(obs, "view") == ["P2-B"]
    assert flags_of(obs, "tile_count") == ([] if total < 27 else ["P2-A"])
    # the same count off on the other player is still judged beside it
    r1 = table(player("P1", exps("1D 1D 1D"), total=total))
    assert flags_of(read(r1, reader=reader), "tile_count") == ["P1-A"]


@pytest.mark.parametrize("where", ["face-up row", "backs"])
def test_a_phantom_back_in_a_face_up_row_keeps_no_dead_hand_from_being_judged(where: str) -> None:
    """Player 1 holds 27 tiles and P1-B is dead.  A 28th and a 29th read surely as backs past the
    face-up row's end (phantoms: the table beyond the exposures, at a high resolution) make the
    count 29, too many only if both are real; it hangs on them, so the dead hand is still called,
    as the count is not called too many.  In the backs' own row they are backs like any other,
    the count is off, and neither is judged."""
    r = table(player("P1", exps("8C 8C J"), exps("N N N", "E E E"), total=27))
    det = r.detections()
    b = [i for i, t in enumerate(r.tiles) if t.zone == "P1-B"]
    row = [i for i in b if r.tiles[i].code != "BK"] if where == "face-up row" else [i for i in b if r.tiles[i].code == "BK"]
    end = max(row, key=lambda i: det.quads[i][:, 0].mean())
    step = det.quads[end][1] - det.quads[end][0]
    quads = np.stack([det.quads[end] + step * 1.1, det.quads[end] + step * 2.2]).astype(np.float32)
    boxes = np.concatenate([quads.min(axis=1), quads.max(axis=1)], axis=1)
    more = type(det)(np.vstack([det.boxes, boxes]).astype(np.float32), np.concatenate([det.quads, quads]),
                     np.append(det.codes, ["BK", "BK"]), np.append(det.confidence, [0.9, 0.9]).astype(np.float32))
    obs = TableReader(r.layout, card=CARD).read(r.image, more)
    assert sum(obs.zones[z].face_down for z in ("P1-A", "P1-B")) + 9 == 29
    phantom = where == "face-up row"
    assert sum(obs.zones[z].weak_backs for z in ("P1-A", "P1-B")) == (2 if phantom else 0)
    assert flags_of(obs, "wrong_rack") == (["P1-B"] if phantom else [])
    assert flags_of(obs, "tile_count") == ([] if phantom else ["P1-A"])
    count = [f.zone for f in obs.flags if f.kind == "unreadable" and f.cause == "count"]
    assert count == ([] if phantom else ["P1-A", "P1-B"])


@pytest.mark.parametrize("weakest", [0.9, 0.7])
def test_a_display_is_called_in_error_on_a_second_reading_only_when_its_tiles_read_surely_alone(weakest: float) -> None:
    """A display that matches no hand, read surely once its runs are read together: the second
    reading confirms the Mah Jongg in error only when every tile also reads surely on its own.  A
    rack dead for its exposures is confirmed however its tiles read alone, as before."""
    from companion.table_guards import second_reading_dead
    from companion.table_types import ZoneReading

    display = exps("1B 1B 1B", "2C 2C 2C", "3D 3D 3D", "4B 4B 4B", "N N")
    own = (0.95,) * 6 + (weakest,) + (0.95,) * 7
    zones = {
        "P1-A": ZoneReading("P1-A", "rack", tuple(c for e in display for c in e), display, 0, 1, "A",
                            confidence=(0.97,) * 14, own_confidence=own),
        "P1-B": ZoneReading("P1-B", "rack", (), (), 13, 1, "B"),
        "P2-A": ZoneReading("P2-A", "rack", tuple("N N N E E E".split()), exps("N N N", "E E E"), 7, 2, "A",
                            confidence=(0.97,) * 6, own_confidence=(weakest,) * 6),
        "P2-B": ZoneReading("P2-B", "rack", (), (), 14, 2, "B"),
    }
    ctx = TableReader(table().layout, card=CARD).ctx
    assert second_reading_dead(zones, ctx) == ({"P1-A", "P2-A"} if weakest >= MIN_CONFIDENCE else {"P2-A"})


def test_a_player_is_not_called_short_while_one_of_their_racks_shows_no_tile() -> None:
    """A rack in play always holds a hand: one that shows nothing beside a rack of 14 backs is a
    rack the camera missed (a row of backs alone the localiser did not find), not 13 tiles gone."""
    from companion.table_flags import totals_flags
    from companion.table_types import ZoneReading

    ctx = TableReader(load_layout("siamese-2"), card=CARD).ctx
    full = ZoneReading("P2-A", "rack", (), (), face_down=14, player=2, hand="A")
    missed = {"P2-A": full, "P2-B": ZoneReading("P2-B", "rack", (), (), player=2, hand="B")}
    flags = totals_flags(missed, ctx)
    assert [(f.kind, f.zone, f.cause) for f in flags] == [("unreadable", "P2-B", "count")], flags
    assert "no tile seen" in flags[0].message and "(14)" in flags[0].message
    seen = {**missed, "P2-B": ZoneReading("P2-B", "rack", (), (), face_down=3, player=2, hand="B")}
    assert [f.kind for f in totals_flags(seen, ctx)] == ["tile_count"]  # 17 tiles, both racks seen: short
    over = {**missed, "P2-A": ZoneReading("P2-A", "rack", (), (), face_down=30, player=2, hand="A")}
    assert [f.kind for f in totals_flags(over, ctx)] == ["tile_count"]  # too many is judged as before


@pytest.mark.parametrize("pair", [("1D", "1D"), ("7B", "J")])
@pytest.mark.parametrize(("down", "flagged"), [(14, False), (15, True), (17, True)])
def test_a_short_player_is_not_flagged_for_an_exposure_of_one_or_two_tiles(
        pair: tuple[str, str], down: int, flagged: bool) -> None:
    """Player 2 shows a pair of 1 Dots on P2-A (the kong's other two missed, as ``km-jade``'s
    table 65 read them), or a 7 Bam and a joker.  Shown 26 tiles, one short, the pair may hold
    the tiles missed: no flag for it, the count's hold says why; shown 27, or too many (29), the
    pair is flagged."""
    from companion.rules.tiles import AMERICAN
    from companion.rules.variants import get_variant
    from companion.table import ZoneReading
    from companion.table_flags import RuleContext, evaluate
    from companion.table_guards import guard_dead_calls

    def rack(name: str, exps: tuple[tuple[str, ...], ...], face_down: int) -> ZoneReading:
        return ZoneReading(name, "rack", tuple(t for e in exps for t in e), exps, face_down, int(name[1]), name[-1])

    zones = {"P1-A": rack("P1-A", (), 14), "P1-B": rack("P1-B", (), 13),
             "P2-A": rack("P2-A", (pair,), 7), "P2-B": rack("P2-B", (("1C", "1C", "1C"),), down)}
    ctx = RuleContext(get_variant("mjm"), AMERICAN, CARD)
    flags = evaluate(zones, ctx)[0]
    mine = [f for f in flags if f.zone == "P2-A" and f.kind in ("tile_count", "joker") and f"[{' '.join(pair)}]" in f.message]
    assert len(mine) == 1
    out = guard_dead_calls(zones, flags, ctx)
    assert (mine[0] in out) == flagged
    assert any(f.zone == "P2-A" and f.cause == "count" for f in out) == (down != 15)
