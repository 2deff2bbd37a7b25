"""The dashboard in a real browser: Playwright driving Debian's chromium against a live server.

The server follows one pass of the bundled demo (20 fps) on 127.0.0.1 at a free port.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from web_helpers import CHROMIUM, replayed_live, served_page

from companion.live import Live, LiveConfig
from companion.live_readers import ReplayReader
from companion.web import create_app
from vision.capture import DEMO_DIR, FolderSource

pytestmark = pytest.mark.browser
CARD = Path(__file__).parents[2] / "calibration" / "cards" / "example.mjcard"

sync_api = pytest.importorskip("playwright.sync_api")
if not Path(CHROMIUM).exists():
    pytest.skip("Debian chromium is not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from werkzeug.serving import make_server

    data = tmp_path_factory.mktemp("browser-data")
    source = FolderSource(DEMO_DIR / "frames", loop=False, fps=20)
    live = Live(LiveConfig(source="demo", data_dir=str(data)), source=source, reader=ReplayReader())
    srv = make_server("127.0.0.1", 0, create_app(live), threaded=True)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    live.start()
    yield f"http://127.0.0.1:{srv.server_port}"
    srv.shutdown()
    live.stop()


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    ctx = browser.new_context(viewport={"width": 412, "height": 900})  # a phone-sized screen
    pg = ctx.new_page()
    pg.set_default_timeout(12_000)
    yield pg
    ctx.close()


def test_live_page_follows_the_demo(server: str, page: object) -> None:
    page.goto(server + "/")
    assert page.title() == "Siamese companion"
    # the demo's first exposure: player 2's pung on P2-A
    page.locator('.rack[data-zone="P2-A"] .exposure').first.wait_for()
    assert page.locator('.rack[data-zone="P2-A"] .exposure .tile').count() == 3
    flag = page.locator('.flag[data-kind="wrong_rack"]')
    flag.wait_for()
    assert "P1-A" in flag.inner_text()
    assert page.locator('.rack[data-zone="P1-A"] .badge').inner_text() == "dead"
    assert "fps" in page.locator("#status").inner_text()


def test_correction_click_changes_the_reading(server: str, page: object) -> None:
    page.goto(server + "/")
    tile = page.locator('#discards button.tile[data-index="0"]')
    tile.wait_for()
    before = tile.inner_text()
    new = "4C" if before != "4C" else "5C"
    tile.click()
    page.fill("#correct-code", new)
    page.click("#correct-ok")
    page.locator(f'#discards button.tile.corrected[data-index="0"]:has-text("{new}")').wait_for()
    page.reload()
    page.locator(f'#discards button.tile.corrected[data-index="0"]:has-text("{new}")').wait_for()


def test_card_upload_error_shows_the_line(server: str, page: object, tmp_path: Path) -> None:
    lines = CARD.read_text().splitlines()
    bad = tmp_path / "broken.mjcard"
    bad.write_text("\n".join(lines + ['hand zz9 "Broken" : 1111 QQQ = 25']) + "\n")
    page.goto(server + "/settings")
    page.set_input_files("#card-file", str(bad))
    page.click("#card-upload")
    issue = page.locator(".issue").first
    issue.wait_for()
    assert f"line {len(lines) + 1}" in issue.inner_text()


def test_phone_camera_page_streams_frames(pw: object, tmp_path: Path) -> None:
    from werkzeug.serving import make_server

    live = Live(LiveConfig(source="phone", data_dir=str(tmp_path)), reader=ReplayReader())
    srv = make_server("127.0.0.1", 0, create_app(live), threaded=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    live.start()
    try:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream"])
        pg = b.new_page()
        pg.set_default_timeout(12_000)
        pg.goto(f"http://127.0.0.1:{srv.server_port}/camera")  # localhost counts as secure
        pg.click("#cam-start")
        pg.wait_for_function("document.getElementById('cam-status').textContent.startsWith('sent')")
        deadline = time.monotonic() + 10
        while live.stats["frames"] < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        b.close()
        assert live.stats["frames"] >= 3  # the loop received the phone's frames
        assert live.raw_snapshot()[:2] == b"\xff\xd8"
    finally:
        srv.shutdown()
        live.stop()


def test_good_card_upload_then_ruleset_switch_posts_once(server: str, page: object) -> None:
    """Uploading a card must not add another ruleset handler (each click posts exactly once)."""
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" and r.url.endswith("/api/settings") else None)
    page.goto(server + "/settings")
    for _ in range(2):
        page.set_input_files("#card-file", str(CARD))
        page.click("#card-upload")
        page.locator("#card-result .ok").wait_for()
    page.click("#variant-apply")  # the ruleset already in use: no side effect on other tests
    page.locator("#variant-result:has-text('now playing')").wait_for()
    page.wait_for_timeout(300)
    assert len(posts) == 1


def enroll_on_page(page: object, server: str, name: str, photo: Path) -> None:
    """``photo`` (of the Chinese layout) uploaded on the enroll page as the set ``name``."""
    page.goto(server + "/enroll")
    page.fill("#enroll-name", name)
    page.select_option("select[name=layout]", "chinese")
    page.set_input_files("input[name=photo]", str(photo))
    page.click("#enroll-form button")


def test_enrolling_says_which_tiles_were_put_back_and_warns_when_few_read_as_laid_out_or_two_may_be_swapped(
    server: str, page: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from web_helpers import DOUBTFUL, SWAPPED, layout_jpeg

    import vision.tileset

    monkeypatch.setattr(vision.tileset, "TILESETS_DIR", tmp_path / "sets")  # the server runs in this process
    photo = tmp_path / "layout.jpg"
    photo.write_bytes(layout_jpeg(SWAPPED))
    enroll_on_page(page, server, "my-set", photo)
    result = page.locator("#enroll-result.ok")
    result.wait_for(timeout=30_000)
    text = result.inner_text()
    assert "Enrolled my-set" in text
    assert "2 tiles lay in each other's places: 4B in 3B's place, 3B in 4B's place" in text
    assert re.search(r"The base classifier already reads (9\d|100)% of them as laid out", text) and "Few tiles" not in text
    assert (tmp_path / "sets" / "my-set" / "tileset.json").is_file()
    # a set whose faces the models barely know (a font's line art, 19 % read as laid out): enrolled, with a warning
    photo.write_bytes(layout_jpeg({}, style="font-unifont"))
    page.fill("#enroll-name", "line-art")
    page.set_input_files("input[name=photo]", str(photo))
    page.click("#enroll-form button")
    warned = page.locator("#enroll-result.warn")
    warned.wait_for(timeout=30_000)
    assert "Enrolled line-art" in warned.inner_text() and "Few tiles read as laid out" in warned.inner_text()
    # two tiles read each likelier as the other's, though not surely: named, with a warning
    style, laid = DOUBTFUL
    photo.write_bytes(layout_jpeg(laid, style))
    page.fill("#enroll-name", "doubt")
    page.set_input_files("input[name=photo]", str(photo))
    page.click("#enroll-form button")
    page.wait_for_function("document.getElementById('enroll-result').textContent.includes('Enrolled doubt')", timeout=30_000)
    text = page.locator("#enroll-result.warn").inner_text()
    assert "The tiles in 6B's and FL1's places may lie in each other's places" in text and "Few tiles" not in text
    # the player agrees: the same photo enrolled again with the two exchanged, once
    page.click("#enroll-result button.exchange")
    page.wait_for_function("document.getElementById('enroll-result').textContent.includes('Exchanged as asked')",
                           timeout=30_000)
    text = page.locator("#enroll-result.ok").inner_text()
    assert "the tile in 6B's place is enrolled as FL1" in text and "may lie in each other's places" not in text
    assert json.loads((tmp_path / "sets" / "doubt" / "tileset.json").read_text())["exchanged"] == [["6B", "FL1"]]
    page.fill("#enroll-name", "doubt-again")
    page.click("#enroll-form button")
    page.wait_for_function("document.getElementById('enroll-result').textContent.includes('Enrolled doubt-again')",
                           timeout=30_000)
    assert "Exchanged" not in page.locator("#enroll-result").inner_text()  # asked for one submission only


def test_the_enroll_page_shows_each_tile_under_its_code_and_two_picked_there_are_exchanged(
    server: str, page: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A swap enrollment cannot see (tiles the models read as neither place's) is the player's to
    see: each crop under the code it is enrolled as, and two of them picked and exchanged, then or
    later, from the set's own kept photo."""
    from urllib.request import urlopen

    import cv2
    import numpy as np
    from web_helpers import DOUBTFUL, SWAPPED, layout_jpeg

    import vision.tileset
    from vision.enroll import layout_codes

    def crop(k: int) -> np.ndarray:
        with urlopen(f"{server}/api/tilesets/doubt/crops/{k}.png") as r:
            return cv2.imdecode(np.frombuffer(r.read(), np.uint8), cv2.IMREAD_COLOR)

    monkeypatch.setattr(vision.tileset, "TILESETS_DIR", tmp_path / "sets")
    style, laid = DOUBTFUL
    photo = tmp_path / "layout.jpg"
    photo.write_bytes(layout_jpeg(laid, style))
    enroll_on_page(page, server, "doubt", photo)
    figures = page.locator("#enroll-taught figure.taught")
    figures.nth(41).wait_for(timeout=30_000)
    codes = layout_codes("chinese")
    assert figures.evaluate_all("fs => fs.map(f => f.querySelector('figcaption').textContent)") == codes
    assert page.locator("#enroll-taught .taught-row").evaluate_all("rs => rs.map(r => r.children.length)") == [9, 9, 9, 7, 8]
    assert page.locator("#enroll-taught figure.check").evaluate_all("fs => fs.map(f => f.dataset.code)") == ["6B", "FL1"]
    page.wait_for_function("[...document.querySelectorAll('#enroll-taught img')].every(i => i.complete && i.naturalWidth === 48)")
    before = {k: crop(k) for k in (7, 8)}  # 8B's and 9B's crops, as enrolled
    assert not np.array_equal(before[7], before[8])
    for code in ("8B", "9B", "1C"):
        page.click(f"#enroll-taught figure[data-code='{code}']")
    assert page.locator("#taught-actions").inner_text() == "Pick two tiles only."
    page.click("#enroll-taught figure[data-code='1C']")  # picked again: put down
    page.click("#taught-actions button.exchange:has-text('Exchange 8B and 9B and enroll again')")
    page.wait_for_function("document.getElementById('enroll-result').textContent.includes('Exchanged as asked')",
                           timeout=30_000)
    text = page.locator("#enroll-result.warn").inner_text()
    assert "the tile in 8B's place is enrolled as 9B" in text
    assert "Yet the tiles now in 8B's and 9B's places read surely as each other's" in text  # laid right: the player is told
    assert json.loads((tmp_path / "sets" / "doubt" / "tileset.json").read_text())["exchanged"] == [["8B", "9B"]]
    page.locator("#enroll-taught figure.check").nth(3).wait_for()
    checked = page.locator("#enroll-taught figure.check").evaluate_all("fs => fs.map(f => f.dataset.code)")
    assert checked == ["6B", "8B", "9B", "FL1"]
    assert np.array_equal(crop(7), before[8]) and np.array_equal(crop(8), before[7])
    # later, from the list: the set enrolled again from its own kept photo, the two exchanged back
    page.goto(server + "/enroll")
    page.click("button.show-set[data-set='doubt']")
    figures.nth(41).wait_for()
    assert page.locator("#enroll-taught a").get_attribute("href") == "/api/tilesets/doubt/check.png"
    for code in ("8B", "1C"):
        page.click(f"#enroll-taught figure[data-code='{code}']")
    assert page.locator("#taught-actions").inner_text() == "8B is exchanged with 9B already: exchange those two back first."
    page.click("#enroll-taught figure[data-code='1C']")
    page.click("#enroll-taught figure[data-code='9B']")
    page.click("#taught-actions button.exchange:has-text('Exchange 8B and 9B back and enroll again')")
    page.wait_for_function("document.getElementById('enroll-result').textContent.includes('Enrolled doubt')", timeout=30_000)
    assert "Exchanged" not in page.locator("#enroll-result").inner_text()
    assert "exchanged" not in json.loads((tmp_path / "sets" / "doubt" / "tileset.json").read_text())
    assert np.array_equal(crop(7), before[7]) and np.array_equal(crop(8), before[8])
    # a tile the enrollment put back is not exchanged by a pick: the page says how to keep tiles as laid
    photo.write_bytes(layout_jpeg(SWAPPED))
    enroll_on_page(page, server, "moved", photo)
    page.locator("#enroll-taught figure.moved").nth(1).wait_for(timeout=30_000)
    for code in ("3B", "5B"):
        page.click(f"#enroll-taught figure[data-code='{code}']")
    assert "3B was put back in its place by the enrollment" in page.locator("#taught-actions").inner_text()
    # a tile taken for one laid twice: the player says it is laid right, and the same photo enrolls
    photo.write_bytes(layout_jpeg({"7C": "8C"}))
    enroll_on_page(page, server, "twice", photo)
    page.locator("#enroll-result.error button.laid-right").wait_for(timeout=30_000)
    assert "the tile in 7C's place reads as 8C" in page.locator("#enroll-result").inner_text()
    page.click("#enroll-result button.laid-right:has-text(\"The tile in 7C's place is the 7C: enroll it so\")")
    page.locator("#enroll-result.ok:has-text(\"Laid right as you said: the tile in 7C's place is enrolled as 7C.\")").wait_for(
        timeout=30_000)
    assert json.loads((tmp_path / "sets" / "twice" / "tileset.json").read_text())["laid_right"] == ["7C"]
    # read with it from now on, and back to the base recogniser from the settings page
    page.click("#use-shown")
    page.locator("#enroll-taught .ok:has-text('Now reading with twice.')").wait_for(timeout=30_000)
    page.goto(server + "/settings")
    page.locator("#tileset:has-text('twice')").wait_for()
    assert page.locator("#tileset-select").input_value() == "twice"
    page.select_option("#tileset-select", "american")
    page.click("#tileset-apply")
    page.locator("#tileset-result:has-text('now reading with american')").wait_for(timeout=30_000)
    page.locator("#tileset:text-is('american')").wait_for()


def test_a_phone_sized_photo_is_made_smaller_on_the_page_and_enrolls(
    server: str, page: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A 12-megapixel phone photo of 6 MiB, over the server's 4 MiB for an upload, is shrunk to
    3000 pixels on its long side by the page before it is sent, and enrolls."""
    import cv2
    import numpy as np
    from web_helpers import layout_jpeg

    import vision.tileset

    monkeypatch.setattr(vision.tileset, "TILESETS_DIR", tmp_path / "sets")
    grid = cv2.imdecode(np.frombuffer(layout_jpeg({}), np.uint8), cv2.IMREAD_COLOR)
    big = cv2.resize(grid, None, fx=4032 / grid.shape[1], fy=4032 / grid.shape[1], interpolation=cv2.INTER_CUBIC)
    big = np.clip(big + np.random.default_rng(0).normal(0, 12, big.shape), 0, 255).astype(np.uint8)
    photo = tmp_path / "IMG_0001.jpg"
    photo.write_bytes(cv2.imencode(".jpg", big, [cv2.IMWRITE_JPEG_QUALITY, 95])[1].tobytes())
    assert photo.stat().st_size > 6 * 2**20
    enroll_on_page(page, server, "phone", photo)
    page.locator("#enroll-result.ok").wait_for(timeout=60_000)
    assert "Enrolled phone" in page.locator("#enroll-result").inner_text()
    assert page.locator("#enrolled button.show-set[data-set='phone']").count() == 1  # listed at once, no reload
    assert page.locator("#enrolled li.small").count() == 0
    kept = tmp_path / "sets" / "phone" / "photo.jpg"
    assert kept.stat().st_size < 4 * 2**20 and max(cv2.imread(str(kept)).shape[:2]) == 3000


def test_a_rack_showing_mahjong_says_the_hand_its_points_and_the_tiles_to_check(browser: object, tmp_path: Path) -> None:
    """A display scored on a weak reading: the rack card names the hand and points and asks for
    the weak tile to be checked (readings replayed from a recording made for this test)."""
    display = [["7C", "7C", "7C"], ["7B", "7B", "7B"], ["7D", "7D", "7D", "7D"], ["N", "N", "N", "N"]]
    tiles = [c for e in display for c in e]
    zones = {"P1-A": {"kind": "rack", "player": 1, "hand": "A", "tiles": tiles, "exposures": display, "face_down": 0,
                      "uncertain": [4]},
             "P1-B": {"kind": "rack", "player": 1, "hand": "B", "tiles": [], "exposures": [], "face_down": 13},
             "discards": {"kind": "discards", "player": None, "tiles": [], "exposures": [], "face_down": 0}}
    mahjong = {"P1-A": {"hand": "ln1", "value": 50, "jokerless": True, "card_value": 25, "uncertain": [4]},
               "P1-B": None}
    live = replayed_live(tmp_path, zones, [], mahjong)
    with served_page(browser, live) as (page, url):
        page.goto(url)
        line = page.locator('.rack[data-zone="P1-A"] .mj')
        line.wait_for()
        text = line.inner_text()
        assert "Mah Jongg: ln1, 50 points (jokerless)" in text and "check tile(s) #4" in text
        assert page.locator('.rack[data-zone="P1-B"] .mj').count() == 0


def test_the_status_line_says_why_no_frame_comes(browser: object, tmp_path: Path) -> None:
    """A folder of frames holding only an iPhone's HEIC photo: the page's status line names the
    file and the reason while the loop retries, with no frame rate left over."""
    frames = tmp_path / "frames"
    frames.mkdir()
    (frames / "IMG_0001.HEIC").write_bytes(b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + b"\x00" * 64)
    live = Live(LiveConfig(source=str(frames), data_dir=str(tmp_path / "data")), reader=ReplayReader())
    with served_page(browser, live) as (page, url):
        # no frame: the video never finishes loading, so the page's load event never comes
        page.goto(url, wait_until="domcontentloaded")
        page.wait_for_function("document.getElementById('status').textContent.includes('HEIC')")
        text = page.locator("#status").inner_text()
        assert "IMG_0001.HEIC: a HEIC/HEIF photo" in text and "retrying in" in text and "| 0 fps" in text
