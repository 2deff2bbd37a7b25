"""The card language: the spec's example card, load-time checks, errors with FILE:LINE:COL."""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.rules.card import CardError, Group, load_card, parse_card

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = DATA / "example-card.mjcard"
SHIPPED = ROOT / "calibration" / "cards" / "example.mjcard"


def _golden(name: str) -> list[str]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [ln for ln in lines if ln.strip() and not ln.startswith("#")]


def test_example_card_header_and_order() -> None:
    card = load_card(EXAMPLE)
    assert card.name == "Example practice card (original hands)"
    assert card.copies == 4 and card.jokers == 8
    assert [h.id for h in card.hands] == ["ev1", "ev2", "ln1", "ln2", "rn1", "rn2", "zr1", "qn1", "qn2", "ch1", "sp1"]
    assert card.hand("sp1").concealed and not card.hand("ev1").concealed
    assert card.hand("qn2").value == 45 and card.hand("rn2").section == "Runs"


@pytest.mark.parametrize("line", _golden("card_sizes.golden"))
def test_example_compiled_sizes(line: str) -> None:
    hand_id, size = line.split()
    assert len(load_card(EXAMPLE).hand(hand_id).instances) == int(size)


def test_every_instance_has_14_tiles_and_derived_joker_rules() -> None:
    for card in (load_card(EXAMPLE), load_card(SHIPPED)):
        for hand in card.hands:
            for inst in hand.instances:
                assert sum(len(g.tiles) for g in inst) == 14, hand.id
                for g in inst:
                    if g.joker_ok:
                        assert g.identical and len(g.tiles) >= 3, (hand.id, g)


def test_colours_dragons_and_zero() -> None:
    card = load_card(EXAMPLE)
    ev2 = card.hand("ev2")
    for inst in ev2.instances:
        suit = inst[0].tiles[0][1]
        dragon = inst[2].tiles[0]
        assert dragon in ("RD", "GD", "WD")
        assert dragon != {"C": "RD", "B": "GD", "D": "WD"}[suit]  # opposite dragon
        assert inst[3] == Group(("N", "E", "W"), False)
    zr1 = card.hand("zr1").instances[0]
    assert zr1[0].tiles[1:3] == ("WD", "WD") and not zr1[0].joker_ok


def test_shift_and_where() -> None:
    card = load_card(EXAMPLE)
    firsts = {inst[0].tiles[0][0] for inst in card.hand("rn1").instances}
    assert firsts == {"1", "2", "3", "4", "5"}
    for inst in card.hand("rn2").instances:
        assert int(inst[2].tiles[0][0]) == int(inst[0].tiles[0][0]) + 1
    assert {inst[2].tiles[0][0] for inst in card.hand("ln2").instances} == {"2", "4", "6", "8"}


def test_nojoker_explicit_and_chow_groups() -> None:
    card = parse_card('card "t"\nhand a "A" : !FFFF (anyW*3) ~xg (RD*2) NN ; exposed ; 25 ; where x<=2\n')
    insts = card.hand("a").instances
    assert len(insts) == 4 * 2 * 3
    first = insts[0]
    assert first[0] == Group(("F",) * 4, False)
    assert first[1].joker_ok and first[1].kind in ("N", "E", "W", "S")
    assert first[2].tiles == ("1B", "2B", "3B") and not first[2].joker_ok
    assert first[3] == Group(("RD", "RD"), False)


def test_whole_pattern_alternatives_and_aliases() -> None:
    text = 'card "t" copies=8\nhand a "A" : FFFF 2222g 4444g 66r || FFFF 1111g 3333g 55r ; C ; 30 ; jokerless=no\n'
    card = parse_card(text)
    hand = card.hand("a")
    assert card.copies == 8 and card.jokers == 16
    assert hand.concealed and hand.jokerless_mode == "no" and len(hand.instances) == 12


@pytest.mark.parametrize("line", _golden("card_errors.golden"))
def test_error_names_line_and_column(line: str) -> None:
    text, expected = line.split(" ==> ")
    col, fragment = expected.split(": ", 1)
    with pytest.raises(CardError) as info:
        parse_card('card "t"\n' + text, "t.mjcard")
    issues = info.value.issues
    assert len(issues) == 1, str(info.value)
    assert (issues[0].line, issues[0].col) == (2, int(col)), str(info.value)
    assert fragment in issues[0].message
    assert str(info.value).startswith(f"t.mjcard:2:{col}: ")


def test_every_error_is_reported() -> None:
    text = "\n".join([
        'card "t" copies=5',
        'hand a "A" : FFF 22g 444g 66r 8888r ; exposed ; 25',
        'hand a "B" : FFF 22g 444g 66r 8888r ; exposed ; 25',
        "bogus line",
        'hand c "C" : FF 22g ; exposed ; 25',
    ])
    with pytest.raises(CardError) as info:
        parse_card(text, "multi.mjcard")
    where = [(i.line, i.col) for i in info.value.issues]
    assert where == [(1, 17), (3, 6), (4, 1), (5, 14)]
    assert "copies must be 4" in info.value.issues[0].message
    assert "already used on line 2" in info.value.issues[1].message
    assert len(str(info.value).splitlines()) == 4


def test_header_required_and_empty_card() -> None:
    with pytest.raises(CardError, match=r"<card>:1:1: expected a 'card"):
        parse_card('hand a "A" : FFF 22g 444g 66r 8888r ; exposed ; 25')
    with pytest.raises(CardError, match="no hands"):
        parse_card('card "t"\n# nothing\n')


def test_physical_feasibility_depends_on_copies() -> None:
    line = 'hand a "A" : !11111g 2222r 3333b F ; exposed ; 25\n'
    with pytest.raises(CardError, match="physically impossible"):
        parse_card('card "t"\n' + line)
    assert len(parse_card('card "t" copies=8\n' + line).hand("a").instances) == 6
    # soap as zero and WD share the 4 copies: 5 no-joker whites cannot exist
    with pytest.raises(CardError, match="natural WD"):
        parse_card('card "t"\nhand z "Z" : 1001g 1001r (WD*2) 11b 99b ; exposed ; 25\n')


def test_partly_impossible_hand_keeps_possible_instances() -> None:
    # x == y would need 8 natural tiles of one kind in no-joker kongs: those instances are dropped
    card = parse_card('card "t"\nhand a "A" : !xxxxg !yyyyg NNNN EE ; exposed ; 25 ; where x<=2 & y<=2\n')
    pairs = sorted((i[0].tiles[0], i[1].tiles[0]) for i in card.hand("a").instances)
    assert pairs == [("1B", "2B"), ("1C", "2C"), ("1D", "2D"), ("2B", "1B"), ("2C", "1C"), ("2D", "1D")]
    # with joker-eligible kongs x == y is possible (4 naturals + 4 jokers) and kept
    card = parse_card('card "t"\nhand a "A" : xxxxg yyyyg NNNN EE ; exposed ; 25 ; where x<=2 & y<=2\n')
    assert len(card.hand("a").instances) == 3 * 4
    assert any("needs at least 4 jokers" in w for w in card.warnings) is False


def test_warnings_for_duplicates_and_joker_hungry_hands() -> None:
    text = "\n".join([
        'card "t"',
        'hand a "A" : xxxg xxxr xxxxb NNNN ; exposed ; 25',
        'hand b "B" : xxxr xxxg xxxxb NNNN ; exposed ; 30',
        'hand c "C" : xxxxxxg EE yyyyyyr ; exposed ; 45 ; where y=x+1',
    ])
    card = parse_card(text, "w.mjcard")
    assert card.warnings == (
        "w.mjcard:3:1: warning: hand b has the same instances as hand a",
        "w.mjcard:4:1: warning: hand c needs at least 4 jokers in every instance",
    )


def test_load_card_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.mjcard"
    bad.write_text('card "t"\nhand a "A" : FFF 22q ; exposed ; 25\n', encoding="utf-8")
    with pytest.raises(CardError) as info:
        load_card(bad)
    assert str(info.value).startswith(f"{bad}:2:20: ")
