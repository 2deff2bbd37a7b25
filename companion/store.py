"""SQLite persistence of sessions, games, events, flags and corrections (stdlib sqlite3, WAL).

One file ``<data>/companion.sqlite3``.  A *session* is a run of games with cumulative scores; a
*game* stores its events and, after every change, a JSON snapshot of its live state so that a
restart resumes the game in progress.  A finished session exports as JSON and CSV.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from companion.live_events import GameEvent

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
  id INTEGER PRIMARY KEY, started REAL NOT NULL, finished REAL, variant TEXT NOT NULL,
  payouts TEXT);
CREATE TABLE IF NOT EXISTS games (
  id INTEGER PRIMARY KEY, session_id INTEGER NOT NULL REFERENCES sessions(id),
  number INTEGER NOT NULL, started REAL NOT NULL, finished REAL, state TEXT NOT NULL DEFAULT '{}',
  scores TEXT NOT NULL DEFAULT '{}');
CREATE TABLE IF NOT EXISTS events (
  id INTEGER PRIMARY KEY, game_id INTEGER NOT NULL REFERENCES games(id), t REAL NOT NULL,
  kind TEXT NOT NULL, zone TEXT, player INTEGER, tiles TEXT NOT NULL, message TEXT NOT NULL);
"""


class Store:
    """A thread-safe handle on the companion database under ``data_dir``."""

    def __init__(self, data_dir: str | Path) -> None:
        self.dir = Path(data_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / "companion.sqlite3"
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _one(self, sql: str, args: tuple[Any, ...] = ()) -> sqlite3.Row | None:
        with self._lock:
            row: sqlite3.Row | None = self._db.execute(sql, args).fetchone()
            return row

    def _all(self, sql: str, args: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return list(self._db.execute(sql, args).fetchall())

    def _exec(self, sql: str, args: tuple[Any, ...] = ()) -> int:
        with self._lock:
            cur = self._db.execute(sql, args)
            return int(cur.lastrowid or 0)

    # sessions and games -------------------------------------------------------------------
    def open_session(self, variant: str) -> int:
        """The unfinished session, or a new one for ``variant``."""
        row = self._one("SELECT id FROM sessions WHERE finished IS NULL ORDER BY id DESC LIMIT 1")
        if row is not None:
            return int(row["id"])
        return self._exec("INSERT INTO sessions (started, variant) VALUES (?, ?)", (time.time(), variant))

    def set_session_variant(self, session_id: int, variant: str) -> None:
        self._exec("UPDATE sessions SET variant = ? WHERE id = ?", (variant, session_id))

    def session_variant(self, session_id: int) -> str:
        row = self._one("SELECT variant FROM sessions WHERE id = ?", (session_id,))
        if row is None:
            raise ValueError(f"no session {session_id}")
        return str(row["variant"])

    def current_game(self, session_id: int) -> tuple[int, dict[str, Any]]:
        """The game in progress (id, saved state), starting game 1 when there is none."""
        row = self._one(
            "SELECT id, state FROM games WHERE session_id = ? AND finished IS NULL ORDER BY id DESC LIMIT 1",
            (session_id,),
        )
        if row is not None:
            return int(row["id"]), dict(json.loads(row["state"]))
        return self.new_game(session_id), {}

    def new_game(self, session_id: int) -> int:
        row = self._one("SELECT COUNT(*) AS n FROM games WHERE session_id = ?", (session_id,))
        number = int(row["n"]) + 1 if row else 1
        return self._exec(
            "INSERT INTO games (session_id, number, started) VALUES (?, ?, ?)",
            (session_id, number, time.time()),
        )

    def save_state(self, game_id: int, state: dict[str, Any], scores: dict[str, int]) -> None:
        self._exec(
            "UPDATE games SET state = ?, scores = ? WHERE id = ?",
            (json.dumps(state), json.dumps(scores), game_id),
        )

    def finish_game(self, game_id: int, scores: dict[str, int]) -> None:
        self._exec("UPDATE games SET finished = ?, scores = ? WHERE id = ?",
                   (time.time(), json.dumps(scores), game_id))

    def finish_session(self, session_id: int, payouts: dict[str, Any]) -> None:
        self._exec("UPDATE games SET finished = ? WHERE session_id = ? AND finished IS NULL",
                   (time.time(), session_id))
        self._exec("UPDATE sessions SET finished = ?, payouts = ? WHERE id = ?",
                   (time.time(), json.dumps(payouts), session_id))

    def game_scores(self, session_id: int) -> list[dict[str, Any]]:
        rows = self._all(
            "SELECT id, number, started, finished, scores FROM games WHERE session_id = ? ORDER BY number",
            (session_id,),
        )
        return [
            {"game": int(r["number"]), "id": int(r["id"]), "started": r["started"],
             "finished": r["finished"], "scores": json.loads(r["scores"])}
            for r in rows
        ]

    def game_states(self, session_id: int) -> list[dict[str, Any]]:
        """The saved live state of every game of a session, in order."""
        rows = self._all("SELECT state FROM games WHERE session_id = ? ORDER BY number", (session_id,))
        return [dict(json.loads(r["state"])) for r in rows]

    # events -------------------------------------------------------------------------------
    def add_event(self, game_id: int, ev: GameEvent) -> None:
        self._exec(
            "INSERT INTO events (game_id, t, kind, zone, player, tiles, message) VALUES (?,?,?,?,?,?,?)",
            (game_id, ev.t, ev.kind, ev.zone, ev.player, " ".join(ev.tiles), ev.message),
        )

    def events(self, game_id: int, limit: int = 200) -> list[GameEvent]:
        rows = self._all(
            "SELECT * FROM (SELECT * FROM events WHERE game_id = ? ORDER BY id DESC LIMIT ?) ORDER BY id",
            (game_id, limit),
        )
        return [
            GameEvent(r["kind"], r["zone"], r["player"], tuple(r["tiles"].split()), r["message"], r["t"])
            for r in rows
        ]

    # export -------------------------------------------------------------------------------
    def export_session(self, session_id: int) -> dict[str, Any]:
        row = self._one("SELECT * FROM sessions WHERE id = ?", (session_id,))
        if row is None:
            raise ValueError(f"no session {session_id}")
        games = self.game_scores(session_id)
        for g in games:
            g["events"] = [e.to_json() for e in self.events(g["id"], limit=100000)]
        return {
            "session": session_id, "variant": row["variant"], "started": row["started"],
            "finished": row["finished"],
            "payouts": json.loads(row["payouts"]) if row["payouts"] else None, "games": games,
        }

    def export_csv(self, session_id: int) -> str:
        """One row per game and player: ``session,game,player,score``."""
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["session", "game", "player", "score"])
        for g in self.game_scores(session_id):
            for player, score in sorted(g["scores"].items()):
                w.writerow([session_id, g["game"], player, score])
        return out.getvalue()
