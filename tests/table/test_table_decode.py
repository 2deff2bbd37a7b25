"""Reading a rack's touching runs jointly, thinning phantom detections, and the dead-call guards."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from table_helpers import CARD, exps, flags_of, player, read, table

from companion.rules.matcher import rack_viability
from companion.rules.tiles import ALL_CODES
from companion.table import MIN_CONFIDENCE, TableReader
from companion.table_decode import WILD, decode_run, plausible_runs
from companion.table_group import thin_row
from companion.table_guards import WEAK_FRAME_SHARE
from vision.render import RenderedTable
from vision.types import Detections

CLASSES = tuple(ALL_CODES)  # the classifier's 45 classes


def probs(*rows: dict[str, float]) -> np.ndarray:
    """Rows of class probabilities; what a row does not name shares the rest evenly."""
    out = np.zeros((len(rows), len(CLASSES)))
    for i, row in enumerate(rows):
        rest = (1 - sum(row.values())) / (len(CLASSES) - len(row))
        out[i] = [row.get(c, rest) for c in CLASSES]
    return out


def test_neighbours_vouch_for_a_doubtful_tile() -> None:
    p = probs({"5D": 0.8}, {"5D": 0.3, "6D": 0.35}, {"5D": 0.8})
    assert CLASSES[int(p[1].argmax())] == "6D"  # alone, the middle tile is misread
    codes, conf = decode_run(p, CLASSES)
    assert codes == ["5D", "5D", "5D"]
    assert conf[1] > MIN_CONFIDENCE > 0.35


def test_a_different_tile_keeps_its_own_reading() -> None:
    codes, _ = decode_run(probs({"5D": 0.9}, {"5D": 0.9}, {"5D": 0.9}, {"N": 0.9}), CLASSES)
    assert codes == ["5D", "5D", "5D", "N"]


def test_a_joker_inside_a_pung_stays_a_joker_and_backs_are_not_kinds() -> None:
    codes, conf = decode_run(probs({"W": 0.9}, {"J": 0.9}, {"W": 0.6, "BK": 0.3}), CLASSES)
    assert codes == ["W", "J", "W"]
    assert min(conf) > MIN_CONFIDENCE


def test_without_jokers_a_joker_reading_is_its_exposures_kind() -> None:
    p = probs({"N": 0.9}, {"J": 0.8, "N": 0.1}, {"N": 0.9})
    assert decode_run(p, CLASSES)[0][1] == "J"
    assert decode_run(p, CLASSES, jokers=False)[0] == ["N", "N", "N"]


def test_chows_step_along_a_suit_only_where_chows_are_played() -> None:
    p = probs({"1B": 0.5, "2B": 0.3}, {"2B": 0.45, "1B": 0.35}, {"3B": 0.45, "2B": 0.35})
    assert decode_run(p, CLASSES, chows=True)[0] == ["1B", "2B", "3B"]
    assert decode_run(p, CLASSES, chows=False)[0] != ["1B", "2B", "3B"]


def test_a_run_of_weak_readings_does_not_become_sure_enough_to_kill() -> None:
    """Four tiles each leaning the same wrong way (errors of one run go together)."""
    p = probs(*[{"S": 0.45, "W": 0.35}] * 4)
    codes, conf = decode_run(p, CLASSES)
    assert codes == ["S"] * 4
    assert max(conf) < MIN_CONFIDENCE


def test_thin_row_drops_phantoms_between_tiles_and_keeps_a_spaced_row() -> None:
    along = [213.0, 228.0, 237.0, 262.0, 288.0, 313.0]  # a phantom at 228 between two tiles
    weight = [0.9, 0.5, 0.8, 0.9, 0.9, 0.9]
    assert thin_row(along, weight, 17.0) == [0, 2, 3, 4, 5]
    assert thin_row([50.0, 0.0, 25.0], [0.2, 0.2, 0.2], 17.0) == [1, 2, 0]
    assert thin_row([], [], 17.0) == []


def test_a_weak_tile_keeps_its_rack_from_being_judged() -> None:
    r = table(player("P1", exps("8C 8C J"), exps("N N N", "E E E")))
    assert flags_of(read(r), "wrong_rack") == ["P1-B"]
    det = r.detections()
    weak = next(i for i, t in enumerate(r.tiles) if t.zone == "P1-B" and t.code == "E")
    conf = det.confidence.copy()
    conf[weak] = MIN_CONFIDENCE - 0.05  # a fair guess, not sure enough to kill
    obs = TableReader(r.layout, card=CARD).read(r.image, Detections(det.boxes, det.quads, det.codes, conf))
    assert flags_of(obs, "wrong_rack") == []
    assert flags_of(obs, "unreadable") == ["P1-B"]
    assert obs.zones["P1-B"].exposures == exps("N N N", "E E E")  # still shown as read
    assert min(obs.zones["P1-B"].confidence) == conf[weak]


@pytest.mark.parametrize("total", [27, 25])
def test_no_dead_call_while_a_players_count_is_off(total: int) -> None:
    """A tile the camera missed (total 25) must not turn into a dead-hand call."""
    obs = read(table(player("P1", exps("8C 8C J"), exps("N N N", "E E E"), total=total)))
    if total == 27:
        assert flags_of(obs, "wrong_rack") == ["P1-B"]
    else:
        assert flags_of(obs, "wrong_rack") == []
        count = [f for f in obs.flags if f.kind == "unreadable"]
        assert sorted(f.zone for f in count) == ["P1-A", "P1-B"]  # both racks with exposures
        assert all(f.cause == "count" and "25 tiles" in f.message for f in count)
        assert flags_of(obs, "tile_count") == ["P1-A"]


def test_plausible_runs_keep_whole_exposures_and_refuse_a_tile_read_as_anything() -> None:
    p = probs({"E": 0.5, "W": 0.45}, {"E": 0.5, "W": 0.45}, {"E": 0.5, "W": 0.45})
    runs = plausible_runs(p, CLASSES)
    assert runs is not None
    assert [codes for codes, _ in runs[:2]] == [("E", "E", "E"), ("W", "W", "W")]
    assert runs[0][1] > runs[1][1] > 0.2
    assert all(len(set(codes)) == 1 for codes, _ in runs)  # a mixed exposure is not plausible
    flat = probs({"E": 0.9}, {"E": 0.9}, {"E": 0.06, "W": 0.05, "S": 0.05})  # the third: almost anything
    assert plausible_runs(flat, CLASSES) is None  # its true code may be one no reading names
    assert plausible_runs(probs(*[{"E": 0.9}] * 3), CLASSES) == [(("E", "E", "E"), pytest.approx(1.0))]


def _with_probs(r: RenderedTable, zone: str, code: str, row: dict[str, float]) -> Detections:
    """The table's true detections, with class probabilities; the ``code`` tiles of ``zone`` read as ``row``."""
    det = r.detections()
    p = np.zeros((len(det), len(CLASSES)), np.float32)
    p[np.arange(len(det)), [CLASSES.index(str(c)) for c in det.codes]] = 1.0
    hit = [i for i, t in enumerate(r.tiles) if t.zone == zone and t.code == code]
    p[hit] = probs(*[row] * len(hit))
    conf = p.max(axis=1)
    codes = np.array([CLASSES[int(k)] for k in p.argmax(axis=1)])
    return Detections(det.boxes, det.quads, codes, conf, None, {}, p, CLASSES)


@pytest.mark.parametrize(("other", "called"), [("W", True), ("5D", False)])
def test_a_doubtful_rack_is_dead_only_when_every_plausible_reading_is(other: str, called: bool) -> None:
    """P1-B shows a pung of East; it is nearly as likely to be a pung of ``other``."""
    alive = [not rack_viability(CARD, [[c] * 3]).dead for c in ("E", other)]
    assert alive == [False, not called]  # the card has no hand for an East pung, nor a West one
    r = table(player("P1", exps("8C 8C J"), exps("E E E")))
    obs = TableReader(r.layout, card=CARD).read(r.image, _with_probs(r, "P1-B", "E", {"E": 0.5, other: 0.45}))
    z = obs.zones["P1-B"]
    assert z.uncertain and z.exposures == exps("E E E")
    assert exps(f"{other} {other} {other}") in z.readings
    if called:
        assert flags_of(obs, "wrong_rack") == ["P1-B"] and flags_of(obs, "unreadable") == []
        assert "every other reading" in next(f.message for f in obs.flags if f.kind == "wrong_rack")
    else:
        assert flags_of(obs, "wrong_rack") == [] and flags_of(obs, "unreadable") == ["P1-B"]


def test_with_wild_a_tile_read_as_almost_anything_may_be_any_code() -> None:
    """``wild``: the loose tile may be its neighbours' kind, a joker, or any other code (WILD),
    each kept whatever its odds; the sure tiles keep their own plausible codes."""
    flat = probs({"E": 0.999}, {"E": 0.999}, {"E": 0.06, "W": 0.05, "S": 0.05})
    assert plausible_runs(flat, CLASSES) is None
    runs = plausible_runs(flat, CLASSES, wild=True)
    assert runs is not None
    assert {codes[:2] for codes, _ in runs} == {("E", "E")}
    assert {codes[2] for codes, _ in runs} >= {"E", "J", WILD}
    mixed = probs({"E": 0.999}, {"E": 0.06, "W": 0.05, "S": 0.05}, {"W": 0.999})  # between two kinds
    thirds = {codes[1] for codes, _ in plausible_runs(mixed, CLASSES, wild=True) or []}
    assert {"E", "W", "J", WILD} <= thirds


def _one_loose(r: RenderedTable, zone: str, code: str) -> Detections:
    """The table's true detections with probabilities; the ``code`` tiles of ``zone`` read weakly
    (as that code or South), the last of them as almost anything."""
    det = r.detections()
    p = np.zeros((len(det), len(CLASSES)), np.float32)
    p[np.arange(len(det)), [CLASSES.index(str(c)) for c in det.codes]] = 1.0
    hit = [i for i, t in enumerate(r.tiles) if t.zone == zone and t.code == code]
    p[hit] = probs({code: 0.6, "S": 0.35})[0]
    p[hit[-1]] = probs({code: 0.3, "W": 0.05, "S": 0.05, "N": 0.05, "5D": 0.05})[0]
    codes = np.array([CLASSES[int(k)] for k in p.argmax(axis=1)])
    return Detections(det.boxes, det.quads, codes, p.max(axis=1), None, {}, p, CLASSES)


@pytest.mark.parametrize(("other", "called"), [("W W W", True), ("8C 8C J", False)])
def test_a_tile_read_as_almost_anything_kills_only_when_the_rest_is_dead(other: str, called: bool) -> None:
    """An East of P1-B's pung read as almost anything may be any tile: standing alone it would be
    no exposure, so the rack is judged on the rest.  Beside a West pung (dead alone on the card)
    the hand is dead whatever it is; beside ``8C 8C J`` (live alone) it is not judged."""
    assert rack_viability(CARD, [exps(other)[0]]).dead is called
    r = table(player("P1", exps("1B 1B 1B"), exps(other, "E E E")))
    assert flags_of(read(r), "wrong_rack") == ["P1-B"]  # read surely, the rack is dead
    obs = TableReader(r.layout, card=CARD).read(r.image, _one_loose(r, "P1-B", "E"))
    z = obs.zones["P1-B"]
    assert z.uncertain and z.readings and any(WILD in e for ex in z.readings for e in ex)
    if called:
        assert flags_of(obs, "wrong_rack") == ["P1-B"] and flags_of(obs, "unreadable") == []
        assert "every other reading" in next(f.message for f in obs.flags if f.kind == "wrong_rack")
    else:
        assert flags_of(obs, "wrong_rack") == [] and flags_of(obs, "unreadable") == ["P1-B"]


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
    obs = TableReader(r.layout, card=CARD).read(r.image, _with_probs(r, "P1-B", "5D", row))
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
BETWEEN = ({"8B": 0.998}, {"6B": 0.55, "8B": 0.43}, {"J": 0.998}, {"6B": 0.998}, {"6B": 0.998}, {"6B": 0.998})


def test_a_weak_tile_is_not_left_to_make_a_single_exposure() -> None:
    """No exposure is one or two tiles before a Mah Jongg, so the chain weighs those lengths
    (SHORT): the weak tile joins the sure 8B and the joker, two pungs.  The odds chose its code
    against its own evidence, so it stays doubtful (its rack is not judged on it), and the run's
    plausible readings still hold the other."""
    codes, conf = decode_run(probs(*BETWEEN), CLASSES)
    assert codes == ["8B", "8B", "J", "6B", "6B", "6B"] and conf[1] < MIN_CONFIDENCE <= min(conf[2:])
    assert decode_run(probs(*BETWEEN), CLASSES, short=1.0)[0] == ["8B", "6B", "J", "6B", "6B", "6B"]
    readings = dict(plausible_runs(probs(*BETWEEN), CLASSES) or [])
    assert {("8B", "8B", "J", "6B", "6B", "6B"), ("8B", "6B", "J", "6B", "6B", "6B")} <= set(readings)


def test_an_exposure_may_go_on_past_the_runs_open_end() -> None:
    """A sure 9D closing a run of 9C: at a closed end (a wide gap after it) it would be an
    exposure of one tile, and the chain doubts it; where a narrow gap leaves its exposure room to
    go on into the next run, it keeps its reading."""
    from companion.table_decode import read_run

    run = probs({"9C": 0.99}, {"9C": 0.99}, {"9C": 0.99}, {"9D": 0.985, "9C": 0.005})
    opened, closed = read_run(run, CLASSES, open_ends=(False, True)), read_run(run, CLASSES)
    assert opened.codes == ["9C", "9C", "9C", "9D"] and closed.codes == ["9C"] * 4
    assert read_run(run, CLASSES, short=1.0).codes == ["9C", "9C", "9C", "9D"]
    assert closed.confidence[3] < MIN_CONFIDENCE  # chosen against a sure reading: doubtful


def _tile_probs(r: RenderedTable, rows: dict[int, dict[str, float]]) -> Detections:
    """The table's true detections, with class probabilities; tile ``i`` of the scene read as ``rows[i]``."""
    det = r.detections()
    p = np.zeros((len(det), len(CLASSES)), np.float32)
    p[np.arange(len(det)), [CLASSES.index(str(c)) for c in det.codes]] = 1.0
    for i, row in rows.items():
        p[i] = probs(row)[0]
    codes = np.array([CLASSES[int(k)] for k in p.argmax(axis=1)])
    return Detections(det.boxes, det.quads, codes, p.max(axis=1), None, {}, p, CLASSES)


def test_a_rack_reads_a_weak_tile_into_its_exposure_but_a_display_keeps_its_single() -> None:
    """On a rack of touching exposures, a weak tile is read with its neighbours rather than left a
    single; a displayed Mah Jongg (14 face-up tiles) holds real singles and pairs, and its lone
    1 Bam stays a 1 Bam (the chain alone still doubts it beside the 2 Bams: not judged)."""
    from vision.render import RackScene

    r = table(player("P1", (), exps("8B 8B J", "6B 6B 6B")) | {"P1-B": RackScene(exps("8B 8B J", "6B 6B 6B"), 10, True)})
    second = [i for i, t in enumerate(r.tiles) if t.zone == "P1-B" and t.code == "8B"][1]
    obs = TableReader(r.layout, card=CARD).read(r.image, _tile_probs(r, {second: BETWEEN[1]}))
    assert obs.zones["P1-B"].exposures == exps("8B 8B J", "6B 6B 6B")

    display = RackScene(exps("1B", "2B 2B", "3B 3B 3B", "4B 4B 4B 4B", "5C 5C 5C 5C"), 0, True)
    r = table({"P1-A": display, "P1-B": RackScene((), 13)})
    one = next(i for i, t in enumerate(r.tiles) if t.zone == "P1-A" and t.code == "1B")
    obs = TableReader(r.layout, card=CARD).read(r.image, _tile_probs(r, {one: {"1B": 0.95, "2B": 0.005}}))
    assert obs.zones["P1-A"].exposures[0] == ("1B",)
    assert flags_of(obs, "wrong_rack") == []


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 100_000))
def test_a_live_rack_is_never_called_dead_whatever_its_weak_tiles_are_read_as(seed: int) -> None:
    """Soundness of the dead call on every reading: a rack laid from a card hand (live), read
    surely and rightly but for the naturals of one or two of its exposures, each of which reads
    alike as one wrong code, weakly (the true code at 40 %) or as almost anything (at 0.1 %), and
    now and then a lone tile read so, is never called dead."""
    from collections import Counter

    from companion.rules.tiles import AMERICAN
    from scripts.bench_table_scenes import _card_rack

    rng = np.random.default_rng(seed)
    rack = _card_rack(rng, CARD, Counter(AMERICAN.counts), display=False)
    assume(rack and not rack_viability(CARD, [list(e) for e in rack]).dead)
    r = table(player("P1", (), rack))
    det = r.detections()
    p = np.zeros((len(det), len(CLASSES)), np.float32)
    p[np.arange(len(det)), [CLASSES.index(str(c)) for c in det.codes]] = 1.0
    naturals = [c for c in AMERICAN.counts if c not in ("J", "BK")]
    mine = [i for i, t in enumerate(r.tiles) if t.zone == "P1-B" and t.code not in ("BK", "J")]
    spoilt = [g for g in rng.permutation(len(rack))[: int(rng.integers(1, 3))]]
    groups = [[i for i in mine if r.tiles[i].group == g] for g in spoilt]
    if rng.random() < 0.3:
        groups.append([int(rng.choice(mine))])
    for group in groups:
        true = str(det.codes[group[0]])
        wrong = str(rng.choice([c for c in naturals if c != true]))
        loose = rng.random() < 0.5
        for i in group:
            row = {wrong: 0.3, true: 0.001, "N": 0.05, "5D": 0.05} if loose else {wrong: 0.55, str(det.codes[i]): 0.4}
            p[i] = probs(row)[0]
    codes = np.array([CLASSES[int(k)] for k in p.argmax(axis=1)])
    obs = TableReader(r.layout, card=CARD).read(r.image, Detections(det.boxes, det.quads, codes, p.max(axis=1),
                                                                      None, {}, p, CLASSES))
    assert "P1-B" not in flags_of(obs, "wrong_rack"), (rack, obs.zones["P1-B"].exposures)


@pytest.mark.parametrize(("back", "face"), [(0.32, 0.24), (0.9, 0.05)])
def test_a_face_read_weakly_as_a_back_in_an_exposure_row_is_read_with_its_run(back: float, face: float) -> None:
    """The middle 9 Dot of ``9D 9D 9D J`` read as a plain back at 0.32, its own face at 0.24 (a far
    rack at 1280x720): a back lies in the backs' row, not in an exposure, so a weak one there is read
    as its likeliest face and the run reads whole (the tile stays uncertain).  Read as a back at
    0.9, it stays a back: most likely the localiser's phantom in a gap (it still counts)."""
    r = table(player("P1", exps("9D 9D 9D J", "N N N")))
    det = r.detections()
    a = [i for i, t in enumerate(r.tiles) if t.zone == "P1-A" and t.code == "9D"]
    middle = sorted(a, key=lambda i: float(det.quads[i][:, 0].mean()))[1]
    rows = [{str(c): 0.99} for c in det.codes]
    rows[middle] = {"BK": back, "9D": face, "9B": 0.2}
    p = probs(*rows).astype(np.float32)
    codes = np.array([CLASSES[int(k)] for k in p.argmax(axis=1)])
    assert codes[middle] == "BK"
    obs = TableReader(r.layout, card=CARD).read(
        r.image, Detections(det.boxes, det.quads, codes, p.max(axis=1), probs=p, classes=CLASSES))
    z, hidden = obs.zones["P1-A"], sum(1 for t in r.tiles if t.zone == "P1-A" and t.code == "BK")
    if back < MIN_CONFIDENCE:
        assert z.exposures == exps("9D 9D 9D J", "N N N")
        assert z.face_down == hidden and len(z.uncertain) >= 1
    else:
        assert exps("9D 9D 9D J") != z.exposures[:1]
        assert z.face_down == hidden + 1
