"""What an enrolled tile set was taught, at a glance: its crops laid out as the layout sheet lays
their places, each captioned with the code it is enrolled as (``check.png`` in the set's folder).

A player compares it with the printed sheet in one look, rather than opening 37 or 42 crop files:
a tile in the wrong place shows as a face under another tile's code.  The places an enrollment
asks to check (``maybe_swapped``, and two exchanged as asked whose tiles read surely as laid:
``exchanged_read_otherwise``) are framed in amber, tiles put back (``reordered``) or exchanged
as asked (``exchanged``) in blue.  :func:`marks` reads them from a set's ``tileset.json`` fields,
:func:`check_sheet` draws, :func:`sheet_of` draws a stored set (one enrolled before sheets were
written too).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

Image = npt.NDArray[np.uint8]

SCALE = 2
"""Each 64x48 crop drawn twice as large, as a tile looks on the printed sheet."""
CAPTION = 24
PAD = 6
FRAME = 4
CHECK = "check"
MOVED = "moved"
COLOURS = {CHECK: (0, 165, 255), MOVED: (200, 110, 0)}
"""BGR: amber for a place to check, blue for a tile moved."""


def marks(meta: Mapping[str, Any]) -> dict[str, str]:
    """``{place: CHECK | MOVED}`` from a set's ``tileset.json`` fields; a field of the wrong kind
    (a file edited by hand) marks nothing."""
    out: dict[str, str] = {}
    for key, kind in (("reordered", MOVED), ("exchanged", MOVED), ("maybe_swapped", CHECK),
                      ("exchanged_read_otherwise", CHECK)):
        value = meta.get(key)
        for item in value if isinstance(value, list) else []:
            places = [item.get("place")] if isinstance(item, dict) else item if isinstance(item, list) else []
            out.update({str(p): kind for p in places if isinstance(p, str)})
    return out


def rows_of(layout: str, n: int) -> list[int]:
    """The layout's row lengths where they add up to ``n`` tiles, else rows of nine."""
    from vision.enroll import EnrollError, row_lengths

    try:
        rows = row_lengths(layout)
    except EnrollError:
        rows = []
    return rows if sum(rows) == n else [min(9, n - k) for k in range(0, n, 9)]


def cells(layout: str, n: int, crop_shape: tuple[int, ...]) -> list[tuple[int, int, int, int]]:
    """``(x, y, w, h)`` on the check sheet of each of ``n`` crops of ``crop_shape``, in layout
    order."""
    h, w = crop_shape[0] * SCALE, crop_shape[1] * SCALE
    cell_w, cell_h = w + 2 * (PAD + FRAME), h + 2 * (PAD + FRAME) + CAPTION
    return [(c * cell_w + PAD + FRAME, r * cell_h + PAD + FRAME, w, h)
            for r, length in enumerate(rows_of(layout, n)) for c in range(length)]


def check_sheet(crops: Image, codes: Sequence[str], layout: str, marked: Mapping[str, str] | None = None) -> Image:
    """The crops (``(N, H, W, 3)``, layout order) in the layout's rows on white, each enlarged
    :data:`SCALE` times over its code; a marked place framed in its :data:`COLOURS`, its code
    written in that colour too."""
    if len(crops) != len(codes) or not len(codes):
        raise ValueError(f"check sheet: {len(crops)} crops for {len(codes)} codes")
    marked = marked or {}
    boxes = cells(layout, len(codes), crops.shape[1:])
    right = max(x + w for x, _, w, _ in boxes) + PAD + FRAME
    bottom = max(y + h for _, y, _, h in boxes) + PAD + FRAME + CAPTION
    sheet = np.full((bottom, right, 3), 255, np.uint8)
    for (x, y, w, h), code, crop in zip(boxes, codes, crops, strict=True):
        colour = COLOURS.get(marked.get(code, ""))
        if colour is not None:
            cv2.rectangle(sheet, (x - FRAME, y - FRAME), (x + w + FRAME - 1, y + h + FRAME - 1), colour, -1)
        sheet[y:y + h, x:x + w] = cv2.resize(crop, (w, h), interpolation=cv2.INTER_NEAREST)
        (tw, _), _ = cv2.getTextSize(code, cv2.FONT_HERSHEY_SIMPLEX, 0.6, 2)
        cv2.putText(sheet, code, (x + (w - tw) // 2, y + h + FRAME + CAPTION - 6), cv2.FONT_HERSHEY_SIMPLEX,
                    0.6, colour or (0, 0, 0), 2, cv2.LINE_AA)
    return sheet


def sheet_of(folder: Path) -> Image | None:
    """The check sheet of the set stored in ``folder``; None where its crops or its
    ``tileset.json`` cannot be read."""
    from vision.tileset import TileSetError, stored_crops, tileset_info

    crops = stored_crops(folder)
    try:
        info = tileset_info(folder)
        codes, layout = [str(c) for c in info["codes"]], str(info["layout"])
    except (TileSetError, KeyError, TypeError):
        return None
    if crops is None or len(crops) != len(codes):
        return None
    return check_sheet(crops, codes, layout, marks(info))
