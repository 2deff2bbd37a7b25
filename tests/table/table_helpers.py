"""Shared helpers of the table tests: a fixed phone view, scene builders, a reader."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

from companion.rules.card import load_card
from companion.rules.card_model import Card
from companion.rules.tiles import ALL_CODES, parse_tiles
from companion.table import TableObservation, TableReader
from vision.layout import Layout, load_layout
from vision.render import RackScene, RenderedTable, Scene, View, render_table
from vision.types import Detections

DATA = Path(__file__).resolve().parent / "data"
SIAMESE = load_layout("siamese-2")
CARD: Card = load_card(DATA / "spec-example.mjcard")
VIEW = View(side="bottom", tilt_deg=45.0, size=(1280, 720))


def exps(*groups: str) -> tuple[tuple[str, ...], ...]:
    """``exps("8C 8C J", "N N N N")`` -> exposures as code tuples."""
    return tuple(tuple(parse_tiles(g)) for g in groups)


def player(prefix: str, a: tuple[tuple[str, ...], ...] = (), b: tuple[tuple[str, ...], ...] = (),
           total: int = 27) -> dict[str, RackScene]:
    """Two racks of one player holding ``total`` tiles: exposures face up, the rest as backs."""
    shown = sum(len(e) for e in a + b)
    hidden = max(0, total - shown)
    return {f"{prefix}-A": RackScene(a, hidden // 2), f"{prefix}-B": RackScene(b, hidden - hidden // 2)}


def table(p1: dict[str, RackScene] | None = None, p2: dict[str, RackScene] | None = None,
          discards: str = "", seed: int = 1, layout: Layout = SIAMESE, **kw: object) -> RenderedTable:
    racks = {**(p1 if p1 is not None else player("P1")), **(p2 if p2 is not None else player("P2"))}
    scene = Scene(racks, tuple(parse_tiles(discards)))
    return render_table(layout, scene, seed=seed, view=kw.pop("view", VIEW), **kw)  # type: ignore[arg-type]


def read(r: RenderedTable, variant: str = "mjm", card: Card | None = CARD, low: tuple[int, ...] = (),
         reader: TableReader | None = None, **kw: object) -> TableObservation:
    """Read the rendered table with its true detections; ``low`` lowers those tiles' confidence."""
    det = r.detections()
    if low:
        conf = det.confidence.copy()
        conf[list(low)] = 0.3
        det = type(det)(det.boxes, det.quads, det.codes, conf.astype(np.float32))
    reader = reader or TableReader(r.layout, card=card, variant=variant, **kw)  # type: ignore[arg-type]
    return reader.read(r.image, det)


def read_at(r: RenderedTable, index: int, conf: float) -> TableObservation:
    """Read the rendered table with its true detections, tile ``index`` read at ``conf``."""
    det = r.detections()
    c = det.confidence.copy()
    c[index] = conf
    det = type(det)(det.boxes, det.quads, det.codes, c.astype(np.float32))
    return TableReader(r.layout, card=CARD).read(r.image, det)


def flags_of(obs: TableObservation, kind: str) -> list[str | None]:
    return [f.zone for f in obs.flags if f.kind == kind]


def tile_index(r: RenderedTable, zone: str, code: str) -> int:
    return next(i for i, t in enumerate(r.tiles) if t.zone == zone and t.code == code)


CLASSES = tuple(ALL_CODES)  # the classifier's 45 classes


def probs(*rows: dict[str, float]) -> np.ndarray:
    """Rows of class probabilities; what a row does not name shares the rest evenly."""
    out = np.zeros((len(rows), len(CLASSES)))
    for i, row in enumerate(rows):
        rest = (1 - sum(row.values())) / (len(CLASSES) - len(row))
        out[i] = [row.get(c, rest) for c in CLASSES]
    return out


def with_probs(r: RenderedTable, zone: str, code: str, row: dict[str, float]) -> Detections:
    """The table's true detections, with class probabilities; the ``code`` tiles of ``zone`` read as ``row``."""
    det = r.detections()
    p = np.zeros((len(det), len(CLASSES)), np.float32)
    p[np.arange(len(det)), [CLASSES.index(str(c)) for c in det.codes]] = 1.0
    hit = [i for i, t in enumerate(r.tiles) if t.zone == zone and t.code == code]
    p[hit] = probs(*[row] * len(hit))
    conf = p.max(axis=1)
    codes = np.array([CLASSES[int(k)] for k in p.argmax(axis=1)])
    return Detections(det.boxes, det.quads, codes, conf, None, {}, p, CLASSES)


class SecondReader:
    """A recogniser's ``check``: reads the tiles at the quads it is given as ``truth`` has them,
    but with ``misread`` codes swapped (``{"N": "W"}``), at ``confidence`` (with class
    probabilities when ``with_probs``), and notes how many tiles it was asked."""

    def __init__(self, truth: Detections, misread: dict[str, str] | None = None, confidence: float = 0.97,
                 with_probs: bool = False) -> None:
        self.truth, self.misread, self.asked, self.confidence = truth, misread or {}, [0], confidence
        self.with_probs = with_probs

    def check(self, frame: npt.NDArray[np.uint8], quads: npt.ArrayLike) -> Detections:
        q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
        self.asked.append(len(q))
        codes = []
        for quad in q:
            k = int(np.argmin(np.abs(self.truth.quads - quad).sum(axis=(1, 2))))
            codes.append(self.misread.get(str(self.truth.codes[k]), str(self.truth.codes[k])))
        conf = np.full(len(q), self.confidence, np.float32)
        if not self.with_probs:
            return Detections.from_quads(q, codes, conf)
        p = probs(*[{c: self.confidence} for c in codes]).astype(np.float32)
        return Detections.from_quads(q, codes, conf, probs=p, classes=CLASSES)
