"""Vision benchmark: accuracy and speed of tile recognition, ours beside the peer, in one run.

    python scripts/bench_vision.py                       # everything (several minutes on 2 cores)
    python scripts/bench_vision.py --limit 40 --no-peer  # a quick look

Reports, on tiles-photos-v4/valid (296 photos, 42 classes):
- tile-level precision / recall / F1 at IoU >= 0.5 with the correct code (and class-agnostic),
- a per-class table (truth count, recall, precision, F1, most common confusion), the worst five,
- median end-to-end ms per 640x640 photo (decode excluded), each side in its own pass, then photo by
  photo in turn with the peer, then in turn with each side timed once the other's process is quiet
  (the peer's onnxruntime threads spin on after each answer),
- the same F1 on the peer's own 34 classes (flowers and seasons left out),
- valid's photos of a real set that no train photo shows, enrolled from one labelled tile a code
  of 10 of them and read on the rest, plain and enrolled (``--real-enroll`` draws),
- American scenes over the artwork style no model trained on, plain and with the set enrolled from
  one grid photo, and from each of two rendered photos of its layout on a table (``--held-out``
  scenes),
and on synthetic 1280x720 frames with ~60 tiles: median ms per frame and per-tile accuracy; and
on synthetic American scenes (jokers, F, soap, index-numbered tiles, drawn with a face seed the
classifier never saw) per-tile accuracy; and every third valid photo enlarged 2x (1280x1280, the
same close-up at a phone's higher resolution) and under a warm and a cool lamp's tint and in a dim
room (ours, ours keeping the tint, and the peer), and taken poorly: over-exposed, washed out, lit from
one side, blurred (ours and the peer); and the valid photos laid 2x2 to a 640x640 picture, each
shrunk to half, as a phone held further away takes them, and laid 3x3 and 4x4 at their own size
(1920x1920, 2560x2560), a still photo of a wider part of the table (ours and the peer).  The peer is the
riichi detector of the PyPI package ``mahjong-detector`` (YOLO11n, 34 classes, no flowers or
seasons), run in ``/tmp/peer-venv`` (``--peer-python``) through a subprocess that times its own
per-image inference.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scripts.photos import PhotoSample, load_split  # noqa: E402
from vision.detect import quad_iou_boxes  # noqa: E402

PEER_CODES = {
    **{f"{n}m": f"{n}C" for n in range(1, 10)},
    **{f"{n}p": f"{n}D" for n in range(1, 10)},
    **{f"{n}s": f"{n}B" for n in range(1, 10)},
    "chun": "RD", "haku": "WD", "hatsu": "GD", "tou": "E", "nan": "S", "sha": "W", "pe": "N",
}  # fmt: skip
"""mahjong-detector's riichi class names -> our codes (it has no flowers or seasons)."""

PEER_FAMILY = frozenset(PEER_CODES.values())
"""The 34 codes the peer reads: the issue's reference for it (F1 0.52) is on these."""

QUIET = (0.010, 0.2, 0.3)
"""A process is quiet once its threads used under 0.2 ms of CPU over 10 ms; no wait longer than
0.3 s (:func:`wait_quiet`).  The peer's onnxruntime threads, left at their defaults, spin on after
each answer: a median 38-43 ms of CPU over about 50 ms (forty-second session)."""

PEER_RUNNER = r"""
import json, sys, time
from PIL import Image
from mahjong_detector.preprocess import preprocess_image
from mahjong_detector.predict import CLASS_NAMES, predict
for line in sys.stdin:
    path = line.strip()
    img = Image.open(path); img.load()
    t0 = time.perf_counter()
    x, pad = preprocess_image(img)
    dets = predict(x, pad)
    ms = (time.perf_counter() - t0) * 1000
    print(json.dumps({"image": path, "ms": ms, "tiles": [
        {"code": CLASS_NAMES[d.class_id], "box": [d.x1, d.y1, d.x2, d.y2], "confidence": d.confidence}
        for d in dets]}), flush=True)
"""


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


REAL_SET = "IMG_27"
"""File-name stem of valid's photos of one real tile set that no train photo shows (35 photos
besides the 7 :func:`mislabelled` ones): a player's own set, as far as this export holds one."""


def real_set_enrolled(
    photos: list[PhotoSample], models: Path, threads: int = 2, splits: int = 5, enrol: int = 10
) -> list[dict[str, Any]]:
    """Valid's :data:`REAL_SET` enrolled from one labelled tile a code of ``enrol`` of its photos,
    drawn at random (seed = the split), and read on its other photos, plain and enrolled: a row a
    split with the base agreement, the fusion weight, and each reading's tally and tiles read right
    of those boxed (IoU >= 0.5).  Each code's tile is the one the pipeline boxes best (the highest
    IoU with its label), cut where the pipeline puts it; the crops are saved as ``companion enroll``
    saves a set's and read by a recogniser given that set, as ``detect --tileset`` reads one (its
    loader embeds them with their jittered copies and weighs the set by how well the base
    classifier reads those).  No rows when the photos are missing."""
    import tempfile

    from vision.classify import extract_crops
    from vision.light import without_light
    from vision.pipeline import TileRecognizer
    from vision.tileset import TileSet, save_tileset

    real = [s for s in photos if s.image_path.name.startswith(REAL_SET) and not mislabelled(s)]
    if len(real) < enrol + 5:
        return []
    rec = TileRecognizer(models, threads=threads)
    found: dict[Path, tuple[np.ndarray, Any]] = {}
    for s in real:
        img = cv2.imread(str(s.image_path))
        if img is None:
            raise SystemExit(f"bench_vision: cannot read {s.image_path}")
        found[s.image_path] = (img, rec.detect(img))

    rows: list[dict[str, Any]] = []
    for split in range(splits):
        order = np.random.default_rng(split).permutation(len(real))
        train, test = [real[i] for i in order[:enrol]], [real[i] for i in order[enrol:]]
        best = _best_tiles(train, found)
        codes = sorted(best)
        crops = np.stack([extract_crops(without_light(best[c][1]), best[c][2][None])[0] for c in codes])
        with tempfile.TemporaryDirectory(prefix="bench-real-set-") as tmp:
            # no classifier recorded and no prototypes yet: the loader embeds the crops, as it embeds
            # a set enrolled with another classifier (vision.prototypes.for_classifier)
            unembedded = TileSet("real-set", "chinese", tuple(codes), np.zeros((len(codes), 1), np.float32))
            enrolled = TileRecognizer(models, threads=threads, tileset=str(save_tileset(unembedded, crops, Path(tmp))))
        refiner = enrolled.prototypes
        rows.append({"split": split, "codes": len(codes), "test": len(test), "agreement": refiner.agreement,
                     "weight": refiner.weight, "plain": _read_set(test, found, None),
                     "enrolled": _read_set(test, found, enrolled)})
    return rows


def _matches(s: PhotoSample, d: Any) -> tuple[np.ndarray, np.ndarray]:
    """For each of ``s``'s labelled tiles, the detection of ``d`` that boxes it best and their IoU."""
    if not len(d) or not len(s.codes):
        return np.full(len(s.codes), -1), np.zeros(len(s.codes))
    iou = quad_iou_boxes(s.boxes.astype(np.float32), d.boxes.astype(np.float32))
    best = iou.argmax(axis=1)
    return best, iou[np.arange(len(best)), best]


def _best_tiles(
    photos: list[PhotoSample], found: dict[Path, tuple[np.ndarray, Any]]
) -> dict[str, tuple[float, np.ndarray, np.ndarray]]:
    """Each code's tile in ``photos`` that the pipeline's reading (``found``) boxes best:
    ``code -> (IoU, image, quad)``."""
    best: dict[str, tuple[float, np.ndarray, np.ndarray]] = {}
    for s in photos:
        img, d = found[s.image_path]
        idx, iou = _matches(s, d)
        for j, code in enumerate(s.codes):
            if iou[j] >= 0.5 and (code not in best or iou[j] > best[code][0]):
                best[code] = (float(iou[j]), img, d.quads[idx[j]])
    return best


def _read_set(test: list[PhotoSample], found: dict[Path, tuple[np.ndarray, Any]], reader: Any) -> tuple[Tally, int, int]:
    """``test`` read by ``reader`` (None: as ``found`` already read them): the tally, and the
    labelled tiles read right of those boxed (IoU >= 0.5)."""
    tally, right, boxed = Tally(), 0, 0
    for s in test:
        d = found[s.image_path][1] if reader is None else reader.detect(found[s.image_path][0])
        tally.add(d.boxes, [str(c) for c in d.codes], d.confidence, s.boxes, list(s.codes))
        idx, iou = _matches(s, d)
        boxed += int((iou >= 0.5).sum())
        right += sum(int(d.codes[idx[j]] == c) for j, c in enumerate(s.codes) if iou[j] >= 0.5)
    return tally, right, boxed


def mislabelled(sample: PhotoSample) -> bool:
    """A photo whose every tile carries one code, more of them than a set holds (4; 8 flowers):
    a labelling error of the export (valid/ has seven such photos, every tile labelled 1D)."""
    codes = set(sample.codes)
    return len(codes) == 1 and len(sample.codes) > (8 if codes <= {"F"} else 4)


def run_ours(
    photos: list[PhotoSample], models: Path, threads: int = 2, enlarge: float = 1.0,
    lamp: bool = True,
) -> tuple[Tally, list[float], Tally]:
    """Our tally on every photo, the times, and the tally without :func:`mislabelled` photos.
    ``enlarge``: each photo enlarged so first (bicubic; its boxes alike), the same close-up as a
    phone at a higher resolution takes it (every valid photo is 640x640).  ``lamp``: the
    recogniser takes a lamp's tint out (:class:`vision.pipeline.TileRecognizer`'s ``lamp``)."""
    from vision.pipeline import TileRecognizer

    rec = TileRecognizer(models, threads=threads, lamp=lamp)
    tally, times, checked = Tally(within=Tally()), [], Tally()
    for s in photos:
        img = cv2.imread(str(s.image_path))
        if enlarge != 1.0:
            img = cv2.resize(img, None, fx=enlarge, fy=enlarge, interpolation=cv2.INTER_CUBIC)
        t0 = time.perf_counter()
        d = rec.detect(img)
        times.append((time.perf_counter() - t0) * 1000)
        tally.add(d.boxes, [str(c) for c in d.codes], d.confidence, s.boxes * enlarge, list(s.codes))
        if not mislabelled(s):
            checked.add(d.boxes, [str(c) for c in d.codes], d.confidence, s.boxes * enlarge, list(s.codes))
    return tally, times, checked


def run_peer(photos: list[PhotoSample], python: str) -> tuple[Tally | None, list[float], str, Tally]:
    """The peer's tally, times, why it did not run ("" when it did), and the tally without
    :func:`mislabelled` photos."""
    checked = Tally()
    if not Path(python).is_file():
        return (
            None,
            [],
            f"no interpreter at {python} (see docs/recognition.md to set up /tmp/peer-venv)",
            checked,
        )
    paths = "\n".join(str(s.image_path) for s in photos) + "\n"
    try:
        proc = subprocess.run(
            [python, "-c", PEER_RUNNER], input=paths, capture_output=True, text=True, timeout=1800
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, [], str(exc), checked
    if proc.returncode != 0:
        return (
            None,
            [],
            proc.stderr.strip().splitlines()[-1]
            if proc.stderr.strip()
            else f"exit {proc.returncode}",
            checked,
        )
    tally, times = Tally(within=Tally()), []
    for s, line in zip(photos, proc.stdout.splitlines(), strict=True):
        out = json.loads(line)
        times.append(out["ms"])
        boxes = np.array([t["box"] for t in out["tiles"]], np.float32).reshape(-1, 4)
        codes = [PEER_CODES.get(t["code"], t["code"]) for t in out["tiles"]]
        conf = np.array([t["confidence"] for t in out["tiles"]])
        tally.add(boxes, codes, conf, s.boxes, list(s.codes))
        if not mislabelled(s):
            checked.add(boxes, codes, conf, s.boxes, list(s.codes))
    return tally, times, "", checked


def cpu_ms(pid: int) -> float:
    """CPU time used so far by every thread of process ``pid``, in ms (Linux's per-thread
    ``schedstat``, nanoseconds), the calling thread's own left out; 0.0 where ``/proc`` does not
    say."""
    total = 0
    me = str(threading.get_native_id())
    for f in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        if f.parent.name == me:
            continue
        try:
            total += int(f.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return total / 1e6


def wait_quiet(pid: int, quiet: tuple[float, float, float] = QUIET) -> tuple[float, float]:
    """Wait until process ``pid`` is quiet (:data:`QUIET`: under ``quiet[1]`` ms of CPU over
    ``quiet[0]`` s, at most ``quiet[2]`` s): ``(seconds waited, ms of its CPU meanwhile)``."""
    window, most_ms, longest = quiet
    t0 = time.perf_counter()
    c0 = cpu_ms(pid)
    seen = [(t0, c0)]
    while True:
        time.sleep(0.002)
        now, c = time.perf_counter(), cpu_ms(pid)
        seen.append((now, c))
        if now - t0 >= longest:
            return now - t0, c - c0
        back = [cpu for t, cpu in seen if now - t >= window]
        if back and c - back[-1] < most_ms:
            return now - t0, c - c0


def paired_speed(
    photos: list[PhotoSample], models: Path, python: str, threads: int = 2, runner: str = PEER_RUNNER,
    quiet: list[tuple[str, float, float]] | None = None,
) -> tuple[list[float], list[float], str]:
    """Ours and the peer timed on each photo in turn, the peer a running process that takes one
    photo at a time: the same moment's load falls on both, where :func:`run_ours` and
    :func:`run_peer` time them minutes apart (on a shared machine the two passes' speeds have
    differed by as much as half).  Who goes first alternates from photo to photo.  ``(ours ms,
    peer ms, why the peer did not run)``, decode excluded on both sides, as in those passes.
    ``runner``: the peer's program (:data:`PEER_RUNNER`: a path a line in, a JSON line out).
    ``quiet``: when given, each side's run that comes straight after the other side's waits until
    the other's process is quiet again (:func:`wait_quiet`), and each wait is appended to it as
    ``(who waited, seconds, the other's CPU ms meanwhile)``.  The peer, like any onnxruntime
    program left at its defaults, keeps its threads spinning for about 50 ms after it answers;
    ours timed in that spin is timed against both cores taken (a median 9-11 ms slower, paired,
    forty-second session).  Ours' pool threads do not spin (:mod:`vision.runtime`).  A side that
    reads twice in a row does not wait: the peer keeps its own spin's head start."""
    from vision.pipeline import TileRecognizer

    if not Path(python).is_file():
        return [], [], f"no interpreter at {python}"
    rec = TileRecognizer(models, threads=threads)
    ours: list[float] = []
    peer: list[float] = []
    try:
        proc = subprocess.Popen([python, "-c", runner], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    except OSError as exc:
        return [], [], str(exc)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for i, s in enumerate(photos):
            img = cv2.imread(str(s.image_path))
            for turn in ((0, 1) if i % 2 == 0 else (1, 0)):
                if quiet is not None and turn != i % 2:  # the other side read just before
                    who, pid = ("ours", proc.pid) if turn == 0 else ("peer", os.getpid())
                    quiet.append((who, *wait_quiet(pid)))
                if turn == 0:
                    t0 = time.perf_counter()
                    rec.detect(img)
                    ours.append((time.perf_counter() - t0) * 1000)
                    continue
                proc.stdin.write(f"{s.image_path}\n")
                proc.stdin.flush()
                line = proc.stdout.readline()
                if not line:
                    err = proc.stderr.read().strip().splitlines() if proc.stderr else []
                    return ours, peer, err[-1] if err else f"exit {proc.wait()}"
                peer.append(float(json.loads(line)["ms"]))
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    return ours, peer, ""


def synth_eval(
    models: Path,
    size: tuple[int, int],
    n: int,
    seed: int,
    american: bool,
    threads: int = 2,
    kinds: Counter[str] | None = None,
    views: Counter[str] | None = None,
) -> tuple[Tally, list[float]]:
    """Recognise synthetic scenes: a busy 1280x720 table, or American-only faces.

    The scenes are drawn ``in_view`` (:class:`scripts.synth_scenes.SceneMaker`): until the
    eighteenth session their camera perspective could pull the picture's edge inwards and fill the
    border with the table's mirror image, and tiles it moved out of the picture stayed in the
    truth (on the 40 American scenes, 54 of 1,026 tiles no longer in view by the scenes' own
    60 % rule, some of them wholly outside, and mirrored tiles with no truth).  A tile the
    picture's edge cuts (12-18 % of the American scenes' tiles) is boxed in the truth as far as it
    is seen, as photo labels box it (:func:`vision.pipeline.clip_boxes`); until the thirtieth
    session its truth box ran on outside the picture, where no box of a detector can follow.

    ``kinds``: counts, when given, of how each truth tile came out (:func:`miss_kinds`); ``views``:
    how many tiles lie wholly in view and how many the picture's edge cuts (:func:`cut_by_edge`),
    and how many of each were read right."""
    from vision.pipeline import TileRecognizer, clip_boxes

    rec = TileRecognizer(models, threads=threads)
    tally, times = Tally(), []
    for sc in bench_scenes(size, n, seed, american):
        t0 = time.perf_counter()
        d = rec.detect(sc.image)
        times.append((time.perf_counter() - t0) * 1000)
        if len(sc.ignored) and len(d):  # a tile mostly out of the picture: neither asked for nor held against us
            d = d[~np.any(inside_quads(d.centres, sc.ignored), axis=1)]
        truth = clip_boxes(np.concatenate([sc.quads.min(axis=1), sc.quads.max(axis=1)], axis=1), sc.image.shape)
        tally.add(d.boxes, [str(c) for c in d.codes], d.confidence, truth, list(sc.codes))
        if kinds is None and views is None:
            continue
        came = miss_kinds(d.boxes, [str(c) for c in d.codes], truth, [str(c) for c in sc.codes])
        if kinds is not None:
            kinds.update(came)
        if views is not None:
            for kind, cut in zip(came, cut_by_edge(sc.quads, sc.image.shape), strict=True):
                where = "cut by the picture's edge" if cut else "wholly in view"
                views[where] += 1
                views[where + ", read right"] += kind == "right"
    return tally, times


def bench_scenes(size: tuple[int, int], n: int, seed: int, american: bool, **maker: Any) -> Iterator[Any]:
    """The bench's ``n`` synthetic scenes of ``seed`` (:class:`scripts.synth_scenes.Scene`), drawn
    in view: a busy table at 1280x720 and up, else a few groups (American faces when ``american``).
    ``maker``: more :class:`scripts.synth_scenes.SceneMaker` options (tests draw more backs)."""
    from scripts.synth_scenes import SceneMaker

    gen = SceneMaker(seed=seed, faces=american_faces(seed) if american else None, in_view=True, **maker)
    rng = np.random.default_rng(seed)
    w, h = size
    big = w >= 1000
    for _ in range(n):
        yield gen.scene(w, h, rng, short=(34.0, 50.0) if big else (30.0, 50.0), layouts=(7, 10) if big else (2, 6))


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


def american_faces(seed: int) -> dict[str, list[np.ndarray]]:
    """Fresh American faces (a seed unlike the classifier's and the localiser's training faces): J,
    F, soap WD, backs, and index-numbered number and wind tiles over two artwork styles."""
    from scripts.synth_scenes import american_scene_faces

    return american_scene_faces(seed + 777)


def print_real_set(photos: list[PhotoSample], args: argparse.Namespace) -> None:
    """:func:`real_set_enrolled`'s rows, and their sums."""
    rows = real_set_enrolled(photos, args.models, args.threads, args.real_enroll)
    if not rows:
        print(f"\nreal set enrolled: skipped (too few {REAL_SET}* photos among those read)")
        return
    print(f"\na real set no photo in train/ shows (valid's {REAL_SET}xx photos), enrolled from one labelled tile "
          f"a code of 10 of its photos, read on the other {rows[0]['test']} ({len(rows)} draws): tiles read right "
          "of those boxed, and F1")
    names = ("plain", "enrolled")
    right_sum, boxed_sum = Counter[str](), Counter[str]()
    counts = {name: np.zeros(3, np.int64) for name in names}  # tp, fp, fn
    for r in rows:
        parts = []
        for name in names:
            tally, right, boxed = r[name]
            parts.append(f"{name} {right}/{boxed}, F1 {Tally.prf(tally.tp, tally.fp, tally.fn)[2]:.4f}")
            right_sum[name] += right
            boxed_sum[name] += boxed
            counts[name] += (tally.tp, tally.fp, tally.fn)
        print(f"  draw {r['split']}: {r['codes']} codes, base agreement {r['agreement']:.3f}, base weight "
              f"{r['weight']:.2f}: " + "; ".join(parts))
    print("  all draws: " + "; ".join(
        f"{name} {right_sum[name]}/{boxed_sum[name]} ({right_sum[name] / max(boxed_sum[name], 1):.4f}), "
        f"F1 {Tally.prf(*(int(v) for v in counts[name]))[2]:.4f}"
        for name in names))


def lamp_photos(photos: list[PhotoSample], args: argparse.Namespace) -> None:
    """``photos`` under each lamp of :data:`vision.light.LAMP_TINTS`, read by ours as it is, by
    ours keeping the tint, and by the peer (:func:`altered_photos`)."""
    from vision.light import LAMP_TINTS, tinted

    print(f"\nvalid photos under a lamp the camera does not correct for (1 in {args.lamp}: {len(photos)} photos; "
          "factors on B, G, R)")
    for lamp, factors in LAMP_TINTS.items():
        tag = f"{lamp} {'/'.join(f'{f:g}' for f in factors)}"
        altered_photos(photos, args, tag, lambda img, lamp=lamp: tinted(img, lamp), "keeping the tint")
    plain, t_plain, _ = run_ours(photos, args.models, args.threads)
    print_summary("ours, the same untinted", plain, t_plain)


def poor_photos(photos: list[PhotoSample], args: argparse.Namespace) -> None:
    """``photos`` as each poor picture of :data:`vision.light.POOR_PICTURES` (over-exposed, washed
    out, lit from one side, blurred), read by ours and the peer; a washed-out one also by ours
    without its levels stretched (the one of them taken out before reading)."""
    from vision.light import POOR_PICTURES, poorly_taken

    print(f"\nvalid photos taken poorly (1 in {args.poor}: {len(photos)} photos)")
    for kind in POOR_PICTURES:
        altered_photos(photos, args, kind, lambda img, kind=kind: poorly_taken(img, kind),
                       "not stretched" if kind == "washed" else "")


def laid_photos(photos: list[PhotoSample], args: argparse.Namespace, k: int, shrink: bool) -> None:
    """The valid photos (the mislabelled ones aside) laid ``k`` x ``k`` to one picture, read by ours
    and the peer.  ``shrink``: each photo shrunk to ``1 / k`` of its side (area averaging; boxes
    alike), a 640x640 picture: a phone held ``k`` times further from the table, whose tiles come
    out that much smaller at the same resolution.  Otherwise each at its own 640x640: a still photo
    ``k`` times larger, of a wider part of the table, with tiles as big as in the photos."""
    import tempfile

    side = 640 // k if shrink else 640
    kept = [s for s in photos if not mislabelled(s)]
    groups = [kept[i : i + k * k] for i in range(0, len(kept) - k * k + 1, k * k)]
    what = f"each shrunk to 1/{k}" if shrink else f"{side * k}x{side * k}"
    print(f"\nvalid photos laid {k}x{k}, {what}: {len(groups)} pictures ({len(groups) * k * k} photos, "
          "the mislabelled ones aside)")
    with tempfile.TemporaryDirectory(prefix="bench-laid-") as tmp:
        laid = []
        for n, group in enumerate(groups):
            canvas = np.zeros((side * k, side * k, 3), np.uint8)
            boxes, codes = [], []
            for j, s in enumerate(group):
                img = cv2.imread(str(s.image_path))
                h, w = img.shape[:2]
                oy, ox = (j // k) * side, (j % k) * side
                canvas[oy : oy + side, ox : ox + side] = cv2.resize(img, (side, side), interpolation=cv2.INTER_AREA)
                boxes.append(s.boxes * np.array([side / w, side / h, side / w, side / h], np.float32)
                             + np.array([ox, oy, ox, oy], np.float32))
                codes += list(s.codes)
            path = Path(tmp) / f"{n:04d}.png"
            cv2.imwrite(str(path), canvas)
            laid.append(PhotoSample(path, side * k, side * k, np.concatenate(boxes).astype(np.float32), tuple(codes),
                                    tuple(None for _ in codes)))
        ours, t_ours, _ = run_ours(laid, args.models, args.threads)
        print_summary(f"ours, {k}x{k}", ours, t_ours)
        peer_beside(laid, args)


def peer_beside(photos: list[PhotoSample], args: argparse.Namespace) -> None:
    """The peer's line on ``photos``, printed under ours (none with ``--no-peer``)."""
    if args.no_peer:
        return
    peer, t_peer, why, _ = run_peer(photos, args.peer_python)
    if peer is None:
        print(f"  peer unavailable: {why}")
    else:
        print_summary("  peer mahjong-detector", peer, t_peer)


def altered_photos(
    photos: list[PhotoSample], args: argparse.Namespace, tag: str, alter: Any, kept: str
) -> None:
    """``photos`` altered by ``alter`` (written to a temporary folder, losslessly), read by ours,
    by ours without :mod:`vision.light`'s corrections when ``kept`` names that line, and by the
    peer, in one run."""
    import tempfile
    from dataclasses import replace

    with tempfile.TemporaryDirectory(prefix="bench-light-") as tmp:
        lit = []
        for i, s in enumerate(photos):
            path = Path(tmp) / f"{i:04d}.png"
            cv2.imwrite(str(path), alter(cv2.imread(str(s.image_path))))
            lit.append(replace(s, image_path=path))
        ours, t_ours, _ = run_ours(lit, args.models, args.threads)
        print_summary(f"ours, {tag}", ours, t_ours)
        if kept:
            plain, t_plain, _ = run_ours(lit, args.models, args.threads, lamp=False)
            print_summary(f"  ours {kept}", plain, t_plain)
        peer_beside(lit, args)


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


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--models", type=Path, default=REPO / "models")
    ap.add_argument("--limit", type=int, help="only the first N valid photos")
    ap.add_argument("--frames", type=int, default=20, help="synthetic 1280x720 frames")
    ap.add_argument("--american", type=int, default=40, help="synthetic American scenes")
    ap.add_argument("--american-seeds", default="21,33,34,35,41,42",
                    help="scene seeds for the American scenes, comma-separated: the first is read in full "
                         "(per class), each one's per-tile accuracy and their mean are printed (one seed's "
                         "scenes move the figure by as much as most changes do)")
    ap.add_argument("--enlarged", type=int, default=3,
                    help="also read every Nth valid photo enlarged 2x (1280x1280), as a phone at a higher "
                         "resolution takes the same close-up (0: skip)")
    ap.add_argument("--lamp", type=int, default=3,
                    help="also read every Nth valid photo under a warm and a cool lamp's tint and in a dim "
                         "room (vision.light.LAMP_TINTS), ours beside the peer (0: skip)")
    ap.add_argument("--poor", type=int, default=3,
                    help="also read every Nth valid photo over-exposed, washed out, lit from one side and blurred "
                         "(vision.light.POOR_PICTURES), ours beside the peer (0: skip)")
    ap.add_argument("--far", type=int, default=2,
                    help="also read the valid photos laid N x N to a 640x640 picture, each shrunk to 1/N, as a "
                         "phone held further away takes them, ours beside the peer (0: skip)")
    ap.add_argument("--still", type=lambda text: [int(k) for k in text.split(",") if int(k)], default=[3, 4],
                    metavar="N[,N...]",
                    help="also read the valid photos laid N x N at their own size (a still photo of a wider "
                         "part of the table, 1920x1920 for 3, 2560x2560 for 4), ours beside the peer, for each N "
                         "(default 3,4; 0: skip)")
    ap.add_argument("--held-out", type=int, default=60,
                    help="also read N American scenes over the style no model trained on, plain and with the set "
                         "enrolled from a grid photo and from two rendered table photos of its layout (0: skip)")
    ap.add_argument("--real-enroll", type=int, default=5,
                    help="also enroll valid's photos of a real set no train photo shows from 10 of them and "
                         "read the rest, plain and enrolled, in N random draws (0: skip)")
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--threads", type=int, default=2, help="onnxruntime threads for ours (default 2)")
    ap.add_argument("--peer-python", default="/tmp/peer-venv/bin/python")
    return ap


def main() -> None:
    args = parser().parse_args()
    photos = load_split("valid", limit=args.limit)
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start")
    n_tiles = sum(len(s.codes) for s in photos)
    print(
        f"tiles-photos-v4/valid: {len(photos)} photos, {n_tiles} tiles, IoU >= 0.5 with the correct code"
    )
    ours, t_ours, checked = run_ours(photos, args.models, args.threads)
    print_summary("ours", ours, t_ours)
    print(f"  face-down tiles returned where no tile is labelled: {ours.backs_unlabelled} (counted false; "
          "the photos label no backs, and some show blue ones)")
    print(f"  face-up tiles returned where no tile is labelled: {ours.faces_unlabelled} (counted false; many photos "
          "label a rack's row and leave the discards heaped beside it out)")
    bad = [s for s in photos if mislabelled(s)]
    if args.no_peer:
        print("peer unavailable: skipped (--no-peer)")
    else:
        peer_lines(photos, args, ours, t_ours, bad)
    if bad:
        print_summary("ours, mislabelled out", checked, t_ours)
        print(f"  beside, not instead (the target is on every photo): {len(bad)} photos whose every tile is "
              f"labelled {'/'.join(sorted({s.codes[0] for s in bad}))} ({sum(len(s.codes) for s in bad)} tiles) left out")
    print("\nper-class (ours):")
    print_classes(ours)
    if args.enlarged:
        big, t_big, _ = run_ours(photos[:: args.enlarged], args.models, args.threads, enlarge=2.0)
        print(f"\nvalid photos enlarged 2x (1 in {args.enlarged}: {len(photos[:: args.enlarged])} photos; bicubic, "
              "boxes scaled alike)")
        print_summary("ours 1280x1280", big, t_big)
    if args.real_enroll:
        print_real_set(photos, args)
    if args.far:
        laid_photos(photos, args, args.far, shrink=True)
    for k in args.still:
        laid_photos(photos, args, k, shrink=False)
    if args.lamp:
        lamp_photos(photos[:: args.lamp], args)
    if args.poor:
        poor_photos(photos[:: args.poor], args)
    if args.frames:
        fr, t_fr = synth_eval(args.models, (1280, 720), args.frames, 11, False, args.threads)
        print(
            f"\nsynthetic 1280x720 frames: {args.frames}, {sum(fr.per_truth.values()) / args.frames:.0f} tiles each"
        )
        print_summary("ours 1280x720", fr, t_fr)
    if args.american:
        american_lines(args)
    if args.held_out:
        print_held_out(args)


def peer_lines(photos: list[PhotoSample], args: argparse.Namespace, ours: Tally, t_ours: list[float],
               bad: list[PhotoSample]) -> None:
    """The peer's lines on valid beside ours: its F1, on its own classes too, and the speeds."""
    peer, t_peer, why, peer_checked = run_peer(photos, args.peer_python)
    if peer is None:
        print(f"peer unavailable: {why}")
        return
    print_summary("peer mahjong-detector", peer, t_peer)
    if bad:
        print_summary("peer, mislabelled out", peer_checked, t_peer)
    if ours.within is not None and peer.within is not None:
        f_ours, f_peer = (Tally.prf(t.tp, t.fp, t.fn)[2] for t in (ours.within, peer.within))
        print(
            f"on the peer's own {len(PEER_FAMILY)} classes (flowers and seasons left out, and the tiles "
            f"returned on them): ours F1 {f_ours:.3f}, peer F1 {f_peer:.3f} (the issue's reference "
            "for the peer on this family: 0.52)"
        )
    print(
        f"speed: ours {np.median(t_ours):.1f} ms vs peer {np.median(t_peer):.1f} ms per photo "
        f"({np.median(t_peer) / np.median(t_ours):.1f}x), each timed in its own pass"
    )
    paired_lines(photos, args)


def paired_lines(photos: list[PhotoSample], args: argparse.Namespace) -> None:
    """Ours and the peer timed photo by photo: in turn, and each once the other is quiet."""
    p_ours, p_peer, why = paired_speed(photos, args.models, args.peer_python, args.threads)
    if why:
        print(f"speed photo by photo: peer stopped ({why})")
    elif p_ours:
        ratio = np.asarray(p_peer) / np.asarray(p_ours)
        print(
            f"speed photo by photo, ours and the peer in turn: ours {np.median(p_ours):.1f} ms vs peer "
            f"{np.median(p_peer):.1f} ms ({np.median(p_peer) / np.median(p_ours):.1f}x; per photo the "
            f"peer takes {np.median(ratio):.1f}x ours at the median, {np.percentile(ratio, 10):.1f}x at "
            "the 10th percentile)"
        )
    waits: list[tuple[str, float, float]] = []
    q_ours, q_peer, why = paired_speed(photos, args.models, args.peer_python, args.threads, quiet=waits)
    if why:
        print(f"speed photo by photo, the peer quiet: peer stopped ({why})")
    elif q_ours:
        ratio = np.asarray(q_peer) / np.asarray(q_ours)
        after = {
            who: (np.median([w[1] for w in waits if w[0] == who]) * 1000,
                  np.median([w[2] for w in waits if w[0] == who]))
            for who in ("ours", "peer") if any(w[0] == who for w in waits)
        }  # fmt: skip
        spun = "; ".join(
            f"{'the peer' if who == 'ours' else 'ours'} went on for a median {ms:.0f} ms, "
            f"{cpu:.1f} ms of CPU"
            for who, (ms, cpu) in after.items()
        )
        print(
            f"speed photo by photo, each side timed once the other's process is quiet again "
            f"(after an answer {spun}): ours {np.median(q_ours):.1f} ms vs peer "
            f"{np.median(q_peer):.1f} ms ({np.median(q_peer) / np.median(q_ours):.1f}x; per photo "
            f"{np.median(ratio):.1f}x at the median, {np.percentile(ratio, 10):.1f}x at the 10th percentile)"
        )


def american_lines(args: argparse.Namespace) -> None:
    """The synthetic American scenes: the first seed in full (per class), each seed's accuracy."""
    seeds = [int(x) for x in str(args.american_seeds).split(",") if x.strip()] or [21]
    kinds: Counter[str] = Counter()
    views: Counter[str] = Counter()
    am, t_am = synth_eval(args.models, (640, 480), args.american, seeds[0], True, args.threads, kinds, views)
    acc = am.tp / max(sum(am.per_truth.values()), 1)
    print(
        f"\nsynthetic American scenes: {args.american}, {sum(am.per_truth.values())} tiles; per-tile accuracy {acc:.4f}"
    )
    seen = sum(am.confusion.values())
    right = sum(k for (tc, pc), k in am.confusion.items() if tc == pc)
    print(
        f"  localised {seen / max(sum(am.per_truth.values()), 1):.4f} of tiles; "
        f"read right {right / max(seen, 1):.4f} of those"
    )
    print_summary("  as detections", am, t_am)  # false tiles too: a phantom joker misleads a player
    for code, n, r, p, _, top in am.class_rows():  # precision: a phantom back spoils a tile count
        print(f"  {code:<4} {n:>4} tiles  accuracy {r:.3f}  precision {p:.3f}  {top}")
    if len(seeds) > 1:
        accs = [acc]
        for seed in seeds[1:]:
            other, _ = synth_eval(args.models, (640, 480), args.american, seed, True, args.threads, kinds, views)
            accs.append(other.tp / max(sum(other.per_truth.values()), 1))
        print(f"\nsynthetic American scenes over {len(seeds)} seeds ({args.american} scenes each): per-tile accuracy "
              + " / ".join(f"{s}: {a:.4f}" for s, a in zip(seeds, accs, strict=True)) + f"; mean {float(np.mean(accs)):.4f}")
    print_misses(kinds)
    for where in ("wholly in view", "cut by the picture's edge"):
        n, right = views[where], views[where + ", read right"]
        print(f"  tiles {where}: {right} of {n} read right ({right / max(n, 1):.4f})")


HELD_OUT_PHOTO_SEEDS = (1000, 1001)
"""Seeds of the rendered table photos (:func:`scripts.synth_scenes.layout_photo`, tiles apart) the
held-out style is also enrolled from, as a player's phone photo of the layout would enroll it."""


def held_out_scenes(
    models: Path, n: int, seed: int = 21, threads: int = 2, photo_seeds: tuple[int, ...] = ()
) -> tuple[Tally, Tally, float, dict[int, Tally | None]]:
    """American scenes drawn over the style no model trained on (:data:`vision.artwork.HOLDOUT_STYLE`),
    read plain and with that set enrolled from one synthetic grid photo of one of each tile, as
    ``bench_table --enroll`` enrolls it: ``(plain, enrolled, the set's base agreement, by photo)``;
    with ``photo_seeds``, also enrolled from each rendered table photo of the layout
    (:data:`HELD_OUT_PHOTO_SEEDS`), None where that photo is refused."""
    import tempfile

    from scripts.bench_table import enrolled
    from scripts.synth_scenes import SceneMaker, american_scene_faces, layout_photo
    from vision.artwork import HOLDOUT_STYLE
    from vision.classify import TileClassifier, photo_classifier
    from vision.enroll import EnrollError, enroll_image
    from vision.pipeline import TileRecognizer, clip_boxes
    from vision.tileset import save_tileset

    faces = american_scene_faces(4242, (HOLDOUT_STYLE,))
    first = {c: np.asarray(v[0]) for c, v in faces.items()}
    photos: dict[int, Tally | None] = {}
    with tempfile.TemporaryDirectory(prefix="bench-held-out-") as tmp:
        readers = {
            "plain": TileRecognizer(models, threads=threads),
            "enrolled": TileRecognizer(models, threads=threads, tileset=enrolled(faces, models, Path(tmp))),
        }
        clf = TileClassifier(photo_classifier(models))
        for s in photo_seeds:
            try:
                ts, crops, _ = enroll_image(layout_photo(first, np.random.default_rng(s))[0], "american", clf, f"photo-{s}")
            except EnrollError:
                photos[s] = None
                continue
            folder = save_tileset(ts, crops, Path(tmp) / f"photo-{s}")
            readers[f"photo-{s}"] = TileRecognizer(models, threads=threads, tileset=str(folder))
    gen = SceneMaker(seed=seed + 5000, faces=faces, in_view=True)
    rng = np.random.default_rng(seed)
    tallies = {name: Tally() for name in readers}
    for _ in range(n):
        sc = gen.scene(640, 480, rng, short=(30.0, 50.0), layouts=(2, 6))
        truth = clip_boxes(np.concatenate([sc.quads.min(axis=1), sc.quads.max(axis=1)], axis=1), sc.image.shape)
        for name, rec in readers.items():
            d = rec.detect(sc.image)
            if len(sc.ignored) and len(d):
                d = d[~np.any(inside_quads(d.centres, sc.ignored), axis=1)]
            tallies[name].add(d.boxes, [str(c) for c in d.codes], d.confidence, truth, [str(c) for c in sc.codes])
    agreement = readers["enrolled"].prototypes.agreement
    photos.update({s: tallies[f"photo-{s}"] for s in photo_seeds if f"photo-{s}" in tallies})
    return (tallies["plain"], tallies["enrolled"], float(agreement) if agreement is not None else float("nan"),
            photos)


def print_held_out(args: argparse.Namespace) -> None:
    """:func:`held_out_scenes`, per tile and as detections."""
    from vision.artwork import HOLDOUT_STYLE

    plain, enrolled_tally, agreement, photos = held_out_scenes(
        args.models, args.held_out, threads=args.threads, photo_seeds=HELD_OUT_PHOTO_SEEDS)
    n = max(sum(plain.per_truth.values()), 1)
    print(f"\nsynthetic American scenes over {HOLDOUT_STYLE}, the style no model trained on: {args.held_out}, "
          f"{n} tiles (the set enrolled from one grid photo, base agreement {agreement:.3f})")
    for name, t in (("plain", plain), ("enrolled", enrolled_tally)):
        print(f"  {name:<9} per-tile accuracy {t.tp / n:.4f}; as detections F1 {Tally.prf(t.tp, t.fp, t.fn)[2]:.4f}")
    for s, t in photos.items():
        where = f"enrolled from a table photo of the layout (rendered, seed {s})"
        print(f"  {where}: refused" if t is None else
              f"  {where}: per-tile accuracy {t.tp / n:.4f}; as detections F1 {Tally.prf(t.tp, t.fp, t.fn)[2]:.4f}")


if __name__ == "__main__":
    main()
