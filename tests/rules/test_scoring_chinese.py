"""Chinese-style scoring: golden hands (tests/rules/data/chinese_*.json), single sets, settlement."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.rules.chinese import Meld, hand_from_dict, score_hand, set_points, settle_chinese
from companion.rules.chinese.score import player_points

DATA = Path(__file__).parent / "data"
CASES = sorted(DATA.glob("chinese_*.json"))
ROOT = Path(__file__).resolve().parents[2]


def _score(hand: dict[str, Any]) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "companion", "score", "--rules", "chinese", "--json"],
        input=json.dumps(hand), capture_output=True, text=True, cwd=ROOT, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_golden_hand(path: Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    hand = case["hand"]
    result = score_hand(hand_from_dict(hand), hand.get("limit", 1000)).to_dict()
    if "losers" in hand:
        pays = settle_chinese(hand["seat"], result["score"], hand["losers"])
        result["payments"] = [p.to_dict() for p in pays]
    for key, expected in case["expected"].items():
        assert result[key] == expected, f"{path.name}: {key}"


def test_cli_matches_golden_tv4() -> None:
    case = json.loads((DATA / "chinese_tv4.json").read_text(encoding="utf-8"))
    out = _score(case["hand"])
    assert out["score"] == 216
    assert out["payments"] == case["expected"]["payments"]


def test_page_examples_single_sets() -> None:
    assert set_points(Meld("pung", ("E", "E", "E"), concealed=False)) == 4  # TV1
    assert set_points(Meld("kong", ("3B",) * 4, concealed=True)) == 16  # TV2
    assert set_points(Meld("chow", ("3B", "4B", "5B"), concealed=True)) == 0
    assert set_points(Meld("kong", ("9C",) * 4, concealed=True)) == 32


def test_settle_classical_losers_settle_among_themselves() -> None:
    pays = {(p.payer, p.payee): p.amount for p in settle_chinese("S", 216, {"E": 12, "W": 0, "N": 30}, "classical")}
    assert pays[("E", "S")] == 432
    assert pays[("W", "S")] == 216
    assert pays[("W", "N")] == 30
    assert pays[("W", "E")] == 24
    assert pays[("E", "N")] == 36


def test_loser_points_and_east_double_option() -> None:
    hand = hand_from_dict({"concealed": "", "flowers": ["FL3"], "seat": "E"})
    melds = (Meld("pung", ("RD",) * 3, concealed=False), Meld("pung", ("5C",) * 3, concealed=True),
             Meld("chow", ("1B", "2B", "3B"), concealed=True))
    assert player_points(melds, hand) == 12
    assert settle_chinese("S", 216, {"E": 12}, east_double=False)[0].amount == 204


def test_seven_pairs_repeat_option() -> None:
    hand = hand_from_dict({"concealed": "1B 1B 1B 1B 3C 3C 5D 5D E E RD RD 9C 9C", "self_drawn": True})
    assert not score_hand(hand).winning
    assert score_hand(hand, 1000, repeat_pairs=True).limit_hand == "seven_pairs"


def test_negative_difference_pays_nothing() -> None:
    assert settle_chinese("S", 20, {"W": 30}) == []


def test_not_a_winning_hand_is_a_value() -> None:
    result = score_hand(hand_from_dict({"concealed": "1B 2B 4B E E", "exposed": ["RD RD RD", "GD GD GD", "WD WD WD"]}))
    assert not result.winning
    assert "not a winning hand" in result.reason


@pytest.mark.parametrize("hand, needle", [
    ({"concealed": "1B 2B XX"}, "'XX'"),
    ({"exposed": ["1B 1B 1B"]}, "concealed"),
    ({"concealed": "1B 1B", "exposed": ["1B 2B 4B"]}, "1B 2B 4B"),
    ({"concealed": "1B 1B J"}, "'J'"),
    ({"concealed": "1B 1B", "seat": "Q"}, "seat"),
    ({"concealed": "1B 1B", "winning_tile": "9D"}, "9D"),
])
def test_bad_hands_name_the_input(hand: dict[str, Any], needle: str) -> None:
    with pytest.raises(ValueError) as err:
        hand_from_dict(hand)
    assert needle in str(err.value)


def test_cli_bad_json_exits_2() -> None:
    proc = subprocess.run([sys.executable, "-m", "companion", "score", "--rules", "chinese", "--json"],
                          input="{oops", capture_output=True, text=True, cwd=ROOT, check=False)
    assert proc.returncode == 2
    assert "invalid JSON" in proc.stderr


TV4 = json.loads((DATA / "chinese_tv4.json").read_text(encoding="utf-8"))["hand"]
TV5 = json.loads((DATA / "chinese_tv5.json").read_text(encoding="utf-8"))["hand"]


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([TV4, TV5]), st.randoms(use_true_random=False))
def test_score_is_invariant_to_tile_order(hand: dict[str, Any], rnd: Any) -> None:
    tiles = hand["concealed"].split()
    shuffled = list(tiles)
    rnd.shuffle(shuffled)
    other = {**hand, "concealed": " ".join(shuffled).lower()}
    assert score_hand(hand_from_dict(other)).to_dict()["score"] == score_hand(hand_from_dict(hand)).score
