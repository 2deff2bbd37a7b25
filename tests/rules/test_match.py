"""Matching: golden cases from plain files, exposure viability, nearest hands, joker problems."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from companion.rules.card import Card, load_card
from companion.rules.matcher import joker_problems, match, nearest, rack_viability

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[2]
CARDS = {
    "match_example.golden": DATA / "example-card.mjcard",
    "match_shipped.golden": ROOT / "calibration" / "cards" / "example.mjcard",
}
_loaded: dict[Path, Card] = {}


def _card(path: Path) -> Card:
    if path not in _loaded:
        _loaded[path] = load_card(path)
    return _loaded[path]


def _rows(name: str) -> list[list[str]]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [[p.strip() for p in ln.split("|")] for ln in lines if ln.strip() and not ln.startswith("#")]


def _groups(text: str) -> list[list[str]]:
    return [g.split() for g in re.findall(r"\[([^\]]*)\]", text)]


MATCH_CASES = [(name, *row) for name in CARDS for row in _rows(name)]


@pytest.mark.parametrize(("golden", "hand", "tiles", "exposed", "expect"), MATCH_CASES)
def test_match_golden(golden: str, hand: str, tiles: str, exposed: str, expect: str) -> None:
    card = _card(CARDS[golden])
    found = {m.hand_id: m for m in match(card, tiles.split(), _groups(exposed))}
    words = expect.split()
    if words[0] == "no":
        assert hand not in found
        return
    assert words[0] == "ok" and hand in found, sorted(found)
    m = found[hand]
    assert m.value == card.hand(hand).value
    assert m.jokerless == ("jokerless" in words)
    assert m.bonus_eligible == ("nobonus" not in words)
    assert m.singles_and_pairs == ("sp" in words)
    assert m.has_quint == ("quint" in words)


@pytest.mark.parametrize(("exposed", "dead", "expect"), [tuple(r) for r in _rows("viability_example.golden")])
def test_viability_golden(exposed: str, dead: str, expect: str) -> None:
    card = _card(DATA / "example-card.mjcard")
    v = rack_viability(card, _groups(exposed), [] if dead == "-" else dead.split())
    if expect == "dead":
        assert v.dead and v.viable == () and v.reason
    else:
        assert not v.dead and v.viable == tuple(expect.split()) and v.reason == ""


def test_every_golden_file_is_used() -> None:
    sources = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").rglob("test_*.py"))
    goldens = sorted(p.name for p in DATA.glob("*.golden"))
    assert {"match_example.golden", "viability_example.golden", "card_errors.golden"} <= set(goldens)
    assert [g for g in goldens if g not in sources] == []


def test_concealed_tiles_need_14_in_all() -> None:
    card = _card(DATA / "example-card.mjcard")
    assert match(card, "F F F 2B 2B 4B 4B 4B 6C 6C 8C 8C 8C".split()) == []
    assert match(card, "F F F 2B 2B 4B 4B 4B 6C 6C 8C 8C 8C 8C 8C".split()) == []


@pytest.mark.parametrize(("tiles", "exposed", "fragment"), [
    ("F F F 2B 2B 4B 4B 4B 6C 6C 8C 8C 8C BK", [], "face-down"),
    ("F F F 2B 2B 4B 4B 4B 6C 6C 8C 8C 8C FL1", [], "'FL1' is not a tile of an American set"),
    ("F F F 2B 2B 4B 4B 4B 6C 6C 8C", [["8C", "8C", "9C"]], "mixes 8C and 9C"),
    ("F F F 2B 2B 4B 4B 4B 6C 6C 8C", [["J", "J", "J"]], "only jokers"),
    ("F F F 2B 2B 4B 4B 4B 6C 6C 8C 8C 8C XX", [], "'XX'"),
])
def test_bad_input_is_a_clear_value_error(tiles: str, exposed: list[list[str]], fragment: str) -> None:
    with pytest.raises(ValueError, match=re.escape(fragment)):
        match(_card(DATA / "example-card.mjcard"), tiles.split(), exposed)


@pytest.mark.parametrize(("exposure", "expected"), [
    (["8C", "J", "8C"], []),
    (["N", "N", "N", "N", "J", "J"], []),
    (["J", "J", "J"], ["only jokers"]),
    (["8C", "9C", "J"], ["mixed tiles 8C 9C"]),
    (["8C", "J"], ["joker in a pair"]),
    (["J"], ["only jokers", "joker in a single"]),
    (["8C", "8C"], ["2 tile(s)"]),
    (["8C"] * 4 + ["J"] * 3, ["7 tiles"]),
    ([], ["empty exposure"]),
])
def test_joker_problems(exposure: list[str], expected: list[str]) -> None:
    problems = joker_problems(exposure)
    assert len(problems) == len(expected), problems
    for problem, fragment in zip(problems, expected, strict=True):
        assert fragment in problem


def test_nearest_counts_jokers_and_missing_tiles() -> None:
    card = _card(DATA / "example-card.mjcard")
    best = nearest(card, "F F F 2B 2B 4B 4B 6C 8C 8C J".split(), limit=2)
    assert best[0].hand_id == "ev1" and best[0].missing == 3
    assert best[0].missing_tiles == ("6C", "8C", "8C")
    assert len(best) == 2 and best[1].missing >= 3
    full = nearest(card, "F F F 2B 2B 4B 4B 4B 6C 6C 8C 8C 8C 8C".split(), limit=1)
    assert full[0].hand_id == "ev1" and full[0].missing == 0 and full[0].missing_tiles == ()


def test_nearest_respects_exposures_and_concealed_hands() -> None:
    card = _card(DATA / "example-card.mjcard")
    # no hand has a pung of West: nothing is near, not even the concealed sp1 (it takes no exposure)
    assert nearest(card, "1D 1D 3D 3D 5D 5D 7D 7D 9D 9D E E".split(), [["W", "W", "W"]], limit=20) == []
    ranked = nearest(card, "7B 7B 7C".split(), [["N", "N", "N", "N"]], limit=20)
    assert [n.hand_id for n in ranked] == ["ln1", "ln2"]
    assert (ranked[0].missing, ranked[1].missing) == (7, 10)  # ln2 needs an even x: S kong + 2 pungs
    assert nearest(card, [], limit=0) == []


def test_royale_quint_exception_and_nojoker_groups() -> None:
    from companion.rules.card import parse_card

    line = 'hand q "Q" : NN xxxxxg xxxxxr DDb ; exposed ; 40\nhand p "P" : !FFFF 1111g 9999g 55r ; exposed ; 30\n'
    tiles = "N N 8C 8C 8C 8C 8C 8B 8B 8B 8B 8B WD WD".split()
    royale = parse_card('card "r" copies=8\n' + line)
    one_set = parse_card('card "o"\n' + line)
    (m8,) = match(royale, tiles)
    assert m8.has_quint and m8.jokerless and not m8.bonus_eligible
    (m4,) = match(one_set, tiles)  # five naturals cannot exist in one set, but the count test alone decides
    assert m4.has_quint and m4.bonus_eligible
    # a no-joker group is not exposable before Mah Jongg, but a natural display of it matches at Mah Jongg
    assert rack_viability(one_set, [["F", "F", "F", "F"]]).dead
    assert [m.hand_id for m in match(one_set, "1B 1B 1B 1B 9B 9B 9B 9B 5C 5C".split(), [["F"] * 4])] == ["p"]
    assert match(one_set, "1B 1B 1B 1B 9B 9B 9B 9B 5C 5C".split(), [["F", "F", "J", "F"]]) == []
