"""Reading a rack's touching run of tiles jointly: one kind per exposure, jokers anywhere.

A tile 10-20 px wide in a table frame is often a coin toss on its own, but the tiles of one
exposure are the same kind (plus jokers), and the classifier's probabilities for the three to
six tiles of a run say together what none says alone.  :func:`decode_run` treats a touching run
as a hidden Markov chain over kinds: each tile belongs to the exposure of the current kind and
is that kind or a joker; the kind changes between neighbours only at an exposure boundary,
which costs :data:`SWITCH` (the odds of a boundary to one particular kind against carrying on).
The codes are the chain's likeliest reading (Viterbi); forward-backward on the tempered chain
gives each tile's confidence, so a tile the neighbours vouch for becomes confident, and a tile
that is truly different keeps its own reading.

The chain also counts each exposure's tiles: before a Mah Jongg no exposure is one or two tiles,
so an exposure ending that short pays :data:`SHORT` (not on a displayed Mah Jongg, nor at an end
of the run that may go on past a narrow gap).  Those odds choose codes only; confidences, and the
plausible readings a dead call weighs, come from the chain without them.

With chows (Chinese-style and WP tables) the chain may also step to the next rank of a suit.
The returned confidences are posteriors; a reader that keeps its "uncertain, never judged"
rule on them still never calls a rack dead on a guess.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from companion.rules.tiles import BACK, JOKER, rank_of, suit_of

SWITCH = 0.01
"""Odds of an exposure boundary into one particular kind, against the run carrying on."""
JOKER_SHARE = 0.15
"""Prior share of jokers among the tiles of an exposure (where the set has jokers)."""
TEMPER = 0.7
"""The confidences come from the chain raised to this power (evidence, joker prior and boundary
odds): the tiles of a run are seen under one light and one blur, so their errors go together,
and a run read as one wrong kind must not look certain (it could call a live hand dead)."""

ALT_FLOOR = 0.02
"""A code whose tempered posterior reaches this is a plausible reading of its tile
(:func:`read_run`): a rack is called dead only when every plausible reading is dead."""

COVER = 0.95
"""A run is enumerated only when each tile's plausible codes hold this much of its belief."""

FloatArray = npt.NDArray[np.float64]


SHORT = 0.3
"""Odds of an exposure ending after one tile, and again after two, against it going on: before
a Mah Jongg no exposure is a single or a pair (a pair exposed is an error the rules flag, and its
clear tiles outweigh these odds), so a weak tile that would leave one or two tiles of a kind on
their own is read with its neighbours.  Not used on a rack showing a Mah Jongg, whose singles and
pairs are real, nor with chows.  The odds choose a tile's code, never how sure it is."""

LENGTHS = 3
"""The chain's states count an exposure's tiles up to this (1, 2, 3 or more)."""


@lru_cache(maxsize=16)
def _transitions(kinds: tuple[str, ...], chows: bool, switch: float) -> FloatArray:
    """Kind-to-kind odds (K, K), built once per class list (read-only: shared between calls)."""
    k = len(kinds)
    t = np.full((k, k), switch, np.float64)
    np.fill_diagonal(t, 1.0)
    if chows:
        for i, c in enumerate(kinds):
            r, s = rank_of(c), suit_of(c)
            nxt = [j for j, d in enumerate(kinds) if r is not None and s is not None
                   and suit_of(d) == s and rank_of(d) == r + 1]
            for j in nxt:
                t[i, j] = 1.0
    t.flags.writeable = False
    return t


def _ends(short: float) -> FloatArray:
    """Odds of an exposure ending after 1, 2, 3 or more tiles (LENGTHS,)."""
    return np.array([short] * (LENGTHS - 1) + [1.0], np.float64)


@lru_cache(maxsize=16)
def _length_transitions(kinds: tuple[str, ...], switch: float, short: float) -> FloatArray:
    """The chain over (kind, tiles so far) states, state ``d * K + k`` (LENGTHS * K, LENGTHS * K):
    carrying on raises the count (up to LENGTHS), a boundary into another kind starts it at one
    and pays the odds of the exposure ending at its count.  Read-only: shared between calls."""
    k = len(kinds)
    end = _ends(short)
    t = np.zeros((LENGTHS * k, LENGTHS * k), np.float64)
    switch_block = np.full((k, k), switch, np.float64)
    np.fill_diagonal(switch_block, 0.0)
    for d in range(LENGTHS):
        nxt = min(d + 1, LENGTHS - 1)
        t[d * k:(d + 1) * k, nxt * k:(nxt + 1) * k] += np.eye(k)
        t[d * k:(d + 1) * k, 0:k] += switch_block * end[d]
    t.flags.writeable = False
    return t


def _evidence(p: FloatArray, names: list[str], jokers: bool,
              temper: float = 1.0) -> tuple[list[str], FloatArray, FloatArray]:
    """Kinds, and the natural and joker terms of each tile's evidence under each kind (n, K),
    the model raised to ``temper``."""
    p = p ** temper
    n = len(p)
    kinds = [c for c in names if c not in (JOKER, BACK)]
    pk = p[:, [names.index(c) for c in kinds]]
    pj = p[:, names.index(JOKER)] if jokers and JOKER in names else np.zeros(n)
    total = pk.sum(axis=1) + pj
    pk = pk / np.maximum(total, 1e-12)[:, None]
    pj = pj / np.maximum(total, 1e-12)
    share = JOKER_SHARE if jokers else 0.0
    return kinds, (1 - share) ** temper * pk + 1e-9, share ** temper * pj[:, None]


def _likeliest(p: FloatArray, names: list[str], jokers: bool, chows: bool, short: float,
               open_ends: tuple[bool, bool]) -> tuple[list[str], list[int], FloatArray, FloatArray]:
    """Kinds, the likeliest kind of each tile's exposure (Viterbi), and the natural and joker
    terms of each tile's evidence (n, K).  With ``short`` < 1 (without chows) the chain runs over
    (kind, tiles so far) states and weighs an exposure of one or two tiles by ``short``
    (:data:`SHORT`), except at an end of the run that ``open_ends`` (start, end) says may go on
    past a narrow gap."""
    kinds, natural, joker = _evidence(p, names, jokers)
    emit, k = natural + joker, len(kinds)
    if not (short < 1.0 and not chows):
        return kinds, _viterbi(emit, _transitions(tuple(kinds), chows, SWITCH)), natural, joker
    start = np.zeros(LENGTHS * k)
    first = LENGTHS - 1 if open_ends[0] else 0  # an open start: its exposure began before
    start[first * k:(first + 1) * k] = 1.0
    final = np.ones(LENGTHS * k) if open_ends[1] else np.repeat(_ends(short), k)
    states = _viterbi(np.tile(emit, (1, LENGTHS)), _length_transitions(tuple(kinds), SWITCH, short), start, final)
    return kinds, [s % k for s in states], natural, joker


def _posteriors(p: FloatArray, names: list[str], jokers: bool, chows: bool,
                temper: float = 1.0) -> tuple[list[str], FloatArray, FloatArray, FloatArray, FloatArray]:
    """Forward-backward over kinds, without the length odds (they choose codes, never how sure a
    tile is): kinds, P(tile i is natural kind k) (n, K), P(tile i is a joker) (n,), and the natural
    and joker terms of each tile's evidence under each kind (n, K).  ``temper`` < 1 raises the
    whole model (evidence, joker prior and boundary odds) to that power.
    """
    kinds, natural, joker = _evidence(p, names, jokers, temper)
    emit = natural + joker  # (n, K): the tile under an exposure of kind k
    trans = _transitions(tuple(kinds), chows, SWITCH ** temper)
    fwd = np.empty_like(emit)
    fwd[0] = emit[0] / emit[0].sum()
    for i in range(1, len(emit)):
        f = (fwd[i - 1] @ trans) * emit[i]
        fwd[i] = f / f.sum()
    bwd = np.ones_like(emit)
    for i in range(len(emit) - 2, -1, -1):
        b = trans @ (emit[i + 1] * bwd[i + 1])
        bwd[i] = b / b.sum()
    post = fwd * bwd
    post /= post.sum(axis=1, keepdims=True)  # (n, K): P(tile i lies in an exposure of kind k)
    return kinds, post * natural / emit, (post * joker / emit).sum(axis=1), natural, joker


def _viterbi(emit: FloatArray, trans: FloatArray, start: FloatArray | None = None,
             final: FloatArray | None = None) -> list[int]:
    """The likeliest sequence of states, one per tile (``start`` and ``final``: each state's
    odds at the run's first and last tile)."""
    with np.errstate(divide="ignore"):
        logt = np.log(trans)
        score = np.log(emit[0]) + (np.log(start) if start is not None else 0.0)
        back = []
        for i in range(1, len(emit)):
            cand = score[:, None] + logt  # (from, to)
            back.append(cand.argmax(axis=0))
            score = cand.max(axis=0) + np.log(emit[i])
        if final is not None:
            score = score + np.log(final)
    path = [int(score.argmax())]
    for b in reversed(back):
        path.append(int(b[path[-1]]))
    return path[::-1]


@dataclass(frozen=True)
class RunReading:
    """One touching run read jointly: ``codes`` and ``confidence`` (see :func:`read_run`), each
    tile's plausible codes (``alternatives``: its own first, then every other code, a joker
    included, whose tempered posterior reaches the floor, likeliest first), and the tempered
    chain that :func:`plausible_readings` scores whole readings with."""

    codes: list[str]
    confidence: list[float]
    alternatives: list[tuple[str, ...]]
    kinds: list[str]
    t_nat: FloatArray  # (n, K) tempered P(tile i is natural kind k)
    t_jok: FloatArray  # (n,) tempered P(tile i is a joker)
    natural: FloatArray  # (n, K) tempered natural term of each tile's evidence under each kind
    joker: FloatArray  # (n, K) tempered joker term
    trans: FloatArray  # (K, K) tempered kind-to-kind odds


def read_run(probs: npt.ArrayLike, classes: Sequence[str], jokers: bool = True, chows: bool = False,
             floor: float = ALT_FLOOR, short: float = SHORT,
             open_ends: tuple[bool, bool] = (False, False)) -> RunReading:
    """Codes and posterior confidences for one touching run, tiles in reading order.

    ``probs`` is ``(n, C)`` classifier probabilities with columns named by ``classes``.  Backs
    are not part of a face-up run: their probability is dropped and the rest renormalised.
    ``jokers=False`` (a set without jokers) reads every tile as its exposure's kind.  The codes
    are the likeliest reading of the whole run (Viterbi over exposure kinds, then natural or
    joker per tile, exposures of one or two tiles weighed by ``short``); each code's confidence
    is its posterior marginal with the model tempered (:data:`TEMPER`) and without the length
    odds, so that a run's shared errors do not add up to certainty and a code the length odds
    chose over the tile's own evidence stays doubtful.  Each tile's
    alternatives are its codes whose tempered posterior reaches ``floor``.  ``short``: the odds of
    an exposure of one or two tiles (:data:`SHORT`; 1.0 where singles and pairs are real, as on a
    rack showing a Mah Jongg).  ``open_ends``: whether the run's first and last exposures may go on
    past a narrow gap into the next run (their lengths are then not weighed).
    """
    names = list(classes)
    p = np.asarray(probs, np.float64).reshape(-1, len(names))
    kinds, path, natural, joker = _likeliest(p, names, jokers, chows, short, open_ends)
    # how sure each code is comes from the chain without the length odds: they may choose a
    # tile's code, never make it surer (nor narrow the plausible readings a dead call weighs)
    _, t_nat, t_jok, t_natural, t_joker = _posteriors(p, names, jokers, chows, TEMPER)
    codes, conf = [], []
    for i, k in enumerate(path):
        if joker[i, 0] > natural[i, k]:
            codes.append(JOKER)
            conf.append(float(t_jok[i]))
        else:
            codes.append(kinds[k])
            conf.append(float(t_nat[i, k]))
    alts: list[tuple[str, ...]] = []
    for i, code in enumerate(codes):
        others = [(float(t_nat[i, k]), kinds[k]) for k in np.flatnonzero(t_nat[i] >= floor) if kinds[k] != code]
        if code != JOKER and t_jok[i] >= floor:
            others.append((float(t_jok[i]), JOKER))
        alts.append((code, *(c for _, c in sorted(others, reverse=True))))
    trans = _transitions(tuple(kinds), chows, SWITCH ** TEMPER)
    return RunReading(codes, conf, alts, kinds, t_nat, t_jok, t_natural, t_joker, trans)


def decode_run(probs: npt.ArrayLike, classes: Sequence[str], jokers: bool = True,
               chows: bool = False, short: float = SHORT) -> tuple[list[str], list[float]]:
    """Codes and posterior confidences for one touching run (:func:`read_run`)."""
    if len(np.asarray(probs)) == 0:
        return [], []
    run = read_run(probs, classes, jokers, chows, short=short)
    return run.codes, run.confidence


def plausible_runs(probs: npt.ArrayLike, classes: Sequence[str], jokers: bool = True, chows: bool = False,
                   floor: float = ALT_FLOOR, limit: int = 256,
                   short: float = SHORT, wild: bool = False) -> list[tuple[tuple[str, ...], float]] | None:
    """:func:`plausible_readings` of the run read from ``probs``."""
    if len(np.asarray(probs)) == 0:
        return [((), 1.0)]
    return plausible_readings(read_run(probs, classes, jokers, chows, floor, short), floor, limit, wild)


WILD = "?"
"""A code standing for "some tile not otherwise named" in :func:`plausible_readings` with
``wild``: a tile of a kind unlike every neighbour it could group with.  No hand is judged on an
exposure that holds one."""


def _wild_domains(run: RunReading, loose: list[int]) -> list[tuple[str, ...]]:
    """Each tile's candidates when the ``loose`` tiles may be anything: a loose tile takes, beside
    its own plausible codes, every natural code its neighbours in the run may take (to a fixed
    point, so a row of loose tiles passes them along), a joker, and :data:`WILD` for any other
    code.  What matters to the grouping is only whether a tile is its neighbour's kind, a joker
    or another kind, so these cover every code the tile may truly be."""
    cands = [list(c) for c in run.alternatives]
    jokers = bool(np.any(run.t_jok > 0))
    changed = True
    while changed:
        changed = False
        for i in loose:
            near = [c for j in (i - 1, i + 1) if 0 <= j < len(cands) for c in cands[j] if c not in (JOKER, WILD)]
            for c in [*near, *([JOKER] if jokers else []), WILD]:
                if c not in cands[i]:
                    cands[i].append(c)
                    changed = True
    return [tuple(c) for c in cands]


def plausible_readings(run: RunReading, floor: float = ALT_FLOOR, limit: int = 256,
                       wild: bool = False) -> list[tuple[tuple[str, ...], float]] | None:
    """The whole run's plausible readings with their share of the (tempered) chain's belief.

    Each tile's candidates are its plausible codes; every combination is scored jointly (each
    tile's evidence, a joker taking its neighbours' kind, the odds of each exposure boundary), so
    that readings which mix kinds within one exposure stay unlikely, as the chain finds them.
    Readings whose share reaches ``floor`` are returned, likeliest first.  ``None`` when the
    combinations exceed ``limit``, or when some tile's plausible codes hold less than
    :data:`COVER` of its belief (a tile read as almost anything: its true code may be one that
    was not enumerated, so the run is too doubtful to judge).

    With ``wild``, such a loose tile is not the end of it: it may be anything
    (:func:`_wild_domains`, :data:`WILD` among its candidates), every one of its candidates is
    kept whatever its odds, and the floor weighs the other tiles' readings alone (their share
    among the readings of the run without the loose tiles).
    """
    index = {k: i for i, k in enumerate(run.kinds)}
    loose = []
    for i, cand in enumerate(run.alternatives):
        held = sum(float(run.t_jok[i]) if code == JOKER else float(run.t_nat[i, index[code]]) for code in cand)
        if held < COVER:
            loose.append(i)
    if loose and not wild:
        return None
    cands = _wild_domains(run, loose) if loose else run.alternatives
    combos = 1
    for cand in cands:
        combos *= len(cand)
    if combos > limit:
        return None
    firm = [i for i in range(len(cands)) if i not in loose]
    natural, joker, trans = run.natural[firm], run.joker[firm], run.trans
    shares: dict[tuple[str, ...], float] = {}
    for codes in itertools.product(*(cands[i] for i in firm)):
        shares[codes] = _score(codes, index, natural, joker, trans)
    total = sum(shares.values()) or 1.0
    out = []
    for codes in itertools.product(*cands):
        share = shares[tuple(codes[i] for i in firm)] / total
        if share >= floor:
            out.append((tuple(codes), share))
    return sorted(out, key=lambda cs: -cs[1])


def _score(codes: tuple[str, ...], index: dict[str, int], natural: FloatArray, joker: FloatArray,
           trans: FloatArray) -> float:
    """The tempered chain's odds of one reading of a run: each tile's evidence, a joker taking its
    nearest natural neighbour's kind (the left one first), the odds of each exposure boundary."""
    if not codes:
        return 1.0
    nat = [i for i, c in enumerate(codes) if c != JOKER]
    if not nat:
        return float(np.prod(joker[:, 0]))
    kind = []
    for i, c in enumerate(codes):
        if c != JOKER:
            kind.append(index[c])
        else:
            left = [j for j in nat if j < i]
            kind.append(index[codes[left[-1] if left else min(nat)]])
    score = 1.0
    for i, c in enumerate(codes):
        score *= joker[i, 0] if c == JOKER else natural[i, kind[i]]
        if i:
            score *= trans[kind[i - 1], kind[i]]
    return float(score)
