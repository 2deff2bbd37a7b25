"""Syntax (:class:`HandSpec`) -> concrete instances, and the load-time checks of rules-spec 4.5.

Expansion: colour letters r/g/b get distinct suits (every assignment), ``?`` a free suit per
group, variables every value 1..9 allowed by ``where``, ``shift`` an offset on literal digits,
``|`` and ``||`` every alternative, ``(anyD*n)``/``(anyW*n)`` every dragon/wind.  Instances that
are physically impossible with the card's copies are dropped (a hand with none is an error).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import permutations, product

from companion.rules.card_model import CardIssue, Group, Hand, Instance, group_counts
from companion.rules.card_parse import VARS, GroupSpec, HandSpec, PatternSpec, Simple
from companion.rules.card_where import Constraint
from companion.rules.tiles import DRAGONS, FLOWER, SUITS, WINDS, Suit

HAND_SIZE = 14
MAX_EXPANSION = 20000
"""A hand expanding to more concrete instances than this is refused (narrow it with ``where``)."""
_FIXED = {"F": FLOWER, "N": "N", "E": "E", "W": "W", "S": "S", "0": "WD",
          "RD": "RD", "GD": "GD", "WD": "WD"}
_SHIFTS = {"none": (0,), "any": tuple(range(-8, 9)), "even": tuple(range(-8, 9, 2))}


def _pattern_letters(pattern: PatternSpec) -> list[str]:
    return sorted({a.colour for g in pattern.groups for a in g.alts if a.colour in ("r", "g", "b")})


def _pattern_vars(pattern: PatternSpec) -> list[str]:
    return sorted({b for g in pattern.groups for a in g.alts for b, _ in a.symbols if b in VARS})


def _assignments(names: list[str], constraints: list[Constraint]) -> list[dict[str, int]]:
    """Every value 1..9 per variable that satisfies the constraints reading only these names."""
    usable = [c for c in constraints if set(c.vars) <= set(names)]
    out: list[dict[str, int]] = []

    def extend(env: dict[str, int], i: int) -> None:
        if i == len(names):
            out.append(dict(env))
            return
        for v in range(1, 10):
            env[names[i]] = v
            if all(c.holds(env) for c in usable if set(c.vars) <= set(names[: i + 1])):
                extend(env, i + 1)
        env.pop(names[i], None)

    extend({}, 0)
    return out


def _tiles(simple: Simple, suit: Suit | None, env: dict[str, int], shift: int) -> tuple[str, ...] | None:
    """Concrete codes for one symbols-alternative, or None when a number leaves 1..9."""
    codes: list[str] = []
    for base, off in simple.symbols:
        if base in _FIXED:
            codes.append(_FIXED[base])
            continue
        assert suit is not None
        if base == "D":
            codes.append(suit.dragon)
            continue
        n = (env[base] if base in VARS else int(base) + shift) + off
        if not 1 <= n <= 9:
            return None
        codes.append(f"{n}{suit.value}")
    return tuple(codes)


def _alt_groups(simple: Simple, suits: dict[str, Suit], env: dict[str, int], shift: int) -> list[Group]:
    if simple.explicit:
        kinds = {"anyD": DRAGONS, "anyW": WINDS}.get(simple.explicit, (_FIXED.get(simple.explicit, ""),))
        return [_group((k,) * simple.count, simple.nojoker) for k in kinds]
    options: list[Suit | None]
    if simple.colour == "?":
        options = list(SUITS)
    else:
        options = [suits[simple.colour] if simple.colour else None]
    out = []
    for suit in options:
        tiles = _tiles(simple, suit, env, shift)
        if tiles is not None:
            out.append(_group(tiles, simple.nojoker))
    return out


def _group(tiles: tuple[str, ...], nojoker: bool) -> Group:
    identical = all(t == tiles[0] for t in tiles)
    return Group(tiles, joker_ok=identical and len(tiles) >= 3 and not nojoker)


def _group_choices(group: GroupSpec, suits: dict[str, Suit], env: dict[str, int], shift: int) -> list[Group]:
    seen: dict[Group, None] = {}
    for alt in group.alts:
        for g in _alt_groups(alt, suits, env, shift):
            seen.setdefault(g, None)
    return list(seen)


def expand_pattern(hand: HandSpec, pattern: PatternSpec) -> Iterator[Instance]:
    """Every concrete instance of one pattern (before the feasibility filter)."""
    letters = _pattern_letters(pattern)
    envs = _assignments(_pattern_vars(pattern), hand.where)
    for perm in permutations(SUITS, len(letters)):
        suits = dict(zip(letters, perm, strict=True))
        for env in envs:
            for shift in _SHIFTS.get(hand.shift, (0,)):
                choices = [_group_choices(g, suits, env, shift) for g in pattern.groups]
                if all(choices):
                    yield from product(*choices)


def joker_need(instance: Instance, copies: int) -> tuple[dict[str, int], int]:
    """Naturals beyond the set's copies in no-joker groups (kind -> excess), and jokers needed."""
    nat, tot = group_counts(instance)
    cap = {FLOWER: 2 * copies}
    over = {t: n - cap.get(t, copies) for t, n in nat.items() if n > cap.get(t, copies)}
    jokers = sum(max(0, n - cap.get(t, copies)) for t, n in tot.items())
    return over, jokers


def compile_hand(hand: HandSpec, copies: int, filename: str) -> tuple[Hand | None, list[CardIssue]]:
    """Expand and validate one hand; returns the hand (None on error) and its issues."""
    issues = _static_checks(hand, filename)
    if issues or not hand.patterns or not all(p.complete for p in hand.patterns):
        return None, issues
    instances: dict[Instance, None] = {}
    dropped: list[tuple[Instance, PatternSpec]] = []
    expanded = 0
    for pattern in hand.patterns:
        for inst in expand_pattern(hand, pattern):
            expanded += 1
            if expanded > MAX_EXPANSION:
                return None, [CardIssue(filename, hand.line, pattern.col,
                                        f"hand {hand.id} expands to more than {MAX_EXPANSION} instances; "
                                        "narrow its variables with where")]
            over, jokers = joker_need(inst, copies)
            if over or jokers > 2 * copies:
                dropped.append((inst, pattern))
            else:
                instances.setdefault(inst, None)
    if not instances:
        return None, [_no_instance_issue(hand, dropped, copies, filename)]
    compiled = Hand(hand.id, hand.name, hand.section, hand.value, hand.concealed, hand.jokerless,
                    tuple(instances), hand.note, hand.line, hand.source)
    return compiled, []


def _static_checks(hand: HandSpec, filename: str) -> list[CardIssue]:
    issues: list[CardIssue] = []

    def err(col: int, message: str) -> None:
        issues.append(CardIssue(filename, hand.line, col, message))

    used_vars = {v for p in hand.patterns for v in _pattern_vars(p)}
    for c in hand.where:
        for v in c.vars:
            if v not in used_vars:
                err(c.col, f"constraint {c.text!r} uses {v!r}, which no group of hand {hand.id} uses")
    for p in hand.patterns:
        size = sum(g.alts[0].size for g in p.groups)
        if p.complete and size != HAND_SIZE:
            err(p.col, f"pattern {p.text!r} has {size} tiles; a hand needs {HAND_SIZE}")
    if not issues and hand.patterns:
        for p in hand.patterns:
            if not _assignments(_pattern_vars(p), hand.where):
                err(hand.where_col or p.col, f"the where constraints of hand {hand.id} have no solution in 1..9")
                break
    return issues


def _no_instance_issue(hand: HandSpec, dropped: list[tuple[Instance, PatternSpec]], copies: int,
                       filename: str) -> CardIssue:
    if not dropped:
        col = hand.shift_col or hand.where_col or hand.patterns[0].col
        return CardIssue(filename, hand.line, col, f"hand {hand.id} has no instance: the numbers always leave 1..9")
    inst, pattern = dropped[0]
    over, jokers = joker_need(inst, copies)
    if over:
        kind, excess = next(iter(over.items()))
        limit = 2 * copies if kind == FLOWER else copies
        token = next((g for g, c in zip(pattern.groups, inst, strict=True) if kind in c.tiles and not c.joker_ok),
                     pattern.groups[0])
        return CardIssue(filename, hand.line, token.col,
                         f"{token.text!r} is physically impossible: needs {limit + excess} natural {kind} "
                         f"(no jokers allowed there) but the set has {limit}")
    return CardIssue(filename, hand.line, pattern.col,
                     f"pattern {pattern.text!r} needs {jokers} jokers but the set has {2 * copies}")


def card_warnings(hands: list[Hand], copies: int, filename: str) -> list[str]:
    """Duplicate hands (same instances) and hands needing 4+ jokers in every instance."""
    out: list[str] = []
    seen: dict[frozenset[tuple[tuple[str, ...], ...]], str] = {}
    for h in hands:
        key = frozenset(tuple(sorted(tuple(sorted(g.tiles)) for g in inst)) for inst in h.instances)
        if key in seen:
            out.append(f"{filename}:{h.line}:1: warning: hand {h.id} has the same instances as hand {seen[key]}")
        seen.setdefault(key, h.id)
        least = min(joker_need(inst, copies)[1] for inst in h.instances)
        if least >= 4:
            out.append(f"{filename}:{h.line}:1: warning: hand {h.id} needs at least {least} jokers in every instance")
    return out
