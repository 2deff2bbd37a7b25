"""Benchmark the card matcher: ours (precompiled, indexed) beside a naive brute force, one run.

Measures the median and 95th-percentile time of

* ``match``: one 14-tile rack against the full shipped card, and
* ``rack_viability``: one rack's exposures (1-3 of them) against the full card,

over many random racks (half built from real card instances, half random draws from a wall), and
checks that both implementations give the same answers.  Usage::

    python scripts/bench_rules.py [--card calibration/cards/example.mjcard] [--n 1000] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from companion.rules.card import Card, Instance, load_card  # noqa: E402
from companion.rules.card_model import group_counts  # noqa: E402
from companion.rules.matcher import match, rack_viability  # noqa: E402
from companion.rules.matcher_index import compiled  # noqa: E402
from companion.rules.tiles import AMERICAN, JOKER  # noqa: E402

Rack = tuple[list[str], list[list[str]]]


def naive_fit(inst: Instance, concealed: Sequence[str], exposures: Sequence[Sequence[str]]) -> bool:
    """Rules-spec 4.6 literally, from scratch, for one instance."""
    free = list(inst)
    for e in sorted(exposures, key=lambda e: -e.count(JOKER)):
        kind, has_j = next(t for t in e if t != JOKER), JOKER in e
        options = [g for g in free if g.tiles == (kind,) * len(e) and (g.joker_ok or not has_j)]
        if not options:
            return False
        free.remove(min(options, key=lambda g: g.joker_ok))
    nat, tot = group_counts(free)
    avail = Counter(t for t in concealed if t != JOKER)
    if any(not nat[t] <= a <= tot[t] for t, a in avail.items()) or any(n > avail[t] for t, n in nat.items()):
        return False
    return sum(tot.values()) - sum(avail.values()) == concealed.count(JOKER)


def naive_match(card: Card, concealed: Sequence[str], exposures: Sequence[Sequence[str]]) -> list[str]:
    out = []
    for hand in card.hands:
        if hand.concealed and exposures:
            continue
        if any(naive_fit(inst, concealed, exposures) for inst in hand.instances):
            out.append(hand.id)
    return out


def naive_viable(card: Card, exposures: Sequence[Sequence[str]]) -> list[str]:
    def takes(inst: Instance) -> bool:
        free = [g for g in inst if g.joker_ok]
        for e in exposures:
            kind = next(t for t in e if t != JOKER)
            g = next((g for g in free if g.tiles == (kind,) * len(e)), None)
            if g is None:
                return False
            free.remove(g)
        return True

    return [h.id for h in card.hands if not h.concealed and any(takes(i) for i in h.instances)]


def _realise(inst: Instance) -> list[list[str]]:
    used: Counter[str] = Counter()
    groups = []
    for g in inst:
        tiles = []
        for t in g.tiles:
            used[t] += 1
            tiles.append(JOKER if g.joker_ok and used[t] > AMERICAN.copies_of(t) else t)
        groups.append(tiles)
    return groups


def make_racks(card: Card, n: int, rnd: random.Random) -> tuple[list[Rack], list[list[list[str]]]]:
    """``n`` match racks (concealed, exposures) and ``n`` exposure sets for the viability test."""
    wall = [c for c, k in AMERICAN.copies for _ in range(k)]
    picks = [inst for h in card.hands for inst in h.instances]
    racks: list[Rack] = []
    expo_sets: list[list[list[str]]] = []
    for i in range(n):
        groups = _realise(rnd.choice(picks))
        if i % 2:
            racks.append((rnd.sample(wall, 14), []))
        else:
            exposable = [i for i, g in enumerate(groups) if len(g) >= 3 and len(set(g) - {JOKER}) == 1]
            chosen = set(rnd.sample(exposable, rnd.randint(0, min(2, len(exposable)))))
            exposed = [groups[i] for i in sorted(chosen)]
            rest = [t for i, g in enumerate(groups) if i not in chosen for t in g]
            rnd.shuffle(rest)
            racks.append((rest, exposed))
        kind = rnd.choice([c for c, _ in AMERICAN.copies if c != JOKER])
        expo_sets.append([g for g in groups if len(g) >= 3 and len(set(g)) == 1][:2] or [[kind] * 3])
        if i % 3 == 0:
            expo_sets[-1] = expo_sets[-1] + [[kind] * rnd.choice((3, 4))]
    return racks, expo_sets


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    t0 = time.perf_counter()
    result = fn()
    return (time.perf_counter() - t0) * 1000.0, result


def summary(times: list[float]) -> str:
    times = sorted(times)
    return f"{statistics.median(times):8.3f} {times[int(0.95 * (len(times) - 1))]:8.3f}"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--card", default=str(ROOT / "calibration" / "cards" / "example.mjcard"))
    ap.add_argument("--n", type=int, default=1000, help="racks per benchmark")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    card = load_card(args.card)
    rnd = random.Random(args.seed)
    racks, expo_sets = make_racks(card, args.n, rnd)
    compile_ms, _ = timed(lambda: compiled(card))
    rows = []
    ours_t, peer_t, agree, hits = [], [], 0, 0
    for concealed, exposed in racks:
        t1, ours = timed(lambda c=concealed, e=exposed: [m.hand_id for m in match(card, c, e)])
        t2, peer = timed(lambda c=concealed, e=exposed: naive_match(card, c, e))
        ours_t.append(t1)
        peer_t.append(t2)
        agree += ours == peer
        hits += bool(ours)
    rows.append(("match (14 tiles)", ours_t, peer_t, agree, hits))
    ours_t, peer_t, agree, hits = [], [], 0, 0
    for exposures in expo_sets:
        t1, v = timed(lambda e=exposures: rack_viability(card, e))
        t2, peer = timed(lambda e=exposures: naive_viable(card, e))
        ours_t.append(t1)
        peer_t.append(t2)
        agree += list(v.viable) == peer  # type: ignore[attr-defined]
        hits += not v.dead  # type: ignore[attr-defined]
    rows.append(("rack_viability", ours_t, peer_t, agree, hits))
    total = sum(len(h.instances) for h in card.hands)
    print(f"card: {args.card} ({len(card.hands)} hands, {total} instances, "
          f"{len(compiled(card).instances)} distinct); compile once: {compile_ms:.1f} ms; n={args.n}")
    print(f"{'operation':<18} {'ours med':>8} {'ours p95':>8} {'peer med':>8} {'peer p95':>8} "
          f"{'speedup':>8} {'agree':>7} {'hits':>6}")
    for name, ours_times, peer_times, ok, found in rows:
        speed = statistics.median(peer_times) / max(statistics.median(ours_times), 1e-9)
        print(f"{name:<18} {summary(ours_times)} {summary(peer_times)} {speed:7.1f}x {ok:>7} {found:>6}")
    print("times in ms; peer = naive brute force over every instance, no precompiled counts or indexes")
    return 0 if all(r[3] == len(r[1]) for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
