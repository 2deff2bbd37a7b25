"""The vision benchmark's bookkeeping: detections matched to the truth, and how they print.

:class:`Tally` matches a picture's returned tiles to its labelled ones (IoU >= 0.5 with the right
code) and sums them per class and overall; :func:`in_family` keeps a picture's tiles of the peer's
own 34 codes (:data:`PEER_FAMILY`, from :data:`PEER_CODES`, the peer's class names); the
bookkeeping of a synthetic scene's tiles (:func:`miss_kinds`, :func:`cut_by_edge`,
:func:`inside_quads`, :func:`print_misses`); the export's :func:`mislabelled` photos; and the
summary and per-class lines (:func:`print_summary`, :func:`print_classes`).  Run by
``scripts/bench_vision.py``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from scripts.photos import PhotoSample
from vision.detect import quad_iou_boxes

PEER_CODES = {
    **{f"{n}m": f"{n}C" for n in range(1, 10)},
    **{f"{n}p": f"{n}D" for n in range(1, 10)},
    **{f"{n}s": f"{n}B" for n in range(1, 10)},
    "chun": "RD", "haku": "WD", "hatsu": "GD", "tou": "E", "nan": "S", "sha": "W", "pe": "N",
}  # fmt: skip
"""mahjong-detector's riichi class names -> our codes (it has no flowers or seasons)."""

PEER_FAMILY = frozenset(PEER_CODES.values())
"""The 34 codes the peer reads: the issue's reference for it (F1 0.52) is on these."""


@dataclass
class Tally:
    """Matches of predictions to truth, per class and overall."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    loc_tp: int = 0
    loc_fp: int = 0
    loc_fn: int = 0
    per_truth: Counter[str] = field(default_factory=Counter)
    per_pred: Counter[str] = field(default_factory=Counter)
    per_tp: Counter[str] = field(default_factory=Counter)
    confusion: Counter[tuple[str, str]] = field(default_factory=Counter)
    backs_unlabelled: int = 0
    """Face-down tiles (``BK``) returned where no tile is labelled (IoU under 0.3 with every truth
    box): false backs in a synthetic scene; in a photo, which labels no back, perhaps a real one."""
    faces_unlabelled: int = 0
    """Face-up tiles returned where no tile is labelled (IoU under 0.1 with every truth box): in a
    photo, often a tile its labels leave out (the discards heaped beside a labelled rack,
    docs/recognition.md, Known gaps), counted false all the same."""
    within: Tally | None = None
    """When given, also fed each picture's tiles of :data:`PEER_FAMILY` alone (:func:`in_family`)."""

    def add(
        self,
        boxes: np.ndarray,
        codes: list[str],
        conf: np.ndarray,
        truth: np.ndarray,
        tcodes: list[str],
    ) -> None:
        """Greedy matching by confidence: a TP needs IoU >= 0.5 and the right code."""
        self.per_truth.update(tcodes)
        self.per_pred.update(codes)
        iou = quad_iou_boxes(
            boxes.astype(np.float32).reshape(-1, 4), truth.astype(np.float32).reshape(-1, 4)
        )
        back = np.array([c == "BK" for c in codes], bool)
        if back.any():
            near = iou[back].max(axis=1) if len(tcodes) else np.zeros(int(back.sum()))
            self.backs_unlabelled += int((near < 0.3).sum())
        if (~back).any():
            near = iou[~back].max(axis=1) if len(tcodes) else np.zeros(int((~back).sum()))
            self.faces_unlabelled += int((near < 0.1).sum())
        used_loc = np.zeros(len(tcodes), bool)
        used = np.zeros(len(tcodes), bool)
        for i in np.argsort(-np.asarray(conf)):
            if len(tcodes) == 0:
                break
            cand = np.where(used_loc, -1.0, iou[i])
            j = int(np.argmax(cand))
            if cand[j] >= 0.5:
                used_loc[j] = True
                self.confusion[(tcodes[j], codes[i])] += 1
            same = np.array([c == codes[i] for c in tcodes]) & ~used
            cand2 = np.where(same, iou[i], -1.0)
            k = int(np.argmax(cand2))
            if cand2[k] >= 0.5:
                used[k] = True
                self.tp += 1
                self.per_tp[codes[i]] += 1
        n_used, n_loc = int(used.sum()), int(used_loc.sum())
        self.fp += len(codes) - n_used
        self.fn += len(tcodes) - n_used
        self.loc_tp += n_loc
        self.loc_fp += len(codes) - n_loc
        self.loc_fn += len(tcodes) - n_loc
        if self.within is not None:
            self.within.add(*in_family(boxes, codes, conf, truth, tcodes))

    @staticmethod
    def prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
        p = tp / max(tp + fp, 1)
        r = tp / max(tp + fn, 1)
        return p, r, 2 * p * r / max(p + r, 1e-9)

    def class_rows(self) -> list[tuple[str, int, float, float, float, str]]:
        rows = []
        for code in sorted(self.per_truth):
            tp, n, npred = self.per_tp[code], self.per_truth[code], self.per_pred[code]
            p, r, f = self.prf(tp, npred - tp, n - tp)
            wrong = Counter(
                {pc: k for (tc, pc), k in self.confusion.items() if tc == code and pc != code}
            )
            top = ", ".join(f"{pc} x{k}" for pc, k in wrong.most_common(2)) or "-"
            rows.append((code, n, r, p, f, top))
        return rows


def in_family(
    boxes: np.ndarray, codes: list[str], conf: np.ndarray, truth: np.ndarray, tcodes: list[str],
    family: frozenset[str] = PEER_FAMILY,
) -> tuple[np.ndarray, list[str], np.ndarray, np.ndarray, list[str]]:
    """A picture's tiles of ``family`` alone: the truth tiles of other codes left out, and with
    them each returned tile that lies on one of them (IoU >= 0.5, more than on any kept truth
    tile), whatever it was read as.  A tile returned with a code outside ``family`` elsewhere
    stays, and counts false."""
    truth = np.asarray(truth, np.float32).reshape(-1, 4)
    keep = np.array([c in family for c in tcodes], bool)
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    stay = np.ones(len(boxes), bool)
    if len(boxes) and (~keep).any():
        iou = quad_iou_boxes(boxes, truth)
        gone = iou[:, ~keep].max(axis=1)
        kept = iou[:, keep].max(axis=1) if keep.any() else np.zeros(len(boxes), np.float32)
        stay = ~((gone >= 0.5) & (gone > kept))
    conf = np.asarray(conf)
    return (
        boxes[stay], [c for c, k in zip(codes, stay, strict=True) if k], conf[stay],
        truth[keep], [c for c, k in zip(tcodes, keep, strict=True) if k],
    )


def mislabelled(sample: PhotoSample) -> bool:
    """A photo whose every tile carries one code, more of them than a set holds (4; 8 flowers):
    a labelling error of the export (valid/ has seven such photos, every tile labelled 1D)."""
    codes = set(sample.codes)
    return len(codes) == 1 and len(sample.codes) > (8 if codes <= {"F"} else 4)


def miss_kinds(boxes: np.ndarray, codes: list[str], truth: np.ndarray, truth_codes: list[str]) -> list[str]:
    """How each truth tile came out, by the box that overlaps it most: ``right`` (IoU 0.5 or more,
    its code), ``misread X->Y`` (IoU 0.5 or more, another code), ``part of the tile boxed`` (IoU
    0.2-0.5: half a tile, or a box not turned to it), ``back, no box`` / ``no box`` (under 0.2; a
    plain back ``BK`` apart, the American scenes' weakest tile)."""
    out: list[str] = []
    iou = quad_iou_boxes(np.asarray(truth, np.float32), np.asarray(boxes, np.float32)) if len(boxes) else None
    for i, code in enumerate(truth_codes):
        j = int(iou[i].argmax()) if iou is not None else -1
        best = float(iou[i, j]) if iou is not None else 0.0
        if best >= 0.5:
            out.append("right" if codes[j] == code else f"misread {code}->{codes[j]}")
        elif best >= 0.2:
            out.append("part of the tile boxed")
        else:
            out.append("back, no box" if code == "BK" else "no box")
    return out


def cut_by_edge(quads: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``(N,)``: whether each tile's quad runs outside a picture of ``shape``: a tile the picture's
    edge cuts (the scenes keep one :data:`scripts.synth_scenes.IN_VIEW` or more inside,
    :func:`scripts.synth_scenes.in_view`)."""
    q = np.asarray(quads, np.float64).reshape(-1, 4, 2)
    h, w = shape[:2]
    return np.any((q[..., 0] < 0) | (q[..., 1] < 0) | (q[..., 0] > w) | (q[..., 1] > h), axis=1)


def print_misses(kinds: Counter[str]) -> None:
    """One line of :func:`miss_kinds`' counts: what the tiles not read right came to."""
    total = sum(kinds.values())
    misread = Counter({k.split(" ", 1)[1]: v for k, v in kinds.items() if k.startswith("misread ")})
    other = {k: v for k, v in kinds.items() if k != "right" and not k.startswith("misread ")}
    missed = total - kinds["right"]
    parts = [f"{k} {v}" for k, v in sorted(other.items(), key=lambda kv: -kv[1])]
    top = ", ".join(f"{k} x{v}" for k, v in misread.most_common(3))
    parts.append(f"misread {sum(misread.values())}" + (f" ({top})" if top else ""))
    print(f"  not read right: {missed} of {total} tiles: " + "; ".join(parts))


def inside_quads(points: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """``(P, Q)``: whether each point lies inside each convex quad (either winding)."""
    q = np.asarray(quads, np.float64)[None]  # (1, Q, 4, 2)
    p = np.asarray(points, np.float64)[:, None, None, :]  # (P, 1, 1, 2)
    edge, to_p = np.roll(q, -1, axis=2) - q, p - q
    cross = edge[..., 0] * to_p[..., 1] - edge[..., 1] * to_p[..., 0]  # (P, Q, 4)
    return np.all(cross >= 0, axis=2) | np.all(cross <= 0, axis=2)


def print_summary(name: str, tally: Tally, times: list[float]) -> None:
    p, r, f = tally.prf(tally.tp, tally.fp, tally.fn)
    lp, lr, lf = tally.prf(tally.loc_tp, tally.loc_fp, tally.loc_fn)
    med = float(np.median(times)) if times else float("nan")
    print(
        f"{name:<22} P {p:.3f}  R {r:.3f}  F1 {f:.3f} | boxes only P {lp:.3f} R {lr:.3f} F1 {lf:.3f} | median {med:.1f} ms"
    )


def print_classes(tally: Tally) -> None:
    rows = tally.class_rows()
    print(f"{'code':<5} {'truth':>5} {'recall':>7} {'prec':>7} {'F1':>6}  most common misreads")
    for code, n, r, p, f, top in rows:
        print(f"{code:<5} {n:>5} {r:>7.3f} {p:>7.3f} {f:>6.3f}  {top}")
    worst = sorted(rows, key=lambda row: row[4])[:5]
    print("worst five classes:", ", ".join(f"{c} (F1 {f:.3f})" for c, _, _, _, f, _ in worst))
