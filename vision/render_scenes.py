"""Seeded random scenes for :func:`vision.render.render_table`: a plausible mid-game table
(:func:`random_scene`) for the benchmarks, the training frames and tests."""

from __future__ import annotations

import numpy as np

from companion.rules.tiles import AMERICAN, BACK, JOKER, NATURAL_CODES, TileSet
from vision.layout import Layout
from vision.render import RackScene, Scene


def _random_group(rng: np.random.Generator, left: dict[str, int], size: int, jokers: bool) -> tuple[str, ...]:
    spare = min(left.get(JOKER, 0), size - 1) if jokers and size >= 3 else 0
    kinds = [c for c in (*NATURAL_CODES, "F") if left.get(c, 0) >= max(1, size - spare)]
    if not kinds:
        if size > 3:
            return _random_group(rng, left, 3, jokers)
        raise ValueError(f"no tiles left for a group of {size}")
    kind = str(rng.choice(kinds))
    n_j = min(max(size - left[kind], int(rng.random() < 0.35)), spare)
    naturals = size - n_j
    left[kind] -= naturals
    left[JOKER] = left.get(JOKER, 0) - n_j
    tiles = [kind] * naturals
    for _ in range(n_j):
        tiles.insert(int(rng.integers(1, len(tiles) + 1)), JOKER)
    return tuple(tiles)


def random_scene(layout: Layout, seed: int, tileset: TileSet = AMERICAN, discards: int | None = None) -> Scene:
    """A plausible mid-game table: exposures of pungs/kongs, sometimes a Mah Jongg display."""
    rng = np.random.default_rng(seed)
    left = dict(tileset.counts)
    jokers = left.get(JOKER, 0) > 0
    racks: dict[str, RackScene] = {}
    for player in layout.players:
        zones = [z for z in layout.racks if z.player == player]
        total = 27 + int(rng.integers(0, 2))
        for i, zone in enumerate(zones):
            if rng.random() < 0.15 and i == 0:
                sizes = [[2, 4, 4, 4], [3, 3, 4, 4], [2, 3, 4, 5]][int(rng.integers(3))]
                groups = tuple(_random_group(rng, left, s, jokers and s >= 3) for s in sizes)
            else:
                groups = tuple(
                    _random_group(rng, left, int(rng.choice([3, 3, 4, 4, 5])), jokers)
                    for _ in range(int(rng.integers(0, 4)))
                )
            racks[zone.name] = RackScene(groups, 0, touching=bool(rng.random() < 0.15))
        shown = sum(len(t) for z in zones for t in racks[z.name].exposures)
        hidden = max(0, total - shown)
        for k, zone in enumerate(zones):
            share = hidden // len(zones) + (1 if k < hidden % len(zones) else 0)
            racks[zone.name] = RackScene(racks[zone.name].exposures, share, racks[zone.name].touching)
    n_disc = int(rng.integers(4, 24)) if discards is None else discards
    pool = [c for c, n in left.items() if c not in (BACK,) for _ in range(n)]
    picks = tuple(str(pool[i]) for i in rng.choice(len(pool), size=min(n_disc, len(pool)), replace=False))
    return Scene(racks, picks)
