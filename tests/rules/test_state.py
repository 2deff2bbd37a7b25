"""Game state: golden event scripts (tests/rules/data/state_*.json) and unit checks."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from companion.rules.state import (
    Claim,
    GameState,
    RackStatus,
    apply,
    apply_all,
    check_count,
    check_deal,
    check_rack_counts,
    event_from_dict,
    event_to_dict,
    new_game,
    resolve_claims,
)
from companion.rules.state_counts import expected_outside_mahjong
from companion.rules.state_events import Discard, Draw
from companion.rules.variants import get_variant

DATA = Path(__file__).parent / "data"
CASES = sorted(DATA.glob("state_*.json"))


def _run(case: dict[str, Any]) -> tuple[GameState, list[Any]]:
    rules = get_variant(case["variant"], **case.get("options", {}))
    state = new_game(rules, case["players"])
    if "wall" in case:
        state = replace(state, wall=case["wall"])
    return apply_all(state, [event_from_dict(e) for e in case["events"]])


def _check(state: GameState, flags: list[Any], expected: dict[str, Any], name: str) -> None:
    by_name = {p.name: p for p in state.players}
    simple = {"over": state.over, "end_reason": state.end_reason, "wall": state.wall,
              "phase": state.phase.value, "turn": state.players[state.turn].name}
    for key, want in expected.items():
        if key in simple:
            got: Any = simple[key]
        elif key == "held":
            got = {n: by_name[n].held for n in want}
        elif key == "racks":
            got = {n: [r.status.value for r in by_name[n].racks] for n in want}
        elif key == "out":
            got = [p.name for p in state.players if p.out]
        elif key == "exposures":
            got = {n: [[list(e.tiles) for e in r.exposures] for r in by_name[n].racks] for n in want}
        elif key == "flags":
            got = [[f.kind, f.severity] for f in flags]
        else:
            raise AssertionError(f"{name}: unknown expectation {key}")
        assert got == want, f"{name}: {key}: {[f.message for f in flags]}"


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_golden_state_script(path: Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    state, flags = _run(case)
    _check(state, flags, case["expected"], path.name)


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_state_round_trips_through_json(path: Path) -> None:
    state, _ = _run(json.loads(path.read_text(encoding="utf-8")))
    text = json.dumps(state.to_dict())
    assert GameState.from_dict(json.loads(text)) == state


def test_events_round_trip() -> None:
    for path in CASES:
        for raw in json.loads(path.read_text(encoding="utf-8"))["events"]:
            ev = event_from_dict(raw)
            assert event_from_dict(event_to_dict(ev)) == ev


@pytest.mark.parametrize("raw, needle", [
    ({"type": "teleport"}, "teleport"),
    ({"type": "discard", "player": "P1", "tile": "ZZ"}, "ZZ"),
    ({"type": "draw", "player": "P1", "speed": 3}, "speed"),
])
def test_bad_events_name_the_input(raw: dict[str, Any], needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        event_from_dict(raw)


def test_unknown_player_is_a_flag_not_a_crash() -> None:
    state = new_game(get_variant("grad"), ["A", "B"])
    new, flags = apply(state, Draw("Zed"))
    assert new == state
    assert flags[0].severity == "error" and "Zed" in flags[0].message


def test_claim_priority_nmjl_vs_turn_order() -> None:
    claims = [Claim(1, "exposure"), Claim(3, "mahjong"), Claim(2, "double_mahjong")]
    assert resolve_claims("nmjl", 0, 4, claims) == Claim(2, "double_mahjong")
    assert resolve_claims("nmjl", 0, 4, claims[:2]) == Claim(3, "mahjong")
    assert resolve_claims("turn_order", 0, 4, claims[:2]) == Claim(1, "exposure")
    assert resolve_claims("turn_order", 0, 4, claims) == Claim(2, "double_mahjong")
    assert resolve_claims("nmjl", 2, 4, [Claim(1, "mahjong"), Claim(3, "mahjong")]) == Claim(3, "mahjong")
    assert resolve_claims("nmjl", 0, 4, [Claim(0, "mahjong")]) is None


def test_misdeal_checks_differ_between_grad_and_mjm() -> None:
    grad, mjm = get_variant("grad"), get_variant("mjm")
    assert check_deal(grad, 0, 29).dead and check_deal(grad, 0, 29).cause == "too many"
    assert not check_deal(grad, 1, 26).dead and check_deal(grad, 1, 26).cause == "too few"
    assert check_deal(mjm, 1, 26).dead
    assert check_deal(mjm, 0, 27).ok


def test_mj_rack_exclusive_only_for_royale() -> None:
    names = ["A", "B", "C", "D"]
    state = new_game(get_variant("royale"), names)
    a = state.players[0]
    a = a.with_rack(0, replace(a.racks[0], status=RackStatus.MAHJONG))
    assert check_rack_counts(get_variant("royale"), a, (15, 13))
    assert not check_rack_counts(get_variant("grad"), a, (15, 13))
    assert not check_rack_counts(get_variant("royale"), a, (14, 14))


def test_counts_after_a_first_mahjong() -> None:
    rules = get_variant("grad")
    state = new_game(rules, ["A", "B"])
    state, _ = apply(state, event_from_dict({"type": "declare_mahjong", "player": "A", "rack": 0, "hand_id": "x"}))
    a = state.players[0]
    assert (expected_outside_mahjong(rules, a, False), expected_outside_mahjong(rules, a, True)) == (13, 14)
    assert check_count(rules, a, 28, on_turn=True).ok


def test_chinese_counts() -> None:
    state = new_game(get_variant("chinese"), ["E", "S", "W", "N"])
    assert [p.held for p in state.players] == [14, 13, 13, 13]
    assert state.wall == 77


@given(st.lists(st.sampled_from(["draw", "discard"]), max_size=30))
def test_held_totals_follow_turns(actions: list[str]) -> None:
    state = new_game(get_variant("grad"), ["A", "B"])
    for act in actions:
        who = state.players[state.turn].name
        ev = Draw(who) if act == "draw" else Discard(who, "5D")
        state, _ = apply(state, ev)
    on_turn = state.turn
    for i, p in enumerate(state.players):
        expect = 28 if (i == on_turn and state.phase.value == "discard") else 27
        assert p.held == expect
    assert sum(p.held for p in state.players) + state.wall <= 152
