"""SQLite store: WAL, resume, export, and the live loop over the bundled demo end to end."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from pathlib import Path

import pytest

from companion.live import Live, LiveConfig
from companion.live_events import GameEvent
from companion.live_readers import NullReader, ReplayReader, make_reader
from companion.live_score import settle_session
from companion.store import Store
from vision.capture import DEMO_DIR

DEMO_FRAMES = len((DEMO_DIR / "frames" / "playlist.txt").read_text().split())  # one pass


def test_store_is_wal_and_resumes_the_game(tmp_path: Path) -> None:
    s = Store(tmp_path)
    mode = sqlite3.connect(s.path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    sid = s.open_session("grad")
    gid, state = s.current_game(sid)
    assert state == {}
    s.add_event(gid, GameEvent("discard", "discards", 1, ("3C",), "player 1 discarded 3C", 1.0))
    s.save_state(gid, {"x": 1}, {"1": 25})
    s.close()
    s2 = Store(tmp_path)
    assert s2.open_session("grad") == sid
    assert s2.current_game(sid) == (gid, {"x": 1})
    assert [e.tiles for e in s2.events(gid)] == [("3C",)]


def test_export_json_and_csv(tmp_path: Path) -> None:
    s = Store(tmp_path)
    sid = s.open_session("mjm")
    g1, _ = s.current_game(sid)
    s.finish_game(g1, {"1": 50, "2": 0})
    g2 = s.new_game(sid)
    s.finish_game(g2, {"1": 0, "2": 30})
    mj = {"type": "mahjong", "jokerless": False}
    records = [[{**mj, "player": "1", "value": 50}], [{**mj, "player": "2", "value": 30}]]
    payouts = settle_session("mjm", records, ["1", "2"])
    assert payouts["totals"] == {"1": 50, "2": 30}
    assert payouts["payments"] == [{"from": "2", "to": "1", "amount": 20}]
    s.finish_session(sid, payouts)
    data = s.export_session(sid)
    assert [g["game"] for g in data["games"]] == [1, 2] and data["payouts"] == payouts
    rows = list(csv.DictReader(io.StringIO(s.export_csv(sid))))
    assert {(r["game"], r["player"], r["score"]) for r in rows} == {("1", "1", "50"), ("1", "2", "0"),
                                                                 ("2", "1", "0"), ("2", "2", "30")}
    assert s.open_session("mjm") != sid  # a finished session is not reopened


def _demo(tmp_path: Path) -> Live:
    """The demo with its recorded readings (deterministic whether or not models are installed)."""
    return Live(LiveConfig(source="demo", data_dir=str(tmp_path), demo_fps=0), reader=ReplayReader())


def test_demo_is_followed_to_the_wrong_rack_flag(tmp_path: Path) -> None:
    live = _demo(tmp_path)
    live.run(max_frames=DEMO_FRAMES)
    state = live.hub.state()
    wrong = json.loads((Path(__file__).parents[2] / "calibration/demo/readings.json").read_text())["wrong_rack"]
    kinds = [(e["kind"], e["zone"], tuple(e["tiles"])) for e in reversed(state["events"])]
    assert kinds[0] == ("discard", "discards", ("3C",))
    assert ("exposure", "P1-A", tuple(wrong)) in kinds
    assert [f["kind"] for f in state["flags"]] == ["wrong_rack"]
    assert {r["zone"]: r["status"] for r in state["racks"]}["P1-A"] == "dead"
    assert live.hub.frame(-1, 0)[1][:2] == b"\xff\xd8"


def _story(live: Live) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(e["kind"], e["zone"], tuple(e["tiles"])) for e in reversed(live.hub.state()["events"])]


def test_demo_read_by_the_models_follows_the_recorded_story(tmp_path: Path) -> None:
    """The committed models read every still frame of the demo as its recording says: the same
    discards and exposures in the same order, and the wrong-rack flag, with no other flag."""
    warnings: list[str] = []
    config = LiveConfig(source="demo", data_dir=str(tmp_path / "models"), demo_fps=0)
    reader = make_reader(config, warnings)
    assert type(reader).__name__ == "ModelReader" and warnings == []
    read = Live(config, reader=reader)
    read.run(max_frames=DEMO_FRAMES)
    replayed = _demo(tmp_path / "replay")
    replayed.run(max_frames=DEMO_FRAMES)
    assert ("exposure", "P1-A", ("5D", "5D", "J", "5D")) in _story(read)
    # the tiles' events in order; a flag's event may come either side of the exposure that raised it
    assert [e for e in _story(read) if e[0] != "flag"] == [e for e in _story(replayed) if e[0] != "flag"]
    assert [e for e in _story(read) if e[0] == "flag"] == [e for e in _story(replayed) if e[0] == "flag"]
    state = read.hub.state()
    assert [(f["kind"], f["zone"]) for f in state["flags"]] == [("wrong_rack", "P1-A")]
    assert {r["zone"]: r["status"] for r in state["racks"]}["P1-A"] == "dead"


def test_restart_resumes_and_correction_persists(tmp_path: Path) -> None:
    live = _demo(tmp_path)
    live.run(max_frames=DEMO_FRAMES)
    live.correct("discards", 0, "4C")
    before = live.hub.state()
    live.store.close()
    again = _demo(tmp_path)
    after = again.hub.state()
    assert after["game"] == before["game"]
    assert after["flags"] == before["flags"]
    assert [e["message"] for e in after["events"]] == [e["message"] for e in before["events"]]
    assert after["discards"][0]["tiles"][0]["code"] == "4C"
    assert after["discards"][0]["tiles"][0]["raw"] == "3C"


def test_missing_models_fall_back_with_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    import companion.live_readers as readers

    def broken(config: LiveConfig) -> None:
        raise readers.importlib.import_module("vision.runtime").ModelFileError("model file not found: 'x.onnx'")

    monkeypatch.setattr(readers, "_model_reader", broken)
    warnings: list[str] = []
    assert isinstance(make_reader(LiveConfig(source="demo"), warnings), ReplayReader)
    assert "x.onnx" in warnings[0] and "replays" in warnings[0]
    warnings.clear()
    assert isinstance(make_reader(LiveConfig(source="0"), warnings), NullReader)
    assert "video only" in warnings[0]
    warnings.clear()
    monkeypatch.undo()
    assert isinstance(make_reader(LiveConfig(source="demo", replay=True), warnings), ReplayReader)
    assert "--replay-demo" in warnings[0]


def test_an_enrolled_set_with_places_to_check_says_so_on_the_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A set enrolled with two places named as perhaps swapped (``maybe_swapped``) is read, and the
    page's banner says which places to check; a set with none adds no line."""
    import numpy as np

    import vision.tileset
    from companion.live_readers import tileset_warnings
    from vision.artwork import tile_faces
    from vision.classify import DEFAULT_MODEL, TileClassifier, photo_classifier
    from vision.enroll import enroll_image, grid_photo

    monkeypatch.setattr(vision.tileset, "TILESETS_DIR", tmp_path / "sets")
    faces = {c: v[0] for c, v in tile_faces("km-egypt").items()}
    clf = TileClassifier(photo_classifier(DEFAULT_MODEL.parent))
    for name, laid in (("doubt", {**faces, "6B": faces["FL1"], "FL1": faces["6B"]}), ("plain", faces)):
        ts, crops, _ = enroll_image(grid_photo(laid, "chinese", np.random.default_rng(0))[0], "chinese", clf, name)
        vision.tileset.save_tileset(ts, crops)
    assert tileset_warnings("plain") == [] and tileset_warnings("american") == []
    warnings: list[str] = []
    reader = make_reader(LiveConfig(source="demo", tileset="doubt", data_dir=str(tmp_path / "d"), demo_fps=0), warnings)
    assert type(reader).__name__ == "ModelReader"
    assert warnings == ["Tile set doubt: the tiles in 6B's and FL1's places may lie in each other's places (its "
                        "enrollment could not tell); look at them, framed in amber on the Tile set page or in its "
                        "check.png, and enroll it again if they do."]
    for broken in ("{broken", '{"maybe_swapped": 5}', '["maybe_swapped"]'):
        (tmp_path / "sets" / "doubt" / "tileset.json").write_text(broken)
        assert tileset_warnings("doubt") == []  # a line on the page is not worth a stop


def test_the_tile_set_is_chosen_while_serving_and_kept_for_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``Live.set_tileset``: the models read with the chosen set at once, its places to check on the
    banner once; the choice kept in the data folder for the next start, unless one is given; a set
    that cannot be read is refused and the set in use stays."""
    import shutil

    import numpy as np

    import vision.tileset
    from companion.live import Live
    from vision.artwork import tile_faces
    from vision.classify import DEFAULT_MODEL, TileClassifier, photo_classifier
    from vision.enroll import enroll_image, grid_photo

    monkeypatch.setattr(vision.tileset, "TILESETS_DIR", tmp_path / "sets")
    faces = {c: v[0] for c, v in tile_faces("km-egypt").items()}
    clf = TileClassifier(photo_classifier(DEFAULT_MODEL.parent))
    laid = {**faces, "6B": faces["FL1"], "FL1": faces["6B"]}
    ts, crops, _ = enroll_image(grid_photo(laid, "chinese", np.random.default_rng(0))[0], "chinese", clf, "doubt")
    vision.tileset.save_tileset(ts, crops)
    config = LiveConfig(source="demo", data_dir=str(tmp_path / "d"), demo_fps=0)
    live = Live(config)
    assert live.config.tileset == "american" and type(live.reader).__name__ == "ModelReader"
    before = live.reader
    live.set_tileset("doubt")
    assert live.config.tileset == "doubt" and live.view()["settings"]["tileset"] == "doubt"
    assert live.reader is not before and live.reader.reader.recognizer.tileset == "doubt"  # type: ignore[attr-defined]
    said = [w for w in live.warnings if w.startswith("Tile set doubt:")]
    live.set_variant("grad")  # a new reader for the rules: the banner's line not said twice
    assert len(said) == 1 and [w for w in live.warnings if w.startswith("Tile set ")] == said
    with pytest.raises(ValueError, match="no enrolled tile set 'nope'"):
        live.set_tileset("nope")
    assert live.config.tileset == "doubt" and live.reader.reader.recognizer.tileset == "doubt"  # type: ignore[attr-defined]
    assert Live(config).config.tileset == "doubt"  # the next start reads with it
    assert Live(LiveConfig(source="demo", data_dir=config.data_dir, tileset="american", demo_fps=0)).config.tileset == "american"
    shutil.rmtree(tmp_path / "sets" / "doubt")
    gone = Live(config)
    assert gone.config.tileset == "american"
    assert any(w.startswith("The tile set chosen before cannot be read (no enrolled tile set 'doubt'") for w in gone.warnings)
    live.set_tileset("american")
    assert not [w for w in live.warnings if w.startswith("Tile set ")] and live.reader.reader.recognizer.tileset is None  # type: ignore[attr-defined]
