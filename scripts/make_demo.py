"""Make the bundled demo under ``calibration/demo/``: a rendered Siamese table, frame by frame.

The story: racks dealt face down; draws and discards; player 2 claims a discard and exposes a
pung; player 1 claims one for a kong with a joker, then claims another onto the same rack as an
exposure that no card hand can use beside the kong (a wrong-rack exposure).
Between table states a "hand" crosses the view for one frame, so the motion gate has work.
Writes ``frames/fNNN.jpg`` (1920x1080) and ``readings.json`` (the true reading of every still
frame, replayed by the live loop with ``serve --replay-demo`` or when the recognition models are
missing).

    python scripts/make_demo.py [--out calibration/demo] [--card calibration/cards/example.mjcard] [--size 1920x1080]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vision.faces import drawn_faces, real_crops  # noqa: E402
from vision.layout import load_layout  # noqa: E402
from vision.render import RackScene, Scene, View, render_table  # noqa: E402

GOOD = ("5D", "5D", "J", "5D")
WRONG_CANDIDATES = (("GD", "GD", "GD"), ("N", "N", "N"), ("1B", "1B", "1B"), ("9C", "9C", "9C"))


def pick_wrong(card_path: Path | None) -> tuple[str, ...]:
    """An exposure that, beside GOOD on one rack, leaves no card hand (first candidate without a card)."""
    if card_path is None or not card_path.is_file():
        return WRONG_CANDIDATES[0]
    from companion.rules.card import load_card
    from companion.rules.matcher import rack_viability

    card = load_card(card_path)
    if rack_viability(card, [list(GOOD)]).dead:
        raise SystemExit(f"{GOOD} alone is already dead on {card_path}; change GOOD")
    for cand in WRONG_CANDIDATES:
        if rack_viability(card, [list(GOOD), list(cand)]).dead:
            return cand
    raise SystemExit(f"no wrong-rack candidate is dead on {card_path}")


def story(wrong: tuple[str, ...]) -> list[Scene]:
    """Table states with consistent tile counts: 27 per player off-turn, 28 on-turn (East starts
    with 28); exposures start from a claimed discard; racks B hold 13 concealed tiles."""

    def scene(p1a: tuple[tuple[str, ...], ...], p2a: tuple[tuple[str, ...], ...],
              totals: tuple[int, int], disc: tuple[str, ...]) -> Scene:
        def rack_a(exps: tuple[tuple[str, ...], ...], total: int) -> RackScene:
            return RackScene(exps, total - 13 - sum(map(len, exps)))

        return Scene({"P1-A": rack_a(p1a, totals[0]), "P1-B": RackScene((), 13),
                      "P2-A": rack_a(p2a, totals[1]), "P2-B": RackScene((), 13)}, disc)

    pung = ("N", "N", "N") if wrong[0] != "N" else ("E", "E", "E")
    both = (GOOD, wrong)
    return [
        scene((), (), (28, 27), ()),
        scene((), (), (27, 27), ("3C",)),  # player 1 (East) discards the 28th tile
        scene((), (), (27, 28), ("3C",)),  # player 2 draws
        scene((), (), (27, 27), ("3C", "W")),  # ... and discards
        scene((), (), (28, 27), ("3C", "W")),  # player 1 draws
        scene((), (), (27, 27), ("3C", "W", pung[0])),  # ... and discards
        scene((), (pung,), (27, 28), ("3C", "W")),  # player 2 claims it and exposes a pung
        scene((), (pung,), (27, 27), ("3C", "W", GOOD[0])),
        scene((GOOD,), (pung,), (28, 27), ("3C", "W")),  # player 1 claims: a kong with a joker
        scene((GOOD,), (pung,), (27, 27), ("3C", "W", "2B")),
        scene((GOOD,), (pung,), (27, 27), ("3C", "W", "2B", wrong[0])),  # player 2 draws, discards
        scene(both, (pung,), (28, 27), ("3C", "W", "2B")),  # claimed onto the wrong rack
        scene(both, (pung,), (27, 27), ("3C", "W", "2B", "9C")),
    ]


CHECK_CONFIDENCE = 0.85
"""A photo crop becomes a demo face only when the photo classifier reads it as its label at least
this surely (:func:`checked_crops`)."""


def checked_crops(per_code: int = 2, pool: int = 12) -> dict[str, list[np.ndarray]]:
    """``per_code`` photo crops of each code (:func:`vision.faces.real_crops`, the valid split),
    of the first ``pool``, that show their tile face on (:func:`scripts.table_crops.face_on`: a
    crop of a tile lying at 45 degrees shows the cloth in its corners) and are read as their label.

    The photo set has mislabelled tiles: until the twenty-third session the demo's "5 Dots" were
    the first 5D crop, a 4 Dots tile (the classifier reads it as 4D at 0.92), so the models read
    the demo's 5D kong as 4 Dots, rightly, and the wrong-rack exposure beside it did not make
    the hand dead."""
    from scripts.table_crops import face_on
    from vision.classify import CROP_H, CROP_W, TileClassifier, photo_classifier

    clf = TileClassifier(photo_classifier(ROOT / "models"))
    out: dict[str, list[np.ndarray]] = {}
    for code, crops in real_crops(per_code=pool).items():
        small = np.asarray(np.stack([cv2.resize(c, (CROP_W, CROP_H), interpolation=cv2.INTER_AREA) for c in crops]), np.uint8)
        read = clf.run(small)
        keep = []
        for crop, got, conf in zip(crops, read.codes, read.confidence, strict=True):
            if got == code and conf >= CHECK_CONFIDENCE and face_on(crop):
                keep.append(crop)
        if keep:
            out[code] = keep[:per_code]
    return out


SIZE = (1920, 1080)
"""The frames' size: what ``serve`` asks a camera for (at 1280x720 the far rack's tiles are 8-10 px
across and some read weakly; twenty-third session)."""
FACE_SEED = 31
"""The seed of the demo set's drawn American faces (jokers, flowers, backs, soaps, index numbers)."""


def demo_faces(per_code: int = 2, seed: int = FACE_SEED) -> dict[str, list[np.ndarray]]:
    """An American set as the demo shows it: real photographed tiles (:func:`checked_crops`) with
    index numbers drawn on, the set's jokers, flowers and soaps drawn (``vision.american``), one
    back for every face-down tile (a set's backs are all alike), and the renderer's plain drawn
    faces for any code left (seasons)."""
    from vision import american

    photos = checked_crops(per_code=per_code)  # synth_faces indexes the numbers and winds, keeps the dragons
    faces = {**drawn_faces(), **photos, **american.synth_faces(seed=seed, per_code=per_code, bases=photos)}
    faces["BK"] = faces["BK"][:1]
    return faces


def reading(rendered: object, scene: Scene, layout: object) -> dict[str, object]:
    zones: dict[str, object] = {}
    for z in layout.zones:  # type: ignore[attr-defined]
        if z.kind == "rack":
            rack = scene.racks.get(z.name, RackScene())
            tiles = [t for e in rack.exposures for t in e]
            zones[z.name] = {"kind": "rack", "player": z.player, "hand": z.hand, "tiles": tiles,
                             "exposures": [list(e) for e in rack.exposures], "face_down": rack.face_down}
        elif z.kind == "discards":
            zones[z.name] = {"kind": "discards", "player": None, "tiles": list(scene.discards),
                             "exposures": [], "face_down": 0}
    return {"homography": "fresh", "zones": zones, "flags": [], "mahjong": {}}


def hand_over(image: np.ndarray, step: int) -> np.ndarray:
    """A skin-coloured arm and hand reaching in from the bottom edge."""
    out = image.copy()
    h, w = out.shape[:2]
    x = int(w * (0.3 + 0.1 * (step % 4)))
    colour = (120, 160, 215)
    cv2.line(out, (x - 80, h + 40), (x, int(h * 0.55)), colour, 90)
    cv2.ellipse(out, (x, int(h * 0.5)), (70, 90), 20, 0, 360, colour, -1)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "calibration" / "demo"))
    ap.add_argument("--card", default=str(ROOT / "calibration" / "cards" / "example.mjcard"))
    ap.add_argument("--hold", type=int, default=6, help="still frames per table state")
    ap.add_argument("--quality", type=int, default=72)
    ap.add_argument("--size", default=f"{SIZE[0]}x{SIZE[1]}", help="frame size WxH")
    args = ap.parse_args()
    out = Path(args.out)
    frames_dir = out / "frames"
    shutil.rmtree(frames_dir, ignore_errors=True)
    frames_dir.mkdir(parents=True)
    layout = load_layout(ROOT / "calibration" / "layouts" / "siamese-2.json")
    faces = demo_faces()
    view = View(side="bottom", tilt_deg=40.0, size=tuple(int(v) for v in args.size.lower().split("x")))  # type: ignore[arg-type]
    wrong = pick_wrong(Path(args.card))
    readings: dict[str, object] = {}
    playlist: list[str] = []
    n = 0
    scenes = story(wrong)
    for k, scene in enumerate(scenes):
        img = render_table(layout, scene, seed=11, view=view, faces=faces).image  # area-sampled, as a camera sees
        if k:
            name = f"f{n:03d}.jpg"
            cv2.imwrite(str(frames_dir / name), hand_over(img, k), [cv2.IMWRITE_JPEG_QUALITY, args.quality])
            playlist += [name]
            n += 1
        name = f"f{n:03d}.jpg"
        cv2.imwrite(str(frames_dir / name), img, [cv2.IMWRITE_JPEG_QUALITY, args.quality])
        readings[name] = reading(None, scene, layout)
        playlist += [name] * (args.hold if k < len(scenes) - 1 else args.hold * 6)
        n += 1
    (frames_dir / "playlist.txt").write_text("\n".join(playlist) + "\n")
    (out / "readings.json").write_text(json.dumps({"wrong_rack": list(wrong), "frames": readings}, indent=1))
    size = sum(p.stat().st_size for p in frames_dir.iterdir())
    print(f"{n} files, {len(playlist)} frames, {size / 1e6:.2f} MB in {frames_dir}; "
          f"wrong-rack exposure {' '.join(wrong)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
