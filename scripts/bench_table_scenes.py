"""The tables ``scripts/bench_table.py`` draws, and their truth.

:func:`make_scene`: racks drawn from the card (exposures some card hand can use, Mah Jongg
displays) and at random (mostly dead hands), with a rule broken on purpose now and then (a pair
exposed, a joker in a pair, extra backs, a fifth copy); :func:`with_dense_discards`: the
discards laid in rows as a long game leaves them; :func:`truth_zones`: what the reader should
read in each zone.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from companion.rules.card_model import Card
from companion.rules.matcher_index import compiled
from companion.rules.tiles import BACK, JOKER, TileSet, sort_key
from companion.table import ZoneReading
from vision.layout import Layout
from vision.render import RackScene, Scene
from vision.render_scenes import random_scene


def _take(left: Counter[str], tiles: list[str]) -> bool:
    need = Counter(tiles)
    if any(left[c] < n for c, n in need.items()):
        return False
    left.subtract(need)
    return True


def _with_jokers(rng: np.random.Generator, kind: str, size: int, left: Counter[str]) -> list[str]:
    tiles = [kind] * size
    if size >= 3 and left[JOKER] > 0 and rng.random() < 0.4:
        tiles[int(rng.integers(1, size))] = JOKER
    if size > 4 and left[JOKER] > 0:
        tiles[-1] = JOKER  # a quint or sextet needs jokers with one set
    return tiles


def _card_rack(rng: np.random.Generator, card: Card, left: Counter[str], display: bool) -> tuple[tuple[str, ...], ...]:
    """Exposures that some exposed card hand can use, or a whole Mah Jongg display."""
    cc = compiled(card)
    for _ in range(50):
        ci = cc.instances[int(rng.integers(len(cc.instances)))]
        if card.hands[ci.hand].concealed and not display:
            continue
        groups = [(k, s) for (k, s), n in ci.jok.items() for _ in range(n)]
        if display:
            groups += [(k, s) for (k, s), n in ci.plain.items() for _ in range(n)]
            order = rng.permutation(len(groups))
            exps = [_with_jokers(rng, *groups[i], left) if groups[i][1] >= 3 else [groups[i][0]] * groups[i][1] for i in order]
        else:
            if not groups:
                continue
            pick = rng.choice(len(groups), size=int(rng.integers(1, min(3, len(groups)) + 1)), replace=False)
            exps = [_with_jokers(rng, *groups[i], left) for i in pick]
        if _take(left, [c for e in exps for c in e]):
            return tuple(tuple(e) for e in exps)
    return ()


def make_scene(layout: Layout, card: Card, tileset: TileSet, seed: int) -> Scene:
    rng = np.random.default_rng(seed)
    base = random_scene(layout, seed, tileset, discards=0)  # random (mostly dead) racks
    left: Counter[str] = Counter(tileset.counts)
    for rack in base.racks.values():
        left.subtract(c for e in rack.exposures for c in e)
    racks: dict[str, RackScene] = {}
    for p in layout.players:
        zones = [z for z in layout.racks if z.player == p]
        for k, zone in enumerate(zones):
            roll = rng.random()
            exps = base.racks[zone.name].exposures
            if roll < 0.5 or (roll < 0.62 and k == 0):
                left.update(c for e in exps for c in e)
                exps = _card_rack(rng, card, left, display=roll >= 0.5)
            elif roll > 0.9:
                left.update(c for e in exps for c in e)
                exps = ()
            racks[zone.name] = RackScene(exps, 0, touching=bool(rng.random() < 0.1))
        shown = sum(len(e) for z in zones for e in racks[z.name].exposures)
        hidden = max(0, 27 + int(rng.integers(0, 2)) - shown)
        for k, zone in enumerate(zones):
            r = racks[zone.name]
            racks[zone.name] = RackScene(r.exposures, hidden // len(zones) + (k < hidden % len(zones)), r.touching)
    pool = [c for c, n in left.items() for _ in range(max(0, n))]
    picks = rng.choice(len(pool), size=int(rng.integers(4, 20)), replace=False)
    return _inject(rng, Scene(racks, tuple(str(pool[i]) for i in picks)))


def _inject(rng: np.random.Generator, scene: Scene) -> Scene:
    """Sometimes break a rule on purpose: a pair exposed, a joker in a pair, extra backs, a 5th copy."""
    roll = rng.random()
    names = sorted(scene.racks)
    name = names[int(rng.integers(len(names)))]
    rack = scene.racks[name]
    if roll < 0.1 and len(rack.exposures) < 3:
        exp = ("5D", "5D") if rng.random() < 0.5 else ("5D", JOKER)
        rack = RackScene(rack.exposures + (exp,), rack.face_down, rack.touching)
    elif roll < 0.2:
        rack = RackScene(rack.exposures, rack.face_down + 2, rack.touching)
    elif roll < 0.3:
        return Scene(scene.racks, scene.discards + ("RD",) * 5)
    return Scene({**scene.racks, name: rack}, scene.discards)


def with_dense_discards(scene: Scene, tileset: TileSet, n: int, seed: int) -> Scene:
    """``scene`` with ``n`` discards (drawn from the tiles the racks leave) laid in rows, side by
    side, as a long game leaves them (``Scene.dense_discards``)."""
    rng = np.random.default_rng(seed + 2718)
    left: Counter[str] = Counter(tileset.counts)
    for rack in scene.racks.values():
        left.subtract(c for e in rack.exposures for c in e)
    pool = [c for c, k in sorted(left.items()) if c != BACK for _ in range(max(0, k))]
    picks = rng.choice(len(pool), size=min(n, len(pool)), replace=False)
    return Scene(scene.racks, tuple(str(pool[i]) for i in picks), dense_discards=True)


def truth_zones(layout: Layout, scene: Scene) -> dict[str, ZoneReading]:
    zones = {}
    for z in layout.zones:
        if z.kind == "rack":
            rack = scene.racks.get(z.name, RackScene())
            tiles = tuple(c for e in rack.exposures for c in e)
            zones[z.name] = ZoneReading(z.name, z.kind, tiles, rack.exposures, rack.face_down, z.player, z.hand)
        else:
            tiles = tuple(sorted(scene.discards, key=sort_key)) if z.kind == "discards" else ()
            zones[z.name] = ZoneReading(z.name, z.kind, tiles, (), 0, z.player, z.hand)
    return zones
