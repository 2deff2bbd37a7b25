"""Tiles laid out of the sheet's order on an enrollment photo (:func:`vision.enroll.enroll_image`):
tiles laid in each other's places (:func:`misplaced`), put back where they belong, and a tile laid
twice in place of another (:func:`laid_twice`), refused.  Both go by what the base classifier
reads each place's tile as, surely.  Two tiles it reads each likelier as the other's than as their
own, though not surely (:func:`doubtful_swaps`), are only named, for the player to look at.  The
crops and their readings are put in a new order by :func:`cycled`; :func:`refuse_laid_twice`
raises :class:`LaidTwiceError`, naming the places, unless the player has said otherwise."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from companion.rules.tiles import FLOWER, is_flower
from vision.enroll_grid import EnrollError

if TYPE_CHECKING:
    from vision.classify import Classified

FloatArray = npt.NDArray[np.float32]
Image = npt.NDArray[np.uint8]


def _read_as_another(read: Sequence[str], confidence: Sequence[float] | FloatArray, codes: Sequence[str],
                     sure: float) -> list[int | None]:
    """For each place, the other place whose code its tile reads at least ``sure`` (a flower or
    season read counts for the layout's ``F``), else None."""
    slot = {c: k for k, c in enumerate(codes)}
    out: list[int | None] = []
    for here, (code, conf) in enumerate(zip(read, confidence, strict=True)):
        code = str(code)
        j = slot.get(code, slot.get(FLOWER) if is_flower(code) else None)
        out.append(j if j is not None and j != here and float(conf) >= sure else None)
    return out


MISPLACED_SURE = 0.5
"""A tile is taken for another slot's only where the base classifier reads it as that slot's code
this surely (:func:`misplaced`).  Fifty-fourth session (a ``/tmp`` script): grid photos of 16
artwork styles, the held-out one and three fonts' line art among them, and layouts photographed on
a table of 5 American sets, 59 layouts in all, each laid right and again with two random tiles
swapped: at 0.3, 0.4, 0.5, 0.6, 0.7, 0.8 and 0.9 no layout laid right had a cycle, and 42, 39, 39,
39, 37, 32 and 14 of the 59 swaps were found.  The swaps missed are of tiles the classifier does
not read surely as themselves (none of the fonts' 9)."""


def misplaced(read: Sequence[str], confidence: Sequence[float] | FloatArray, codes: Sequence[str],
              sure: float = MISPLACED_SURE) -> list[list[int]]:
    """Tiles laid in each other's places: each cycle of slots (layout positions, the first the
    lowest) in which every tile reads at least ``sure`` as the next slot's code and the last as
    the first's, two tiles swapped the commonest.  A tile read surely as another slot's code alone
    (a misreading, or a tile laid twice) makes no cycle; a flower or season read counts for the
    layout's ``F``."""
    nxt = _read_as_another(read, confidence, codes, sure)
    cycles: list[list[int]] = []
    seen: set[int] = set()
    for start in range(len(codes)):
        path: list[int] = []
        k: int | None = start
        while k is not None and k not in seen and k not in path:
            path.append(k)
            k = nxt[k]
        seen.update(path)
        if k is not None and k in path:
            cycle = path[path.index(k):]
            first = cycle.index(min(cycle))
            cycles.append(cycle[first:] + cycle[:first])
    return sorted(cycles)


TWICE_SURE = 0.9
"""A tile is taken for a second copy of another place's tile only where both read as that tile
this surely (:func:`laid_twice`).  Fifty-fourth session (a ``/tmp`` script, the 59 layouts of
:data:`MISPLACED_SURE`, each laid right and again with one random place's tile laid in another's
place as well): at 0.7, 0.8, 0.9 and 0.95, 7, 4, 0 and 0 of the layouts laid right had such a
pair, and 47, 43, 27 and 5 of the 59 tiles laid twice were found."""


def laid_twice(read: Sequence[str], confidence: Sequence[float] | FloatArray, codes: Sequence[str],
               sure: float = TWICE_SURE) -> list[tuple[int, int]]:
    """``(place, other)`` for each place whose tile reads at least ``sure`` as the ``other``
    place's tile, which reads so too: the same tile laid twice, and the place's own missing."""
    other = _read_as_another(read, confidence, codes, sure)
    return [(k, j) for k, j in enumerate(other)
            if j is not None and float(confidence[j]) >= sure and reads_as(str(read[j]), codes[j])]


def reads_as(code: str, place: str) -> bool:
    """Whether a tile read ``code`` is the tile of a place laid out for ``place`` (any flower or
    season for the American layout's ``F``)."""
    return code == place or (place == FLOWER and is_flower(code))


SWAP_ODDS = 10.0
"""Two places' tiles are named as perhaps laid in each other's places (:func:`doubtful_swaps`) only
where the base classifier's readings make the swap at least ``exp(SWAP_ODDS)`` (about 22,000)
times likelier than the places as laid.  Fifty-sixth session (a ``/tmp`` script): 223 layouts,
grid photos of 13 artwork styles and rendered table photos of 5 American sets, drawn twice, each
laid right and again with two random tiles swapped.  The highest log-odds on a layout laid right
were 7.7-7.8 (the held-out ``xm-dorothys``' FL3 and SE2, an ``xm-dorwhite`` set's 5B and 8D).
At 10, no layout laid right is named, and 22 of the 66 swaps (of 226) that :func:`misplaced`
leaves are; at 8, 36 and still none laid right, too near those 7.8; at 7, 5 layouts laid right."""


def place_probabilities(probs: FloatArray, classes: Sequence[str], codes: Sequence[str]) -> FloatArray:
    """``(N, N)``: the probability that the tile in place ``i`` reads as place ``k``'s code (any
    flower or season for the layout's ``F``), from ``(N, C)`` class probabilities over ``classes``."""
    index = {c: n for n, c in enumerate(classes)}
    flowers = [n for n, c in enumerate(classes) if is_flower(c)]
    p = np.asarray(probs, np.float32)
    none = np.zeros(len(p), np.float32)
    cols = [p[:, flowers].sum(axis=1) if c == FLOWER else p[:, index[c]] if c in index else none for c in codes]
    return np.stack(cols, axis=1) if cols else np.zeros((len(p), 0), np.float32)


def doubtful_swaps(probs: FloatArray, classes: Sequence[str], codes: Sequence[str],
                   odds: float = SWAP_ODDS) -> list[tuple[int, int]]:
    """Pairs of places ``(i, j)``, ``i < j``, whose tiles perhaps lie in each other's places: each
    reads likelier as the other place's tile than as its own, and the two readings together make
    the swap at least ``exp(odds)`` times likelier than the places as laid.  The surest pair first,
    each place in one pair at most.  Unlike :func:`misplaced`, which moves tiles the classifier
    reads surely, these are only to be named: a set the models do not know can read so laid right
    (:data:`SWAP_ODDS`)."""
    n = len(codes)
    if n < 2:
        return []
    log_p = np.log(np.clip(place_probabilities(probs, classes, codes), 1e-6, 1.0)).astype(np.float64)
    own = np.diag(log_p)
    gain = log_p + log_p.T - own[:, None] - own[None, :]
    likelier = log_p > own[:, None]
    gain = np.where(likelier & likelier.T, gain, -np.inf)
    np.fill_diagonal(gain, -np.inf)
    pairs: list[tuple[int, int]] = []
    used: set[int] = set()
    for flat in np.argsort(-gain, axis=None, kind="stable"):
        i, j = divmod(int(flat), n)
        if not gain[i, j] >= odds:
            break
        if i < j and i not in used and j not in used:
            pairs.append((i, j))
            used.update((i, j))
    return pairs


class LaidTwiceError(EnrollError):
    """A tile read surely as another place's, which reads so too (:func:`laid_twice`): ``places``,
    the places whose tiles read as another's, for the player to say they are laid right."""

    def __init__(self, message: str, places: Sequence[str]) -> None:
        super().__init__(message)
        self.places = list(places)


def cycled(crops: Image, res: Classified, cycles: Sequence[Sequence[int]]) -> tuple[Image, Classified]:
    """The crops and their readings with each cycle of slots turned: the tile in a cycle's slot
    moved to the slot after it (two slots: exchanged)."""
    order = np.arange(len(crops))
    for cycle in cycles:
        order[np.roll(np.asarray(cycle), -1)] = cycle
    return crops[order], reordered(res, order)


def refuse_laid_twice(res: Classified, codes: Sequence[str], asked: set[int]) -> None:
    """:class:`LaidTwiceError` where a place's tile reads surely as another place's, which reads so
    too, but for the places in ``asked`` (the player's word)."""
    twice = [(k, j) for k, j in laid_twice(res.codes, res.confidence, codes) if k not in asked]
    if twice:
        said = "; ".join(f"the tile in {codes[k]}'s place reads as {res.codes[k]}, as the tile in {codes[j]}'s place does"
                         for k, j in twice)
        right = " ".join(f"--laid-right {codes[k]}" for k, _ in twice)
        raise LaidTwiceError(f"{said}: a tile laid twice and another missing? Lay the sheet's tile in each such place "
                             f"and take the photo again; or, where each tile is the one its place asks for, enroll with "
                             f"{right} (or keep every tile where it lies: --as-laid)", [codes[k] for k, _ in twice])


def reordered(res: Classified, order: npt.NDArray[np.int64]) -> Classified:
    """A classifier's readings of crops in ``order``."""
    from vision.classify import Classified

    return Classified([res.codes[k] for k in order], res.confidence[order], res.probs[order], res.embeddings[order])
