"""A card precompiled for fast matching: per-instance tile counts and bitset indexes.

Each distinct instance (groups as a multiset) becomes a :class:`CompiledInstance` holding its
natural needs (tiles in no-joker groups), total needs, and its exposable groups by
``(kind, size)``.  Bitsets (Python ints, bit i = instance i) index instances by the kinds they
use and the identical groups they hold, so a rack is only checked against plausible instances.
:func:`compiled` caches the result per card object.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from companion.rules.card_model import Card, Hand, Instance, group_counts

GroupKey = tuple[str, int]
"""An identical group by tile kind and size, e.g. ``("8C", 4)`` for a kong of 8 Craks."""


@dataclass(frozen=True)
class CompiledInstance:
    hand: int
    nat: dict[str, int]
    tot: dict[str, int]
    jok: dict[GroupKey, int]
    plain: dict[GroupKey, int]
    singles_and_pairs: bool
    has_quint: bool
    bonus_eligible: bool


@dataclass
class CompiledCard:
    card: Card
    instances: list[CompiledInstance] = field(default_factory=list)
    kind_bits: dict[str, int] = field(default_factory=dict)
    ident_bits: dict[GroupKey, int] = field(default_factory=dict)
    jok_bits: dict[GroupKey, int] = field(default_factory=dict)
    exposed_bits: int = 0
    all_bits: int = 0


def _bonus(hand: Hand, instance: Instance, has_quint: bool, copies: int) -> bool:
    if hand.jokerless_mode == "no":
        return False
    if copies >= 8 and has_quint:
        return False
    return hand.jokerless_mode == "yes" or any(g.joker_ok for g in instance)


def compile_instance(hand_index: int, hand: Hand, instance: Instance, copies: int) -> CompiledInstance:
    nat, tot = group_counts(instance)
    jok: Counter[GroupKey] = Counter()
    plain: Counter[GroupKey] = Counter()
    for g in instance:
        if g.identical:
            (jok if g.joker_ok else plain)[(g.tiles[0], len(g.tiles))] += 1
    sp = all(not g.identical or len(g.tiles) < 3 for g in instance)
    quint = any(g.identical and len(g.tiles) >= 5 for g in instance)
    return CompiledInstance(hand_index, dict(nat), dict(tot), dict(jok), dict(plain), sp, quint,
                            _bonus(hand, instance, quint, copies))


def build(card: Card) -> CompiledCard:
    cc = CompiledCard(card)
    for hi, hand in enumerate(card.hands):
        seen: set[tuple[tuple[tuple[str, ...], bool], ...]] = set()
        for inst in hand.instances:
            key = tuple(sorted((g.tiles, g.joker_ok) for g in inst))
            if key in seen:
                continue
            seen.add(key)
            _add(cc, compile_instance(hi, hand, inst, card.copies), hand.concealed)
    return cc


def _add(cc: CompiledCard, ci: CompiledInstance, concealed: bool) -> None:
    bit = 1 << len(cc.instances)
    cc.instances.append(ci)
    cc.all_bits |= bit
    if not concealed:
        cc.exposed_bits |= bit
    for t in ci.tot:
        cc.kind_bits[t] = cc.kind_bits.get(t, 0) | bit
    for key in ci.jok:
        cc.jok_bits[key] = cc.jok_bits.get(key, 0) | bit
        cc.ident_bits[key] = cc.ident_bits.get(key, 0) | bit
    for key in ci.plain:
        cc.ident_bits[key] = cc.ident_bits.get(key, 0) | bit


def bits(mask: int) -> Iterator[int]:
    """Indexes of the set bits of ``mask``, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


_CACHE: dict[int, CompiledCard] = {}
_CACHE_SIZE = 16


def compiled(card: Card) -> CompiledCard:
    """The compiled form of ``card``, built once per card object."""
    cc = _CACHE.get(id(card))
    if cc is not None and cc.card is card:
        return cc
    cc = build(card)
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[id(card)] = cc
    return cc
