"""A Mah Jongg display on the dashboard, in a real browser (Playwright driving Debian's chromium):
the player puts right a tile the camera read weakly, and the display is scored on their word."""

from __future__ import annotations

from pathlib import Path

import pytest
from web_helpers import replayed_live, served_page

pytestmark = pytest.mark.browser

# "Tea Garden" (ev1) of the shipped card, its second 2 Bam read weakly as a 3 Bam
READ = [["F", "F", "F"], ["2B", "3B"], ["4B", "4B", "4B"], ["6C", "6C"], ["8C", "8C", "8C", "8C"]]


def test_a_display_whose_weak_tile_is_put_right_on_the_page_is_scored(browser: object, tmp_path: Path) -> None:
    """Every frame shows that display on P1-A left to check (an ``unreadable`` flag), not scored,
    as the table reader leaves it."""
    tiles = [c for e in READ for c in e]
    zones = {"P1-A": {"kind": "rack", "player": 1, "hand": "A", "tiles": tiles, "exposures": READ, "face_down": 0,
                      "uncertain": [4]},
             "P1-B": {"kind": "rack", "player": 1, "hand": "B", "tiles": [], "exposures": [], "face_down": 13},
             "P2-A": {"kind": "rack", "player": 2, "hand": "A", "tiles": [], "exposures": [], "face_down": 14},
             "discards": {"kind": "discards", "player": None, "tiles": [], "exposures": [], "face_down": 0}}
    flags = [{"kind": "unreadable", "zone": "P1-A", "message": "P1-A: tile(s) #5 (read 3B) too uncertain to judge "
                                                               "this rack", "cause": ""}]
    with served_page(browser, replayed_live(tmp_path, zones, flags, {})) as (page, url):
        page.goto(url)
        tile = page.locator('.rack[data-zone="P1-A"] button.tile[data-index="4"]')
        tile.wait_for()
        assert tile.inner_text().strip() == "3B"
        assert page.locator('.rack[data-zone="P1-A"] .mj').count() == 0
        tile.click()
        page.fill("#correct-code", "2B")
        page.click("#correct-ok")
        line = page.locator('.rack[data-zone="P1-A"] .mj')
        line.wait_for()
        assert "Mah Jongg: ev1, 50 points (jokerless)" in line.inner_text()
        assert page.locator('.rack[data-zone="P1-A"] .badge').inner_text() == "mahjong"
        assert page.locator('.flag.active[data-kind="wrong_rack"]').count() == 0
        page.locator("#scoreboard td", has_text="50").first.wait_for()  # player 1: 25 x 2 jokerless
        page.reload()  # the score is kept with the game
        page.locator('.rack[data-zone="P1-A"] .mj').wait_for()
        page.locator("#scoreboard td", has_text="50").first.wait_for()


def test_a_display_read_short_of_a_tile_is_scored_once_the_player_adds_it_on_the_page(
        browser: object, tmp_path: Path) -> None:
    """Every frame shows the Tea Garden's last 8 Crak missed: 13 tiles, a rack in play with pairs
    and its player one short, flagged as the table reader flags it.  On the page the player adds
    the tile after the last (the tile's dialog), takes it back, adds it with the rack's "+ tile"
    button, and restores the camera's tiles; the display is scored while the tile is in."""
    from companion.live_rules import DEFAULT_CARD, RackRules
    from companion.rules.tiles import AMERICAN
    from companion.rules.variants import get_variant
    from companion.table import ZoneReading
    from companion.table_flags import RuleContext, evaluate
    from companion.table_guards import guard_dead_calls

    short = [["F", "F", "F"], ["2B", "2B"], ["4B", "4B", "4B"], ["6C", "6C"], ["8C", "8C", "8C"]]
    racks = {"P1-A": (short, 0, 1), "P1-B": ([], 13, 1), "P2-A": ([], 14, 2), "P2-B": ([], 13, 2)}
    read = {n: ZoneReading(n, "rack", tuple(t for e in ex for t in e), tuple(map(tuple, ex)), down, p, n[-1])
            for n, (ex, down, p) in racks.items()}
    rules = RackRules.load(DEFAULT_CARD)
    assert rules is not None
    ctx = RuleContext(get_variant("mjm"), AMERICAN, rules.card)
    flags = [{"kind": f.kind, "zone": f.zone, "message": f.message, "cause": f.cause}
             for f in guard_dead_calls(read, evaluate(read, ctx)[0], ctx)]
    assert {"tile_count", "unreadable"} <= {f["kind"] for f in flags}
    zones = {n: {"kind": "rack", "player": z.player, "hand": z.hand, "tiles": list(z.tiles),
                 "exposures": [list(e) for e in z.exposures], "face_down": z.face_down} for n, z in read.items()}
    mj = '.rack[data-zone="P1-A"] .mj'
    with served_page(browser, replayed_live(tmp_path, zones, flags, {})) as (page, url):
        page.goto(url)
        page.locator('.rack[data-zone="P1-A"] button.tile[data-index="12"]').click()
        page.fill("#correct-code", "8C")
        page.click("#correct-add")
        page.locator(mj).wait_for()
        assert "Mah Jongg: ev1, 50 points (jokerless)" in page.locator(mj).inner_text()
        assert page.locator('.rack[data-zone="P1-A"] button.tile.added').count() == 1
        assert "You added 1 tile(s)" in page.locator('.rack[data-zone="P1-A"] .edits').inner_text()
        page.locator('.flag.active[data-kind="tile_count"]').wait_for(state="detached")
        page.reload()  # the player's tile is kept with the game
        page.locator(mj).wait_for()
        page.locator('.rack[data-zone="P1-A"] button.tile.added').click()
        page.click("#correct-remove")  # taken back
        page.locator(mj).wait_for(state="detached")
        page.locator('.flag.active[data-kind="tile_count"]').first.wait_for()
        page.locator('.rack[data-zone="P1-A"] button.add-tile').click()
        page.fill("#correct-code", "8C")
        page.click("#correct-plus")
        page.locator(mj).wait_for()
        page.locator('.rack[data-zone="P1-A"] button.restore').click()
        page.locator(mj).wait_for(state="detached")
        assert page.locator('.rack[data-zone="P1-A"] button.tile.added').count() == 0


def test_a_whole_exposure_the_camera_missed_is_added_on_the_page_as_one(browser: object, tmp_path: Path) -> None:
    """P2-A shows ``F F F`` with its pung of 4 Bams missed.  With the rack's "+ tile" the player
    adds a 4 Bam as a new exposure, then two more to the last exposure: the page shows two
    exposures, the pung apart from the flowers, after a reload too."""
    zones = {"P1-A": {"kind": "rack", "player": 1, "hand": "A", "tiles": [], "exposures": [], "face_down": 14},
             "P1-B": {"kind": "rack", "player": 1, "hand": "B", "tiles": [], "exposures": [], "face_down": 13},
             "P2-A": {"kind": "rack", "player": 2, "hand": "A", "tiles": ["F", "F", "F"], "exposures": [["F", "F", "F"]],
                      "face_down": 8},
             "P2-B": {"kind": "rack", "player": 2, "hand": "B", "tiles": [], "exposures": [], "face_down": 13}}
    exposures = '.rack[data-zone="P2-A"] .exposure'
    with served_page(browser, replayed_live(tmp_path, zones, [], {})) as (page, url):
        page.goto(url)
        for button in ("#correct-plus-new", "#correct-plus", "#correct-plus"):
            before = page.locator('.rack[data-zone="P2-A"] button.tile').count()
            page.locator('.rack[data-zone="P2-A"] button.add-tile').click()
            assert page.locator("#correct-add-new").is_hidden() and page.locator("#correct-plus-new").is_visible()
            page.fill("#correct-code", "4b")
            page.click(button)
            page.locator(f'.rack[data-zone="P2-A"] button.tile[data-index="{before}"]').wait_for()
        page.reload()
        page.locator(f"{exposures} >> nth=1").wait_for()
        assert [e.inner_text().split() for e in page.locator(exposures).all()] == [["F"] * 3, ["4B"] * 3]
        assert page.locator('.rack[data-zone="P2-A"] button.tile.added').count() == 3
