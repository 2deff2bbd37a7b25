"""Each tile artwork source read into faces: the SVG sets (rendered by ``rsvg-convert``), the
bitmap strips and PNG sets, and the Unicode mahjong glyphs of the shared fonts.

:data:`LOADERS` maps each style to its loader; :mod:`vision.artwork` caches what they return and
adds the synthesised American faces.  The small image helpers of :mod:`vision.artwork_images`
shape every source's tiles alike: BGR portrait faces ``FACE_H x FACE_W`` (96 x 72).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import cast

import cv2
import numpy as np
import numpy.typing as npt

from vision.artwork_images import (
    ArtworkError,
    Image,
    artwork_dir,
    compose,
    flatten_alpha,
    plain_face,
    to_face,
    trim_alpha,
)

# kmahjongg "alphabet" and gnome "edu_kang_xi" draw letters/radicals instead of tile faces: unused.
KM_SETS = ("classic", "default", "egypt", "jade", "traditional")


# ---------------------------------------------------------------- SVG sources (rsvg-convert)

_KM_IDS: dict[str, str] = {
    **{f"{n}B": f"BAMBOO_{n}" for n in range(1, 10)},
    **{f"{n}C": f"CHARACTER_{n}" for n in range(1, 10)},
    **{f"{n}D": f"ROD_{n}" for n in range(1, 10)},
    # kmahjongg winds are North, South, East, West (checked by eye in default and traditional)
    "N": "WIND_1",
    "S": "WIND_2",
    "E": "WIND_3",
    "W": "WIND_4",
    # kmahjongg dragons: DRAGON_1 is the white dragon, DRAGON_3 the red (checked by rendering
    # default, classic and traditional)
    "RD": "DRAGON_3",
    "GD": "DRAGON_2",
    "WD": "DRAGON_1",
    **{f"FL{i}": f"FLOWER_{i}" for i in range(1, 5)},
    **{f"SE{i}": f"SEASON_{i}" for i in range(1, 5)},
}

_UNI_IDS: dict[str, str] = {
    **{f"{n}B": f"t_ba{n}" for n in range(1, 10)},
    **{f"{n}C": f"t_ch{n}" for n in range(1, 10)},
    **{f"{n}D": f"t_do{n}" for n in range(1, 10)},
    "N": "t_wi_north",
    "S": "t_wi_south",
    "E": "t_wi_east",
    "W": "t_wi_west",
    "RD": "t_dr_red",
    "GD": "t_dr_green",
    "WD": "t_dr_white",
    "FL1": "t_fl_plum",
    "FL2": "t_fl_orchid",
    "FL3": "t_fl_chrysanthemum",
    "FL4": "t_fl_bamboo",
    "SE1": "t_se_spring",
    "SE2": "t_se_summer",
    "SE3": "t_se_fall",
    "SE4": "t_se_winter",
}


def render_svg_element(svg: Path, element_id: str, height: int = 240) -> npt.NDArray[np.uint8]:
    """One SVG element rendered to BGRA by ``rsvg-convert --export-id``."""
    exe = shutil.which("rsvg-convert")
    if exe is None:
        raise ArtworkError("rsvg-convert not found (Debian package librsvg2-bin)")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "e.png"
        cmd = [exe, "-a", f"--export-id={element_id}", "-h", str(height), str(svg), "-o", str(out)]
        res = subprocess.run(cmd, capture_output=True, timeout=60)
        img = cast("Image | None", cv2.imread(str(out), cv2.IMREAD_UNCHANGED)) if out.exists() else None
    if res.returncode != 0 or img is None:
        raise ArtworkError(f"cannot render {element_id!r} from {str(svg)!r}: {res.stderr[:200]!r}")
    if img.ndim == 2 or img.shape[2] == 3:
        img = np.asarray(cv2.cvtColor(flatten_alpha(img), cv2.COLOR_BGR2BGRA), np.uint8)
    return img


def _render_many(svg: Path, ids: dict[str, str]) -> dict[str, npt.NDArray[np.uint8]]:
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {code: pool.submit(render_svg_element, svg, eid) for code, eid in ids.items()}
        return {code: f.result() for code, f in futures.items()}


def _face_colour_of(svg: Path) -> tuple[int, int, int]:
    try:
        body = flatten_alpha(render_svg_element(svg, "TILE_1", 120))
    except ArtworkError:
        return (222, 236, 242)
    h, w = body.shape[:2]
    c = np.median(body[h // 3 : 2 * h // 3, w // 3 : 2 * w // 3].reshape(-1, 3), axis=0)
    return (int(c[0]), int(c[1]), int(c[2]))


def _load_kmahjongg(name: str) -> dict[str, list[Image]]:
    svg = artwork_dir() / "kmahjongg" / f"{name}.svg"
    colour = _face_colour_of(svg)
    glyphs = _render_many(svg, _KM_IDS)
    return {code: [compose(g, plain_face(colour))] for code, g in glyphs.items()}


def _load_ffalt_uni() -> dict[str, list[Image]]:
    glyphs = _render_many(artwork_dir() / "ffalt_mah" / "uni.svg", _UNI_IDS)
    return {code: [compose(g, plain_face((215, 232, 240)))] for code, g in glyphs.items()}


# ---------------------------------------------------------------- bitmap strips and PNG sets


def _read_gif(path: Path) -> Image:
    cap = cv2.VideoCapture(str(path))
    ok, img = cap.read()
    cap.release()
    if not ok or img is None:
        raise ArtworkError(f"cannot read GIF {str(path)!r}")
    return np.asarray(img, np.uint8)


def _cells(
    img: Image, cols: int, rows: int, order: list[str], inset: float = 0.0
) -> dict[str, list[Image]]:
    """Cut a regular grid of tiles (row-major) into faces; '' in ``order`` skips a cell."""
    ch, cw = img.shape[0] / rows, img.shape[1] / cols
    out: dict[str, list[Image]] = {}
    for i, code in enumerate(order):
        if not code:
            continue
        r, c = divmod(i, cols)
        y0, y1 = int(r * ch + inset * ch), int((r + 1) * ch - inset * ch)
        x0, x1 = int(c * cw + inset * cw), int((c + 1) * cw - inset * cw)
        out.setdefault(code, []).append(to_face(img[y0:y1, x0:x1]))
    return out


_DOTS = [f"{n}D" for n in range(1, 10)]
_BAMS = [f"{n}B" for n in range(1, 10)]
_CRAKS = [f"{n}C" for n in range(1, 10)]


def _render_svg(svg: Path, height: int) -> npt.NDArray[np.uint8]:
    """A whole SVG document rendered to BGRA by ``rsvg-convert``."""
    exe = shutil.which("rsvg-convert")
    if exe is None:
        raise ArtworkError("rsvg-convert not found (Debian package librsvg2-bin)")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "d.png"
        res = subprocess.run([exe, "-a", "-h", str(height), str(svg), "-o", str(out)],
                             capture_output=True, timeout=120)
        img = cv2.imread(str(out), cv2.IMREAD_UNCHANGED) if out.exists() else None
    if res.returncode != 0 or img is None or img.ndim != 3 or img.shape[2] != 4:
        raise ArtworkError(f"cannot render {str(svg)!r}: {res.stderr[:200]!r}")
    return np.asarray(img, np.uint8)


def _load_gnome(name: str) -> dict[str, list[Image]]:
    """A GNOME Mahjongg sheet: 43 columns, the faces in the top half.  ``postmodern`` (SVG) has
    its weather tiles (seasons) where ``smooth`` has flowers, and its flowers after the soap."""
    if name == "postmodern":
        img = _render_svg(artwork_dir() / "gnome-mahjongg" / "postmodern.svg", 400)
        tail = ["SE1", "SE2", "SE3", "SE4", "WD", "FL1", "FL2", "FL3", "FL4", ""]
    else:
        path = artwork_dir() / "gnome-mahjongg" / f"{name}.png"
        read = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
        if read is None:
            raise ArtworkError(f"cannot read {str(path)!r}")
        img = np.asarray(read, np.uint8)
        tail = ["FL2", "FL3", "FL1", "FL4", "WD", "SE1", "SE2", "SE3", "SE4", ""]
    order = _DOTS + ["N", "W", "S", "E", "RD", "GD"] + _CRAKS + _BAMS + tail
    out: dict[str, list[Image]] = {}
    cw = img.shape[1] // 43
    for i, code in enumerate(order):
        if code:
            cell = trim_alpha(img[: img.shape[0] // 2, i * cw : (i + 1) * cw])
            out[code] = [to_face(flatten_alpha(cell, (90, 120, 60)))]
    return out


def _load_xm_dorothys() -> dict[str, list[Image]]:
    img = _read_gif(artwork_dir() / "xmahjongg" / "dorothys.gif")[:160]
    order = _DOTS + ["N", "W", "S", "E", "RD", "GD"] + _CRAKS + _BAMS
    order += ["SE1", "SE2", "SE3", "SE4", "WD", "FL4", "FL2", "FL1", "FL3"]
    return _cells(img, 21, 2, order)


def _two_colours(img: Image, rows_px: int, order: list[str]) -> dict[str, list[Image]]:
    """An xmahjongg strip of 21 x 2 faces drawn twice, in two colours, one below the other: each
    code's face in the first colour, then in the second."""
    out = _cells(img[:rows_px], 21, 2, order)
    for code, faces in _cells(img[rows_px : 2 * rows_px], 21, 2, order).items():
        out[code].extend(faces)
    return out


def _load_xm_dorwhite() -> dict[str, list[Image]]:
    """xmahjongg's ``dorwhite.gif``: ``dorothys.gif``'s layout, white faces in the top two rows and
    yellow ones below."""
    img = _read_gif(artwork_dir() / "xmahjongg" / "dorwhite.gif")
    order = _DOTS + ["N", "W", "S", "E", "RD", "GD"] + _CRAKS + _BAMS
    order += ["SE1", "SE2", "SE3", "SE4", "WD", "FL4", "FL2", "FL1", "FL3"]
    return _two_colours(img, 160, order)


def _load_xm_gnome2() -> dict[str, list[Image]]:
    img = _read_gif(artwork_dir() / "xmahjongg" / "gnome2.gif")[:112]
    order = _BAMS + ["N", "W", "S", "E", "RD", "GD"] + _CRAKS + _DOTS
    return _cells(img, 21, 2, order)


def _load_xm_gnome() -> dict[str, list[Image]]:
    """xmahjongg's ``gnome.gif``: the same faces on beige (top two rows) and on blue.  Its four
    flower characters and its second, dark winds are left out (which code each is, is unsure)."""
    img = _read_gif(artwork_dir() / "xmahjongg" / "gnome.gif")
    order = _DOTS + ["N", "W", "S", "E", "RD", "GD"] + _CRAKS + _BAMS
    order += ["", "", "", "", "WD", "", "", "", ""]
    return _two_colours(img, 112, order)


def _load_xm_real() -> dict[str, list[Image]]:
    img = _read_gif(artwork_dir() / "xmahjongg" / "real.gif")
    order = _DOTS + _BAMS + _CRAKS
    order += ["SE1", "SE2", "SE3", "SE4", "N", "S", "E", "W", ""]
    order += ["FL1", "FL2", "FL3", "FL4", "GD", "WD", "RD", "", ""]
    return _cells(img, 9, 5, order, inset=0.01)


_FLUFFY: dict[str, str] = {
    **{f"{n}B": f"Sou{n}" for n in range(1, 10)},
    **{f"{n}C": f"Man{n}" for n in range(1, 10)},
    **{f"{n}D": f"Pin{n}" for n in range(1, 10)},
    "E": "Ton",
    "S": "Nan",
    "W": "Shaa",
    "N": "Pei",
    "RD": "Chun",
    "GD": "Hatsu",
    "WD": "Haku",
}


def _load_fluffy(variant: str) -> dict[str, list[Image]]:
    folder = artwork_dir() / "fluffystuff-riichi" / "Export" / variant
    front = cast("Image | None", cv2.imread(str(folder / "Front.png"), cv2.IMREAD_UNCHANGED))
    if front is None:
        raise ArtworkError(f"cannot read {str(folder / 'Front.png')!r}")
    out: dict[str, list[Image]] = {}
    for code, stem in _FLUFFY.items():
        glyph = cv2.imread(str(folder / f"{stem}.png"), cv2.IMREAD_UNCHANGED)
        if glyph is None:
            raise ArtworkError(f"cannot read {str(folder / stem)!r}.png")
        face = flatten_alpha(front, (90, 120, 60)).copy()
        a = glyph[:, :, 3:4].astype(np.float32) / 255.0
        face = (glyph[:, :, :3] * a + face * (1 - a)).astype(np.uint8)
        out[code] = [to_face(face)]
    return out


# ---------------------------------------------------------------- Unicode glyphs (fonts/, Pillow)

_GLYPH_CODES: tuple[str, ...] = (
    "E", "S", "W", "N", "RD", "GD", "WD",
    *(f"{n}C" for n in range(1, 10)),
    *(f"{n}B" for n in range(1, 10)),
    *(f"{n}D" for n in range(1, 10)),
    "FL1", "FL2", "FL4", "FL3",  # plum, orchid, bamboo, chrysanthemum (U+1F022..U+1F025)
    "SE1", "SE2", "SE3", "SE4",
    "J",  # U+1F02B, the back, is left out: it draws stripes, where a real back is plain
)
FONT_FILES = {"font-noto": "NotoSansSymbols2-Regular.ttf", "font-symbola": "Symbola_hint.ttf",
               "font-unifont": "unifont_upper.otf"}


def _load_font(style: str) -> dict[str, list[Image]]:
    """Each glyph drawn large, cut inside the tile outline the glyph draws, on an ivory face (the
    joker is the glyph's Chinese joker; no back: a table draws its plain backs)."""
    try:
        from PIL import Image as PILImage
        from PIL import ImageDraw, ImageFont
    except ImportError as exc:  # a training/benchmark style only: the runtime never draws fonts
        raise ArtworkError(f"style {style!r} needs Pillow (pip install pillow)") from exc
    path = artwork_dir() / "fonts" / FONT_FILES[style]
    try:
        font = ImageFont.truetype(str(path), 240)
    except OSError as exc:
        raise ArtworkError(f"cannot read font {str(path)!r}: {exc}") from exc
    out: dict[str, list[Image]] = {}
    for i, code in enumerate(_GLYPH_CODES):
        canvas = PILImage.new("L", (360, 420), 255)
        ImageDraw.Draw(canvas).text((180, 210), chr(0x1F000 + i), font=font, fill=0, anchor="mm")
        ink = np.asarray(canvas, np.uint8)
        ys, xs = np.nonzero(ink < 128)
        if len(xs) == 0:
            raise ArtworkError(f"font {str(path)!r} has no glyph U+{0x1F000 + i:X} ({code})")
        box = ink[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
        h, w = box.shape
        inset_y, inset_x = max(2, round(h * 0.05)), max(2, round(w * 0.06))
        inner = box[inset_y : h - inset_y, inset_x : w - inset_x].astype(np.float32) / 255.0
        ivory = np.array([214, 236, 246], np.float32)  # BGR
        face = (inner[:, :, None] * ivory[None, None, :] + (1 - inner[:, :, None]) * 20.0).astype(np.uint8)
        out[code] = [to_face(face)]
    return out


LOADERS: dict[str, Callable[[], dict[str, list[Image]]]] = {
    **{f"km-{s}": (lambda s=s: _load_kmahjongg(s)) for s in KM_SETS},  # type: ignore[misc]
    "gnome-smooth": lambda: _load_gnome("smooth"),
    "gnome-postmodern": lambda: _load_gnome("postmodern"),
    "xm-gnome": _load_xm_gnome,
    "xm-dorothys": _load_xm_dorothys,
    "xm-dorwhite": _load_xm_dorwhite,
    "xm-real": _load_xm_real,
    "xm-gnome2": _load_xm_gnome2,
    "fluffy-regular": lambda: _load_fluffy("Regular"),
    "fluffy-black": lambda: _load_fluffy("Black"),
    "ffalt-uni": _load_ffalt_uni,
    **{s: (lambda s=s: _load_font(s)) for s in FONT_FILES},  # type: ignore[misc]
}
"""Each artwork style read from its source files (:mod:`vision.artwork` adds ``american-synth``,
drawn over other styles' faces, and caches every style)."""
