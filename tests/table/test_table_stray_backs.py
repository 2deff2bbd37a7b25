"""A back seen past a face-up row's end, apart and alone (the bare rack the localiser took for a
tile in a large frame), is not counted face down; backs touching a row's end, or between its faces,
are; and a player is not called short by a back the reader left uncounted."""

from __future__ import annotations

import numpy as np
import pytest
from table_helpers import CARD, exps, flags_of, player, table

from companion.table import TableReader
from companion.table_zones import STRAY_GAP
from vision.types import Detections


def _with_backs(det: Detections, quads: list[np.ndarray], conf: float = 0.88) -> Detections:
    q = np.stack(quads).astype(np.float32)
    boxes = np.concatenate([q.min(axis=1), q.max(axis=1)], axis=1)
    return type(det)(np.vstack([det.boxes, boxes]).astype(np.float32), np.concatenate([det.quads, q]),
                     np.append(det.codes, ["BK"] * len(q)), np.append(det.confidence, [conf] * len(q)).astype(np.float32))


def _past_the_row(total: int, widths: list[float]) -> tuple[object, Detections]:
    """Player 1's table, and its true detections with a back at each of ``widths`` tile widths
    (centre to centre) past the end of P1-A's face-up row."""
    r = table(player("P1", exps("8C 8C 8C", "N N N"), total=total))
    det = r.detections()
    a = [i for i, t in enumerate(r.tiles) if t.zone == "P1-A" and t.code != "BK"]
    end = max(a, key=lambda i: det.quads[i][:, 0].mean())
    step = det.quads[end][1] - det.quads[end][0]
    return r, _with_backs(det, [det.quads[end] + step * w for w in widths])


@pytest.mark.parametrize(("widths", "stray"), [([1.35], 1), ([3.0], 1), ([1.05], 0), ([1.35, 2.45], 0)])
def test_a_back_past_a_face_up_row_apart_and_alone_is_not_counted(widths: list[float], stray: int) -> None:
    """Player 1 holds 28 tiles (on turn).  One back more past the face-up row, apart from it, is
    left out of the count; touching the row's last tile, or with another back beyond it, it counts
    as before (a count too many by backs in a face-up row is still not called)."""
    r, det = _past_the_row(28, widths)
    obs = TableReader(r.layout, card=CARD).read(r.image, det)
    a, b = obs.zones["P1-A"], obs.zones["P1-B"]
    assert a.stray_backs == stray
    assert a.face_down + b.face_down + 6 == 28 + len(widths) - stray
    assert flags_of(obs, "tile_count") == []


def test_a_player_is_not_called_short_by_a_back_left_uncounted() -> None:
    """Player 1 shows 26 tiles: short, and called so.  With a back apart past the face-up row (which
    may have been a tile after all), the count is not judged short."""
    assert STRAY_GAP < 1.35
    r = table(player("P1", exps("8C 8C 8C", "N N N"), total=26))
    plain = TableReader(r.layout, card=CARD).read(r.image, r.detections())
    assert flags_of(plain, "tile_count") == ["P1-A"]
    _, det = _past_the_row(26, [1.35])
    obs = TableReader(r.layout, card=CARD).read(r.image, det)
    assert obs.zones["P1-A"].stray_backs == 1 and flags_of(obs, "tile_count") == []
