"""Rule variants as options objects: one :class:`SiameseRules` value per ruleset, never a fork.

``VARIANTS`` holds the named presets (``grad``, ``mjm``, ``royale``, ``wp``, ``chinese``) and
:func:`get_variant` returns one with overrides applied.  Where the seeds disagree the defaults
follow rules-spec section 5 (first recommendation each); every choice is an option.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from companion.rules.tiles import TILE_SETS, TileSet

_CHOICES: dict[str, tuple[Any, ...]] = {
    "two_dead": ("x4", "-100", "limit", "continue"),
    "two_dead_value": ("scored", "printed"),
    "claim_priority": ("nmjl", "turn_order"),
    "auto_dead_call": ("warn", "flag", "on_call"),
    "wp_option": (1, 2),
    "players": (2, 3, 4),
    "settlement": ("difference", "pot", "chinese"),
    "chinese_settlement": ("difference", "classical"),
}


class UnknownVariant(ValueError):
    """A variant name that is not in :data:`VARIANTS`."""

    def __init__(self, name: str) -> None:
        super().__init__(f"unknown variant: {name!r} (known: {', '.join(sorted(VARIANTS))})")


@dataclass(frozen=True)
class SiameseRules:
    """Every option a ruleset can set.  Amounts are points unless named ``*_cents``."""

    name: str = "grad"
    players: int = 2
    racks_per_player: int = 2
    tile_set: str = "american"
    copies: int = 4
    deal: tuple[int, int] = (28, 27)
    east_draws: bool = False
    hand_total: int = 27
    kong_replacement: bool = False
    too_few_dead: bool = False
    discard_penalty: int = 20
    two_dead: str = "x4"
    two_dead_value: str = "scored"
    lowest_card_value: int = 25
    wall_game_bonus: int = 0
    wall_pot: int = 0
    mj_rack_exclusive: bool = False
    claim_priority: str = "nmjl"
    jokerless_sp_excluded: bool = True
    royale_quint_no_bonus: bool = False
    correction_before_discard: bool = False
    auto_dead_call: str = "flag"
    second_mj_self_pick_bonus: int = 0
    settlement: str = "difference"
    limit: int = 500
    wp_option: int = 2
    bouquet_value: int = 500
    pot_contribution_cents: int = 300
    cents_per_point: int = 1
    royale_multiplier: int = 3
    east_double: bool = False
    chinese_settlement: str = "difference"
    seven_pairs_repeat: bool = False

    @property
    def chows(self) -> bool:
        """Chinese-style exposures (WP, Chinese): chows, and flowers and seasons set aside singly."""
        return self.name in ("wp", "chinese")

    def __post_init__(self) -> None:
        for key, allowed in _CHOICES.items():
            value = getattr(self, key)
            if value not in allowed:
                raise ValueError(f"option {key}={value!r} is not one of {list(allowed)}")
        if self.tile_set not in TILE_SETS:
            raise ValueError(f"option tile_set={self.tile_set!r} is not one of {sorted(TILE_SETS)}")
        if len(self.deal) != 2 or min(self.deal) < 0:
            raise ValueError(f"option deal={self.deal!r} must be two tile counts (east, other)")

    @property
    def tiles(self) -> TileSet:
        return TILE_SETS[self.tile_set]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict; :func:`rules_from_dict` reads it back."""
        d = asdict(self)
        d["deal"] = list(self.deal)
        return d


OPTION_NAMES: frozenset[str] = frozenset(f.name for f in fields(SiameseRules))

VARIANTS: dict[str, SiameseRules] = {
    "grad": SiameseRules(name="grad"),
    "mjm": SiameseRules(
        name="mjm", deal=(27, 27), east_draws=True, too_few_dead=True, discard_penalty=25,
        two_dead="-100", wall_game_bonus=10, claim_priority="turn_order",
        correction_before_discard=True, auto_dead_call="warn",
    ),
    "royale": SiameseRules(
        name="royale", players=4, tile_set="royale-4", copies=8, two_dead="continue",
        mj_rack_exclusive=True, royale_quint_no_bonus=True, settlement="pot",
    ),
    "wp": SiameseRules(
        name="wp", tile_set="chinese", kong_replacement=True, two_dead="limit", wall_pot=50,
        auto_dead_call="on_call", jokerless_sp_excluded=False, discard_penalty=0,
    ),
    "chinese": SiameseRules(
        name="chinese", players=4, racks_per_player=1, tile_set="chinese", deal=(14, 13),
        hand_total=13, kong_replacement=True, too_few_dead=True, discard_penalty=0,
        two_dead="continue", limit=1000, settlement="chinese", east_double=True,
        jokerless_sp_excluded=False,
    ),
}


def _coerce(key: str, value: Any) -> Any:
    if key == "deal" and isinstance(value, list):
        return tuple(value)
    return value


def _royale_players(base: SiameseRules, players: int) -> dict[str, Any]:
    """A 3-player Royale uses the 296-tile set and, by default, doubles instead of triples."""
    if players == 3:
        return {"tile_set": "royale-3", "royale_multiplier": 2}
    return {"tile_set": "royale-4", "royale_multiplier": 3}


def get_variant(name: str, **overrides: Any) -> SiameseRules:
    """The named preset with ``overrides`` applied; unknown option names raise ValueError."""
    if name not in VARIANTS:
        raise UnknownVariant(name)
    unknown = sorted(set(overrides) - OPTION_NAMES)
    if unknown:
        raise ValueError(f"unknown option(s) for variant {name!r}: {', '.join(unknown)}")
    base = VARIANTS[name]
    changes = {k: _coerce(k, v) for k, v in overrides.items()}
    if name == "royale" and "players" in changes:
        changes = {**_royale_players(base, int(changes["players"])), **changes}
    for key, value in changes.items():
        expected = type(getattr(base, key))
        if expected is bool and not isinstance(value, bool):
            raise ValueError(f"option {key}={value!r} must be true or false")
        if expected is int and (isinstance(value, bool) or not isinstance(value, int)):
            raise ValueError(f"option {key}={value!r} must be an integer")
    return replace(base, **changes)


def rules_from_dict(data: dict[str, Any]) -> SiameseRules:
    """Read :meth:`SiameseRules.to_dict` output (the preset named by ``name``, then overrides)."""
    name = str(data.get("name", "grad"))
    return get_variant(name, **{k: v for k, v in data.items() if k != "name"})
