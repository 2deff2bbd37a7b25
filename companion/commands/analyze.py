"""``analyze``: one photo of a table -> tiles per zone, exposures, flags and displayed Mah Jonggs.

Exit codes: 0 read; 2 bad input (image, layout, card, detections file, options); 3 the table
could not be calibrated (markers not found and no ``--corners``); 4 no tile recogniser (models
missing: pass ``--detections`` from ``python -m companion detect --json``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from companion.cli import CommandError
from companion.table_types import MIN_CONFIDENCE

NAME = "analyze"
HELP = "read one table photo: tiles per zone, exposures, rule flags and Mah Jongg displays"
EXIT_NO_CALIBRATION = 3
EXIT_NO_RECOGNIZER = 4
REPO = Path(__file__).resolve().parents[2]
DEFAULT_CARD = REPO / "calibration" / "cards" / "example.mjcard"
VARIANTS = ("grad", "mjm", "royale", "wp", "chinese")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("image", metavar="IMAGE", help="photo or frame of the table (PNG, JPEG)")
    p.add_argument("--layout", default="siamese-2",
                   help="layout JSON file or a shipped layout name (siamese-2, royale-3, royale-4)")
    p.add_argument("--variant", choices=VARIANTS, default="mjm", help="rule variant (default mjm)")
    p.add_argument("--card", metavar="FILE",
                   help="card file for wrong-rack checks and Mah Jongg scoring (default: the shipped "
                        "example card for NMJL variants; 'none' to skip)")
    p.add_argument("--tileset", metavar="NAME", help="an enrolled tile set (python -m companion enroll) for the recogniser")
    p.add_argument("--set", dest="tile_set", metavar="NAME",
                   help="physical tile set for copy counts (american, royale-4, royale-3, chinese, chinese-136); "
                        "default: the variant's")
    p.add_argument("--corners", metavar="X,Y;X,Y;X,Y;X,Y",
                   help="image points of the table corners (0,0) (W,0) (W,H) (0,H) instead of markers")
    p.add_argument("--detections", metavar="FILE",
                   help="use these detections (JSON of 'python -m companion detect --json') instead of the models")
    p.add_argument("--models", metavar="DIR", default=str(REPO / "models"), help="models folder")
    p.add_argument("--min-confidence", type=float, default=MIN_CONFIDENCE,
                   help=f"reads below this are 'uncertain' and never call a hand dead (default {MIN_CONFIDENCE})")
    p.add_argument("--no-count-backs", action="store_true",
                   help="do not check players' tile totals (backs not visible to the camera)")
    p.add_argument("--annotate", metavar="OUT.png", help="write the frame with zones, tiles and flags drawn")
    p.add_argument("--json", action="store_true", help="print JSON")


def parse_corners(text: str) -> list[tuple[float, float]]:
    """``"x,y;x,y;x,y;x,y"`` -> four points; ValueError naming the text otherwise."""
    try:
        pts = [tuple(float(v) for v in part.split(",")) for part in text.replace(" ", "").split(";") if part]
    except ValueError as exc:
        raise ValueError(f"--corners: not numbers: {text!r}") from exc
    if len(pts) != 4 or any(len(p) != 2 for p in pts):
        raise ValueError(f"--corners needs 4 points 'x,y;x,y;x,y;x,y', got {text!r}")
    return [(p[0], p[1]) for p in pts]


def load_detections(path: str) -> Any:
    """Detections from a ``detect --json`` file: ``{"tiles": [{"code", "quad", "confidence"}...]}``."""
    import numpy as np

    from companion.rules.tiles import validate_code
    from vision.types import Detections

    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ValueError(f"detections file not found: {path!r}") from exc
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from exc
    tiles = raw.get("tiles") if isinstance(raw, dict) else raw
    if not isinstance(tiles, list):
        raise ValueError(f"{path}: expected a list of tiles or {{'tiles': [...]}}")
    if not tiles:
        return Detections.empty()
    try:
        quads = np.asarray([t["quad"] for t in tiles], np.float32)
        codes = [validate_code(str(t["code"])) for t in tiles]
        conf = np.asarray([float(t.get("confidence", 1.0)) for t in tiles], np.float32)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{path}: every tile needs 'code' and 'quad' [[x, y] x 4]: {exc}") from exc
    return Detections.from_quads(quads, codes, conf)


def _recognizer(args: argparse.Namespace) -> Any:
    try:
        from vision.pipeline import TileRecognizer

        return TileRecognizer(models_dir=args.models, tileset=args.tileset)
    except (ImportError, OSError, ValueError) as exc:
        raise CommandError(f"tile recognizer unavailable ({exc}); pass --detections FILE from "
                           "'python -m companion detect IMAGE --json'", EXIT_NO_RECOGNIZER) from exc


def _card(args: argparse.Namespace) -> Any:
    if args.card and args.card.lower() == "none":
        return None
    if not args.card and (args.variant in ("wp", "chinese") or not DEFAULT_CARD.is_file()):
        return None
    from companion.rules.card import load_card

    return load_card(args.card or DEFAULT_CARD)


def _print_text(obs: Any, source: str) -> None:
    print(f"homography: {obs.homography} ({source})")
    for name, z in obs.zones.items():
        exps = " ".join("[" + " ".join(e) + "]" for e in z.exposures)
        shown = exps if z.kind == "rack" else " ".join(z.tiles)
        print(f"{name}: {shown or '-'}" + (f"; {z.face_down} face down" if z.face_down else ""))
    for name, mj in obs.mahjong.items():
        if mj:
            extra = ", jokerless" if mj["jokerless"] else ""
            if mj.get("uncertain"):
                extra += f" (tile(s) {', '.join(f'#{i}' for i in mj['uncertain'])} read weakly: check them)"
            print(f"mahjong {name}: {mj['hand']} = {mj['value']}{extra}")
    for f in obs.flags:
        print(f"flag {f.kind} {f.zone or '-'}: {f.message}")


def run(args: argparse.Namespace) -> int:
    import cv2

    from companion.table import TableReader
    from vision.annotate import annotate
    from vision.calibrate import Calibration
    from vision.io import load_image
    from vision.layout import load_layout

    image = load_image(args.image)
    layout = load_layout(args.layout)
    card = _card(args)
    fixed = None
    if args.corners:
        fixed = Calibration.from_corners(parse_corners(args.corners), layout.table_mm,
                                         (image.shape[1], image.shape[0]))
    detections = load_detections(args.detections) if args.detections else None
    reader = TableReader(layout, None, card=card, variant=args.variant, calibration=fixed,
                         tile_set=args.tile_set, min_confidence=args.min_confidence,
                         count_backs=not args.no_count_backs)
    calibration, state = reader.calibrator.update(image)
    if calibration is None:
        raise CommandError(f"{args.image}: no table calibration: ArUco markers 0-3 not all found, or not in corner order 0-1-2-3 "
                           "clockwise from the far left (print them "
                           "with 'python -m companion markers'; or pass --corners)", EXIT_NO_CALIBRATION)
    if calibration.source == "markers-3":
        print("warning: calibrated from 3 markers; positions far from them may be off", file=sys.stderr)
    if detections is None:
        # the live loop's path: recognition on the zones, at the tile size the homography gives
        reader.recognizer = _recognizer(args)
        detections = reader.recognize(image, calibration)
    # the frame lets a second classifier check a dead-hand call (TableReader._check_dead_calls)
    obs = reader.observe(detections, calibration, state, image if reader.recognizer is not None else None)
    if args.annotate:
        out = annotate(image, detections, obs, layout, calibration, args.min_confidence)
        if not cv2.imwrite(args.annotate, out):
            raise CommandError(f"cannot write annotated image {args.annotate!r}")
    if args.json:
        print(json.dumps(obs.to_json()))
    else:
        _print_text(obs, calibration.source)
    return 0
