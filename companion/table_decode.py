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


def _posteriors(p: FloatArray, names: list[str], jokers: bool, chows: bool,
                temper: float = 1.0) -> tuple[list[str], FloatArray, FloatArray, list[int], FloatArray, FloatArray]:
    """Forward-backward over kinds: kinds, P(tile i is natural kind k) (n, K), P(tile i is a joker)
    (n,), the likeliest kind of each tile's exposure (Viterbi), and the natural and joker terms of
    each tile's evidence under each kind (n, K).

    ``temper`` < 1 raises the whole model (evidence, joker prior and boundary odds) to that power.
    """
    p = p ** temper
    n = len(p)
    kinds = [c for c in names if c not in (JOKER, BACK)]
    pk = p[:, [names.index(c) for c in kinds]]
    pj = p[:, names.index(JOKER)] if jokers and JOKER in names else np.zeros(n)
    total = pk.sum(axis=1) + pj
    pk = pk / np.maximum(total, 1e-12)[:, None]
    pj = pj / np.maximum(total, 1e-12)
    share = JOKER_SHARE if jokers else 0.0
    natural = (1 - share) ** temper * pk + 1e-9
    joker = share ** temper * pj[:, None]
    emit = natural + joker  # (n, K): the tile under an exposure of kind k
    trans = _transitions(tuple(kinds), chows, SWITCH ** temper)
    fwd = np.empty_like(emit)
    fwd[0] = emit[0] / emit[0].sum()
    for i in range(1, n):
        f = (fwd[i - 1] @ trans) * emit[i]
        fwd[i] = f / f.sum()
    bwd = np.ones_like(emit)
    for i in range(n - 2, -1, -1):
        b = trans @ (emit[i + 1] * bwd[i + 1])
        bwd[i] = b / b.sum()
    post = fwd * bwd
    post /= post.sum(axis=1, keepdims=True)  # (n, K): P(tile i lies in an exposure of kind k)
    return kinds, post * natural / emit, (post * joker / emit).sum(axis=1), _viterbi(emit, trans), natural, joker


def _viterbi(emit: FloatArray, trans: FloatArray) -> list[int]:
    """The likeliest sequence of exposure kinds, one per tile."""
    logt = np.log(trans)
    score = np.log(emit[0])
    back = []
    for i in range(1, len(emit)):
        cand = score[:, None] + logt  # (from, to)
        back.append(cand.argmax(axis=0))
        score = cand.max(axis=0) + np.log(emit[i])
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
             floor: float = ALT_FLOOR) -> RunReading:
    """Codes and posterior confidences for one touching run, tiles in reading order.

    ``probs`` is ``(n, C)`` classifier probabilities with columns named by ``classes``.  Backs
    are not part of a face-up run: their probability is dropped and the rest renormalised.
    ``jokers=False`` (a set without jokers) reads every tile as its exposure's kind.  The codes
    are the likeliest reading of the whole run (Viterbi over exposure kinds, then natural or
    joker per tile); each code's confidence is its posterior marginal with the model tempered
    (:data:`TEMPER`), so that a run's shared errors do not add up to certainty.  Each tile's
    alternatives are its codes whose tempered posterior reaches ``floor``.
    """
    names = list(classes)
    p = np.asarray(probs, np.float64).reshape(-1, len(names))
    kinds, _, _, path, natural, joker = _posteriors(p, names, jokers, chows)
    _, t_nat, t_jok, _, t_natural, t_joker = _posteriors(p, names, jokers, chows, TEMPER)
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
               chows: bool = False) -> tuple[list[str], list[float]]:
    """Codes and posterior confidences for one touching run (:func:`read_run`)."""
    if len(np.asarray(probs)) == 0:
        return [], []
    run = read_run(probs, classes, jokers, chows)
    return run.codes, run.confidence


def plausible_runs(probs: npt.ArrayLike, classes: Sequence[str], jokers: bool = True, chows: bool = False,
                   floor: float = ALT_FLOOR, limit: int = 256) -> list[tuple[tuple[str, ...], float]] | None:
    """:func:`plausible_readings` of the run read from ``probs``."""
    if len(np.asarray(probs)) == 0:
        return [((), 1.0)]
    return plausible_readings(read_run(probs, classes, jokers, chows, floor), floor, limit)


def plausible_readings(run: RunReading, floor: float = ALT_FLOOR,
                       limit: int = 256) -> list[tuple[tuple[str, ...], float]] | None:
    """The whole run's plausible readings with their share of the (tempered) chain's belief.

    Each tile's candidates are its plausible codes; every combination is scored jointly (each
    tile's evidence, a joker taking its neighbours' kind, the odds of each exposure boundary), so
    that readings which mix kinds within one exposure stay unlikely, as the chain finds them.
    Readings whose share reaches ``floor`` are returned, likeliest first.  ``None`` when the
    combinations exceed ``limit``, or when some tile's plausible codes hold less than
    :data:`COVER` of its belief (a tile read as almost anything: its true code may be one that
    was not enumerated, so the run is too doubtful to judge).
    """
    cands = run.alternatives
    combos = 1
    for cand in cands:
        combos *= len(cand)
    if combos > limit:
        return None
    index = {k: i for i, k in enumerate(run.kinds)}
    for i, cand in enumerate(cands):
        held = sum(float(run.t_jok[i]) if code == JOKER else float(run.t_nat[i, index[code]]) for code in cand)
        if held < COVER:
            return None
    natural, joker, trans = run.natural, run.joker, run.trans
    scored = []
    for codes in itertools.product(*cands):
        nat = [i for i, c in enumerate(codes) if c != JOKER]
        if not nat:
            scored.append((codes, float(np.prod(joker[:, 0]))))
            continue
        kind = []
        for i, c in enumerate(codes):
            if c != JOKER:
                kind.append(index[c])
            else:  # a joker stands for its nearest natural neighbour's kind (the left one first)
                left = [j for j in nat if j < i]
                kind.append(index[codes[left[-1] if left else min(nat)]])
        score = 1.0
        for i, c in enumerate(codes):
            score *= joker[i, 0] if c == JOKER else natural[i, kind[i]]
            if i:
                score *= trans[kind[i - 1], kind[i]]
        scored.append((codes, score))
    total = sum(s for _, s in scored) or 1.0
    out = [(tuple(reading), s / total) for reading, s in scored if s / total >= floor]
    return sorted(out, key=lambda cs: -cs[1])
