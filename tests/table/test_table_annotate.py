"""Drawing a reading: flagged zones in red, the input frame untouched."""

from __future__ import annotations

import numpy as np
from table_helpers import CARD, SIAMESE, exps, player, table

from companion.table import TableReader
from vision.annotate import FLAG_COLOUR, annotate
from vision.calibrate import calibrate_from_markers


def _red(img: np.ndarray) -> int:
    return int(np.count_nonzero(np.all(img == FLAG_COLOUR, axis=2)))


def test_flagged_zone_is_drawn_red_and_frame_is_not_modified() -> None:
    r = table(player("P1", (), exps("W W W", "E E E")))
    before = r.image.copy()
    det = r.detections()
    cal = calibrate_from_markers(r.image, SIAMESE.table_mm)
    obs = TableReader(SIAMESE, card=CARD).read(r.image, det)
    assert [f.zone for f in obs.flags] == ["P1-B"]
    flagged = annotate(r.image, det, obs, SIAMESE, cal)
    clean = annotate(r.image, det, TableReader(SIAMESE, card=None).read(r.image, det), SIAMESE, cal)
    assert np.array_equal(r.image, before)
    assert _red(flagged[80:]) > 200  # the zone outline, below the banner
    assert _red(clean[80:]) == 0


def test_zones_and_flags_are_drawn_larger_on_a_larger_frame() -> None:
    from table_helpers import View

    drawn = {}
    for size in ((1280, 720), (3840, 2160)):
        r = table(player("P1", (), exps("W W W", "E E E")), view=View(side="bottom", tilt_deg=45.0, size=size))
        det = r.detections()
        cal = calibrate_from_markers(r.image, SIAMESE.table_mm)
        obs = TableReader(SIAMESE, card=CARD).read(r.image, det)
        assert [f.zone for f in obs.flags] == ["P1-B"]
        out = annotate(r.image, det, obs, SIAMESE, cal)
        dark = np.median(out.astype(float), axis=(1, 2)) < 0.5 * np.median(r.image.astype(float), axis=(1, 2))
        banner = int(np.argmin(dark)) if not dark.all() else len(dark)  # the darkened rows at the top
        drawn[size[0]] = (_red(out[banner:]), banner)
    (red_s, banner_s), (red_b, banner_b) = drawn[1280], drawn[3840]
    assert red_b > 5 * red_s  # three times as long and thicker, where the old lines were as thin
    assert banner_b >= 1.8 * banner_s > 0  # the flags written twice as large
