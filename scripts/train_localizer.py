"""Train the tile localiser (a CenterNet-style heatmap net) and export it to ``models/localizer.onnx``.

    python scripts/train_localizer.py --out runs/loc --epochs 12 --seed 1          # train (resumes)
    python scripts/train_localizer.py --out runs/loc --export-only                  # export last.pt

Data: tiles-photos-v4/train (real photos; axis-aligned boxes, polygon rows give orientation) plus,
with ``--synth F``, a fraction F of synthetic scenes from ``scripts/synth_scenes.py`` (exact quads,
any rotation).  Every epoch writes ``OUT/last.pt`` (model, optimiser, epoch, RNG state); rerunning
the same command resumes from it.  ``torch.set_num_threads(1)`` keeps the shared machine usable.
``--device cuda`` (``auto``, the default, takes a GPU when torch sees one) trains on a GPU: the
samples are still drawn on the CPU, in this process and in the same order as on the CPU, or in
``--workers N`` processes (:class:`Batches`) to keep the GPU busy.
"""

# This module is the command line, the losses and the training loop (the docstring above is
# --help's description); the rest lives in scripts/localizer_net.py (LocNet),
# localizer_augment.py (SIZE, augmentation), localizer_targets.py (labels and targets),
# localizer_data.py (Source, TablePool, Batches) and localizer_export.py (ExportNet,
# export_onnx, evaluate).

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import torch
import torch.nn.functional as F

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scripts.devices import DEVICE_HELP, train_device  # noqa: E402
from scripts.localizer_data import Batches, Source  # noqa: E402
from scripts.localizer_export import evaluate, export_onnx  # noqa: E402
from scripts.localizer_net import LocNet, grown_checkpoint, grown_file  # noqa: E402
from scripts.localizer_targets import BACK_COLOURS, backs_colours  # noqa: E402
from scripts.photos import PhotoSample, load_split  # noqa: E402


# ----------------------------------------------------------------------------- loss
def focal_loss(logit: torch.Tensor, heat: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    p = torch.sigmoid(logit).clamp(1e-4, 1 - 1e-4)
    pos = heat.eq(1).float()
    neg = (1 - pos) * weight[:, None]
    pos_l = torch.log(p) * (1 - p) ** 2 * pos
    neg_l = torch.log(1 - p) * p**2 * (1 - heat) ** 4 * neg
    n = pos.sum().clamp(min=1)
    return -(pos_l.sum() + neg_l.sum()) / n


def reg_loss(pred: torch.Tensor, target: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Smooth L1 on offsets (mask[:, 0]) and on sizes/angle (mask[:, 1])."""
    m = torch.cat([mask[:, :1].expand(-1, 2, -1, -1), mask[:, 1:].expand(-1, 4, -1, -1)], dim=1)
    return (F.smooth_l1_loss(pred * m, target * m, reduction="sum", beta=0.1)) / mask[
        :, 0
    ].sum().clamp(min=1)


# ----------------------------------------------------------------------------- main
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", type=Path, default=REPO / "runs" / "loc")
    ap.add_argument("--epochs", type=int, default=12, help="length of the learning-rate schedule")
    ap.add_argument("--stop-epoch", type=int, help="stop (and export) after this epoch")
    ap.add_argument("--steps", type=int, default=150, help="batches per epoch")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--synth", type=float, default=0.0, help="fraction of synthetic scenes")
    ap.add_argument("--table", type=float, default=0.0,
                    help="fraction of windows cut from rendered whole-table frames (TablePool)")
    ap.add_argument("--table-frames", type=int, default=60, help="rendered table frames in the pool")
    ap.add_argument("--top-down", type=float, default=0.0,
                    help="share of table windows seen from straight above, as the table reader localises")
    ap.add_argument("--area", type=float, default=0.0,
                    help="share of the table frames area-sampled (render_table's default; 0: one sample per "
                         "pixel, as the committed table localiser trained)")
    ap.add_argument("--dense", type=float, default=0.0,
                    help="share of the table frames with the discards laid in rows, side by side")
    ap.add_argument("--american", type=float, default=0.0,
                    help="share of the synthetic scenes drawn with an American set's faces (american_scene_faces)")
    ap.add_argument("--backs", type=float, default=0.0,
                    help="in the American scenes, the share of tiles drawn as plain backs (BK; default: as any code)")
    ap.add_argument("--backs-ignored", default="", metavar="COLOURS",
                    help="no heat loss on the photos' unlabelled face-down tiles of these back colours, comma-separated "
                         f"({', '.join(BACK_COLOURS)}; unlabelled_backs): the photos then no longer teach that a plain "
                         "back is no tile")
    ap.add_argument("--tiles-ignored", action="store_true",
                    help="no heat loss on the face-up tiles the photo pipeline reads surely where the photos' labels "
                         "leave them out (scripts.localised_crops.unlabelled_photo_tiles: the discards heaped beside a labelled "
                         "rack): the photos then no longer teach that a pile of tiles is table")
    ap.add_argument("--tiles-labelled", action="store_true",
                    help="the same tiles as --tiles-ignored taken as labelled tiles instead (one quad a tile, "
                         "as the photo pipeline reads it)")
    ap.add_argument("--in-view", action="store_true",
                    help="synthetic scenes whose perspective only widens the table (no mirrored border) and whose "
                         "truth holds only tiles mostly in the picture (SceneMaker(in_view=True)); the committed "
                         "models trained without it")
    ap.add_argument("--band", type=float, default=0.2, help="fraction of band-stretched photos")
    ap.add_argument("--light", type=float, default=0.0,
                    help="share of the training windows taken as a poor picture takes them: over-exposed, washed "
                         "out, lit from one side or blurred (scripts.crops.bad_light)")
    ap.add_argument("--eval-photos", type=int, default=60)
    ap.add_argument("--export", type=Path, default=REPO / "models" / "localizer.onnx")
    ap.add_argument("--export-only", action="store_true")
    ap.add_argument("--init", type=Path, help="start from these weights (fine-tune), not a resume: a run's last.pt or an "
                         "exported .onnx such as models/localizer-table.onnx")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="auto", help=DEVICE_HELP)
    ap.add_argument("--workers", type=int, default=0,
                    help="processes that draw the samples (0: this one, the stream every earlier run drew; N: each "
                         "batch from its own seeded stream, the same for any N), so that a GPU is kept busy")
    ap.add_argument("--grow", type=int, nargs="?", const=1, default=0, metavar="N",
                    help="add the GROWN residual blocks (N=1, the default), GROWN_TWICE's too (N=2); each is the "
                         "identity at first, so --init from a file grown less starts exactly where that file is")
    ap.add_argument(
        "--recipe",
        action="store_true",
        help="the committed model's three stages, into OUT/stage1..3",
    )
    return ap.parse_args(argv)


def recipe(args: argparse.Namespace) -> None:
    """Stage 1: photos only (7 of a 12-epoch schedule); stage 2: + band stretches and 25%
    synthetic scenes (11 epochs); stage 3: the same at lr 1e-3 (4 epochs).  Each stage starts
    from the previous one and resumes from its own checkpoint.  (A fourth stage at lr 5e-4 was
    tried and measured no better: boxes-only F1 0.912 against 0.913.)"""
    from scripts.train_plan import recipe_stages  # the stages' one definition (torch-free)

    for argv in recipe_stages(args.out, args.export, args.seed):
        train(parse_args(argv))


def main() -> None:
    args = parse_args()
    if args.recipe:
        recipe(args)
    else:
        train(args)


def _calibration_batch(seed: int, n: int = 64) -> torch.Tensor:
    """Augmented windows of ``n`` train photos, for the BatchNorms of a model started from ONNX."""
    source = Source(load_split("train")[:n], 0.0, seed, band=0.0)
    rng = np.random.default_rng(seed + 99)
    return torch.cat([source.batch(16, rng)[0] for _ in range(n // 16)])


def train(args: argparse.Namespace) -> None:
    device = train_device(args.device)
    if args.workers > 0:  # a forked worker hangs in OpenCV if the process it was forked from had
        cv2.setNumThreads(1)  # OpenCV threads running (an --init's calibration batch starts them)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    random.seed(args.seed)
    rng = np.random.default_rng(args.seed)
    net = LocNet(grow=args.grow)
    args.out.mkdir(parents=True, exist_ok=True)
    ckpt = args.out / "last.pt"
    state = torch.load(ckpt, weights_only=False, map_location="cpu") if ckpt.is_file() else None
    if state is None and args.init is not None:
        _initialise(net, args)
    net.to(device)  # the optimiser's state follows its parameters there when a checkpoint is loaded
    opt = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=1e-4)
    total = args.epochs * args.steps
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=args.lr, total_steps=total, pct_start=0.1
    )
    start = 0
    if state is not None:
        net.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        sched.load_state_dict(state["sched"])
        rng.bit_generator.state = state["rng"]
        torch.set_rng_state(state["torch_rng"])
        start = state["epoch"]
        print(f"resumed from {ckpt} at epoch {start}")
    if args.export_only:
        export_onnx(net, args.export)
        return
    print(f"params: {sum(p.numel() for p in net.parameters())}; device {device}", flush=True)
    tiles_ignored, tiles_labelled = _unlabelled_tiles(args)
    source = Source(load_split("train"), args.synth, args.seed, args.band, args.table, args.table_frames,
                    args.top_down, args.american, args.backs, args.in_view, args.area, args.dense, args.light,
                    backs_colours(args.backs_ignored), tiles_ignored, tiles_labelled)
    val = load_split("valid")[: args.eval_photos]
    drawer = Batches(source, args)
    try:
        _epochs(net, opt, sched, drawer, val, rng, args, start, ckpt)
    finally:
        drawer.close()
    export_onnx(net, args.export)


def _initialise(net: LocNet, args: argparse.Namespace) -> None:
    """``net`` started from ``--init`` (an ONNX file or a run's checkpoint); a file grown by fewer
    blocks than ``--grow`` is loaded as it is, then grown (the new blocks start at zero)."""
    from scripts.onnx_weights import init_weights

    was = grown_file(args.init) if args.init.suffix == ".onnx" else grown_checkpoint(args.init)
    if was > args.grow:
        raise SystemExit(f"{args.init} holds the blocks of --grow {was}: pass --grow {was} (or more) to train from it")
    if 0 <= was < args.grow:
        base = LocNet(grow=was)
        init_weights(base, args.init, lambda: _calibration_batch(args.seed))
        missing = list(net.load_state_dict(base.state_dict(), strict=False).missing_keys)
    else:
        missing = init_weights(net, args.init, lambda: _calibration_batch(args.seed), strict=False)
    print(f"new layers: {missing}")
    print(f"initialised from {args.init}")


def _unlabelled_tiles(args: argparse.Namespace) -> tuple[Any, Any]:
    """``(ignored, labelled)``: the tiles the train photos' labels leave out, for
    ``--tiles-ignored`` or ``--tiles-labelled`` (None for the other, and both without either)."""
    if args.tiles_ignored and args.tiles_labelled:
        raise SystemExit("--tiles-ignored and --tiles-labelled are two ways with the same tiles: give one")
    if not (args.tiles_ignored or args.tiles_labelled):
        return None, None
    from scripts.localised_crops import unlabelled_photo_tiles

    found = unlabelled_photo_tiles("train")
    print(f"tiles the labels leave out, {'ignored' if args.tiles_ignored else 'labelled'}: "
          f"{sum(map(len, found.values()))} readings on {len(found)} photos", flush=True)
    return (found, None) if args.tiles_ignored else (None, found)


def _epochs(net: LocNet, opt: Any, sched: Any, drawer: Batches, val: list[PhotoSample], rng: np.random.Generator,
            args: argparse.Namespace, start: int, ckpt: Path) -> None:
    """Train from epoch ``start`` on, a checkpoint and a log line after each epoch."""
    device = next(net.parameters()).device
    net.train()
    for epoch in range(start, args.stop_epoch or args.epochs):
        t0 = time.time()
        sums = np.zeros(3)
        for step, drawn in enumerate(drawer.epoch(epoch, rng)):
            x, heat, reg, mask, weight = (t.to(device, non_blocking=True) for t in drawn)
            logit, pred = net(x)
            lh = focal_loss(logit, heat, weight)
            lr_ = reg_loss(pred, reg, mask)
            loss = lh + lr_
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            sums += [loss.item(), lh.item(), lr_.item()]
            if step % 25 == 0:
                print(
                    f"epoch {epoch} step {step} loss {loss.item():.3f} heat {lh.item():.3f} reg {lr_.item():.3f} "
                    f"{(step + 1) * args.batch / (time.time() - t0):.1f} img/s",
                    flush=True,
                )
        metrics = evaluate(net, val)
        torch.save(
            {
                "model": net.state_dict(),
                "opt": opt.state_dict(),
                "sched": sched.state_dict(),
                "rng": rng.bit_generator.state,
                "torch_rng": torch.get_rng_state(),
                "epoch": epoch + 1,
            },
            ckpt,
        )
        line = {
            "epoch": epoch + 1,
            "loss": sums[0] / args.steps,
            "heat": sums[1] / args.steps,
            "reg": sums[2] / args.steps,
            "secs": round(time.time() - t0),
            **metrics,
        }
        print(json.dumps(line), flush=True)
        with open(args.out / "log.jsonl", "a") as fh:
            fh.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
