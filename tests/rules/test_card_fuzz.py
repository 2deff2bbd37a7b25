"""Fuzzing the card parser: random and mutated text either loads or raises CardError, nothing else."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from companion.rules.card import Card, CardError, parse_card

EXAMPLE = (Path(__file__).parent / "data" / "example-card.mjcard").read_text(encoding="utf-8")
ALPHABET = st.sampled_from(list('0123456789xyzuvrgb?DFNEWS!|()*~;:"=&+-<>#\n ') + ["||", "anyD", "where", "shift="])


def _loads_or_card_error(text: str) -> None:
    try:
        card = parse_card(text, "fuzz.mjcard")
    except CardError as exc:
        assert exc.issues, "a CardError must carry at least one issue"
        for issue in exc.issues:
            assert issue.file == "fuzz.mjcard" and issue.line >= 1 and issue.col >= 1
        return
    assert isinstance(card, Card) and card.hands
    for hand in card.hands:
        assert hand.instances and all(sum(len(g.tiles) for g in inst) == 14 for inst in hand.instances)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=200))
def test_random_text(text: str) -> None:
    _loads_or_card_error(text)


@settings(max_examples=100, deadline=None)
@given(st.lists(ALPHABET, max_size=60).map("".join))
def test_random_card_like_lines(body: str) -> None:
    _loads_or_card_error('card "f"\nhand a "A" : ' + body)


@st.composite
def mutated_example(draw: st.DrawFn) -> str:
    text = EXAMPLE
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["delete", "insert", "replace"]))
        ch = draw(st.one_of(ALPHABET, st.characters()))
        if op == "delete":
            text = text[:pos] + text[pos + 1:]
        elif op == "insert":
            text = text[:pos] + ch + text[pos:]
        else:
            text = text[:pos] + ch + text[pos + 1:]
    return text


@settings(max_examples=150, deadline=None)
@given(mutated_example())
def test_mutated_example_card(text: str) -> None:
    _loads_or_card_error(text)
