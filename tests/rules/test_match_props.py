"""Property tests: notation round-trip and the matcher's invariants over random card instances."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from companion.rules.card import Card, Instance, load_card
from companion.rules.matcher import match
from companion.rules.tiles import ALL_CODES, JOKER, format_tiles, parse_tiles

ROOT = Path(__file__).resolve().parents[2]
CARD: Card = load_card(ROOT / "calibration" / "cards" / "example.mjcard")
PICKS = [(h.id, inst) for h in CARD.hands for inst in h.instances]


def realise(instance: Instance, copies: int = 4) -> list[list[str]]:
    """Tiles per group, with jokers where a set holds too few naturals (a quint with one set)."""
    caps = Counter({"F": 2 * copies})
    used: Counter[str] = Counter()
    out = []
    for g in instance:
        tiles = []
        for t in g.tiles:
            used[t] += 1
            over = used[t] > caps.get(t, copies)
            tiles.append(JOKER if over and g.joker_ok else t)
        out.append(tiles)
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(ALL_CODES), max_size=30))
def test_notation_round_trip(codes: list[str]) -> None:
    text = format_tiles(codes)
    assert parse_tiles(text) == codes
    assert parse_tiles(text.lower()) == codes
    assert format_tiles(parse_tiles(text)) == text


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(PICKS), st.randoms(use_true_random=False))
def test_match_is_invariant_under_shuffling(pick: tuple[str, Instance], rnd: random.Random) -> None:
    hand_id, inst = pick
    tiles = [t for g in realise(inst) for t in g]
    found = [m.hand_id for m in match(CARD, tiles)]
    assert hand_id in found
    shuffled = list(tiles)
    rnd.shuffle(shuffled)
    assert [m.hand_id for m in match(CARD, shuffled)] == found


def _joker_groups(inst: Instance) -> list[int]:
    return [i for i, g in enumerate(realise(inst)) if inst[i].joker_ok and any(t != JOKER for t in g)]


def _short_groups(inst: Instance) -> list[int]:
    return [i for i, g in enumerate(inst) if not g.joker_ok and len(g.tiles) <= 2]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([p for p in PICKS if _joker_groups(p[1])]), st.data())
def test_joker_for_a_natural_in_an_eligible_group_still_matches(pick: tuple[str, Instance], data: st.DataObject) -> None:
    hand_id, inst = pick
    groups = realise(inst)
    gi = data.draw(st.sampled_from(_joker_groups(inst)))
    ti = data.draw(st.sampled_from([i for i, t in enumerate(groups[gi]) if t != JOKER]))
    groups[gi][ti] = JOKER
    found = {m.hand_id: m for m in match(CARD, [t for g in groups for t in g])}
    assert hand_id in found and not found[hand_id].jokerless


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([p for p in PICKS if _short_groups(p[1])]), st.data())
def test_joker_in_a_pair_or_single_never_matches(pick: tuple[str, Instance], data: st.DataObject) -> None:
    hand_id, inst = pick
    groups = realise(inst)
    gi = data.draw(st.sampled_from(_short_groups(inst)))
    groups[gi][0] = JOKER
    assert hand_id not in [m.hand_id for m in match(CARD, [t for g in groups for t in g])]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([p for p in PICKS if _joker_groups(p[1]) and not CARD.hand(p[0]).concealed]), st.data())
def test_exposing_an_eligible_group_keeps_the_match(pick: tuple[str, Instance], data: st.DataObject) -> None:
    hand_id, inst = pick
    groups = realise(inst)
    gi = data.draw(st.sampled_from(_joker_groups(inst)))
    exposure = groups.pop(gi)
    concealed = [t for g in groups for t in g]
    assert hand_id in [m.hand_id for m in match(CARD, concealed, [exposure])]
