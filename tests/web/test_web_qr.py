"""The self-written QR encoder, checked by decoding its output with OpenCV."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.web.qr import encode, qr_svg


def _decode(grid: list[list[bool]]) -> str:
    n = len(grid)
    img = np.full((n + 8, n + 8), 255, np.uint8)
    for y, row in enumerate(grid):
        for x, dark in enumerate(row):
            if dark:
                img[y + 4, x + 4] = 0
    img = cv2.resize(img, None, fx=8, fy=8, interpolation=cv2.INTER_NEAREST)
    text, _, _ = cv2.QRCodeDetector().detectAndDecode(img)
    return str(text)


@pytest.mark.parametrize("text", [
    "hi",
    "http://192.168.1.20:8000/?token=abcdefghijklmnopqrstuv",
    "https://10.0.0.5:8443/?token=" + "Z" * 43,  # version 5, two blocks
    "y" * 150,  # version 8: version information bits
    "z" * 200,  # version 10: 16-bit length
])
def test_round_trip(text: str) -> None:
    assert _decode(encode(text)) == text


def test_too_long_is_an_error() -> None:
    with pytest.raises(ValueError, match="too long"):
        encode("x" * 400)


def test_svg_has_one_path() -> None:
    svg = qr_svg("abc")
    assert svg.startswith("<svg") and svg.count("<path") == 1
