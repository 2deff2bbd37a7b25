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
