"""Reading image files for recognition, with errors that name the file.

:func:`load_image` returns a BGR uint8 array or raises :class:`ImageLoadError` (a ``ValueError``)
for a missing, empty, unreadable, corrupt, non-image or too large file, and names the format of a
photo OpenCV cannot decode (:func:`container_format`: an iPhone's HEIC).  The command line turns
that into ``error: ...`` and exit code 2; the live loop turns it into a warning.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_PIXELS = 50_000_000
"""Largest accepted image (about 8660 x 5770); larger inputs are refused, not decoded."""

ImageArray = npt.NDArray[np.uint8]


class ImageLoadError(ValueError):
    """An image file that cannot be used; the message names the path and the reason."""

    def __init__(self, path: str | Path, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"cannot read image {self.path!r}: {reason}")


def _header_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG or JPEG header without decoding, or None if unknown."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if data[:2] == b"\xff\xd8":
        i = 2
        while i + 9 < len(data):
            if data[i] != 0xFF:
                i += 1
                continue
            marker = data[i + 1]
            if marker in (
                0xC0,
                0xC1,
                0xC2,
                0xC3,
                0xC5,
                0xC6,
                0xC7,
                0xC9,
                0xCA,
                0xCB,
                0xCD,
                0xCE,
                0xCF,
            ):
                return int.from_bytes(data[i + 7 : i + 9], "big"), int.from_bytes(
                    data[i + 5 : i + 7], "big"
                )
            if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
                i += 2
                continue
            i += 2 + int.from_bytes(data[i + 2 : i + 4], "big")
    return None


HEIF_BRANDS = frozenset({"heic", "heix", "heim", "heis", "hevc", "hevx", "hevm", "hevs", "mif1", "msf1"})
"""ISO base media brands of a HEIF still (``mif1``/``msf1`` alone: HEIF of any codec)."""
AVIF_BRANDS = frozenset({"avif", "avis"})

UNDECODED = {
    "HEIC": (
        "a HEIC/HEIF photo (an iPhone's default format), which OpenCV cannot decode: save it as "
        "JPEG instead (on an iPhone: Settings > Camera > Formats > Most Compatible; or share it "
        "as JPEG, or export it from Photos or Preview), or convert it (libheif's heif-convert)"
    ),
    "AVIF": (
        "an AVIF image, which this OpenCV build cannot decode: convert it to JPEG or PNG, or "
        "install an opencv-python-headless built with AVIF (5.0 is)"
    ),
}
"""What :func:`decode_image` says of a photo in a format that :func:`container_format` names and
``cv2.imdecode`` did not decode."""


def container_format(data: bytes) -> str | None:
    """``"HEIC"`` or ``"AVIF"`` for an ISO base media image file (its ``ftyp`` box's major or
    compatible brands), else None.  AVIF is taken first: an AVIF file lists ``mif1`` too."""
    if len(data) < 16 or data[4:8] != b"ftyp":
        return None
    size = int.from_bytes(data[:4], "big")
    end = min(len(data), size if 16 <= size <= 4096 else 16)
    brands = {data[8:12].decode("latin-1")} | {
        data[i : i + 4].decode("latin-1") for i in range(16, end - 3, 4)
    }
    if brands & AVIF_BRANDS:
        return "AVIF"
    if brands & HEIF_BRANDS:
        return "HEIC"
    return None


def decode_image(data: bytes, name: str = "<bytes>") -> ImageArray:
    """Decode encoded image bytes (JPEG, PNG, BMP, WebP...) to a BGR uint8 array; a JPEG is turned
    upright by its EXIF orientation, as OpenCV decodes it."""
    if not data:
        raise ImageLoadError(name, "the file is empty")
    size = _header_size(data)
    if size is not None and size[0] * size[1] > MAX_PIXELS:
        raise ImageLoadError(name, f"image is {size[0]}x{size[1]}, larger than {MAX_PIXELS} pixels")
    buf = np.frombuffer(data, np.uint8)
    img = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    if img is None or img.size == 0:
        kind = container_format(data)
        if kind == "AVIF" and cv2.haveImageWriter(".avif"):  # this OpenCV reads AVIF: the file is damaged
            kind = None
        raise ImageLoadError(name, UNDECODED[kind] if kind else "not an image or corrupt image data")
    return check_image(img, name)


def check_image(img: npt.NDArray[np.generic], name: str = "<array>") -> ImageArray:
    """Validate an in-memory image: HxWx3 uint8 (grey HxW and BGRA are converted)."""
    if not isinstance(img, np.ndarray):
        raise ImageLoadError(name, f"expected a numpy array, got {type(img).__name__}")
    if img.dtype != np.uint8:
        raise ImageLoadError(name, f"expected uint8 pixels, got {img.dtype}")
    if img.ndim == 2:
        img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)  # type: ignore[arg-type]
    elif img.ndim == 3 and img.shape[2] == 4:
        img = cv2.cvtColor(img, cv2.COLOR_BGRA2BGR)  # type: ignore[arg-type]
    if img.ndim != 3 or img.shape[2] != 3:
        raise ImageLoadError(name, f"expected an HxWx3 image, got shape {img.shape}")
    h, w = img.shape[:2]
    if h * w > MAX_PIXELS:
        raise ImageLoadError(name, f"image is {w}x{h}, larger than {MAX_PIXELS} pixels")
    if h < 8 or w < 8:
        raise ImageLoadError(name, f"image is {w}x{h}, too small")
    return np.ascontiguousarray(img)


def load_image(path: str | Path) -> ImageArray:
    """Read an image file as BGR uint8, or raise :class:`ImageLoadError` naming the path."""
    p = Path(path)
    if not p.exists():
        raise ImageLoadError(p, "no such file")
    if not p.is_file():
        raise ImageLoadError(p, "not a regular file")
    size = p.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ImageLoadError(p, f"file is {size} bytes, larger than {MAX_FILE_BYTES}")
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ImageLoadError(p, exc.strerror or str(exc)) from exc
    return decode_image(data, str(p))
