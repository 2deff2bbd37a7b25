"""Reading a rack's touching runs jointly, thinning phantom detections, and the dead calls that rest on
those readings (the guards against weak evidence: test_table_weak_guards.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from table_helpers import CARD, CLASSES, exps, flags_of, player, probs, read, table, with_probs

from companion.rules.matcher import rack_viability
from companion.table import MIN_CONFIDENCE, TableReader
from companion.table_decode import WILD, decode_run, plausible_runs
from companion.table_group import thin_row
from vision.render import RenderedTable
from vision.types import Detections


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


@pytest.mark.parametrize(("other", "called"), [("W", True), ("5D", False)])
def test_a_doubtful_rack_is_dead_only_when_every_plausible_reading_is(other: str, called: bool) -> None:
    """P1-B shows a pung of East; it is nearly as likely to be a pung of ``other``."""
    alive = [not rack_viability(CARD, [[c] * 3]).dead for c in ("E", other)]
    assert alive == [False, not called]  # the card has no hand for an East pung, nor a West one
    r = table(player("P1", exps("8C 8C J"), exps("E E E")))
    obs = TableReader(r.layout, card=CARD).read(r.image, with_probs(r, "P1-B", "E", {"E": 0.5, other: 0.45}))
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
