"""The live companion: frame loop, snapshots for the dashboard, and the session around the game.

``Live(config)`` wires a frame source (:mod:`vision.capture`), the motion gate and smoother
(:mod:`vision.track`), a table reader (the recognisers when their models are present, or the
demo's recorded readings), the followed game (:mod:`companion.live_game`) and the SQLite store
(:mod:`companion.store`).  The video loop and the reader run in two threads and only *publish*
snapshots to a :class:`~companion.live_hub.LiveHub`; web requests read snapshots and call the
user actions (corrections, flags, card, calibration, sessions), which take the game's lock.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from dataclasses import replace as dc_replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.live_events import GameEvent
from companion.live_game import LiveGame
from companion.live_hub import LiveHub, annotate
from companion.live_readers import (
    DEFAULT_LAYOUT,
    TableReaderLike,
    check_tileset,
    chosen_tileset,
    fresh_reader,
    keep_tileset_choice,
    make_reader,
    tileset_warnings,
)
from companion.live_rules import DEFAULT_CARD, RackRules
from companion.store import Store
from companion.table import TableObservation
from vision.capture import FrameSource, PhoneQueue, Resilient, open_source
from vision.track import MotionGate, ReadingSmoother

log = logging.getLogger(__name__)
DEMO_FIRST = "f000.jpg"


@dataclass(frozen=True)
class LiveConfig:
    """What ``serve`` was asked for."""

    source: str = "demo"
    variant: str = "mjm"
    card: str | None = None
    layout: str | None = None
    tileset: str | None = None  # None: the set chosen on the dashboard before, else "american" (the base)
    data_dir: str = "data"
    window: int = 3
    still_frames: int = 2
    jpeg_quality: int = 75
    demo_fps: float = 8.0
    camera_size: tuple[int, int] = (1920, 1080)  # asked of a camera index (vision.capture.CAMERA_SIZE)
    replay: bool = False  # the demo with its recorded readings even when models are installed
    warnings: tuple[str, ...] = field(default=())


class Live:
    """The running companion: one loop thread, a hub of snapshots, a store, and user actions."""

    def __init__(self, config: LiveConfig, reader: TableReaderLike | None = None,
                 source: FrameSource | None = None) -> None:
        self.warnings: list[str] = list(config.warnings)
        if config.tileset is None:
            config = dc_replace(config, tileset=chosen_tileset(config.data_dir, self.warnings))
        self.config = config
        self.hub = LiveHub()
        self.phone = PhoneQueue()
        self.store = Store(config.data_dir)
        self.session_id = self.store.open_session(config.variant)
        self.game_id, saved = self.store.current_game(self.session_id)
        events = self.store.events(self.game_id)
        self.reader = reader if reader is not None else make_reader(config, self.warnings)
        self.rules = self._load_rules(config.card)
        self.game = (LiveGame.from_json(saved, events, self._check) if saved
                     else LiveGame(config.variant, self._check))
        self._source_override = source
        self.gate = MotionGate(still_frames=config.still_frames)
        self.smoother = ReadingSmoother(config.window)
        self.card_info: dict[str, Any] = {
            "name": Path(config.card).name if config.card else (DEFAULT_CARD.name if self.rules else None),
            "hands": len(self.rules.card.hands) if self.rules else None}
        self.calibration: dict[str, Any] | None = None
        self.last_settlement: dict[str, Any] | None = None
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._source: FrameSource | None = None
        self._latest: np.ndarray | None = None
        self._reader_thread: threading.Thread | None = None
        self._slot_cv = threading.Condition()
        self._slot: tuple[np.ndarray, str] | None = None
        self.stats: dict[str, Any] = {"fps": 0.0, "frames": 0, "motion": "", "source": config.source,
                                      "source_error": ""}
        self.publish()

    def _check(self, obs: TableObservation) -> TableObservation:
        rules = self.rules
        return rules.flags(obs, self.config.variant) if rules is not None else obs

    def _load_rules(self, card: str | None) -> RackRules | None:
        try:
            rules = RackRules.load(card)
        except (ValueError, OSError) as exc:
            self.warnings.append(f"Card not loaded: {exc}")
            return None
        if rules is None:
            self.warnings.append("No card loaded: wrong-rack checks are off (upload one in Settings).")
        return rules

    # loop ---------------------------------------------------------------------------------
    def _frames(self) -> Iterator[Any]:
        if self._source_override is not None:
            self._source = self._source_override
        else:
            spec = self.config.source
            self._source = Resilient(
                lambda: open_source(spec, phone=self.phone, demo_fps=self.config.demo_fps,
                                    camera_size=self.config.camera_size), spec, on_error=self._source_failed)
        return self._source.frames()

    def _source_failed(self, message: str) -> None:
        """The dashboard shows why no frame comes while the source is retried (and no frame rate),
        and clears it at the next frame."""
        self.stats["source_error"] = message
        if message:
            self.stats["fps"] = 0.0
        self.publish()

    def start(self) -> None:
        """Run the frame loop and the reader in two threads, so slow recognition never stalls video."""
        self._reader_thread = threading.Thread(target=self._read_loop, name="live-reader", daemon=True)
        self._reader_thread.start()
        self._thread = threading.Thread(target=self.run, name="live-loop", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._source is not None:
            self._source.close()
        with self._slot_cv:
            self._slot_cv.notify_all()
        for t in (self._thread, self._reader_thread):
            if t is not None:
                t.join(timeout=5)

    def run(self, max_frames: int | None = None) -> None:
        """The frame loop; returns at ``stop()``, at ``max_frames``, or when a finite source ends."""
        t0, n, previous = time.monotonic(), 0, ""
        for frame in self._frames():
            if self._stop.is_set():
                break
            if (self.config.source == "demo" and frame.source == DEMO_FIRST != previous
                    and self.game.last is not None):
                self.new_game()  # the demo recording starts over: so does its game
            previous = frame.source
            try:
                self.process(frame.image, frame.source)
            except Exception as exc:  # a misread never kills the loop: it becomes a warning
                log.exception("frame %s failed", frame.index)
                self.stats["last_error"] = f"frame {frame.index}: {exc}"
            n += 1
            elapsed = time.monotonic() - t0
            if elapsed >= 1.0:
                self.stats["fps"] = round(n / elapsed, 1)
                t0, n = time.monotonic(), 0
            if max_frames is not None and self.stats["frames"] >= max_frames:
                break
        if isinstance(self._source, Resilient):
            self.stats["source_error"] = self._source.last_error

    def process(self, image: np.ndarray, name: str = "") -> list[GameEvent]:
        """One frame: gate, read when stable, smooth, diff into events, publish."""
        self._latest = image
        motion = self.gate.update(image)
        self.stats["frames"] += 1
        self.stats["motion"] = "moving" if motion.moving else ("stable" if motion.stable else "settling")
        events: list[GameEvent] = []
        if motion.stable and self._reader_thread is not None:
            with self._slot_cv:  # the reader thread takes the newest stable frame when it is free
                self._slot = (image, name)
                self._slot_cv.notify()
        elif motion.stable:
            events = self.read(image, name)
        banner = f"{self.stats['fps']:.0f} fps"
        drawn = annotate(image, self.game.last, motion, banner)
        ok, buf = cv2.imencode(".jpg", drawn, [cv2.IMWRITE_JPEG_QUALITY, self.config.jpeg_quality])
        if ok:
            self.hub.put_frame(buf.tobytes())
        if self.stats["frames"] % 15 == 0:
            self.publish()
        return events

    def read(self, image: np.ndarray, name: str = "") -> list[GameEvent]:
        """Read one stable frame into the game: recognise, smooth, correct, check, diff, record."""
        obs = self.reader.read(image, name)
        if obs is None:
            return []
        smooth = self.smoother.update_with_observation(obs)
        with self._lock:
            events = self.game.observe(smooth)
            self._record(events)
        if events:
            self.publish()
        return events

    def _read_loop(self) -> None:
        while not self._stop.is_set():
            with self._slot_cv:
                self._slot_cv.wait_for(lambda: self._slot is not None or self._stop.is_set(), 1.0)
                job, self._slot = self._slot, None
            if job is None:
                continue
            try:
                self.read(*job)
            except Exception as exc:  # a misread never kills the reader: it becomes a warning
                log.exception("reading a frame failed")
                self.stats["last_error"] = f"reading: {exc}"

    def _record(self, events: list[GameEvent]) -> None:
        for ev in events:
            self.store.add_event(self.game_id, ev)
        if events:
            self.store.save_state(self.game_id, self.game.to_json(), self.game.scores)

    # snapshots ----------------------------------------------------------------------------
    def view(self) -> dict[str, Any]:
        with self._lock:
            v = self.game.view()
            rules = self.rules
        for rack in v["racks"]:
            rack["viable"] = rules.open_hands(rack["exposures"]) if rules and rack["exposures"] else None
        v.update({
            "session": self.session_id, "game": self.game_id, "warnings": list(self.warnings),
            "status": dict(self.stats), "card": self.card_info,
            "settings": {"variant": self.config.variant, "tileset": self.config.tileset,
                         "layout": self.config.layout, "source": self.config.source},
            "session_games": self.store.game_scores(self.session_id),
            "last_settlement": self.last_settlement,
            "time": time.time(),
        })
        return v

    def publish(self) -> int:
        return self.hub.put_state(self.view())

    def raw_snapshot(self) -> bytes:
        """The latest camera frame without annotation, as JPEG (for enrollment and calibration)."""
        image = self._latest
        if image is None:
            return b""
        ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 92])
        return buf.tobytes() if ok else b""

    # user actions -------------------------------------------------------------------------
    def correct(self, zone: str, index: int, code: str, action: str = "correct") -> None:
        with self._lock:
            self.game.act(action, zone, index, code)  # companion.live_game.LiveGame.act
            self._record(self.game.reapply())  # a Mah Jongg scored on the player's word is logged
            self.store.save_state(self.game_id, self.game.to_json(), self.game.scores)
        self.publish()

    def set_flag(self, flag_id: int, status: str) -> dict[str, Any]:
        with self._lock:
            rec = self.game.set_flag_status(flag_id, status)
            self.store.save_state(self.game_id, self.game.to_json(), self.game.scores)
        self.publish()
        return rec

    def new_game(self) -> int:
        with self._lock:
            self.store.save_state(self.game_id, self.game.to_json(), self.game.scores)
            self.store.finish_game(self.game_id, self.game.scores)
            self.game_id = self.store.new_game(self.session_id)
            self.game = LiveGame(self.config.variant, self._check)
            self.smoother.reset()
        self.publish()
        return self.game_id

    def finish_session(self) -> dict[str, Any]:
        from companion.live_score import settle_session

        with self._lock:
            self.store.save_state(self.game_id, self.game.to_json(), self.game.scores)
            self.store.finish_game(self.game_id, self.game.scores)
            states = self.store.game_states(self.session_id)
            payouts = settle_session(self.config.variant, [s.get("record", []) for s in states],
                                     self.game.players())
            self.store.finish_session(self.session_id, payouts)
            self.last_settlement = {"session": self.session_id, **payouts}
            exported = self.store.export_session(self.session_id)
            self.session_id = self.store.open_session(self.config.variant)
            self.game_id, _ = self.store.current_game(self.session_id)
            self.game = LiveGame(self.config.variant, self._check)
        self.publish()
        return exported

    def set_variant(self, name: str) -> None:
        """Switch the ruleset now: the game is re-scored and the table reader follows the new rules."""
        from companion.rules.variants import get_variant

        get_variant(name)  # UnknownVariant (a ValueError) names the known ones
        reader = fresh_reader(self.reader, dc_replace(self.config, variant=name), self.warnings)
        with self._lock:
            self.config = dc_replace(self.config, variant=name)
            self.store.set_session_variant(self.session_id, name)
            self.game.variant = name
            self.game.rescore()
            self.reader = reader or self.reader
        self.publish()

    def set_tileset(self, name: str) -> None:
        """Read with another enrolled set (``american``: the base) from now on, kept for the next start
        (``DATA/tileset.txt``); a ValueError names a set that cannot be read, and the set in use stays."""
        config = dc_replace(self.config, tileset=check_tileset(name))
        reader = fresh_reader(self.reader, config, self.warnings, strict=True)  # the models load outside the lock
        with self._lock:
            self.config = config
            self.reader = reader or self.reader
            self.warnings = [w for w in self.warnings if not w.startswith(("Tile set ", "The tile set chosen"))]
            self.warnings += tileset_warnings(name)
        keep_tileset_choice(config.data_dir, name)
        self.publish()

    def set_card(self, name: str, card: Any, text: str) -> None:
        """Use an uploaded (already parsed) card from now on, and keep a copy under the data folder."""
        folder = Path(self.config.data_dir) / "cards"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / Path(name).name).write_text(text, encoding="utf-8")
        with self._lock:
            self.rules = RackRules(card)
            self.card_info = {"name": name, "hands": len(card.hands)}
            self.warnings = [w for w in self.warnings if not w.startswith(("No card", "Card not"))]
            self.game.reapply()
        self.publish()

    def calibrate(self, points: list[list[float]], table_mm: Any = None) -> dict[str, Any]:
        """Four clicked table corners -> homography, saved as ``calibration.json`` in the data folder;
        returns it with the layout's zones projected into the image (to drag into place)."""
        from vision.calibrate import Calibration

        layout = self.layout()
        size = tuple(table_mm) if table_mm else layout.table_mm
        if len(size) != 2:
            raise ValueError(f"table_mm must be [width, height], got {table_mm!r}")
        h, w = self._latest.shape[:2] if self._latest is not None else (0, 0)
        cal = Calibration.from_corners(points, (float(size[0]), float(size[1])), (w, h))
        path = Path(self.config.data_dir) / "calibration.json"
        data = cal.to_json()
        path.write_text(json.dumps(data, indent=1), encoding="utf-8")
        self.calibration = data
        zones = {z.name: np.round(cal.to_image(np.asarray(z.polygon_mm, np.float32)), 1).tolist()
                 for z in layout.zones}
        self.publish()
        return {"path": str(path), "calibration": data, "zones_px": zones}

    def layout(self) -> Any:
        """The table layout in use: ``--layout``, else the data folder's, else the shipped 2-player one."""
        from vision.layout import load_layout

        saved = Path(self.config.data_dir) / "layout.json"
        if self.config.layout:
            return load_layout(self.config.layout)
        return load_layout(saved if saved.is_file() else DEFAULT_LAYOUT)

    def save_zones(self, zones_px: dict[str, list[list[float]]]) -> dict[str, Any]:
        """Zones dragged on the snapshot (image px) -> table mm with the saved calibration ->
        ``layout.json`` in the data folder (validated like any layout; used from the next start)."""
        from vision.calibrate import Calibration
        from vision.layout import parse_layout

        if not self.calibration:
            raise ValueError("calibrate first: click the four table corners")
        cal = Calibration(np.asarray(self.calibration["image_to_table"], np.float64),
                          tuple(self.calibration["table_mm"]), tuple(self.calibration["image_size"]))
        raw = self.layout().to_json()
        for z in raw["zones"]:
            if z["name"] in zones_px:
                mm = cal.to_table(np.asarray(zones_px[z["name"]], np.float32))
                w, h = raw["table_mm"]
                z["polygon_mm"] = [[round(float(min(max(x, 0), w)), 1), round(float(min(max(y, 0), h)), 1)]
                                   for x, y in mm]
        path = Path(self.config.data_dir) / "layout.json"
        parse_layout(raw, str(path))  # raises LayoutError (a ValueError) naming the bad zone
        path.write_text(json.dumps(raw, indent=1), encoding="utf-8")
        return {"path": str(path), "layout": raw}


def data_dir_default() -> Path:
    return Path.home() / ".local" / "share" / "siamese-companion"
