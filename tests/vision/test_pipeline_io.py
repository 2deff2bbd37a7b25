"""Bad inputs to recognition give a clear error naming the input, and the CLI exits with code 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.io import (
    MAX_PIXELS,
    ImageLoadError,
    check_image,
    container_format,
    decode_image,
    load_image,
)

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).resolve().parents[2]


def test_loads_a_real_photo() -> None:
    img = load_image(DATA / "photo1.jpg")
    assert img.shape == (640, 640, 3) and img.dtype == np.uint8


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("empty.jpg", b"", "empty"),
        ("notes.txt", b"these are not pixels\n" * 10, "not an image"),
        ("cut.jpg", None, "not an image"),
    ],
)
def test_bad_files_raise_an_error_naming_the_path(
    tmp_path: Path, name: str, content: bytes | None, reason: str
) -> None:
    path = tmp_path / name
    if content is None:  # a JPEG cut after its first 300 bytes
        content = (DATA / "photo1.jpg").read_bytes()[:300]
    path.write_bytes(content)
    with pytest.raises(ImageLoadError, match=reason) as info:
        load_image(path)
    assert str(path) in str(info.value)
    assert isinstance(info.value, ValueError)


def test_missing_file_and_folder(tmp_path: Path) -> None:
    with pytest.raises(ImageLoadError, match="no such file"):
        load_image(tmp_path / "nope.png")
    with pytest.raises(ImageLoadError, match="not a regular file"):
        load_image(tmp_path)


def test_huge_image_is_refused_before_decoding(tmp_path: Path) -> None:
    ok, png = cv2.imencode(".png", np.zeros((16, 16, 3), np.uint8))
    data = bytearray(png.tobytes())
    data[16:20] = (100_000).to_bytes(4, "big")  # claim 100000 x 100000 pixels in the header
    data[20:24] = (100_000).to_bytes(4, "big")
    with pytest.raises(ImageLoadError, match="larger than"):
        decode_image(bytes(data), "huge.png")
    with pytest.raises(ImageLoadError, match="larger than"):
        check_image(np.zeros((8, MAX_PIXELS // 8 + 8, 3), np.uint8))


def test_in_memory_images_are_checked() -> None:
    with pytest.raises(ImageLoadError, match="uint8"):
        check_image(np.zeros((32, 32, 3), np.float32))
    with pytest.raises(ImageLoadError, match="too small"):
        check_image(np.zeros((4, 4, 3), np.uint8))
    assert check_image(np.zeros((32, 32), np.uint8)).shape == (32, 32, 3)
    assert check_image(np.zeros((32, 32, 4), np.uint8)).shape == (32, 32, 3)


HEIC = b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + b"\x00\x00\x01\x00meta" + b"\x00" * 300
"""The start of an iPhone's HEIC photo: an ``ftyp`` box of brand ``heic``, then its boxes."""


def test_a_heic_photo_is_named_with_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "IMG_0001.HEIC"
    path.write_bytes(HEIC)
    with pytest.raises(ImageLoadError, match="HEIC") as info:
        load_image(path)
    assert str(path) in str(info.value) and "JPEG" in str(info.value)
    # any other bytes that are no image keep the plain reason
    with pytest.raises(ImageLoadError, match="not an image or corrupt"):
        decode_image(HEIC[:4] + b"ftyq" + HEIC[8:], "x")


def test_container_formats_are_told_by_their_brands() -> None:
    assert container_format(HEIC) == "HEIC"
    assert container_format(b"\x00\x00\x00\x14ftypmif1\x00\x00\x00\x00mif1" + b"\x00" * 8) == "HEIC"
    avif = b"\x00\x00\x00\x20ftypavif\x00\x00\x00\x00avifmif1miafMA1B" + b"\x00" * 8
    assert container_format(avif) == "AVIF"  # it lists mif1 as well
    assert container_format(b"\x00\x00\x00\x18ftypisom\x00\x00\x00\x00isommp41" + b"\x00" * 8) is None
    assert container_format((DATA / "photo1.jpg").read_bytes()) is None
    assert container_format(b"ftyp") is None


def test_an_avif_photo_reads_where_opencv_decodes_it() -> None:
    img = np.full((40, 60, 3), 120, np.uint8)
    ok, data = cv2.imencode(".avif", img) if cv2.haveImageWriter(".avif") else (False, None)
    if not ok or data is None:
        pytest.skip("this OpenCV has no AVIF encoder")
    assert container_format(data.tobytes()) == "AVIF"
    out = decode_image(data.tobytes(), "x.avif")
    assert out.shape == (40, 60, 3) and abs(int(out[20, 30, 1]) - 120) <= 8
    # a damaged one is named as damaged, not as a format this OpenCV cannot read
    with pytest.raises(ImageLoadError, match="not an image or corrupt"):
        decode_image(data.tobytes()[:60], "cut.avif")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "companion", "detect", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )


def test_cli_bad_inputs_exit_2_without_a_traceback(tmp_path: Path) -> None:
    models = REPO / "models"
    if not (models / "localizer.onnx").is_file() or not (models / "classifier.onnx").is_file():
        pytest.skip("models not committed yet")
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"\x00" * 100)
    proc = _cli(str(bad), str(tmp_path / "missing.png"))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert f"error: cannot read image {str(bad)!r}" in proc.stderr
    assert "no such file" in proc.stderr
    assert proc.stdout.count("\n") == 2  # one JSON line per input, even a failed one


def test_cli_reads_a_folder_and_names_its_heic_photo(tmp_path: Path) -> None:
    (tmp_path / "a.jpg").write_bytes((DATA / "photo1.jpg").read_bytes())
    (tmp_path / "b.HEIC").write_bytes(HEIC)
    proc = _cli(str(tmp_path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [Path(line["image"]).name for line in lines] == ["a.jpg", "b.HEIC"]
    assert len(lines[0]["tiles"]) > 5
    assert "HEIC/HEIF photo" in lines[1]["error"] and "b.HEIC" in proc.stderr


def test_cli_missing_model_folder_is_a_clear_error(tmp_path: Path) -> None:
    proc = _cli("--models", str(tmp_path), str(DATA / "photo1.jpg"))
    assert proc.returncode in (2, 3)
    assert proc.stderr.startswith("error:") and "Traceback" not in proc.stderr
