"""Tile-count invariants of rules-spec 2.4 (SIA-05/06/20, CHN-03), per variant.

``held`` = every tile a player holds on both racks (concealed + exposed + a declared Mah Jongg
display), never discards or flowers.  Off turn: ``hand_total`` (27, Chinese 13); on turn +1;
WP and Chinese +1 per declared kong.  Too many is always a dead hand; too few only where the
ruleset says so (MJM, Chinese) and is otherwise a warning.
"""

from __future__ import annotations

from dataclasses import dataclass

from companion.rules.state_types import PlayerState, RackStatus
from companion.rules.variants import SiameseRules

MJ_TILES = 14


@dataclass(frozen=True)
class CountCheck:
    """An observed count against the expected one."""

    expected: int
    observed: int
    too_few_dead: bool

    @property
    def ok(self) -> bool:
        return self.expected == self.observed

    @property
    def cause(self) -> str | None:
        if self.observed > self.expected:
            return "too many"
        if self.observed < self.expected:
            return "too few"
        return None

    @property
    def dead(self) -> bool:
        return self.cause == "too many" or (self.cause == "too few" and self.too_few_dead)

    def message(self, who: str) -> str:
        verdict = "dead hand" if self.dead else "check the count"
        return f"{who} holds {self.observed} tiles, expected {self.expected}: {self.cause} ({verdict})"


def expected_total(rules: SiameseRules, player: PlayerState, on_turn: bool) -> int:
    """tot(p): 27 off turn, 28 on turn (Chinese 13/14), + kongs where kongs draw a replacement."""
    kongs = player.kongs if rules.kong_replacement else 0
    return rules.hand_total + kongs + (1 if on_turn else 0)


def expected_outside_mahjong(rules: SiameseRules, player: PlayerState, on_turn: bool) -> int:
    """Tiles outside the player's Mah Jongg displays: after a 1st MJ, 13 off turn and 14 on turn
    (Grad 18A: a wrong count for the 2nd rack kills it)."""
    return expected_total(rules, player, on_turn) - MJ_TILES * player.mahjongs


def expected_after_deal(rules: SiameseRules, seat: int) -> int:
    """Right after the deal: East 28 / others 27 (Grad, Royale, WP); MJM 27 / 27 before East draws."""
    east, other = rules.deal
    return east if seat == 0 else other


def check_count(rules: SiameseRules, player: PlayerState, observed: int, on_turn: bool) -> CountCheck:
    return CountCheck(expected_total(rules, player, on_turn), observed, rules.too_few_dead)


def check_deal(rules: SiameseRules, seat: int, observed: int) -> CountCheck:
    """Misdeal check (SIA-06): Grad redeals for too many only; MJM also for too few."""
    return CountCheck(expected_after_deal(rules, seat), observed, rules.too_few_dead)


def check_rack_counts(rules: SiameseRules, player: PlayerState, rack_counts: tuple[int, ...]) -> list[str]:
    """Per-rack problems: with ``mj_rack_exclusive`` a Mah Jongg rack holds exactly its 14 tiles.

    Without it (Grad 2-hand, MJM) per-rack counts are free (SIA-10): only totals matter."""
    problems = []
    if len(rack_counts) != len(player.racks):
        return [f"expected {len(player.racks)} rack counts, got {len(rack_counts)}"]
    for i, (rack, n) in enumerate(zip(player.racks, rack_counts, strict=True)):
        if rack.status is RackStatus.MAHJONG and rules.mj_rack_exclusive and n != MJ_TILES:
            problems.append(f"{player.name} rack {i} shows a Mah Jongg with {n} tiles, expected exactly 14")
        if rack.status is RackStatus.MAHJONG and n < MJ_TILES:
            problems.append(f"{player.name} rack {i} Mah Jongg display has {n} tiles, fewer than 14")
    return problems
