"""The dashboard's HTTP surface through Flask's test client."""

from __future__ import annotations

import io
import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from flask.testing import FlaskClient
from web_helpers import DOUBTFUL, SWAPPED, layout_jpeg

from companion.live import Live
from companion.web import create_app
from vision.enroll import layout_codes

CARD = Path(__file__).parents[2] / "calibration" / "cards" / "example.mjcard"


def test_pages_render(client: FlaskClient) -> None:
    for path in ("/", "/settings", "/calibrate", "/enroll", "/camera"):
        r = client.get(path)
        assert r.status_code == 200, path
        assert b"Siamese companion" in r.data
    assert b'name="viewport"' in client.get("/").data


def test_state_has_what_the_page_shows(client: FlaskClient) -> None:
    s = client.get("/api/state").get_json()
    for key in ("racks", "discards", "flags", "events", "scores", "warnings", "status", "settings", "seq"):
        assert key in s, key
    assert {r["zone"] for r in s["racks"]} == {"P1-A", "P1-B", "P2-A", "P2-B"}
    assert s["flags"][0]["kind"] == "wrong_rack"


def test_sse_sends_the_state(client: FlaskClient) -> None:
    r = client.get("/api/events?once=1")
    assert r.mimetype == "text/event-stream"
    text = r.get_data(as_text=True)
    assert text.startswith("id: ")
    data = json.loads(text.split("data: ", 1)[1])
    assert data["flags"][0]["kind"] == "wrong_rack"


def test_mjpeg_and_snapshot(client: FlaskClient) -> None:
    r = client.get("/video.mjpg?frames=1")
    assert r.mimetype == "multipart/x-mixed-replace"
    assert r.data.count(b"--frame\r\nContent-Type: image/jpeg") == 1
    snap = client.get("/snapshot.jpg")
    img = cv2.imdecode(np.frombuffer(snap.data, np.uint8), cv2.IMREAD_COLOR)
    assert img.shape == (1080, 1920, 3)


def test_correction_changes_the_reading(client: FlaskClient) -> None:
    r = client.post("/api/correct", json={"zone": "discards", "index": 1, "code": "e"})
    assert r.status_code == 200
    tile = client.get("/api/state").get_json()["discards"][0]["tiles"][1]
    assert tile["code"] == "E" and tile["raw"] == "W" and tile["corrected"]


def test_a_tile_added_and_one_taken_out_then_the_camera_s_tiles_restored(client: FlaskClient) -> None:
    def tiles() -> list[dict]:
        return client.get("/api/state").get_json()["discards"][0]["tiles"]

    seen = [t["code"] for t in tiles()]
    assert client.post("/api/correct", json={"zone": "discards", "index": 0, "code": "n", "action": "add"}).status_code == 200
    assert [(t["code"], t["added"]) for t in tiles()[:2]] == [(seen[0], False), ("N", True)]
    assert client.post("/api/correct", json={"zone": "discards", "index": 2, "action": "remove"}).status_code == 200
    assert [t["code"] for t in tiles()] == [seen[0], "N", *seen[2:]]
    assert client.get("/api/state").get_json()["discards"][0]["removed"] == [seen[1]]
    assert client.post("/api/correct", json={"zone": "discards", "action": "restore"}).status_code == 200
    assert [t["code"] for t in tiles()] == seen


def test_a_tile_added_as_a_new_exposure_and_one_added_to_it(client: FlaskClient) -> None:
    def rack() -> dict:
        return next(r for r in client.get("/api/state").get_json()["racks"] if r["exposures"])

    seen = rack()
    last, zone = len(seen["tiles"]) - 1, seen["zone"]
    for action, index in (("add_new", last), ("add", last + 1)):
        body = {"zone": zone, "index": index, "code": "n", "action": action}
        assert client.post("/api/correct", json=body).status_code == 200
    assert rack()["exposures"] == [*seen["exposures"], ["N", "N"]]


@pytest.mark.parametrize(("body", "status", "words"), [
    ({"zone": "discards", "index": 0, "code": "ZZ"}, 400, "ZZ"),
    ({"zone": "nowhere", "index": 0, "code": "N"}, 404, "nowhere"),
    ({"zone": "discards", "index": 99, "code": "N"}, 404, "99"),
    ({"zone": "discards"}, 400, "expected"),
    ({"zone": "discards", "index": 0, "code": "N", "action": "swap"}, 400, "swap"),
    ({"zone": "discards", "index": 0, "action": "add"}, 400, "expected"),
    ({"zone": "discards", "index": 0, "action": "add_new"}, 400, "expected"),
    ({"zone": "discards", "index": 0, "code": "ZZ", "action": "add"}, 400, "ZZ"),
    ({"zone": "discards", "index": 99, "action": "remove"}, 404, "99"),
])
def test_bad_corrections_are_4xx(client: FlaskClient, body: dict, status: int, words: str) -> None:
    r = client.post("/api/correct", json=body)
    assert r.status_code == status and words in r.get_json()["error"]


def test_flag_dismiss_revives_the_rack(client: FlaskClient) -> None:
    fid = client.get("/api/state").get_json()["flags"][0]["id"]
    assert client.post(f"/api/flags/{fid}", json={"status": "dismissed"}).status_code == 200
    s = client.get("/api/state").get_json()
    assert {r["zone"]: r["status"] for r in s["racks"]}["P1-A"] == "alive"
    assert client.post(f"/api/flags/{fid}", json={"status": "meh"}).status_code == 400
    assert client.post("/api/flags/999", json={"status": "confirmed"}).status_code == 404
    assert client.post(f"/api/flags/{fid}", data="not json").status_code == 400


def test_card_upload_good_and_bad(client: FlaskClient) -> None:
    good = client.post("/api/card", data={"card": (io.BytesIO(CARD.read_bytes()), "mine.mjcard")})
    assert good.status_code == 200 and good.get_json()["hands"] > 10
    text = CARD.read_text().splitlines()
    bad_line = len(text) + 1
    broken = "\n".join(text + ["hand zz9 \"Broken\" : 1111 QQQ = 25"]) + "\n"
    bad = client.post("/api/card", data={"card": (io.BytesIO(broken.encode()), "bad.mjcard")})
    assert bad.status_code == 422
    issues = bad.get_json()["issues"]
    assert issues and issues[0]["line"] == bad_line and issues[0]["file"] == "bad.mjcard"
    assert client.post("/api/card", data={}).status_code == 400
    binary = client.post("/api/card", data={"card": (io.BytesIO(b"\xff\xfe\x00"), "x.mjcard")})
    assert binary.status_code == 400


def test_upload_limit_is_413_json(client: FlaskClient) -> None:
    r = client.post("/api/card", data={"card": (io.BytesIO(b"#" * 100_000), "big.mjcard")})
    assert r.status_code == 413 and r.get_json()["error"].startswith("upload too large: 64 KiB at most")


def test_phone_frames_and_calibration(client: FlaskClient, live: Live) -> None:
    assert client.post("/api/phone/frame", data=b"nope").status_code == 400
    ok, buf = cv2.imencode(".jpg", np.zeros((8, 8, 3), np.uint8))
    assert client.post("/api/phone/frame", data=buf.tobytes()).status_code == 200
    assert next(live.phone.frames()).image.shape == (8, 8, 3)
    assert client.post("/api/calibrate", json={"points": [[0, 0]]}).status_code == 400
    flat = client.post("/api/calibrate", json={"points": [[0, 0], [1, 1], [2, 2], [3, 3]]})
    assert flat.status_code == 400 and "corner" in flat.get_json()["error"]
    r = client.post("/api/calibrate", json={"points": [[100, 100], [1100, 120], [1200, 700], [50, 650]],
                                           "table_mm": [900, 900]})
    assert r.status_code == 200
    assert Path(r.get_json()["path"]).is_file()
    zones = r.get_json()["zones_px"]
    assert set(zones) >= {"P1-A", "P2-B", "discards"}
    moved = {"P1-A": [[x + 5, y] for x, y in zones["P1-A"]]}
    saved = client.post("/api/zones", json={"zones_px": moved})
    assert saved.status_code == 200
    layout = json.loads(Path(saved.get_json()["path"]).read_text())
    assert layout["zones"][0]["name"] == "P1-A"
    clash = {"P1-A": zones["P1-B"]}  # dragged onto another rack: the layout check refuses it
    bad = client.post("/api/zones", json={"zones_px": clash})
    assert bad.status_code == 400 and "overlap" in bad.get_json()["error"]
    assert client.post("/api/zones", json={"zones_px": {"P1-A": [[1, 2]]}}).status_code == 400


def test_session_new_game_finish_and_export(client: FlaskClient) -> None:
    first = client.get("/api/state").get_json()["game"]
    assert client.post("/api/game/new").get_json()["game"] != first
    done = client.post("/api/session/finish").get_json()
    assert len(done["games"]) == 2 and done["finished"]
    assert "payments" in done["payouts"]
    assert client.get("/api/state").get_json()["last_settlement"]["session"] == done["session"]
    r = client.get(f"/api/export.json?session={done['session']}")
    assert r.get_json()["session"] == done["session"]
    assert client.get(f"/api/export.csv?session={done['session']}").data.startswith(b"session,game")
    assert client.get("/api/export.json?session=999").status_code == 404


def test_lan_token_is_required(live: Live) -> None:
    app = create_app(live, {"token": "s3cret", "lan": True, "host_url": "http://192.168.1.9:8000"})
    host = app.test_client()
    page = host.get("/")  # the host itself (loopback) needs no token and sees the QR code
    assert page.status_code == 200 and b"pair.svg" in page.data
    c = app.test_client()
    c.environ_base["REMOTE_ADDR"] = "192.168.1.50"  # a phone on the LAN
    assert c.get("/api/state").status_code == 403
    assert c.get("/").status_code == 403
    assert c.get("/api/state", headers={"X-Companion-Token": "wrong"}).status_code == 403
    r = c.get("/?token=s3cret")
    assert r.status_code == 200 and b"pair.svg" not in r.data  # only the host shows the QR
    assert c.get("/api/state").status_code == 200  # the cookie carries the token now
    assert c.get("/pair.svg").status_code == 404
    svg = host.get("/pair.svg").data.decode()
    assert svg.startswith("<svg")


def test_unknown_config_is_rejected(live: Live) -> None:
    with pytest.raises(ValueError, match="tokn"):
        create_app(live, {"tokn": "x"})


def test_enroll_page_and_errors(client: FlaskClient) -> None:
    assert b"Enrolled sets" in client.get("/enroll").data
    sheet = client.get("/enroll/sheet.svg?layout=american")
    assert sheet.status_code == 200 and sheet.data.lstrip().startswith(b"<")
    assert client.get("/enroll/sheet.svg?layout=klingon").status_code == 400
    assert client.post("/api/enroll", data={"layout": "american"}).status_code == 400
    assert client.post("/api/enroll", data={"name": "x", "layout": "klingon"}).status_code == 400
    r = client.post("/api/enroll", data={"name": "x", "photo": (io.BytesIO(b"not an image"), "p.jpg")})
    assert r.status_code == 422 and "error" in r.get_json()


def test_enroll_puts_swapped_tiles_back_and_says_so(live: Live, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import vision.tileset

    monkeypatch.setattr(vision.tileset, "TILESETS_DIR", tmp_path / "sets")
    client = create_app(live).test_client()
    photo = layout_jpeg(SWAPPED)
    r = client.post("/api/enroll", data={"name": "mine", "layout": "chinese", "photo": (io.BytesIO(photo), "p.jpg")})
    assert r.status_code == 200, r.get_json()
    got = r.get_json()
    assert got["reordered"] == [{"place": "3B", "tile": "4B"}, {"place": "4B", "tile": "3B"}]
    assert got["base_agreement"] > 0.9 and got["turned_degrees"] == 0 and got["maybe_swapped"] == []
    assert (tmp_path / "sets" / "mine" / "tileset.json").is_file()
    r = client.post("/api/enroll", data={"name": "laid", "layout": "chinese", "as_laid": "1",
                                         "photo": (io.BytesIO(photo), "p.jpg")})
    assert r.status_code == 200 and r.get_json()["reordered"] == []
    twice = layout_jpeg({"7C": "8C"})  # an 8 Craks in its own place and the 7 Craks' too
    r = client.post("/api/enroll", data={"name": "twice", "layout": "chinese", "photo": (io.BytesIO(twice), "p.jpg")})
    assert r.status_code == 422 and "the tile in 7C's place reads as 8C" in r.get_json()["error"]
    assert r.get_json()["laid_twice"] == ["7C"] and not (tmp_path / "sets" / "twice").exists()
    r = client.post("/api/enroll", data={"name": "twice", "layout": "chinese", "laid_right": "7C",
                                         "photo": (io.BytesIO(twice), "p.jpg")})
    assert r.status_code == 200 and r.get_json()["laid_right"] == ["7C"]
    r = client.post("/api/enroll", data={"name": "twice", "layout": "chinese", "laid_right": "7X"})
    assert r.status_code == 400 and "laid right '7X': not a place" in r.get_json()["error"]
    style, laid = DOUBTFUL
    r = client.post("/api/enroll", data={"name": "doubt", "layout": "chinese",
                                         "photo": (io.BytesIO(layout_jpeg(laid, style)), "p.jpg")})
    assert r.status_code == 200 and r.get_json()["maybe_swapped"] == [["6B", "FL1"]] and r.get_json()["reordered"] == []
    r = client.post("/api/enroll", data={"name": "doubt", "layout": "chinese", "swap": "6B,FL1",
                                         "photo": (io.BytesIO(layout_jpeg(laid, style)), "p.jpg")})
    assert r.status_code == 200 and r.get_json()["exchanged"] == [["6B", "FL1"]] and r.get_json()["maybe_swapped"] == []
    r = client.post("/api/enroll", data={"name": "doubt", "layout": "chinese", "swap": "6B,X9",
                                         "photo": (io.BytesIO(layout_jpeg(laid, style)), "p.jpg")})
    assert r.status_code == 400 and "'X9' is not a place of the chinese layout" in r.get_json()["error"]
    # no photo: the set enrolled again from its own, kept in its folder, its layout its own
    assert (tmp_path / "sets" / "doubt" / "photo.jpg").read_bytes() == layout_jpeg(laid, style)
    r = client.post("/api/enroll", data={"name": "doubt"})
    assert r.status_code == 200 and r.get_json()["maybe_swapped"] == [["6B", "FL1"]] and r.get_json()["exchanged"] == []
    # read with it, the banner names the two places; exchanged again, the companion reads the set as it is now
    assert client.post("/api/settings", json={"tileset": "doubt"}).status_code == 200
    banner = [w for w in client.get("/api/state").get_json()["warnings"] if w.startswith("Tile set doubt")]
    assert len(banner) == 1 and "6B's and FL1's places" in banner[0]
    assert client.post("/api/enroll", data={"name": "doubt", "swap": "6B,FL1"}).status_code == 200
    assert not [w for w in client.get("/api/state").get_json()["warnings"] if w.startswith("Tile set doubt")]
    assert client.get("/api/tilesets/doubt").get_json()["photo"] is True
    r = client.post("/api/enroll", data={"name": "never"})
    assert r.status_code == 400 and "tile set 'never' keeps no photo" in r.get_json()["error"]
    assert client.post("/api/enroll", data={"name": "../up"}).status_code == 400


def test_tile_pictures(client: FlaskClient) -> None:
    assert client.get("/tiles/XX.png").status_code == 404
    r = client.get("/tiles/5D.png")
    if r.status_code == 404:
        pytest.skip("no shared artwork on this machine: the page shows tile codes only")
    img = cv2.imdecode(np.frombuffer(r.data, np.uint8), cv2.IMREAD_COLOR)
    assert img.shape[0] > img.shape[1] > 20  # an upright tile face


def test_variant_switch(client: FlaskClient) -> None:
    assert b"variant-select" in client.get("/settings").data
    assert client.post("/api/settings", json={"variant": "grad"}).status_code == 200
    assert client.get("/api/state").get_json()["settings"]["variant"] == "grad"
    bad = client.post("/api/settings", json={"variant": "klingon"})
    assert bad.status_code == 400 and "klingon" in bad.get_json()["error"]
    assert client.post("/api/settings", json={}).status_code == 400
    assert client.post("/api/settings", json={"tileset": 5}).status_code == 400


def test_two_enrollments_at_once_run_one_after_the_other(live: Live, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two taps on a page (or two pages) at once must not write one set's folder together."""
    import threading
    import time

    import companion.commands.enroll
    from companion.cli import CommandError

    running, most = [0], [0]

    def slow(*args: object, **kwargs: object) -> Path:
        running[0] += 1
        most[0] = max(most[0], running[0])
        time.sleep(0.3)
        running[0] -= 1
        raise CommandError("not a layout")

    monkeypatch.setattr(companion.commands.enroll, "enroll", slow)
    app = create_app(live)
    answers: list[int] = []

    def post() -> None:
        r = app.test_client().post("/api/enroll", data={"name": "mine", "photo": (io.BytesIO(b"x"), "p.jpg")})
        answers.append(r.status_code)

    threads = [threading.Thread(target=post) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert answers == [422, 422] and most[0] == 1


def test_the_tile_set_read_with_is_chosen_on_the_settings_page(
    live: Live, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    import vision.tileset

    monkeypatch.setattr(vision.tileset, "TILESETS_DIR", tmp_path / "sets")
    codes = tuple(layout_codes("chinese"))
    vision.tileset.save_tileset(vision.tileset.TileSet("mine", "chinese", codes, np.eye(len(codes), 8, dtype=np.float32)),
                                np.zeros((len(codes), 64, 48, 3), np.uint8))
    client = create_app(live).test_client()
    assert b'<option>mine</option>' in client.get("/settings").data
    r = client.post("/api/settings", json={"tileset": "mine"})
    assert r.status_code == 200 and r.get_json()["tileset"] == "mine"
    assert client.get("/api/state").get_json()["settings"]["tileset"] == "mine"
    assert b"(reading with it)" in client.get("/enroll").data
    bad = client.post("/api/settings", json={"tileset": "nope"})
    assert bad.status_code == 400 and "no enrolled tile set 'nope'" in bad.get_json()["error"]
    assert (Path(live.config.data_dir) / "tileset.txt").read_text().strip() == "mine"


def test_an_enrolled_sets_tiles_are_served_with_its_codes_rows_and_marks(
    live: Live, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    import vision.tileset
    from vision.enroll import layout_codes, row_lengths
    from vision.tileset_sheet import sheet_of

    monkeypatch.setattr(vision.tileset, "TILESETS_DIR", tmp_path / "sets")
    client = create_app(live).test_client()
    codes = tuple(layout_codes("chinese"))
    crops = np.stack([np.full((64, 48, 3), 5 * k, np.uint8) for k in range(len(codes))])
    meta = {"maybe_swapped": [["6B", "FL1"]], "reordered": [{"place": "3B", "tile": "4B"}, {"place": "4B", "tile": "3B"}]}
    vision.tileset.save_tileset(
        vision.tileset.TileSet("mine", "chinese", codes, np.eye(len(codes), 8, dtype=np.float32), meta), crops)
    got = client.get("/api/tilesets/mine").get_json()
    assert got["codes"] == list(codes) and got["rows"] == row_lengths("chinese") and got["layout"] == "chinese"
    assert got["marks"] == {"6B": "check", "FL1": "check", "3B": "moved", "4B": "moved"}
    assert "6B's and FL1's places may lie in each other's places" in got["to_check"][0]
    r = client.get("/api/tilesets/mine/crops/7.png")
    assert r.status_code == 200 and r.mimetype == "image/png"
    assert np.array_equal(cv2.imdecode(np.frombuffer(r.data, np.uint8), cv2.IMREAD_COLOR), crops[7])
    sheet = client.get("/api/tilesets/mine/check.png")
    drawn = cv2.imdecode(np.frombuffer(sheet.data, np.uint8), cv2.IMREAD_COLOR)
    assert np.array_equal(drawn, sheet_of(tmp_path / "sets" / "mine"))
    assert client.get("/api/tilesets/mine/crops/42.png").status_code == 404
    assert "no enrolled tile set 'other'" in client.get("/api/tilesets/other").get_json()["error"]
    assert client.get("/api/tilesets/bad name!").status_code == 400
    edited = json.loads((tmp_path / "sets" / "mine" / "tileset.json").read_text())
    (tmp_path / "sets" / "mine" / "tileset.json").write_text(json.dumps({**edited, "reordered": 5, "exchanged": "x"}))
    got = client.get("/api/tilesets/mine").get_json()  # edited by hand: fields of the wrong kind say nothing
    assert got["put_back"] == [] and got["exchanged"] == [] and got["marks"] == {"6B": "check", "FL1": "check"}
    (tmp_path / "sets" / "mine" / "tileset.json").write_text("{cut short")
    for path in ("/api/tilesets/mine", "/api/tilesets/mine/check.png"):
        r = client.get(path)
        assert r.status_code == 422 and "tileset.json" in r.get_json()["error"]
