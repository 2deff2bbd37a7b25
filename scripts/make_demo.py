"""Make the bundled demo under ``calibration/demo/``: a rendered Siamese table, frame by frame.

The story: racks dealt face down; draws and discards; player 2 claims a discard and exposes a
pung; player 1 claims one for a kong with a joker, then claims another onto the same rack as an
exposure that no card hand can use beside the kong (a wrong-rack exposure).
Between table states a "hand" crosses the view for one frame, so the motion gate has work.
Writes ``frames/fNNN.jpg`` (1280x720) and ``readings.json`` (the true reading of every still
frame, replayed by the live loop when the recognition models are missing).

    python scripts/make_demo.py [--out calibration/demo] [--card calibration/cards/example.mjcard]
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

from vision.layout import load_layout  # noqa: E402
from vision.render import RackScene, Scene, View, drawn_faces, real_crops, render_table  # noqa: E402

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
    args = ap.parse_args()
    out = Path(args.out)
    frames_dir = out / "frames"
    shutil.rmtree(frames_dir, ignore_errors=True)
    frames_dir.mkdir(parents=True)
    layout = load_layout(ROOT / "calibration" / "layouts" / "siamese-2.json")
    faces = {**drawn_faces(), **real_crops(per_code=2)}
    view = View(side="bottom", tilt_deg=40.0, size=(1280, 720))
    wrong = pick_wrong(Path(args.card))
    readings: dict[str, object] = {}
    playlist: list[str] = []
    n = 0
    scenes = story(wrong)
    for k, scene in enumerate(scenes):
        img = render_table(layout, scene, seed=11, view=view, faces=faces, supersample=1).image  # as the bundled demo was drawn
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
