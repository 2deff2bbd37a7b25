"""Train the tile crop classifier (torch, CPU) and export it to ``models/classifier.onnx``.

One command, seeded and resumable (a checkpoint every epoch under ``runs/classifier/``)::

    nice -n 5 python -m scripts.train_classifier --epochs 10 --seed 7 [--resume]
    python -m scripts.train_classifier --export-only      # re-export the last checkpoint

Data: every labelled tile of tiles-photos-v4/train (jittered each epoch) and a pool of synthetic
artwork crops (all styles but the held-out one; jokers, flowers and backs drawn fresh), see
:mod:`scripts.crops`.  Model: a ~115k-parameter CNN on 64 x 48 BGR crops, a 64-d embedding and a
cosine classifier over the 45 codes; the exported graph averages the crop and its half turn.
``--device cuda`` (``auto``, the default, takes a GPU when torch sees one) trains on a GPU; the
crops are still cut and jittered on the CPU, in the same order.
"""

# This module is the command line, the evaluation and the training loop (the docstring's first
# line is --help's description); the rest lives in scripts/classifier_net.py (TileNet, CLASSES),
# classifier_data.py (the crop pools, recolour, tiny) and classifier_export.py (Exported,
# export, load_into).

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # `python scripts/train_classifier.py` as well as `python -m scripts.train_classifier`

from scripts import crops as C  # noqa: E402
from scripts.classifier_data import Check, photo_data, recolour, synthetic_data, table_data, tiny  # noqa: E402
from scripts.classifier_export import Exported, export, extra_blocks, init_from  # noqa: E402
from scripts.classifier_net import TileNet, to_tensor  # noqa: E402
from scripts.devices import DEVICE_HELP, train_device  # noqa: E402


@torch.no_grad()
def evaluate(net: nn.Module, x: np.ndarray, y: np.ndarray, symmetric: bool = True, limit: int = 0) -> float:
    """The share of ``x`` read as ``y``; with ``limit``, of at most that many crops spread evenly
    over the pool (``--max-eval``, for smoke runs)."""
    if limit and len(x) > limit:
        keep = np.linspace(0, len(x) - 1, limit).round().astype(int)
        x, y = x[keep], y[keep]
    net.eval()
    model = Exported(net) if symmetric else None  # type: ignore[arg-type]
    device = next(net.parameters()).device
    correct = 0
    for i in range(0, len(x), 512):
        xb = to_tensor(x[i : i + 512]).to(device)
        logits = model(xb)[0] if model is not None else net(xb)
        correct += int((logits.argmax(1).cpu().numpy() == y[i : i + 512]).sum())
    return correct / max(1, len(x))


def _checkpoint(path: Path, **state: Any) -> None:
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    tmp.replace(path)


def train(args: argparse.Namespace) -> None:
    device = train_device(args.device)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    run_dir = REPO / args.run_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    ckpt = run_dir / "last.pt"
    t0 = time.time()
    px, py, vx, vy = photo_data(args)
    sx, sy, checks = synthetic_data(args)
    tx, ty, table_check = table_data(args)
    sx, sy = np.concatenate([sx, tx]), np.concatenate([sy, ty])
    args.n_table = len(tx)  # the table crops are the last of the synthetic pool (--tiny)
    print(
        f"data: {len(px)} photo tiles, {len(sx)} synthetic crops ({len(tx)} from table frames), "
        f"{len(vx)} valid ({time.time() - t0:.0f}s)",
        flush=True,
    )
    net = TileNet(extra=args.extra_blocks)
    print(f"params: {sum(p.numel() for p in net.parameters())}; device {device}", flush=True)
    if args.max_eval:
        print(f"--max-eval: each validation pool read on at most {args.max_eval} of its crops", flush=True)
    opt = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=5e-4)
    steps = args.epochs * ((len(px) + len(sx)) // args.batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=args.lr, total_steps=steps, pct_start=0.1
    )
    if args.init:
        init_from(net, args.init, px)  # on the CPU: an ONNX file's BatchNorms are measured there
        print(f"initialised from {args.init}", flush=True)
    net.to(device)  # its parameters in place: the optimiser holds the same ones, and a loaded state follows them
    start = _resumed(ckpt, net, opt, sched) if args.resume else 0
    acc = float("nan")
    for epoch in range(start, args.epochs):
        run_epoch(net, opt, sched, px, py, sx, sy, args, epoch)
        acc = evaluate(net, vx, vy, limit=args.max_eval)
        others = "".join(_check_line(net, check, args.max_eval) for check in [table_check, *checks] if check is not None)
        _checkpoint(ckpt, model=net.state_dict(), opt=opt.state_dict(), sched=sched.state_dict(), epoch=epoch)
        print(f"epoch {epoch}: valid photo crop accuracy {acc:.4f}{others} ({time.time() - t0:.0f}s)", flush=True)
    path = export(
        net,
        REPO / args.out,
        {"seed": args.seed, "epochs": args.epochs, "valid_photo_crop_accuracy": acc,
         "extra_blocks": args.extra_blocks},
    )
    print(f"exported {path}", flush=True)


def _check_line(net: TileNet, check: Check, limit: int = 0) -> str:
    """``, NAME ACCURACY`` for one validation pool (and its cut crops alone)."""
    name, x, y, cut = check
    line = f", {name} {evaluate(net, x, y, limit=limit):.4f}"
    if cut is not None:
        line += f" (cut by the edge {evaluate(net, x[cut], y[cut], limit=limit):.4f})"
    return line


def _resumed(ckpt: Path, net: TileNet, opt: Any, sched: Any) -> int:
    """The epoch to start from: after the checkpoint's, loaded into ``net``, ``opt`` and ``sched``,
    where there is one; else 0."""
    if not ckpt.is_file():
        return 0
    st = torch.load(ckpt, weights_only=False, map_location="cpu")
    net.load_state_dict(st["model"])
    opt.load_state_dict(st["opt"])
    sched.load_state_dict(st["sched"])
    print(f"resumed after epoch {st['epoch']}", flush=True)
    return int(st["epoch"]) + 1


def run_epoch(
    net: TileNet,
    opt: Any,
    sched: Any,
    px: np.ndarray,
    py: np.ndarray,
    sx: np.ndarray,
    sy: np.ndarray,
    args: argparse.Namespace,
    epoch: int,
) -> None:
    net.train()
    rng = np.random.default_rng(args.seed * 7919 + epoch)
    items = np.concatenate([np.arange(len(px)), -1 - np.arange(len(sx))])
    rng.shuffle(items)
    n_batches = len(items) // args.batch
    if args.max_batches:
        n_batches = min(n_batches, args.max_batches)
    t0, loss_sum = time.time(), 0.0
    for b in range(n_batches):
        idx = items[b * args.batch : (b + 1) * args.batch]
        crops, labels = [], []
        for i in idx:
            if i >= 0:
                crops.append(C.photo_crop(px[i], rng))
                labels.append(py[i])
            else:
                s = sx[-1 - i]
                if args.recolour and rng.random() < args.recolour:
                    s = recolour(s, rng)
                if args.tiny and -1 - i >= len(sx) - args.n_table and rng.random() < args.tiny:
                    s = tiny(s, rng)
                crops.append(np.ascontiguousarray(s[::-1, ::-1]) if rng.random() < 0.5 else s)
                labels.append(sy[-1 - i])
            if args.light and rng.random() < args.light:
                crops[-1] = C.bad_light(crops[-1], rng)
        device = next(net.parameters()).device
        logits = net(to_tensor(np.stack(crops)).to(device, non_blocking=True))
        loss = F.cross_entropy(logits, torch.as_tensor(np.array(labels)).to(device), label_smoothing=0.1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        loss_sum += loss.item()
        if b % 50 == 0:
            rate = (b + 1) * args.batch / (time.time() - t0)
            print(
                f"  epoch {epoch} batch {b}/{n_batches} loss {loss_sum / (b + 1):.3f} {rate:.0f} crops/s",
                flush=True,
            )


def parser() -> argparse.ArgumentParser:
    """The command line (``scripts/train_all.py`` checks its plan's steps against it)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--device", default="auto", help=DEVICE_HELP)
    p.add_argument("--synth-per-class", type=int, default=600)
    p.add_argument("--boost", default="",
                   help="extra synthetic crops of some classes, e.g. J:1500,F:800 (weak classes)")
    p.add_argument("--synth-seed", type=int, default=0,
                   help="seed of the synthetic pool (default: --seed; reuse a cached pool)")
    p.add_argument("--table-crops", type=int, default=0,
                   help="add crops cut from this many rendered whole-table frames (scripts/table_crops.py); "
                        "a tenth as many frames of another seed are the table validation")
    p.add_argument("--table-snap", type=float, default=0.0,
                   help="share of the table crops cut as the table reader cuts them (the true face outline at a "
                        "slightly wrong centre) instead of with the photo localiser's error")
    p.add_argument("--table-area", type=float, default=0.0,
                   help="share of the --table-crops frames drawn area-sampled, as a camera sees them "
                        "(vision.render.CAMERA_SUPERSAMPLE); 0, the default, samples each pixel once as every "
                        "pool before the twenty-first session did")
    p.add_argument("--extra-table", default="",
                   help="more table pools, SEED:FRAMES[:SNAP[:SOURCE+SOURCE[:AREA]]],... (e.g. a cached pool of an "
                        "earlier run; sources as scripts/table_crops.py names them, e.g. american-mix, empty for the "
                        "default three; AREA as --table-area)")
    p.add_argument("--recolour", type=float, default=0.0, metavar="P",
                   help="share of the synthetic and table crops whose hues are turned at random or made grey "
                        "(recolour()), so that a set printed in other inks reads the same")
    p.add_argument("--light", type=float, default=0.0, metavar="P",
                   help="share of every epoch's crops (photo and pool alike) taken as a poor picture takes them: "
                        "over-exposed, washed out, lit from one side or blurred (scripts.crops.bad_light)")
    p.add_argument("--tiny", type=float, default=0.0, metavar="P",
                   help="share of the table crops shrunk to a far tile's size and blown up again (tiny()), "
                        "as a camera leaning 60-70 degrees sees the far racks at 1280x720")
    p.add_argument("--table-val", default="",
                   help="the table validation pool SEED:FRAMES[:SNAP] (default: with --table-crops N, N/10 frames "
                        "of seed + 1000)")
    p.add_argument("--scene-crops", default="", metavar="N[:SHARE[:SEED]]",
                   help="add the tiles of N synthetic scenes (seed SEED, default --seed) cut at the photo "
                        "localiser's quads, a share SHARE (default 0.5) with American faces "
                        "(scripts.localised_crops.localised_scene_crops, cached); N/10 American scenes of --seed + 1000 are "
                        "printed as validation each epoch")
    p.add_argument("--view-scenes", default="", metavar="N[:SHARE[:SEED]]",
                   help="as --scene-crops, the scenes drawn in view as the vision benchmark draws its own "
                        "(no mirrored border; tiles the picture's edge cuts stay in); N/10 American ones of "
                        "--seed + 2000 are printed as validation each epoch, with their edge-cut tiles apart")
    p.add_argument("--photo-repeat", type=int, default=1,
                   help="each epoch holds the train photos' tiles this many times (more weight on real photos)")
    p.add_argument("--drop-loose", action="store_true",
                   help="leave out the tiles of train photos with loose boxes (the export's 45-degree turns)")
    p.add_argument("--localised-crops", type=int, default=0, metavar="K",
                   help="add K copies of the train photos' tiles cut at the photo localiser's quads, as the "
                        "pipeline cuts them (scripts.localised_crops.localised_photo_crops, cached)")
    p.add_argument("--resume", action="store_true")
    p.add_argument("--init", type=Path, default=None, help="start from these weights: a run's last.pt or an exported classifier.onnx "
                        "(e.g. models/classifier.onnx, the committed model)")
    p.add_argument("--extra-blocks", type=int, default=None,
                   help="residual blocks after the last stage (each ~4 MFLOPs a crop); default: as many as the weights it "
                        "starts from have (--init, or the run's last.pt with --resume / --export-only; else 0); "
                        "blocks that the file lacks start as the identity")
    p.add_argument("--max-batches", type=int, default=0, help="debug: stop each epoch early")
    p.add_argument("--max-eval", type=int, default=0, metavar="N",
                   help="debug: evaluate each validation pool on N of its crops, spread evenly over it (0: all)")
    p.add_argument("--run-dir", default="runs/classifier")
    p.add_argument("--out", default="models", help="where to export the ONNX model")
    p.add_argument("--export-only", action="store_true")
    return p


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    if args.extra_blocks is None:  # as the weights it starts from have
        last = REPO / args.run_dir / "last.pt"
        start = args.init or (last if (args.export_only or args.resume) and last.is_file() else None)
        args.extra_blocks = extra_blocks(start) if start else 0
    if args.export_only:
        st = torch.load(REPO / args.run_dir / "last.pt", weights_only=False, map_location="cpu")
        net = TileNet(extra=args.extra_blocks)
        net.load_state_dict(st["model"])
        export(net, REPO / args.out, {"seed": args.seed, "epochs": st["epoch"] + 1, "extra_blocks": args.extra_blocks})
        return
    train(args)


if __name__ == "__main__":
    main()
