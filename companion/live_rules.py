"""The rules as the live loop uses them: the card, wrong-rack flags and the hands still open per rack.

:class:`RackRules` wraps a loaded card (:mod:`companion.rules.card`) and the matcher
(:mod:`companion.rules.matcher`): ``flags(obs)`` adds a ``wrong_rack`` flag for every rack whose
exposures no exposed card hand can still use (SIA-12), and ``open_hands(exposures)`` lists the card
hands a rack can still become, with how many tiles each is missing.  Results are cached per
exposure tuple so a stable table costs nothing per frame.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from companion.rules.card import Card, load_card
from companion.rules.matcher import nearest, rack_viability
from companion.rules.variants import get_variant
from companion.table import Flag, TableObservation
from companion.table_flags import MJ_SIZE, RuleContext, judged_on_tiles, rack_flags

DEFAULT_CARD = Path(__file__).resolve().parents[1] / "calibration" / "cards" / "example.mjcard"

Exposures = tuple[tuple[str, ...], ...]


@lru_cache(maxsize=8)
def _load_card_cached(path: str, mtime_ns: int) -> Card:
    """Cards are immutable values: parse each file version once per process."""
    return load_card(path)


class RackRules:
    """Card-based checks of rack exposures."""

    def __init__(self, card: Card) -> None:
        self.card = card
        self._viability = lru_cache(maxsize=512)(self._viability_uncached)
        self._open = lru_cache(maxsize=512)(self._open_uncached)
        self._contexts: dict[str, RuleContext] = {}

    @classmethod
    def load(cls, path: str | Path | None) -> RackRules | None:
        p = Path(path) if path else DEFAULT_CARD
        if not p.is_file():
            if path:
                raise FileNotFoundError(f"card file not found: {str(p)!r}")
            return None
        return cls(_load_card_cached(str(p.resolve()), p.stat().st_mtime_ns))

    def _viability_uncached(self, exposures: Exposures) -> tuple[bool, str]:
        v = rack_viability(self.card, [list(e) for e in exposures])
        return v.dead, v.reason

    def _open_uncached(self, exposures: Exposures, limit: int) -> tuple[dict[str, Any], ...]:
        names = {h.id: h for h in self.card.hands}
        out = []
        # the camera sees only the exposures: no concealed tiles are known, so ``tiles`` is empty
        for n in nearest(self.card, [], [list(e) for e in exposures], limit):
            hand = names.get(n.hand_id)
            out.append({"hand": n.hand_id, "name": hand.name if hand else n.hand_id,
                        "value": hand.value if hand else None, "missing": n.missing})
        return tuple(out)

    def context(self, variant: str) -> RuleContext:
        """The table reader's rules for ``variant`` with this card."""
        if variant not in self._contexts:
            rules = get_variant(variant)
            self._contexts[variant] = RuleContext(rules, rules.tiles, self.card)
        return self._contexts[variant]

    def flags(self, obs: TableObservation, variant: str = "mjm") -> TableObservation:
        """``obs`` with a ``wrong_rack`` flag added for every rack whose exposures are dead, and every
        Mah Jongg display not judged yet (no score, and no flag on its tiles: one a player corrected,
        :meth:`companion.live_corrections.Corrections.apply`) judged as the table reader judges one
        (:func:`companion.table_flags.rack_flags` under ``variant``): scored, or called in error.
        A display its player's count holds (cause ``count``, :func:`companion.table_guards.guard_dead_calls`)
        is scored, as the reader scores one, but not called in error: a missed or phantom tile there
        changes a group."""
        extra: list[Flag] = []
        mahjong: dict[str, dict[str, object] | None] = dict(obs.mahjong)
        have = {(f.kind, f.zone) for f in obs.flags}
        for name, z in sorted(obs.zones.items()):
            if z.kind != "rack" or not z.exposures or obs.mahjong.get(name):
                continue
            if len(z.tiles) >= MJ_SIZE:  # a display is judged as a Mah Jongg, not by its exposures
                holds = {f.cause for f in obs.flags if f.zone == name and (f.kind == "unreadable" or judged_on_tiles(f))}
                if holds <= {"count"}:
                    judged, entry, _ = rack_flags(z, self.context(variant))
                    # a player's count off withholds a call in error, not a score (as guard_dead_calls)
                    extra += [f for f in judged if not (holds and f.kind == "wrong_rack")]
                    mahjong[name] = entry
                continue
            if z.uncertain or ("unreadable", name) in have:
                continue  # never call a hand dead on a reading too uncertain to judge
            try:
                dead, reason = self._viability(tuple(tuple(e) for e in z.exposures))
            except ValueError as exc:  # a misread tile code becomes a flag, not a crash
                extra.append(Flag("unreadable", name, str(exc)))
                continue
            if dead and ("wrong_rack", name) not in have:
                extra.append(Flag("wrong_rack", name, reason))
        if not extra and mahjong == obs.mahjong:
            return obs
        return replace(obs, flags=obs.flags + tuple(extra), mahjong=mahjong)

    def open_hands(self, exposures: Exposures, limit: int = 6) -> list[dict[str, Any]]:
        try:
            return list(self._open(tuple(tuple(e) for e in exposures), limit))
        except ValueError:
            return []
