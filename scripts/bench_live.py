"""Benchmark the live companion: loop speed, tile-to-flag latency on the page's stream, memory.

    python scripts/bench_live.py [--minutes 10] [--frames 300]

1. fps: the whole loop (motion gate, reading, smoothing, rules, annotation, JPEG for the MJPEG
   stream) over the demo frames (1920x1080; --size to resize them), unpaced: in one thread with the reader ``serve`` would
   use here (the recognisers when ``models/`` has them, else the demo's recorded readings), with
   the recorded readings, and threaded as ``serve`` runs it (video loop + reader thread).
2. latency: a served dashboard receives paced 15 fps frames; at t0 the frame changes to one with
   a wrong-rack exposure; we time until ``/api/events`` (SSE) delivers a state with the flag.
3. memory: the demo looped at 15 fps with an MJPEG and an SSE client attached for ``--minutes``;
   RSS sampled every 10 s.
Prints a table; targets: fps >= 15, latency <= 0.5 s, flat memory.
"""

from __future__ import annotations

import argparse
import http.client
import json
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from companion.live import Live, LiveConfig  # noqa: E402
from companion.live_readers import ReplayReader  # noqa: E402
from companion.web import create_app  # noqa: E402
from vision.capture import DEMO_DIR, FolderSource, Frame  # noqa: E402

FRAMES = DEMO_DIR / "frames"


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


SIZE: tuple[int, int] | None = None  # --size: the demo frames resized (a camera asked for 1920x1080)


def demo_images() -> list[tuple[str, np.ndarray]]:
    names = (FRAMES / "playlist.txt").read_text().split()
    cache = {n: cv2.imread(str(FRAMES / n)) for n in set(names)}
    if SIZE is not None:
        cache = {n: cv2.resize(img, SIZE, interpolation=cv2.INTER_CUBIC) for n, img in cache.items()}
    return [(n, cache[n]) for n in names]


def bench_fps(n: int, reader: object | None, label: str) -> tuple[str, float, str]:
    images = demo_images()
    with tempfile.TemporaryDirectory() as d:
        live = Live(LiveConfig(source="demo", data_dir=d), reader=reader)  # type: ignore[arg-type]
        note = "; ".join(live.warnings) if reader is None else type(reader).__name__
        note = note or "recognisers from models/"
        t0 = time.perf_counter()
        for i in range(n):
            name, img = images[i % len(images)]
            live.process(img, name)
        dt = time.perf_counter() - t0
        live.store.close()
    return label, n / dt, note[:70]


class CountingReader:
    """Wrap a reader to count the frames it read."""

    def __init__(self, inner: object) -> None:
        self.inner, self.reads = inner, 0

    def read(self, image: np.ndarray, name: str = "") -> object:
        self.reads += 1
        return self.inner.read(image, name)  # type: ignore[attr-defined]


def bench_threaded(seconds: float) -> tuple[str, float, str]:
    """As ``serve`` runs: loop and reader in their own threads, unpaced demo frames."""
    from companion.live_readers import make_reader

    with tempfile.TemporaryDirectory() as d:
        config = LiveConfig(source="demo", data_dir=d)
        warnings: list[str] = []
        reader = CountingReader(make_reader(config, warnings))
        folder = FRAMES
        if SIZE is not None:  # the resized frames, as files: FolderSource reads a folder
            folder = Path(d) / "frames"
            folder.mkdir()
            (folder / "playlist.txt").write_text((FRAMES / "playlist.txt").read_text())
            for name, img in dict(demo_images()).items():
                cv2.imwrite(str(folder / name), img)
        live = Live(config, reader=reader, source=FolderSource(folder, loop=True, fps=0))  # type: ignore[arg-type]
        live.start()
        time.sleep(seconds)
        frames, reads = live.stats["frames"], reader.reads
        live.stop()
        live.store.close()
    note = f"{reads / seconds:.1f} stable frames read/s; " + ("; ".join(warnings) or "recognisers")
    return "loop + reader threads, as serve runs", frames / seconds, note[:70]


class Scripted:
    """Frames at ``fps``: ``before`` until ``switch`` is set, then ``after``; records the switch time."""

    name = "scripted"

    def __init__(self, before: tuple[str, np.ndarray], after: tuple[str, np.ndarray], fps: float) -> None:
        self.before, self.after, self.fps = before, after, fps
        self.switch = threading.Event()
        self.switched_at = 0.0
        self.closed = False

    def frames(self) -> Iterator[Frame]:
        i = 0
        while not self.closed:
            name, img = self.after if self.switch.is_set() else self.before
            if self.switch.is_set() and not self.switched_at:
                self.switched_at = time.perf_counter()
            yield Frame(img, i, time.time(), name)
            i += 1
            time.sleep(1.0 / self.fps)

    def close(self) -> None:
        self.closed = True


def serve(live: Live) -> tuple[object, int]:
    from werkzeug.serving import make_server

    srv = make_server("127.0.0.1", 0, create_app(live), threaded=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, srv.server_port


def sse_states(port: int) -> Iterator[dict[str, object]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/api/events")
    resp = conn.getresponse()
    buf = b""
    while True:
        chunk = resp.readline()
        if not chunk:
            return
        buf += chunk
        if chunk == b"\n" and b"data: " in buf:
            yield json.loads(buf.split(b"data: ", 1)[1])
            buf = b""


def bench_latency(trials: int = 5) -> tuple[list[float], list[float]]:
    readings = json.loads((DEMO_DIR / "readings.json").read_text())["frames"]
    wrong = [n for n, o in readings.items() if len(o["zones"]["P1-A"]["exposures"]) == 2][0]
    before = [n for n, o in readings.items() if len(o["zones"]["P1-A"]["exposures"]) == 1][-1]
    load = {n: cv2.imread(str(FRAMES / n)) for n in (before, wrong)}
    out, push = [], []
    for _ in range(trials):
        src = Scripted((before, load[before]), (wrong, load[wrong]), fps=15)
        with tempfile.TemporaryDirectory() as d:
            live = Live(LiveConfig(source="demo", data_dir=d), reader=ReplayReader(), source=src)
            srv, port = serve(live)
            live.start()
            states = sse_states(port)
            while not any(r["exposures"] for s in [next(states)] for r in s["racks"]):  # type: ignore[index]
                pass
            src.switch.set()
            for s in states:
                flags = [f for f in s["flags"] if f["kind"] == "wrong_rack"]  # type: ignore[index]
                if flags:
                    out.append(time.perf_counter() - src.switched_at)
                    push.append(time.time() - float(flags[0]["t"]))
                    break
            srv.shutdown()  # type: ignore[attr-defined]
            live.stop()
            live.store.close()
    return out, push


def bench_memory(minutes: float) -> list[tuple[float, float]]:
    with tempfile.TemporaryDirectory() as d:
        live = Live(LiveConfig(source="demo", data_dir=d, demo_fps=15))
        srv, port = serve(live)
        live.start()
        stop = threading.Event()

        def mjpeg_client() -> None:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("GET", "/video.mjpg")
            resp = conn.getresponse()
            while not stop.is_set() and resp.read(65536):
                pass

        def sse_client() -> None:
            for _ in sse_states(port):
                if stop.is_set():
                    return

        for fn in (mjpeg_client, sse_client):
            threading.Thread(target=fn, daemon=True).start()
        samples, t0 = [], time.monotonic()
        while time.monotonic() - t0 < minutes * 60:
            samples.append((time.monotonic() - t0, rss_mb()))
            time.sleep(min(10.0, max(1.0, minutes * 6)))
        samples.append((time.monotonic() - t0, rss_mb()))
        stop.set()
        srv.shutdown()  # type: ignore[attr-defined]
        live.stop()
        live.store.close()
    return samples


def _demo_size() -> tuple[int, int]:
    """The bundled demo frames' own size."""
    from vision.capture import DEMO_DIR

    img = cv2.imread(str(sorted((DEMO_DIR / "frames").glob("*.jpg"))[0]))
    return int(img.shape[1]), int(img.shape[0])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=10.0, help="memory run length (default 10)")
    ap.add_argument("--frames", type=int, default=300, help="frames for the fps runs")
    ap.add_argument("--skip-memory", action="store_true")
    ap.add_argument("--size", default=None, metavar="WxH",
                    help="resize the demo frames (1920x1080, what serve asks a camera for) to this size for the fps "
                         "runs (e.g. 1280x720)")
    ap.add_argument("--only-fps", action="store_true", help="the fps runs only (no latency, no memory)")
    args = ap.parse_args()
    global SIZE
    if args.size:
        from vision.capture import parse_size

        SIZE = parse_size(args.size)
    import logging

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    rows = [bench_fps(args.frames, None, "loop, reader serve would use")]
    rows.append(bench_fps(args.frames, ReplayReader(), "loop, recorded readings"))
    rows.append(bench_threaded(10.0))
    w, h = SIZE or _demo_size()
    print(f"demo frames at {w}x{h}")
    print(f"{'measure':<40} {'value':>10}  note")
    for label, fps, note in rows:
        print(f"{label:<40} {fps:>7.1f} fps  {note}")
    if args.only_fps:
        return 0
    lat, push = bench_latency()
    print(f"{'tile arrival -> flag on SSE (median)':<40} {np.median(lat):>8.3f} s  "
          f"min {min(lat):.3f} max {max(lat):.3f} over {len(lat)} trials at 15 fps")
    print(f"{'flag raised -> received on SSE (median)':<40} {np.median(push) * 1000:>7.1f} ms  "
          f"max {max(push) * 1000:.1f} ms")
    if not args.skip_memory:
        mem = bench_memory(args.minutes)
        first, last = mem[0][1], mem[-1][1]
        peak = max(m for _, m in mem)
        warm = next((m for t, m in mem if t >= min(60.0, args.minutes * 30)), first)
        print(f"{'RSS over ' + format(args.minutes, 'g') + ' min (MB)':<40} {last:>8.1f} MB  "
              f"start {first:.1f} after warm-up {warm:.1f} peak {peak:.1f} "
              f"change since warm-up {last - warm:+.1f} ({len(mem)} samples)")
        marks = [f"{t / 60:.0f}m {m:.0f}" for t, m in mem if int(t) % 60 < 10 or t == mem[-1][0]]
        print("  RSS by minute (MB):", ", ".join(marks))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
