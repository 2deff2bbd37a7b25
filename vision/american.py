"""Synthetic American tile faces: jokers, flowers, backs, soap dragons and index numerals.

No artwork source has an American joker, so jokers are drawn: the word JOKER (varied fonts, sizes,
colours, placements) with a simple picture.  Flowers ``F`` are drawn flowers with or without the
word FLOWER, backs ``BK`` are plain coloured tile backs, the soap ``WD`` is a blue/black frame,
and American number/wind tiles get corner index numerals over existing artwork.
Everything is deterministic for a given seed; faces are ``FACE_H x FACE_W`` BGR.
"""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

Image = npt.NDArray[np.uint8]
FACE_H, FACE_W = 96, 72

FONTS = (
    cv2.FONT_HERSHEY_SIMPLEX,
    cv2.FONT_HERSHEY_DUPLEX,
    cv2.FONT_HERSHEY_COMPLEX,
    cv2.FONT_HERSHEY_TRIPLEX,
    cv2.FONT_HERSHEY_COMPLEX_SMALL,
    cv2.FONT_HERSHEY_SCRIPT_SIMPLEX,
    cv2.FONT_HERSHEY_PLAIN,
)
INKS = ((30, 30, 200), (160, 60, 20), (40, 130, 30), (20, 20, 20), (140, 40, 120), (0, 120, 220))
BACK_COLOURS = (
    (60, 140, 40),  # green
    (170, 90, 30),  # blue
    (40, 200, 230),  # yellow
    (190, 225, 240),  # cream
    (180, 150, 240),  # pink
    (40, 40, 190),  # red
    (140, 60, 110),  # purple
    (235, 235, 235),  # white
    (120, 160, 40),  # teal
    (30, 110, 220),  # orange
)


def _face(rng: np.random.Generator) -> Image:
    base = np.array([215, 232, 242], np.float32) + rng.uniform(-20, 10) + rng.uniform(-5, 5, 3)
    grad = np.linspace(1.03, 0.95, FACE_H, dtype=np.float32)[:, None, None]
    face = np.clip(base[None, None, :] * grad + rng.normal(0, 2.0, (FACE_H, FACE_W, 3)), 0, 255)
    return face.astype(np.uint8)


def _ink(rng: np.random.Generator) -> tuple[int, int, int]:
    c = np.array(INKS[rng.integers(len(INKS))], np.float32) + rng.uniform(-25, 25, 3)
    return tuple(int(v) for v in np.clip(c, 0, 255))  # type: ignore[return-value]


def _text(
    img: Image,
    text: str,
    centre: tuple[int, int],
    width: int,
    rng: np.random.Generator,
    colour: tuple[int, int, int] | None = None,
) -> None:
    """Draw ``text`` centred at ``centre``, scaled to about ``width`` pixels wide."""
    font = FONTS[rng.integers(len(FONTS))]
    thick = int(rng.integers(1, 3))
    (tw, th), _ = cv2.getTextSize(text, font, 1.0, thick)
    scale = width / max(tw, 1)
    (tw, th), _ = cv2.getTextSize(text, font, scale, thick)
    org = (int(centre[0] - tw / 2), int(centre[1] + th / 2))
    cv2.putText(img, text, org, font, scale, colour or _ink(rng), thick, cv2.LINE_AA)


def _picture(img: Image, cx: int, cy: int, r: int, rng: np.random.Generator) -> None:
    """A simple joker picture: face, star, crown, diamond, heart, figure or rings."""
    col, col2 = _ink(rng), _ink(rng)
    kind = int(rng.integers(7))
    if kind == 0:  # smiling face
        cv2.circle(img, (cx, cy), r, col, -1, cv2.LINE_AA)
        cv2.circle(img, (cx - r // 3, cy - r // 4), max(1, r // 6), (250, 250, 250), -1)
        cv2.circle(img, (cx + r // 3, cy - r // 4), max(1, r // 6), (250, 250, 250), -1)
        cv2.ellipse(img, (cx, cy + r // 6), (r // 2, r // 3), 0, 10, 170, (250, 250, 250), 2)
    elif kind == 1:  # star
        ang = np.linspace(-np.pi / 2, 1.5 * np.pi, 11)[:-1]
        rad = np.where(np.arange(10) % 2 == 0, r, r * 0.45)
        pts = np.stack([cx + rad * np.cos(ang), cy + rad * np.sin(ang)], 1).astype(np.int32)
        cv2.fillPoly(img, [pts], col, cv2.LINE_AA)
    elif kind == 2:  # crown
        pts = np.array(
            [
                [cx - r, cy + r // 2],
                [cx - r, cy - r // 2],
                [cx - r // 2, cy],
                [cx, cy - r],
                [cx + r // 2, cy],
                [cx + r, cy - r // 2],
                [cx + r, cy + r // 2],
            ]
        )
        cv2.fillPoly(img, [pts.astype(np.int32)], col, cv2.LINE_AA)
        cv2.circle(img, (cx, cy - r), max(2, r // 5), col2, -1)
    elif kind == 3:  # diamond
        pts = np.array([[cx, cy - r], [cx + r * 2 // 3, cy], [cx, cy + r], [cx - r * 2 // 3, cy]])
        cv2.fillPoly(img, [pts.astype(np.int32)], col, cv2.LINE_AA)
    elif kind == 4:  # heart
        cv2.circle(img, (cx - r // 2, cy - r // 4), r // 2, col, -1, cv2.LINE_AA)
        cv2.circle(img, (cx + r // 2, cy - r // 4), r // 2, col, -1, cv2.LINE_AA)
        pts = np.array([[cx - r, cy - r // 6], [cx + r, cy - r // 6], [cx, cy + r]])
        cv2.fillPoly(img, [pts.astype(np.int32)], col, cv2.LINE_AA)
    elif kind == 5:  # jester figure
        cv2.circle(img, (cx, cy - r // 2), r // 3, col, -1, cv2.LINE_AA)
        cv2.line(img, (cx, cy - r // 6), (cx, cy + r // 2), col, 3)
        cv2.line(img, (cx - r // 2, cy), (cx + r // 2, cy), col, 2)
        cv2.line(img, (cx, cy + r // 2), (cx - r // 2, cy + r), col, 2)
        cv2.line(img, (cx, cy + r // 2), (cx + r // 2, cy + r), col, 2)
        cv2.line(img, (cx - r // 3, cy - r // 2), (cx - r // 2, cy - r), col2, 2)
        cv2.line(img, (cx + r // 3, cy - r // 2), (cx + r // 2, cy - r), col2, 2)
    else:  # rings
        for k in range(3, 0, -1):
            cv2.circle(img, (cx, cy), r * k // 3, col if k % 2 else col2, -1, cv2.LINE_AA)


def joker(rng: np.random.Generator) -> Image:
    """An American joker: JOKER in a varied font and place, with a picture."""
    img = _face(rng)
    layout = int(rng.integers(4))
    word = "JOKER" if rng.random() < 0.85 else "Joker"
    if layout == 0:  # word on top, picture below
        _text(img, word, (FACE_W // 2, 16), int(rng.integers(48, 66)), rng)
        _picture(img, FACE_W // 2, 58, int(rng.integers(14, 22)), rng)
    elif layout == 1:  # picture on top, word below
        _picture(img, FACE_W // 2, 38, int(rng.integers(14, 22)), rng)
        _text(img, word, (FACE_W // 2, 80), int(rng.integers(48, 66)), rng)
    elif layout == 2:  # letters down the side, picture beside
        col = _ink(rng)
        for i, ch in enumerate("JOKER"):
            _text(img, ch, (14, 12 + i * 17), 12, rng, col)
        _picture(img, 46, 48, int(rng.integers(12, 18)), rng)
    else:  # big word over a picture
        _picture(img, FACE_W // 2, FACE_H // 2, int(rng.integers(20, 28)), rng)
        _text(img, word, (FACE_W // 2, FACE_H // 2), int(rng.integers(56, 68)), rng)
    if rng.random() < 0.4:
        _text(img, "J", (10, 10), 9, rng)
    return img


def flower(rng: np.random.Generator) -> Image:
    """An American flower tile: a drawn flower, often with the word FLOWER."""
    img = _face(rng)
    has_word = rng.random() < 0.6
    cx, cy = FACE_W // 2, 44 if has_word else FACE_H // 2
    r = int(rng.integers(14, 22))
    cv2.line(img, (cx, cy), (cx + int(rng.integers(-8, 8)), FACE_H - 6), (40, 130, 40), 2)
    cv2.ellipse(img, (cx + 8, cy + r + 6), (8, 4), 30, 0, 360, (40, 150, 50), -1)
    petals = int(rng.integers(5, 9))
    col = _ink(rng)
    for k in range(petals):
        a = 2 * np.pi * k / petals + rng.uniform(0, 0.3)
        px, py = int(cx + r * 0.6 * np.cos(a)), int(cy + r * 0.6 * np.sin(a))
        cv2.ellipse(
            img, (px, py), (r // 2, r // 3), float(np.degrees(a)), 0, 360, col, -1, cv2.LINE_AA
        )
    cv2.circle(img, (cx, cy), max(3, r // 4), (40, 200, 230), -1, cv2.LINE_AA)
    if has_word:
        _text(img, "FLOWER", (FACE_W // 2, 12), int(rng.integers(50, 64)), rng)
    if rng.random() < 0.3:
        _text(img, str(int(rng.integers(1, 9))), (10, 10), 8, rng)
    return img


def back(rng: np.random.Generator) -> Image:
    """A face-down tile: a plain coloured back with a faint rim and texture."""
    base = np.array(BACK_COLOURS[rng.integers(len(BACK_COLOURS))], np.float32)
    base = np.clip(base + rng.uniform(-20, 20, 3), 0, 255)
    grad = np.linspace(1.06, 0.9, FACE_H, dtype=np.float32)[:, None, None]
    img = np.clip(base * grad + rng.normal(0, 3.0, (FACE_H, FACE_W, 3)), 0, 255).astype(np.uint8)
    rim = tuple(int(v) for v in base * 0.7)
    cv2.rectangle(img, (0, 0), (FACE_W - 1, FACE_H - 1), rim, 2)
    return img


def soap(rng: np.random.Generator) -> Image:
    """The American soap (white dragon): a blue or black frame, sometimes with a 0."""
    img = _face(rng)
    col = (150, 60, 20) if rng.random() < 0.6 else (25, 25, 25)
    m = int(rng.integers(8, 16))
    cv2.rectangle(img, (m, m), (FACE_W - m, FACE_H - m), col, int(rng.integers(2, 5)))
    if rng.random() < 0.5:
        cv2.rectangle(img, (m + 6, m + 6), (FACE_W - m - 6, FACE_H - m - 6), col, 1)
    if rng.random() < 0.4:
        _text(img, "0", (FACE_W // 2, FACE_H // 2), 16, rng, col)
    return img


def with_index(face: Image, label: str, rng: np.random.Generator) -> Image:
    """A copy of ``face`` with an American corner index (number or wind letter)."""
    img = face.copy()
    col = (30, 30, 200) if rng.random() < 0.5 else (20, 20, 20)
    corner = (int(rng.integers(7, 11)), int(rng.integers(8, 12)))
    cv2.rectangle(
        img,
        (corner[0] - 6, corner[1] - 7),
        (corner[0] + 6, corner[1] + 7),
        tuple(int(v) for v in img[2, FACE_W // 2]),
        -1,
    )
    _text(img, label, corner, int(rng.integers(8, 12)), rng, col)
    return img


def synth_faces(
    seed: int, per_code: int, bases: dict[str, list[Image]] | None = None
) -> dict[str, list[Image]]:
    """``per_code`` faces each of ``J``, ``F``, ``BK``, ``WD``; with ``bases``, index-numbered
    number and wind tiles drawn over those base faces (one per base image, up to ``per_code``),
    and the red and green dragons as the bases draw them (American sets print them much as
    Chinese sets do, without an index)."""
    rng = np.random.default_rng(seed)
    out: dict[str, list[Image]] = {
        "J": [joker(rng) for _ in range(per_code)],
        "F": [flower(rng) for _ in range(per_code)],
        "BK": [back(rng) for _ in range(per_code)],
        "WD": [soap(rng) for _ in range(per_code)],
    }
    dragons = np.random.default_rng(seed + 1)  # its own stream: the other faces stay as they were
    for code, imgs in (bases or {}).items():
        if code in ("RD", "GD"):
            out.setdefault(code, []).extend(imgs[i].copy() for i in dragons.permutation(len(imgs))[:per_code])
            continue
        label = code[0] if code[0].isdigit() else code if code in "NESW" else ""
        if not label:
            continue
        picks = rng.permutation(len(imgs))[:per_code]
        out.setdefault(code, []).extend(with_index(imgs[i], label, rng) for i in picks)
    return out
