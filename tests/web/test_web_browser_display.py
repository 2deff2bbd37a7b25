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
