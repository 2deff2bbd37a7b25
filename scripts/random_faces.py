"""Tile faces no set has: random prints on random grounds, for the localiser's training.

    python scripts/random_faces.py --out runs/random_faces --n 48     # write a sheet to look at

The localiser learned the tile faces of the training artwork and the photos.  On a set it never
saw it boxes what it knows of a face: on the Symbola set, whose glyphs draw a thin frame inside
each tile, the frame (docs/tilesets.md, "What a set the models do not know still misses").  These
faces teach it that a tile is its whole top, whatever is printed on it: each is a light (now and
then a coloured) ground, often with a frame line drawn inside it at a random inset, and a few
random marks (discs, rings, bars, strokes, letters and digits) in a random part of the face.
They carry no code; ``train_localizer.py --random-faces`` draws that share of its synthetic
scenes from them.  Deterministic for a seed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from vision.american import FACE_H, FACE_W  # noqa: E402

INKS = ((20, 20, 20), (30, 30, 200), (40, 140, 30), (170, 60, 20), (20, 90, 160), (120, 30, 120))
"""BGR inks a print is mostly drawn in: black, red, green, blue, brown, purple."""
LETTERS = "ABCDEFGHJKLMNPRSTWXYZ0123456789"
FONTS = (cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_DUPLEX, cv2.FONT_HERSHEY_COMPLEX,
         cv2.FONT_HERSHEY_TRIPLEX, cv2.FONT_HERSHEY_SCRIPT_SIMPLEX, cv2.FONT_HERSHEY_PLAIN)


def _ground(rng: np.random.Generator) -> np.ndarray:
    """A face's ground: near white, ivory, cream or pale; one in eight a stronger colour."""
    if rng.random() < 0.125:
        base = rng.uniform(60, 230, 3)
    else:
        base = rng.uniform(200, 252, 3)
        base[int(rng.integers(3))] -= rng.uniform(0, 30)
    grad = np.linspace(rng.uniform(0.95, 1.05), rng.uniform(0.95, 1.05), FACE_H, dtype=np.float32)[:, None, None]
    face = base[None, None, :] * grad + rng.normal(0, rng.uniform(0.5, 4), (FACE_H, FACE_W, 3))
    return np.ascontiguousarray(np.clip(face, 0, 255).astype(np.uint8))


def _ink(rng: np.random.Generator) -> tuple[int, ...]:
    if rng.random() < 0.8:
        ink = np.array(INKS[int(rng.integers(len(INKS)))], np.float64) + rng.normal(0, 15, 3)
    else:
        ink = rng.uniform(0, 200, 3)
    return tuple(int(v) for v in np.clip(ink, 0, 255))


def _frame(face: np.ndarray, rng: np.random.Generator) -> None:
    """A frame line inside the face, 2-14 px in from its edge (as some sets engrave or print)."""
    inset = int(rng.integers(2, 15))
    x2, y2 = FACE_W - 1 - inset + int(rng.integers(-1, 2)), FACE_H - 1 - inset + int(rng.integers(-1, 2))
    cv2.rectangle(face, (inset, inset), (x2, y2), _ink(rng), int(rng.integers(1, 4)), cv2.LINE_AA)


def _mark(face: np.ndarray, box: tuple[int, int, int, int], rng: np.random.Generator) -> None:
    """One random mark inside ``box`` (x1, y1, x2, y2)."""
    x1, y1, x2, y2 = box
    cx, cy = int(rng.integers(x1, x2 + 1)), int(rng.integers(y1, y2 + 1))
    size = max(2, int(rng.uniform(0.1, 0.5) * min(x2 - x1 + 2, y2 - y1 + 2)))
    ink, thick = _ink(rng), int(rng.integers(1, 4))
    kind = int(rng.integers(5))
    if kind == 0:
        cv2.circle(face, (cx, cy), size, ink, -1 if rng.random() < 0.5 else thick, cv2.LINE_AA)
    elif kind == 1:
        w, h = int(rng.integers(2, size * 2 + 3)), int(rng.integers(2, size * 2 + 3))
        cv2.rectangle(face, (cx - w // 2, cy - h // 2), (cx + w // 2, cy + h // 2), ink,
                      -1 if rng.random() < 0.5 else thick, cv2.LINE_AA)
    elif kind == 2:
        pts = np.stack([rng.integers(x1, x2 + 1, 4), rng.integers(y1, y2 + 1, 4)], axis=1).astype(np.int32)
        cv2.polylines(face, [pts], bool(rng.random() < 0.3), ink, thick, cv2.LINE_AA)
    elif kind == 3:
        cv2.ellipse(face, (cx, cy), (size, max(1, size // 2)), float(rng.uniform(0, 180)), 0,
                    float(rng.uniform(120, 360)), ink, thick, cv2.LINE_AA)
    else:
        text = "".join(LETTERS[int(i)] for i in rng.integers(len(LETTERS), size=int(rng.integers(1, 3))))
        scale = max(0.3, size / 14)
        cv2.putText(face, text, (cx - size, cy + size // 2), FONTS[int(rng.integers(len(FONTS)))], scale, ink,
                    thick, cv2.LINE_AA)


def random_face(rng: np.random.Generator) -> np.ndarray:
    """One face, ``FACE_H x FACE_W`` BGR: a ground, perhaps a frame, and 0-12 marks in a random
    part of it (from a small patch to the whole face)."""
    face = _ground(rng)
    if rng.random() < 0.5:
        _frame(face, rng)
    fw, fh = rng.uniform(0.2, 0.9) * FACE_W, rng.uniform(0.2, 0.9) * FACE_H
    x1 = rng.uniform(2, FACE_W - 2 - fw)
    y1 = rng.uniform(2, FACE_H - 2 - fh)
    box = (int(x1), int(y1), int(x1 + fw), int(y1 + fh))
    for _ in range(int(rng.integers(0, 13))):
        _mark(face, box, rng)
    if rng.random() < 0.5:
        face = cv2.GaussianBlur(face, (3, 3), 0)
    return face


def random_faces(seed: int, n: int = 600) -> dict[str, list[np.ndarray]]:
    """``n`` random faces under one code, ``"X"`` (the localiser reads no code)."""
    rng = np.random.default_rng(seed)
    return {"X": [random_face(rng) for _ in range(n)]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=REPO / "runs" / "random_faces")
    ap.add_argument("--n", type=int, default=48)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    faces = random_faces(args.seed, args.n)["X"]
    cols = 8
    rows = [np.hstack(faces[i : i + cols] + [np.zeros_like(faces[0])] * (cols - len(faces[i : i + cols])))
            for i in range(0, len(faces), cols)]
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"sheet-{args.seed}.png"
    cv2.imwrite(str(path), np.vstack(rows))
    print(path)


if __name__ == "__main__":
    main()
