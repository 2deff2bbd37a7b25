"""Vision benchmark: accuracy and speed of tile recognition, ours beside the peer, in one run.

    python scripts/bench_vision.py                       # everything (several minutes on 2 cores)
    python scripts/bench_vision.py --limit 40 --no-peer  # a quick look

Reports, on tiles-photos-v4/valid (296 photos, 42 classes):
- tile-level precision / recall / F1 at IoU >= 0.5 with the correct code (and class-agnostic),
- a per-class table (truth count, recall, precision, F1, most common confusion), the worst five,
- median end-to-end ms per 640x640 photo (decode excluded), each side in its own pass, then photo by
  photo in turn with the peer, then in turn with each side timed once the other's process is quiet
  (the peer's onnxruntime threads spin on after each answer),
- the same F1 on the peer's own 34 classes (flowers and seasons left out),
- valid's photos of a real set that no train photo shows, enrolled from one labelled tile a code
  of 10 of them and read on the rest, plain and enrolled (``--real-enroll`` draws),
- American scenes over the artwork style no model trained on, plain and with the set enrolled from
  one grid photo, and from each of two rendered photos of its layout on a table (``--held-out``
  scenes),
and on synthetic 1280x720 frames with ~60 tiles: median ms per frame and per-tile accuracy; and
on synthetic American scenes (jokers, F, soap, index-numbered tiles, drawn with a face seed the
classifier never saw) per-tile accuracy; and every third valid photo enlarged 2x (1280x1280, the
same close-up at a phone's higher resolution) and under a warm and a cool lamp's tint and in a dim
room (ours, ours keeping the tint, and the peer), and taken poorly: over-exposed, washed out, lit from
one side, blurred (ours and the peer); and the valid photos laid 2x2 to a 640x640 picture, each
shrunk to half, as a phone held further away takes them, and laid 3x3 and 4x4 at their own size
(1920x1920, 2560x2560), a still photo of a wider part of the table (ours and the peer).  The peer is the
riichi detector of the PyPI package ``mahjong-detector`` (YOLO11n, 34 classes, no flowers or
seasons), run in ``/tmp/peer-venv`` (``--peer-python``) through a subprocess that times its own
per-image inference.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

# The benchmark's parts, each in its own module (import their names from there).
from scripts.bench_vision_enrolled import print_held_out, print_real_set  # noqa: E402
from scripts.bench_vision_runs import peer_lines, run_ours  # noqa: E402
from scripts.bench_vision_scenes import american_lines, synth_eval  # noqa: E402
from scripts.bench_vision_tally import mislabelled, print_classes, print_summary  # noqa: E402
from scripts.bench_vision_variants import enlarged_photos, laid_photos, lamp_photos, poor_photos  # noqa: E402
from scripts.photos import load_split  # noqa: E402


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--models", type=Path, default=REPO / "models")
    ap.add_argument("--limit", type=int, help="only the first N valid photos")
    ap.add_argument("--frames", type=int, default=20, help="synthetic 1280x720 frames")
    ap.add_argument("--american", type=int, default=40, help="synthetic American scenes")
    ap.add_argument("--american-seeds", default="21,33,34,35,41,42",
                    help="scene seeds for the American scenes, comma-separated: the first is read in full "
                         "(per class), each one's per-tile accuracy and their mean are printed (one seed's "
                         "scenes move the figure by as much as most changes do)")
    ap.add_argument("--enlarged", type=int, default=3,
                    help="also read every Nth valid photo enlarged 2x (1280x1280), as a phone at a higher "
                         "resolution takes the same close-up (0: skip)")
    ap.add_argument("--lamp", type=int, default=3,
                    help="also read every Nth valid photo under a warm and a cool lamp's tint and in a dim "
                         "room (vision.light.LAMP_TINTS), ours beside the peer (0: skip)")
    ap.add_argument("--poor", type=int, default=3,
                    help="also read every Nth valid photo over-exposed, washed out, lit from one side and blurred "
                         "(vision.light.POOR_PICTURES), ours beside the peer (0: skip)")
    ap.add_argument("--far", type=int, default=2,
                    help="also read the valid photos laid N x N to a 640x640 picture, each shrunk to 1/N, as a "
                         "phone held further away takes them, ours beside the peer (0: skip)")
    ap.add_argument("--still", type=lambda text: [int(k) for k in text.split(",") if int(k)], default=[3, 4],
                    metavar="N[,N...]",
                    help="also read the valid photos laid N x N at their own size (a still photo of a wider "
                         "part of the table, 1920x1920 for 3, 2560x2560 for 4), ours beside the peer, for each N "
                         "(default 3,4; 0: skip)")
    ap.add_argument("--held-out", type=int, default=60,
                    help="also read N American scenes over the style no model trained on, plain and with the set "
                         "enrolled from a grid photo and from two rendered table photos of its layout (0: skip)")
    ap.add_argument("--real-enroll", type=int, default=5,
                    help="also enroll valid's photos of a real set no train photo shows from 10 of them and "
                         "read the rest, plain and enrolled, in N random draws (0: skip)")
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--threads", type=int, default=2, help="onnxruntime threads for ours (default 2)")
    ap.add_argument("--peer-python", default="/tmp/peer-venv/bin/python")
    return ap


def main() -> None:
    args = parser().parse_args()
    photos = load_split("valid", limit=args.limit)
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start")
    n_tiles = sum(len(s.codes) for s in photos)
    print(
        f"tiles-photos-v4/valid: {len(photos)} photos, {n_tiles} tiles, IoU >= 0.5 with the correct code"
    )
    ours, t_ours, checked = run_ours(photos, args.models, args.threads)
    print_summary("ours", ours, t_ours)
    print(f"  face-down tiles returned where no tile is labelled: {ours.backs_unlabelled} (counted false; "
          "the photos label no backs, and some show blue ones)")
    print(f"  face-up tiles returned where no tile is labelled: {ours.faces_unlabelled} (counted false; many photos "
          "label a rack's row and leave the discards heaped beside it out)")
    bad = [s for s in photos if mislabelled(s)]
    if args.no_peer:
        print("peer unavailable: skipped (--no-peer)")
    else:
        peer_lines(photos, args, ours, t_ours, bad)
    if bad:
        print_summary("ours, mislabelled out", checked, t_ours)
        print(f"  beside, not instead (the target is on every photo): {len(bad)} photos whose every tile is "
              f"labelled {'/'.join(sorted({s.codes[0] for s in bad}))} ({sum(len(s.codes) for s in bad)} tiles) left out")
    print("\nper-class (ours):")
    print_classes(ours)
    if args.enlarged:
        enlarged_photos(photos, args)
    if args.real_enroll:
        print_real_set(photos, args)
    if args.far:
        laid_photos(photos, args, args.far, shrink=True)
    for k in args.still:
        laid_photos(photos, args, k, shrink=False)
    if args.lamp:
        lamp_photos(photos[:: args.lamp], args)
    if args.poor:
        poor_photos(photos[:: args.poor], args)
    if args.frames:
        fr, t_fr = synth_eval(args.models, (1280, 720), args.frames, 11, False, args.threads)
        print(
            f"\nsynthetic 1280x720 frames: {args.frames}, {sum(fr.per_truth.values()) / args.frames:.0f} tiles each"
        )
        print_summary("ours 1280x720", fr, t_fr)
    if args.american:
        american_lines(args)
    if args.held_out:
        print_held_out(args)


if __name__ == "__main__":
    main()
