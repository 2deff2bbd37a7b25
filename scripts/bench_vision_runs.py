"""The vision benchmark's runs on photos: ours and the peer, each in its own pass and photo by photo.

:func:`run_ours` and :func:`run_peer` read a list of photos each in one pass (the peer, the PyPI
``mahjong-detector``, through :data:`PEER_RUNNER` in its own interpreter); :func:`paired_speed`
times the two photo by photo in turn, optionally each once the other's process is quiet
(:func:`wait_quiet`, :data:`QUIET`, :func:`cpu_ms`); :func:`peer_lines`, :func:`paired_lines`
and :func:`peer_beside` print the peer's lines beside ours.  Run by ``scripts/bench_vision.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import threading
import time
from pathlib import Path

import cv2
import numpy as np

from scripts.bench_vision_tally import PEER_CODES, PEER_FAMILY, Tally, mislabelled, print_summary
from scripts.photos import PhotoSample

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


def peer_beside(photos: list[PhotoSample], args: argparse.Namespace) -> None:
    """The peer's line on ``photos``, printed under ours (none with ``--no-peer``)."""
    if args.no_peer:
        return
    peer, t_peer, why, _ = run_peer(photos, args.peer_python)
    if peer is None:
        print(f"  peer unavailable: {why}")
    else:
        print_summary("  peer mahjong-detector", peer, t_peer)
