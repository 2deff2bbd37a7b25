"""Matching racks against a card (rules-spec 4.6): Mah Jongg, exposure viability, nearest hands.

* :func:`match` - every hand that 14 tiles (concealed plus exposures) complete.
* :func:`rack_viability` - can a rack's exposures still become some exposed hand (SIA-12)?
* :func:`nearest` - the hands a partial rack is closest to, by tiles still missing.
* :func:`joker_problems` - what is wrong with one exposure as laid out (NMJ-01/02/05).

All work on :mod:`companion.rules.matcher_index`'s precompiled card.  Every group is made of
identical tiles or is a joker-free cluster, so jokers can go to any joker-eligible group of the
right kind and a count test per tile kind is exact.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from companion.rules.card_model import Card
from companion.rules.matcher_index import CompiledCard, CompiledInstance, GroupKey, bits, compiled
from companion.rules.tiles import BACK, FLOWER, JOKER, NATURAL_CODES, validate_code

_PLAYABLE = frozenset(NATURAL_CODES) | {FLOWER, JOKER}


@dataclass(frozen=True, slots=True)
class Match:
    hand_id: str
    value: int
    jokerless: bool
    bonus_eligible: bool
    singles_and_pairs: bool
    has_quint: bool


@dataclass(frozen=True, slots=True)
class Viability:
    viable: tuple[str, ...]
    dead: bool
    reason: str


@dataclass(frozen=True, slots=True)
class Nearest:
    hand_id: str
    missing: int
    missing_tiles: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Exposure:
    """One exposure as the matcher sees it: its tile kind, size and joker count."""

    kind: str
    size: int
    jokers: int

    @property
    def key(self) -> GroupKey:
        return (self.kind, self.size)


def check_tiles(tiles: Sequence[str], what: str = "tiles") -> list[str]:
    """Canonical codes, refusing codes that cannot be matched (``BK``, Chinese flowers)."""
    out = []
    for raw in tiles:
        code = validate_code(raw)
        if code == BACK:
            raise ValueError(f"{what}: a face-down tile ({raw!r}) cannot be matched; enter what it is")
        if code not in _PLAYABLE:
            raise ValueError(f"{what}: {raw!r} is not a tile of an American set (use F for any flower)")
        out.append(code)
    return out


def to_exposure(tiles: Sequence[str]) -> Exposure:
    """Validate one exposure; raises ValueError naming it when it is malformed."""
    codes = check_tiles(tiles, "exposure")
    naturals = sorted(set(codes) - {JOKER})
    shown = " ".join(codes)
    if not codes:
        raise ValueError("empty exposure")
    if not naturals:
        raise ValueError(f"exposure [{shown}] holds only jokers; it must include a natural tile")
    if len(naturals) > 1:
        raise ValueError(f"exposure [{shown}] mixes {' and '.join(naturals)}; an exposure is one kind plus jokers")
    return Exposure(naturals[0], len(codes), codes.count(JOKER))


def joker_problems(exposure: Sequence[str]) -> list[str]:
    """What is wrong with one exposure as laid out: jokers, mixed tiles or an impossible size."""
    codes = [c.strip().upper() for c in exposure]
    naturals = sorted({c for c in codes if c not in (JOKER, BACK)})
    jokers = codes.count(JOKER)
    problems: list[str] = []
    if not codes:
        return ["empty exposure"]
    if jokers and jokers == len(codes):
        problems.append("an exposure of only jokers: it must include the claimed natural tile (NMJ-02)")
    if len(naturals) > 1:
        problems.append(f"mixed tiles {' '.join(naturals)} in one exposure: it must be one kind plus jokers (NMJ-01)")
    if jokers and len(codes) < 3:
        problems.append(f"a joker in a {'pair' if len(codes) == 2 else 'single'}: jokers only go in groups of 3+ (NMJ-01)")
    if len(codes) > 6:
        problems.append(f"an exposure of {len(codes)} tiles: no group is larger than a sextet (6)")
    elif len(codes) < 3 and not jokers:
        problems.append(f"an exposure of {len(codes)} tile(s): only pungs, kongs, quints and sextets are exposed (NMJ-05)")
    return problems


def _map_exposures(ci: CompiledInstance, exps: Sequence[Exposure]) -> tuple[dict[str, int], dict[str, int]] | None:
    """Remaining (natural needs, total needs) once each exposure takes a distinct group, or None."""
    if not exps:
        return ci.nat, ci.tot
    nat, tot = dict(ci.nat), dict(ci.tot)
    by_key: dict[GroupKey, list[int]] = {}
    for e in exps:
        with_j, plain = by_key.setdefault(e.key, [0, 0])
        by_key[e.key] = [with_j + (e.jokers > 0), plain + (e.jokers == 0)]
    for (kind, size), (with_j, natural) in by_key.items():
        jok = ci.jok.get((kind, size), 0)
        to_plain = min(natural, ci.plain.get((kind, size), 0))
        if with_j + natural - to_plain > jok:
            return None
        tot[kind] -= size * (with_j + natural)
        nat[kind] = nat.get(kind, 0) - size * to_plain
    return nat, tot


def _fits(needs: tuple[dict[str, int], dict[str, int]], avail: dict[str, int], jokers: int) -> bool:
    nat, tot = needs
    for t, a in avail.items():
        if a > tot.get(t, 0) or a < nat.get(t, 0):
            return False
    for t, n in nat.items():
        if n > 0 and t not in avail:
            return False
    return sum(tot.values()) - sum(avail.values()) == jokers


def _candidates(cc: CompiledCard, kinds: Sequence[str], exps: Sequence[Exposure], joker_only: bool) -> int:
    mask = cc.exposed_bits if exps else cc.all_bits
    for t in kinds:
        mask &= cc.kind_bits.get(t, 0)
    for e in exps:
        index = cc.jok_bits if (joker_only or e.jokers) else cc.ident_bits
        mask &= index.get(e.key, 0)
    return mask


def match(card: Card, concealed: Sequence[str], exposures: Sequence[Sequence[str]] = ()) -> list[Match]:
    """Every card hand that the concealed tiles plus these exposures complete, in card order."""
    tiles = check_tiles(concealed, "concealed tiles")
    exps = [to_exposure(e) for e in exposures]
    if len(tiles) + sum(e.size for e in exps) != 14:
        return []
    counts = Counter(tiles)
    jokers = counts.pop(JOKER, 0)
    avail = dict(counts)
    jokerless = jokers == 0 and all(e.jokers == 0 for e in exps)
    cc = compiled(card)
    found: dict[int, CompiledInstance] = {}
    for i in bits(_candidates(cc, list(avail), exps, joker_only=False)):
        ci = cc.instances[i]
        best = found.get(ci.hand)
        if best is not None and best.bonus_eligible:
            continue
        needs = _map_exposures(ci, exps)
        if needs is not None and _fits(needs, avail, jokers):
            found[ci.hand] = ci
    out = []
    for hi in sorted(found):
        ci, hand = found[hi], card.hands[hi]
        out.append(Match(hand.id, hand.value, jokerless, ci.bonus_eligible, ci.singles_and_pairs, ci.has_quint))
    return out


def _possible(ci: CompiledInstance, copies: int, dead: Counter[str]) -> bool:
    """Can the instance still be built when the ``dead`` tiles are out of play?"""
    jokers_needed = 0
    for t, n in ci.tot.items():
        left = (2 * copies if t == FLOWER else copies) - dead.get(t, 0)
        if ci.nat.get(t, 0) > left:
            return False
        jokers_needed += max(0, n - left)
    return jokers_needed <= 2 * copies - dead.get(JOKER, 0)


def rack_viability(card: Card, exposures: Sequence[Sequence[str]], dead_tiles: Sequence[str] = ()) -> Viability:
    """Hands that these exposures (all on one rack) can still become; dead when there are none.

    ``dead_tiles`` are tiles out of play elsewhere (discards, other racks' exposures): a hand
    needing more naturals or jokers than remain is not viable.
    """
    exps = [to_exposure(e) for e in exposures]
    dead = Counter(c for c in (validate_code(t) for t in dead_tiles) if c != BACK)
    cc = compiled(card)
    viable: dict[int, None] = {}
    for i in bits(_candidates(cc, [e.kind for e in exps], exps, joker_only=True)):
        ci = cc.instances[i]
        if ci.hand in viable or not _takes_all(ci, exps):
            continue
        if not dead or _possible(ci, card.copies, dead):
            viable[ci.hand] = None
    ids = tuple(card.hands[h].id for h in sorted(viable))
    return Viability(ids, not ids, "" if ids else _dead_reason(exps, bool(dead)))


def _takes_all(ci: CompiledInstance, exps: Sequence[Exposure]) -> bool:
    need = Counter(e.key for e in exps)
    return all(ci.jok.get(k, 0) >= n for k, n in need.items())


def _dead_reason(exps: Sequence[Exposure], with_dead: bool) -> str:
    shown = " + ".join(f"[{e.size} x {e.kind}]" for e in exps) or "this rack"
    if with_dead:
        return f"no exposed hand on the card can still use {shown} with the tiles left in play"
    return f"no exposed hand on the card has joker-eligible groups for {shown} together (SIA-12)"


def _missing(needs: tuple[dict[str, int], dict[str, int]], held: Counter[str], jokers: int) -> list[str]:
    nat, tot = needs
    missing: list[str] = []
    open_joker_slots: list[str] = []
    for t, total in sorted(tot.items()):
        if total <= 0:
            continue
        n = max(nat.get(t, 0), 0)
        h = held.get(t, 0)
        missing.extend([t] * max(0, n - h))
        free = total - n
        open_joker_slots.extend([t] * max(0, free - max(0, h - n)))
    return sorted(missing + open_joker_slots[jokers:])


def nearest(card: Card, tiles: Sequence[str], exposures: Sequence[Sequence[str]] = (),
            limit: int = 5) -> list[Nearest]:
    """The ``limit`` hands the rack is closest to (fewest tiles missing), jokers counted in."""
    held = Counter(check_tiles(tiles, "tiles"))
    jokers = held.pop(JOKER, 0)
    exps = [to_exposure(e) for e in exposures]
    cc = compiled(card)
    best: dict[int, list[str]] = {}
    for ci in cc.instances:
        if exps and card.hands[ci.hand].concealed:
            continue
        needs = _map_exposures(ci, exps)
        if needs is None:
            continue
        miss = _missing(needs, held, jokers)
        if ci.hand not in best or len(miss) < len(best[ci.hand]):
            best[ci.hand] = miss
    ranked = sorted(best.items(), key=lambda kv: (len(kv[1]), kv[0]))[: max(limit, 0)]
    return [Nearest(card.hands[h].id, len(m), tuple(m)) for h, m in ranked]
