"""Golden settlement cases (tests/rules/data/settle_*.json) and settlement properties."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from companion.rules.settle import pot_payout, settle, settle_record
from companion.rules.variants import get_variant

DATA = Path(__file__).parent / "data"
CASES = sorted(DATA.glob("settle_*.json"))
ROOT = Path(__file__).resolve().parents[2]


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_golden_settlement(path: Path) -> None:
    case = _load(path)
    rules = get_variant(case["variant"], **case.get("options", {}))
    got = settle_record(rules, case["record"]).to_dict()
    for key, expected in case["expected"].items():
        assert got[key] == expected, f"{path.name}: {key}"


def test_golden_files_cover_every_worked_example() -> None:
    names = {p.stem.removeprefix("settle_") for p in CASES}
    for example in ("g1", "g2", "g3", "g4a", "g4b", "m1", "m2", "m3", "r1", "r2",
                    "w1", "w2", "w3", "w4", "w5", "w6a", "w6b"):
        assert example in names


def test_cli_settle_json_matches_golden() -> None:
    case = _load(DATA / "settle_g1.json")
    proc = subprocess.run(
        [sys.executable, "-m", "companion", "settle", "--variant", "grad", "--json"],
        input=json.dumps(case["record"]), capture_output=True, text=True, cwd=ROOT, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["totals"] == case["expected"]["totals"]
    assert out["payments"] == case["expected"]["payments"]


@pytest.mark.parametrize("stdin, needle", [
    ("{not json", "invalid JSON"),
    ('{"players": ["A", "B"], "events": [{"type": "mahjong", "player": "Z", "value": 25}]}', "'Z'"),
    ('{"players": ["A", "B"], "events": [{"type": "boom"}]}', "'boom'"),
    ('{"players": ["A", "B"], "events": [], "options": {"penalty": 5}}', "penalty"),
])
def test_cli_settle_bad_input_exits_2(stdin: str, needle: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "companion", "settle", "--variant", "mjm", "--json"],
        input=stdin, capture_output=True, text=True, cwd=ROOT, check=False,
    )
    assert proc.returncode == 2
    assert needle in proc.stderr


def test_singles_pairs_alias_and_first_mj_exclusion() -> None:
    rules = get_variant("grad")
    ev = [{"type": "mahjong", "player": "A", "value": 50, "jokerless": True, "singles_pairs": True}]
    assert settle(rules, ["A", "B"], ev).totals["A"] == 50
    off = get_variant("grad", jokerless_sp_excluded=False)
    assert settle(off, ["A", "B"], ev).totals["A"] == 100


def test_matcher_bonus_eligible_field_is_respected() -> None:
    ev = [{"type": "mahjong", "player": "A", "value": 30, "jokerless": True, "bonus_eligible": False}]
    assert settle(get_variant("grad"), ["A", "B"], ev).totals["A"] == 30
    ev[0]["bonus_eligible"] = True
    assert settle(get_variant("grad"), ["A", "B"], ev).totals["A"] == 60


def test_royale_quint_gets_no_jokerless_double_only_with_eight_copies() -> None:
    ev = [{"type": "mahjong", "player": "A", "value": 40, "jokerless": True, "has_quint": True}]
    players = ["A", "B", "C", "D"]
    assert settle(get_variant("royale"), players, ev).totals["A"] == 40
    assert settle(get_variant("royale", copies=4), players, ev).totals["A"] == 80


def test_two_dead_printed_value_option() -> None:
    ev = [{"type": "mahjong", "player": "A", "value": 30, "jokerless": True},
          {"type": "dead", "player": "B"}, {"type": "dead", "player": "B"}]
    assert settle(get_variant("grad"), ["A", "B"], ev).payments[0].amount == 240
    printed = get_variant("grad", two_dead_value="printed")
    assert settle(printed, ["A", "B"], ev).payments[0].amount == 120


_mj = st.fixed_dictionaries({
    "type": st.just("mahjong"), "player": st.sampled_from(["A", "B"]),
    "value": st.sampled_from([25, 30, 35, 50]), "jokerless": st.booleans(),
    "singles_and_pairs": st.booleans(),
    "claimed_from": st.sampled_from([None, "A", "B"]),
})
_event = st.one_of(_mj, st.fixed_dictionaries({"type": st.just("dead"), "player": st.sampled_from(["A", "B"])}),
                   st.just({"type": "wall_game"}))


@given(st.lists(_event, max_size=12), st.sampled_from(["grad", "mjm", "wp"]))
def test_two_player_payments_sum_to_zero(events: list[dict[str, Any]], variant: str) -> None:
    rules = get_variant(variant)
    result = settle(rules, ["A", "B"], events)
    assert sum(result.net.values()) + result.pot == 0
    between = [p for p in result.payments if "pot" not in (p.payer, p.payee)]
    assert len(between) <= 1
    if between:
        p = between[0]
        assert p.amount == result.totals[p.payee] - result.totals[p.payer] > 0


@given(st.dictionaries(st.sampled_from("ABCD"), st.integers(0, 400), min_size=3, max_size=4),
       st.integers(0, 1000))
def test_pot_payout_pays_out_exactly_the_pot(scores: dict[str, int], cents: int) -> None:
    rules = get_variant("royale")
    paid = pot_payout(rules, scores, cents)
    assert sum(paid.values()) == cents * len(scores)
    assert all(v >= 0 for v in paid.values())
