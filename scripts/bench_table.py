"""Benchmark table understanding on rendered tables: exposures, flags, and time per frame.

    python scripts/bench_table.py [--tables 50] [--recognizer auto|model|oracle] [--layout siamese-2]
                                  [--faces american-synth|STYLE|american:STYLE[+STYLE]] [--enroll] [--misses]
                                  [--lamp warm|cool|dim] [--keep-tint] [--poor over|washed|side|blur]
                                  [--no-vouch]

For each of N seeded tables (``vision.render``: markers, racks, discards, a phone at a table edge
30-70 degrees from vertical) at 1280x720 and 1920x1080 it runs ``TableReader.read`` end to end
(marker detection, recognition, zone assignment, grouping, rules) and compares with the truth:

* exposure accuracy: a true exposure counts when the same group (same tiles) is read on its rack;
  a missed one is put down to its rack's face-up count being off, a misread tile, or grouping;
* discards: the tiles of the discard area read with their codes (as a multiset), of those there;
* backs: the racks whose face-down count is read as it is (what the dashboard shows);
* flags: (kind, zone) pairs against the flags the same rules give on the true tiles - precision,
  recall, and false dead-hand (``wrong_rack``) calls, which must be zero;
* ms per frame, median and 90th percentile, and how often the table was calibrated.

The tables are drawn as a camera sees them, each pixel the mean over its area
(``vision.render.CAMERA_SUPERSAMPLE``); ``--supersample 1`` draws them as the first twenty
sessions measured them, one sample per pixel, so that older figures can be set beside new ones.

Racks are drawn from the card (viable exposures, Mah Jongg displays) and at random (mostly dead
hands).  ``oracle`` feeds the renderer's true tile quads and codes instead of the models: it
measures calibration, zone assignment, grouping and rules, not recognition; ``model`` runs
``vision.pipeline.TileRecognizer`` (``auto`` picks it when ``models/*.onnx`` exist).  With the
models, ``--faces`` draws the tiles in another face style (``american:xm-dorothys``: an American
set over the artwork style no model trained on; ``font-symbola``: the Symbola font's line-art
glyphs, Chinese joker glyph included, which no model trained on either), and ``--enroll`` reads
with that set enrolled from one tile of each, as a player would.  The default faces,
``american-synth``, are the very faces the table classifier trained on: the unseen styles are
the better guess at a player's own set.  ``--lamp warm`` (or ``cool``, ``dim``) tints every frame as a
lamp the camera does not correct for would (``vision.light.LAMP_TINTS``); the reader takes the lamp
out (``vision.light.without_lamp``) unless ``--keep-tint``.  ``--poor over`` (or ``washed``,
``side``, ``blur``) takes every frame as a poor camera does (``vision.light.POOR_PICTURES``).
``--no-vouch`` leaves a rack with a weak tile unjudged even where the second table classifier
reads that tile as the first does surely (the reader before the fifty-eighth session).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from companion.rules.card import load_card  # noqa: E402
from companion.rules.tiles import sort_key  # noqa: E402
from companion.table import MIN_VIEW_PX, TableReader, ZoneReading  # noqa: E402
from companion.table_flags import evaluate  # noqa: E402
from companion.table_readings import VOUCH_CONFIDENCE  # noqa: E402
from scripts.bench_table_scenes import make_scene, truth_zones, with_dense_discards  # noqa: E402
from vision.layout import load_layout  # noqa: E402
from vision.light import LAMP_TINTS, POOR_PICTURES, poorly_taken, tinted  # noqa: E402
from vision.render import (  # noqa: E402
    CAMERA_SUPERSAMPLE,
    random_view,
    render_table,
)

SIZES = ((1280, 720), (1920, 1080))


class Oracle:
    """Stands for the recogniser: the renderer's true detections are passed to ``read``."""

    def __init__(self, misread: float = 0.0, confident: float = 0.1) -> None:
        self.misread = misread  # share of face-up tiles read as another code
        self.confident = confident  # share of those misreads given a confident score


def noisy(det: Any, oracle: Oracle, seed: int) -> Any:
    """True detections with some codes misread: most misreads low-confidence, a few confident."""
    rng = np.random.default_rng(seed + 104729)
    codes = det.codes.copy()
    conf = rng.uniform(0.8, 1.0, len(codes)).astype(np.float32)
    for i in range(len(codes)):
        if codes[i] != "BK" and rng.random() < oracle.misread:
            codes[i] = str(rng.choice([c for c in ("1B", "5C", "9D", "N", "RD", "F") if c != codes[i]]))
            conf[i] = rng.uniform(0.6, 0.8) if rng.random() < oracle.confident else rng.uniform(0.1, 0.55)
    return type(det)(det.boxes, det.quads, codes, conf)


def _why_missed(truth: ZoneReading, read: ZoneReading | None) -> str:
    """Why a true exposure was not read: the rack's face-up count is off (a tile missed or a
    phantom), a tile is misread (same count, other codes), or the tiles are right and grouped
    otherwise."""
    if read is None or len(read.tiles) != len(truth.tiles):
        return "tile count off"
    if Counter(read.tiles) != Counter(truth.tiles):
        return "tile misread"
    return "grouped otherwise"


def _score_mahjong(stats: dict[str, Any], obs: Any, truth_mj: dict[str, Any], table: int = -1) -> None:
    """Count the racks whose truth is a Mah Jongg display (a scored entry) and how many the reading
    scored the same (hand, value, jokerless), and how many it scored otherwise (wrong); a scored entry
    on a rack whose truth has none is a false Mah Jongg, and each is listed for ``--misses``."""
    for name, entry in truth_mj.items():
        got = obs.mahjong.get(name)
        if entry is None:
            if got is not None:
                stats["mj_false"] = stats.get("mj_false", 0) + 1
                stats.setdefault("false_flags", []).append(f"table {table}: false Mah Jongg on {name}: {got}")
            continue
        stats["mj"] = stats.get("mj", 0) + 1
        if got is not None and all(got.get(k) == entry.get(k) for k in ("hand", "value", "jokerless")):
            stats["mj_ok"] = stats.get("mj_ok", 0) + 1
        else:
            stats["mj_wrong"] = stats.get("mj_wrong", 0) + (got is not None)  # scored, as another hand or value
            stats.setdefault("missed_list", []).append(
                f"table {table} {name}: Mah Jongg {entry.get('hand')} ({entry.get('value')}) scored as {got}")


def _score_frame(stats: dict[str, Any], obs: Any, truth: dict[str, ZoneReading], truth_flags: set[tuple[str, str | None]],
                 table: int = -1) -> None:
    """Add one frame's counts to ``stats``; each missed exposure and false flag is also listed
    (``stats["missed_list"]``, ``stats["false_flags"]``) with its ``table`` (the seed), for ``--misses``."""
    for name, z in truth.items():
        if z.kind == "discards":  # a multiset: discards lie anywhere, in no order
            read = obs.zones.get(name)
            got = Counter(read.tiles if read else ())
            stats["discards"] = stats.get("discards", 0) + len(z.tiles)
            stats["discards_read"] = stats.get("discards_read", 0) + sum(got.values())
            stats["discards_ok"] = stats.get("discards_ok", 0) + sum((Counter(z.tiles) & got).values())
        if z.kind != "rack":
            continue
        read = obs.zones.get(name)
        stats["racks"] = stats.get("racks", 0) + 1
        stats["backs_ok"] = stats.get("backs_ok", 0) + ((read.face_down if read else 0) == z.face_down)
        got = Counter(tuple(sorted(e, key=sort_key)) for e in (read.exposures if read else ()))
        small = any(f.kind == "view" and f.zone == name for f in obs.flags)
        for e in z.exposures:
            key = tuple(sorted(e, key=sort_key))
            stats["exposures"] += 1
            stats["exposures_view"] = stats.get("exposures_view", 0) + small
            if got[key] > 0:
                got[key] -= 1
                stats["exposures_ok"] += 1
                stats["exposures_view_ok"] = stats.get("exposures_view_ok", 0) + small
            else:
                why = _why_missed(z, read)
                stats.setdefault("missed_why", Counter())[why] += 1
                seen = " | ".join(" ".join(g) for g in read.exposures) if read else "nothing"
                stats.setdefault("missed_list", []).append(
                    f"table {table} {name}: {' '.join(e)} missed ({why}){' [view flag]' if small else ''}; read {seen}")
    stats.setdefault("unreadable_causes", Counter()).update(
        f.cause or "weak tiles" for f in obs.flags if f.kind == "unreadable" and f.zone in truth)
    pred = {(f.kind, f.zone) for f in obs.flags}
    for f in obs.flags:
        if f.kind not in ("unreadable", "view") and (f.kind, f.zone) not in truth_flags:
            stats.setdefault("false_flags", []).append(f"table {table}: false {f.kind}: {f.message}")
    for kind, zone in sorted(truth_flags - pred, key=str):  # a flag not raised: what the reader said instead
        said = [f"{f.kind} ({f.cause or 'weak tiles'}: {f.message})" if f.kind == "unreadable" else f.kind
                for f in obs.flags if f.zone == zone and f.kind != "view"] or ["no flag"]
        if zone is not None and zone in truth:
            read = obs.zones.get(zone)
            seen = " | ".join(" ".join(g) for g in read.exposures) if read else "nothing"
            what = "dead hand not called" if kind == "wrong_rack" else f"{kind} flag not raised"
            stats.setdefault("uncalled_list", []).append(
                f"table {table} {zone}: {what} ({', '.join(said)}); truth "
                f"{' | '.join(' '.join(g) for g in truth[zone].exposures)}; read {seen}")
        else:
            stats.setdefault("uncalled_list", []).append(
                f"table {table}: {kind} flag not raised{f' on {zone}' if zone else ''} ({', '.join(said)})")
    for kind, zone in pred | truth_flags:
        k = stats["flags"].setdefault(kind, Counter())
        k["tp" if (kind, zone) in pred and (kind, zone) in truth_flags else "fp" if (kind, zone) in pred else "fn"] += 1


def run_size(args: argparse.Namespace, size: tuple[int, int], recognizer: Any, faces: Any) -> dict[str, Any]:
    layout = load_layout(args.layout)
    card = load_card(args.card)
    stats: dict[str, Any] = {"exposures": 0, "exposures_ok": 0, "flags": {}, "ms": [], "ms_tracked": [], "calibrated": 0}
    for seed in range(args.tables):
        reader = TableReader(layout, recognizer, card=card, variant=args.variant, lamp=not args.keep_tint,
                             vouch=None if args.no_vouch else VOUCH_CONFIDENCE)
        scene = make_scene(layout, card, reader.ctx.tileset, seed)
        if args.dense_discards:
            scene = with_dense_discards(scene, reader.ctx.tileset, args.dense_discards, seed)
        r = render_table(layout, scene, seed=seed, view=random_view(seed, size), faces=faces,
                         supersample=args.supersample)
        if args.lamp:
            r = replace(r, image=tinted(r.image, args.lamp))
        if args.poor:
            r = replace(r, image=poorly_taken(r.image, args.poor))
        given = noisy(r.detections(), recognizer, seed) if isinstance(recognizer, Oracle) else None
        t0 = time.perf_counter()
        obs = reader.read(r.image, given)
        stats["ms"].append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        reader.read(r.image, given)  # the next frame of a live table: markers tracked near their last place
        stats["ms_tracked"].append((time.perf_counter() - t0) * 1000)
        stats["calibrated"] += obs.homography != "missing"
        truth = truth_zones(layout, scene)
        flags, truth_mj = evaluate(truth, reader.ctx)
        _score_frame(stats, obs, truth, {(f.kind, f.zone) for f in flags}, seed)
        _score_mahjong(stats, obs, truth_mj, seed)
    return stats


def _report(size: tuple[int, int], s: dict[str, Any], n: int) -> None:
    acc = s["exposures_ok"] / max(1, s["exposures"])
    print(f"\n{size[0]}x{size[1]}: {n} tables, calibrated {s['calibrated']}/{n}")
    why = s.get("missed_why", Counter())
    print(f"  exposure accuracy  {acc:.1%}  ({s['exposures_ok']}/{s['exposures']})"
          + (f"  missed: {', '.join(f'{k} {n}' for k, n in why.most_common())}" if why else ""))
    if s.get("discards"):
        print(f"  discards read right {s['discards_ok'] / s['discards']:.1%}  ({s['discards_ok']} of {s['discards']}"
              f" tiles; {s['discards_read']} read)")
    print(f"  backs counted right on {s.get('backs_ok', 0)} of {s.get('racks', 0)} racks (face down, as the dashboard "
          "shows them)")
    print(f"  Mah Jongg displays scored right {s.get('mj_ok', 0)}/{s.get('mj', 0)} (hand, value, jokerless);"
          f" scored wrong {s.get('mj_wrong', 0)}; false Mah Jongg {s.get('mj_false', 0)}")
    for label, key in (("ms first frame", "ms"), ("ms next frames", "ms_tracked")):
        ms = sorted(s[key])
        print(f"  {label:<19}median {statistics.median(ms):.1f}  p90 {ms[int(0.9 * (len(ms) - 1))]:.1f}  max {ms[-1]:.1f}")
    print(f"  {'flag':<12}{'tp':>5}{'fp':>5}{'fn':>5}{'precision':>11}{'recall':>8}")
    tot: Counter[str] = Counter()
    for kind, c in sorted(s["flags"].items()):
        if kind in ("unreadable", "view"):  # perception flags: the truth has none; reported, not scored
            continue
        tot.update(c)
        p = c["tp"] / max(1, c["tp"] + c["fp"])
        r = c["tp"] / max(1, c["tp"] + c["fn"])
        print(f"  {kind:<12}{c['tp']:>5}{c['fp']:>5}{c['fn']:>5}{p:>11.1%}{r:>8.1%}")
    p = tot["tp"] / max(1, tot["tp"] + tot["fp"])
    r = tot["tp"] / max(1, tot["tp"] + tot["fn"])
    print(f"  {'all':<12}{tot['tp']:>5}{tot['fp']:>5}{tot['fn']:>5}{p:>11.1%}{r:>8.1%}")
    causes = s.get("unreadable_causes", Counter())
    why_unread = ", ".join(f"{'player count off' if c == 'count' else c} {k}" for c, k in causes.most_common())
    print(f"  unreadable flags (racks left unjudged): {s['flags'].get('unreadable', Counter())['fp']}"
          + (f"  ({why_unread})" if why_unread else ""))
    print(f"  false dead-hand (wrong_rack) flags: {s['flags'].get('wrong_rack', Counter())['fp']}")
    nv, nv_ok = s.get("exposures_view", 0), s.get("exposures_view_ok", 0)
    rest, rest_ok = s["exposures"] - nv, s["exposures_ok"] - nv_ok
    print(f"  view flags (zones whose tiles look under {MIN_VIEW_PX:g} px): {s['flags'].get('view', Counter())['fp']};"
          f" exposures there read right {nv_ok}/{nv}, elsewhere {rest_ok}/{rest}"
          + (f" ({rest_ok / rest:.1%})" if rest else ""))


def table_faces(spec: str) -> dict[str, list[Any]]:
    """The faces named by ``--faces`` (see its help)."""
    from vision.artwork import tile_faces

    if spec == "american:photos":  # real photographed tiles, checked, with drawn index numbers
        from scripts.make_demo import demo_faces

        return dict(demo_faces(per_code=4, seed=4242))
    if not spec.startswith("american:"):
        return dict(tile_faces(spec))
    from scripts.synth_scenes import american_scene_faces

    return dict(american_scene_faces(4242, tuple(spec.split(":", 1)[1].split("+"))))


def enrolled(faces: dict[str, list[Any]], models: Path, root: Path) -> str:
    """Enroll ``faces`` (the first of each code) from a synthetic grid photo of the American layout,
    as ``companion enroll`` does; returns the tile set's folder."""
    from vision.classify import TileClassifier, photo_classifier
    from vision.enroll import enroll_image, grid_photo, layout_codes
    from vision.tileset import save_tileset

    lacking = sorted(set(layout_codes("american")) - set(faces))
    if lacking:
        raise SystemExit(f"bench_table: --enroll lays out an American set, and these faces have no {', '.join(lacking)}: "
                         "give --faces american:STYLE (or american-synth)")
    image, _ = grid_photo({c: np.asarray(v[0]) for c, v in faces.items()}, "american", np.random.default_rng(5))
    tileset, crops, _ = enroll_image(image, "american", TileClassifier(photo_classifier(models)), "bench-table")
    return str(save_tileset(tileset, crops, root))


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tables", type=int, default=50)
    ap.add_argument("--recognizer", choices=("auto", "model", "oracle"), default="auto")
    ap.add_argument("--misread", type=float, default=0.0,
                    help="oracle only: share of face-up tiles misread (10%% of them with a confident score)")
    ap.add_argument("--layout", default="siamese-2")
    ap.add_argument("--variant", default="mjm")
    ap.add_argument("--card", default=str(REPO / "calibration" / "cards" / "example.mjcard"))
    ap.add_argument("--sizes", default="1280x720,1920x1080")
    ap.add_argument("--input-long-side", type=int, default=None,
                    help="the localiser's input long side (default: the recogniser's own choice)")
    ap.add_argument("--threads", type=int, default=2,
                    help="onnxruntime threads per model (default 2, the recogniser's default)")
    ap.add_argument("--models", type=Path, default=REPO / "models",
                    help="folder with localizer.onnx and classifier.onnx (default: models/)")
    ap.add_argument("--faces", default="american-synth",
                    help="the tiles' faces with the models: an artwork style of vision.artwork "
                         "(default american-synth), or american:STYLE[+STYLE] for an American set (jokers, "
                         "flowers, soaps, backs, index numbers; vision.american, seed 4242) drawn over "
                         "those styles, e.g. american:xm-dorothys, the style no model trained on; "
                         "font-noto / font-symbola draw the Unicode glyphs of those fonts (Symbola: no model "
                         "trained on it); american:photos draws the set of the bundled demo: real photographed "
                         "tiles of tiles-photos-v4/valid (those the photo classifier reads as labelled) with "
                         "drawn index numbers, jokers, flowers and backs (scripts/make_demo.py demo_faces)")
    ap.add_argument("--supersample", type=int, default=CAMERA_SUPERSAMPLE,
                    help=f"point samples per pixel side when the table is warped into the camera's view (default "
                         f"{CAMERA_SUPERSAMPLE}, each pixel the mean over its area as a camera sums light; 1: one "
                         "sample per pixel, the renderer of the first twenty sessions, whose far tiles alias)")
    ap.add_argument("--dense-discards", type=int, default=0, metavar="N",
                    help="N discards laid in rows, side by side (0-3 mm apart), as a long game leaves them, "
                         "instead of 4-20 scattered apart")
    ap.add_argument("--misses", action="store_true",
                    help="after each size's figures, list every missed exposure (the table's seed, rack, truth, "
                         "what was read there), every dead hand not called and every other flag not raised (what the reader said of that rack instead, "
                         "an unreadable flag with its message) "
                         "and every false flag, with its message")
    ap.add_argument("--enroll", action="store_true",
                    help="with the models: first enroll the faces' set from one example of each tile (a synthetic "
                         "grid photo of the 'american' layout, as `companion enroll` takes it) and read with it")
    ap.add_argument("--lamp", choices=sorted(LAMP_TINTS), default=None,
                    help="tint every frame as a lamp the camera does not correct for would (vision.light.LAMP_TINTS)")
    ap.add_argument("--poor", choices=POOR_PICTURES, default=None,
                    help="take every frame poorly: over-exposed, washed out, lit from one side or blurred "
                         "(vision.light.POOR_PICTURES; the reader stretches a washed-out frame and does not "
                         "judge an over-exposed one it reads weakly)")
    ap.add_argument("--keep-tint", action="store_true",
                    help="the reader leaves a lamp's tint in the frames (by default it takes it out: vision.light)")
    ap.add_argument("--no-vouch", action="store_true",
                    help="a weak tile keeps its rack unjudged even where the second reader reads it alike surely "
                         "(as before the fifty-eighth session; companion.table_readings.vouched)")
    return ap


def main() -> int:
    args = parser().parse_args()
    models = args.models
    use_model = args.recognizer == "model" or (
        args.recognizer == "auto" and (models / "localizer.onnx").is_file() and (models / "classifier.onnx").is_file()
    )
    faces = None
    if use_model:
        from vision.pipeline import TileRecognizer

        faces = table_faces(args.faces)
        tileset = enrolled(faces, models, Path(tempfile.mkdtemp(prefix="bench-table-"))) if args.enroll else None
        recognizer: Any = TileRecognizer(models, input_long_side=args.input_long_side, threads=args.threads,
                                         tileset=tileset)
    else:
        recognizer = Oracle(args.misread)
    print(f"bench_table: layout {args.layout}, variant {args.variant}, card {Path(args.card).name}, "
          + (f"faces {args.faces}{' (enrolled)' if args.enroll else ''}, " if use_model else "")
          + f"{args.supersample}x{args.supersample} samples per pixel, "
          + (f"under a {args.lamp} lamp ({'tint kept' if args.keep_tint else 'tint taken out by the reader'}), "
             if args.lamp else "")
          + f"recognizer {f'model (end to end, {args.threads} onnxruntime thread(s))' if use_model else f'oracle (true detections, {args.misread:.0%} misread; recognition not timed)'}")
    for text in args.sizes.split(","):
        w, h = (int(v) for v in text.lower().split("x"))
        stats = run_size(args, (w, h), recognizer, faces)
        _report((w, h), stats, args.tables)
        if args.misses:
            for line in stats.get("missed_list", []) + stats.get("uncalled_list", []) + stats.get("false_flags", []):
                print(f"    {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
