"""Variants are options objects: presets, overrides, validation, JSON round trip."""

from __future__ import annotations

import json

import pytest

from companion.rules.variants import VARIANTS, SiameseRules, get_variant, rules_from_dict


def test_presets_carry_the_seed_differences() -> None:
    grad, mjm, royale, wp, chinese = (get_variant(n) for n in ("grad", "mjm", "royale", "wp", "chinese"))
    assert (grad.deal, grad.east_draws, grad.discard_penalty, grad.two_dead) == ((28, 27), False, 20, "x4")
    assert (mjm.deal, mjm.east_draws, mjm.discard_penalty, mjm.two_dead) == ((27, 27), True, 25, "-100")
    assert mjm.wall_game_bonus == 10 and mjm.correction_before_discard and mjm.claim_priority == "turn_order"
    assert royale.players == 4 and royale.tiles.total == 304 and royale.mj_rack_exclusive
    assert royale.two_dead == "continue" and royale.royale_quint_no_bonus and royale.copies == 8
    assert wp.tiles.total == 144 and wp.tiles.copies_of("J") == 0 and wp.two_dead == "limit"
    assert wp.wall_pot == 50 and wp.auto_dead_call == "on_call" and wp.wp_option == 2
    assert chinese.limit == 1000 and chinese.hand_total == 13 and chinese.east_double


def test_royale_three_players_uses_the_smaller_set() -> None:
    three = get_variant("royale", players=3)
    assert three.tiles.total == 296 and three.royale_multiplier == 2
    assert get_variant("royale", players=3, royale_multiplier=3).royale_multiplier == 3


def test_unknown_option_names_are_named() -> None:
    with pytest.raises(ValueError, match="discard_penalti"):
        get_variant("grad", discard_penalti=25)


@pytest.mark.parametrize("overrides, needle", [
    ({"two_dead": "x5"}, "two_dead"),
    ({"claim_priority": "loudest"}, "claim_priority"),
    ({"discard_penalty": "20"}, "discard_penalty"),
    ({"mj_rack_exclusive": 1}, "mj_rack_exclusive"),
    ({"tile_set": "plastic"}, "plastic"),
])
def test_bad_option_values_are_named(overrides: dict[str, object], needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        get_variant("grad", **overrides)


def test_unknown_variant() -> None:
    with pytest.raises(ValueError, match="'pung'"):
        get_variant("pung")


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_json_round_trip(name: str) -> None:
    rules = get_variant(name, wall_game_bonus=5)
    back = rules_from_dict(json.loads(json.dumps(rules.to_dict())))
    assert back == rules and isinstance(back, SiameseRules)
