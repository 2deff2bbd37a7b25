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

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing as mp
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # `python scripts/train_classifier.py` as well as `python -m scripts.train_classifier`

from companion.rules.tiles import ALL_CODES  # noqa: E402
from scripts import crops as C  # noqa: E402
from scripts.devices import DEVICE_HELP, train_device  # noqa: E402
from vision.classify import CROP_H, CROP_W  # noqa: E402

CLASSES: tuple[str, ...] = ALL_CODES
EMB_DIM = 64
SCALE = 16.0


def _block(cin: int, cout: int, stride: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)
    )


class Residual(nn.Module):
    """``relu(x + bn(conv3x3(x)))``; the BatchNorm's scale starts at zero, so a block added to a
    trained net starts as the identity (the net computes what it did) and learns from there."""

    def __init__(self, c: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, 1, 1, bias=False)
        self.bn = nn.BatchNorm2d(c)
        nn.init.zeros_(self.bn.weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(x + self.bn(self.conv(x)))


class TileNet(nn.Module):
    """CNN -> 64-d embedding -> cosine logits (scale 16) over the tile codes.

    ``extra``: residual blocks after the last stage (8 x 6 x 96), each ~4 MFLOPs a crop.
    """

    def __init__(self, n_classes: int = len(CLASSES), emb_dim: int = EMB_DIM, extra: int = 0) -> None:
        super().__init__()
        # two early stride-2 stages keep it at ~9 MFLOPs a crop (x2 for the half-turn average)
        widths = [(3, 24, 2), (24, 32, 2), (32, 48, 1), (48, 64, 2), (64, 96, 1)]
        self.features = nn.Sequential(*[_block(a, b, s) for a, b, s in widths])
        self.extra = nn.Sequential(*[Residual(widths[-1][1]) for _ in range(extra)])
        self.embed = nn.Linear(widths[-1][1], emb_dim)
        self.weight = nn.Parameter(torch.randn(n_classes, emb_dim) * 0.1)

    def embedding(self, x: torch.Tensor) -> torch.Tensor:
        x = (x - 0.5) / 0.25
        return self.embed(self.extra(self.features(x)).mean(dim=(2, 3)))

    def logits(self, emb: torch.Tensor) -> torch.Tensor:
        return SCALE * F.normalize(emb, dim=1) @ F.normalize(self.weight, dim=1).t()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.logits(self.embedding(x))


class Exported(nn.Module):
    """The deployed graph: mean embedding of the crop and its half turn -> (logits, embedding)."""

    def __init__(self, net: TileNet) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        emb = 0.5 * (self.net.embedding(x) + self.net.embedding(torch.flip(x, dims=[2, 3])))
        return self.net.logits(emb), emb


# ---------------------------------------------------------------- data


def _cached(path: Path, make: Callable[[], tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """``(x, y)`` from the npz cache at ``path``, made (and saved) by ``make()`` the first time."""
    if path.is_file():
        with np.load(path) as d:
            return d["x"], d["y"]
    x, y = make()
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, x=x, y=y)
    return x, y


def _synth_crops(labels: np.ndarray, first_seed: int, chunks: int, workers: int) -> tuple[np.ndarray, np.ndarray]:
    """Synthetic crops of the given class indices, drawn in ``chunks`` seeded jobs on a process pool."""
    parts = np.array_split(labels, chunks)
    jobs = [(first_seed + i, [CLASSES[k] for k in ch]) for i, ch in enumerate(parts) if len(ch)]
    with mp.get_context("spawn").Pool(workers) as pool:
        return np.concatenate(pool.map(C.synth_chunk, jobs)), labels


def synth_pool(seed: int, per_class: int, workers: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """``per_class`` synthetic crops of every class, cached on disk by (seed, per_class)."""
    labels = np.repeat(np.arange(len(CLASSES)), per_class)
    return _cached(C.cache_path(f"synth_s{seed}_n{per_class}.npz"),
                   lambda: _synth_crops(labels, seed * 1000, 16, workers))


def boost_pool(seed: int, spec: str, workers: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Extra synthetic crops of some classes (``"J:1500,F:800"``), cached on disk by seed and spec."""
    counts = {}
    for part in spec.split(","):
        code, _, n = part.partition(":")
        if code not in CLASSES or not n.isdigit():
            raise SystemExit(f"--boost: expected CODE:N[,CODE:N...] with codes of the classifier, got {part!r}")
        counts[code] = int(n)
    key = "_".join(f"{c}{n}" for c, n in counts.items())
    labels = np.array([CLASSES.index(c) for c, n in counts.items() for _ in range(n)])
    return _cached(C.cache_path(f"boost_s{seed}_{key}.npz"),
                   lambda: _synth_crops(labels, seed * 1000 + 777, 8, workers))


def table_pool(seed: int, frames: int, workers: int = 2, snap: float = 0.0,
               sources: tuple[str, ...] | None = None, area: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Crops cut from ``frames`` rendered whole-table frames (:mod:`scripts.table_crops`), cached;
    ``sources``: the face sources in turn (default: ``table_crops.SOURCES``); ``area``: the share
    of frames drawn area-sampled, as a camera sees them (0: every pool before the twenty-first
    session)."""
    from scripts.table_crops import SOURCES, table_crops

    sources = sources or SOURCES
    name = f"table_s{seed}_f{frames}" + (f"_snap{snap:g}" if snap else "")
    if sources != SOURCES:
        name += "_" + "+".join(sources)
    if area:
        name += f"_area{area:g}"
    return _cached(C.cache_path(f"{name}.npz"), lambda: table_crops(seed, frames, workers, snap, sources, area))


def _pool_spec(spec: str) -> tuple[np.ndarray, np.ndarray]:
    """The table pool ``SEED:FRAMES[:SNAP[:SOURCE+SOURCE...[:AREA]]]`` (an empty SOURCES field: the default)."""
    seed_s, frames_s, *rest = spec.split(":")
    snap = float(rest[0]) if rest and rest[0] else 0.0
    sources = tuple(rest[1].split("+")) if len(rest) > 1 and rest[1] else None
    area = float(rest[2]) if len(rest) > 2 and rest[2] else 0.0
    return table_pool(int(seed_s), int(frames_s), snap=snap, sources=sources, area=area)


def recolour(crop: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The crop's hues turned by a random angle and its saturation scaled (0.4-1.3x), or (one time
    in six) made grey: tile sets print their suits in any colours (gold bamboo, blue craks), and
    the shapes, not the inks, name a tile."""
    if rng.random() < 1 / 6:
        grey = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
        return np.ascontiguousarray(np.repeat(grey[:, :, None], 3, axis=2))
    hsv = cv2.cvtColor(crop, cv2.COLOR_BGR2HSV_FULL).astype(np.int16)
    hsv[..., 0] = (hsv[..., 0] + int(rng.integers(256))) % 256
    hsv[..., 1] = np.clip(hsv[..., 1] * rng.uniform(0.4, 1.3), 0, 255)
    return np.asarray(cv2.cvtColor(hsv.astype(np.uint8), cv2.COLOR_HSV2BGR_FULL))


TINY_WIDTH = (6.0, 11.0)
"""Widths (px) a crop is shrunk to by :func:`tiny`: the far racks' tiles at 1280x720."""
TINY_SQUASH = (0.45, 1.35)
"""A tiny tile's height over its width: a camera leaning 60-70 degrees from vertical sees a far
tile 12 px wide and 5 px tall (docs/table.md, "Where the 1280x720 misses lie")."""


def tiny(crop: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The crop as a far tile looks once cut from a frame: shrunk by area averaging (as a camera
    sums light) to 6-11 px wide and 0.45-1.35 times that tall, then blown back up to the crop's
    size bilinearly, as ``vision.classify.extract_crops`` warps a tiny quad."""
    h, w = crop.shape[:2]
    tw = rng.uniform(*TINY_WIDTH)
    th = tw * rng.uniform(*TINY_SQUASH) * h / w
    small = cv2.resize(crop, (max(2, round(tw)), max(2, round(th))), interpolation=cv2.INTER_AREA)
    return np.asarray(cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR), np.uint8)


def photo_set(split: str) -> tuple[np.ndarray, np.ndarray]:
    def make() -> tuple[np.ndarray, np.ndarray]:
        patches, codes = C.photo_patches(split)
        return patches, np.array([CLASSES.index(c) for c in codes])

    return _cached(C.cache_path(f"photos_{split}_pad{C.PAD}.npz"), make)


def loose_photo_tiles(split: str) -> np.ndarray:
    """Per tile of :func:`photo_set` (same order: photos by file name, label rows in order), True
    where its photo's boxes are loose: the export's +-45 degree turns, whose axis-aligned boxes
    hold a turned tile and parts of its neighbours (``train_localizer.loose_boxes``; 577 of 1350
    train photos, none in valid).  The classifier never sees such a crop at inference: every
    tile is cut upright from its own quad."""
    from scripts.photos import iter_split
    from scripts.train_localizer import loose_boxes

    root = C.photos_root() / split
    names = [p.name for p in sorted((root / "images").iterdir())]
    flags: dict[str, tuple[bool, int]] = {}
    for sample in iter_split(split):
        flags[sample.image_path.name] = (loose_boxes(sample.boxes), len(sample.boxes))
    out = [np.full(flags[n][1], flags[n][0]) for n in names if n in flags]
    return np.concatenate(out) if out else np.zeros(0, bool)


def to_tensor(crops: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(crops.transpose(0, 3, 1, 2))).float() / 255.0


def centre_crops(patches: np.ndarray) -> np.ndarray:
    rng = np.random.default_rng(0)
    return np.stack([C.jitter_patch(p, rng, amount=0.0) for p in patches])


# ---------------------------------------------------------------- train / eval / export


@torch.no_grad()
def evaluate(net: nn.Module, x: np.ndarray, y: np.ndarray, symmetric: bool = True) -> float:
    net.eval()
    model = Exported(net) if symmetric else None  # type: ignore[arg-type]
    device = next(net.parameters()).device
    correct = 0
    for i in range(0, len(x), 512):
        xb = to_tensor(x[i : i + 512]).to(device)
        logits = model(xb)[0] if model is not None else net(xb)
        correct += int((logits.argmax(1).cpu().numpy() == y[i : i + 512]).sum())
    return correct / max(1, len(x))


def export(net: TileNet, out_dir: Path, meta: dict[str, Any]) -> Path:
    net = net.cpu().eval()  # exported from the CPU, wherever it trained
    out_dir.mkdir(parents=True, exist_ok=True)
    onnx_path = out_dir / "classifier.onnx"
    dummy = torch.zeros(1, 3, CROP_H, CROP_W)
    torch.onnx.export(
        Exported(net),
        (dummy,),
        str(onnx_path),
        input_names=["crops"],
        output_names=["logits", "embedding"],
        dynamic_axes={"crops": {0: "n"}, "logits": {0: "n"}, "embedding": {0: "n"}},
        opset_version=17,
        dynamo=False,
    )
    digest = hashlib.sha256(onnx_path.read_bytes()).hexdigest()
    (out_dir / "classifier.onnx.sha256").write_text(f"{digest}  classifier.onnx\n")
    spec = {
        "classes": list(CLASSES),
        "input": {
            "name": "crops",
            "shape": ["N", 3, CROP_H, CROP_W],
            "dtype": "float32",
            "layout": "NCHW",
            "channels": "BGR",
            "range": "pixel / 255",
        },
        "scale": 1 / 255,
        "outputs": ["logits", "embedding"],
        "embedding_dim": EMB_DIM,
        "cosine_scale": SCALE,
        "sha256": digest,
        **meta,
    }
    (out_dir / "classifier.json").write_text(json.dumps(spec, indent=1) + "\n")
    return onnx_path


def extra_blocks(path: Path) -> int:
    """How many residual blocks the net saved at ``path`` has (``classifier.json`` beside an
    exported model says; a ``last.pt`` holds their weights)."""
    if path.suffix == ".onnx":
        spec = path.with_suffix(".json")
        return int(json.loads(spec.read_text()).get("extra_blocks", 0)) if spec.is_file() else 0
    state = torch.load(path, weights_only=False, map_location="cpu")["model"]
    return len({k.split(".")[1] for k in state if k.startswith("extra.")})


def load_into(net: TileNet, path: Path, calib: Callable[[], torch.Tensor]) -> None:
    """``net`` started from ``path`` (``last.pt`` or an exported ``.onnx``; ``calib()``: a batch to
    measure an ONNX file's BatchNorms on).  A net with more residual blocks than the file starts
    its new blocks as the identity (:class:`Residual`), so it computes what the file computes;
    fewer is an error."""
    from scripts.onnx_weights import init_weights

    have, want = extra_blocks(path), len(net.extra)
    if have > want:
        raise ValueError(f"{path} has {have} extra residual blocks, the net {want}: pass --extra-blocks {have}")
    base = TileNet(extra=have)
    init_weights(base, path, calib)
    missing = net.load_state_dict(base.state_dict(), strict=False).missing_keys
    if any(not k.startswith("extra.") for k in missing):
        raise ValueError(f"{path}: the net's {missing} are not in the file")


def init_from(net: TileNet, path: Path, photo_patches: np.ndarray) -> None:
    """Start ``net`` from a checkpoint (``last.pt``) or from an exported ``classifier.onnx``
    (its BatchNorms measured on 512 photo crops): :func:`load_into`."""
    pick = np.random.default_rng(0).permutation(len(photo_patches))[:512]
    load_into(net, path, lambda: to_tensor(centre_crops(photo_patches[pick])))


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
        acc = evaluate(net, vx, vy)
        others = "".join(_check_line(net, check) for check in [table_check, *checks] if check is not None)
        _checkpoint(ckpt, model=net.state_dict(), opt=opt.state_dict(), sched=sched.state_dict(), epoch=epoch)
        print(f"epoch {epoch}: valid photo crop accuracy {acc:.4f}{others} ({time.time() - t0:.0f}s)", flush=True)
    path = export(
        net,
        REPO / args.out,
        {"seed": args.seed, "epochs": args.epochs, "valid_photo_crop_accuracy": acc,
         "extra_blocks": args.extra_blocks},
    )
    print(f"exported {path}", flush=True)


Check = tuple[str, np.ndarray, np.ndarray, np.ndarray | None]
"""A validation pool printed after each epoch: ``(name, crops, labels, the crops the picture's edge
cuts, also printed alone, or None)``."""


def photo_data(args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The train photos' tiles (``--drop-loose``, ``--photo-repeat``) and valid's, centre-cut."""
    px, py = photo_set("train")
    if args.drop_loose:
        keep = ~loose_photo_tiles("train")
        if len(keep) != len(px):
            raise SystemExit(f"--drop-loose: {len(keep)} labelled tiles but {len(px)} cached photo crops")
        print(f"--drop-loose: {int((~keep).sum())} tiles of photos with loose (turned) boxes left out", flush=True)
        px, py = px[keep], py[keep]
    if args.photo_repeat > 1:
        px, py = np.concatenate([px] * args.photo_repeat), np.concatenate([py] * args.photo_repeat)
    vx, vy = photo_set("valid")
    return px, py, centre_crops(vx), vy


def synthetic_data(args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray, list[Check]]:
    """The synthetic pool (``--boost``, ``--localised-crops``, ``--scene-crops``, ``--view-scenes``)
    and the validation pools those options bring."""
    sx, sy = synth_pool(args.synth_seed or args.seed, args.synth_per_class)
    checks: list[Check] = []
    if args.boost:
        bx, by = boost_pool(args.seed, args.boost)
        sx, sy = np.concatenate([sx, bx]), np.concatenate([sy, by])
    if args.localised_crops:
        lx, ly = C.localised_photo_crops("train")
        sx = np.concatenate([sx] + [lx] * args.localised_crops)
        sy = np.concatenate([sy] + [ly] * args.localised_crops)
        checks.append(("valid crops at localised quads", *C.localised_photo_crops("valid"), None))
        print(f"--localised-crops: {len(lx)} train photo tiles cut at the localiser's quads, x{args.localised_crops}",
              flush=True)
    if args.scene_crops:
        n_s, share_s, seed_s = (args.scene_crops.split(":") + ["", ""])[:3]
        share = float(share_s) if share_s else 0.5
        cx, cy = C.localised_scene_crops(int(seed_s) if seed_s else args.seed, int(n_s), share)
        sx, sy = np.concatenate([sx, cx]), np.concatenate([sy, cy])
        svx, svy = C.localised_scene_crops(args.seed + 1000, max(10, int(n_s) // 10), 1.0)
        checks.append(("American scene crops", svx, svy, None))
        print(f"--scene-crops: {len(cx)} tiles of {n_s} synthetic scenes cut at the localiser's quads "
              f"({share:g} American); {len(svx)} American ones of another seed for validation", flush=True)
    if args.view_scenes:
        sx, sy, check = _view_scenes(args, sx, sy)
        checks.append(check)
    return sx, sy, checks


def _view_scenes(args: argparse.Namespace, sx: np.ndarray, sy: np.ndarray) -> tuple[np.ndarray, np.ndarray, Check]:
    """``--view-scenes N:SHARE:SEED``: the pool with tiles of N scenes drawn in view, and an
    American pool of another seed to validate on, its tiles the picture's edge cuts apart."""
    n_v, share_v, seed_v = (args.view_scenes.split(":") + ["", ""])[:3]
    share = float(share_v) if share_v else 0.5
    seed_v_i = int(seed_v) if seed_v else args.seed
    vsx, vsy = C.localised_scene_crops(seed_v_i, int(n_v), share, in_view=True)
    n_cut = int(C.scene_crops_cut(seed_v_i, int(n_v), share, in_view=True).sum())
    view_val = (args.seed + 2000, max(10, int(n_v) // 10), 1.0)
    wvx, wvy = C.localised_scene_crops(*view_val, in_view=True)
    wv_cut = C.scene_crops_cut(*view_val, in_view=True)
    print(f"--view-scenes: {len(vsx)} tiles of {n_v} synthetic scenes drawn in view ({share:g} American), "
          f"{n_cut} of them cut by the picture's edge; {len(wvx)} American ones of another seed for "
          f"validation ({int(wv_cut.sum())} cut)", flush=True)
    return np.concatenate([sx, vsx]), np.concatenate([sy, vsy]), ("American in-view scene crops", wvx, wvy, wv_cut)


def table_data(args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray, Check | None]:
    """Crops cut from rendered table frames (``--table-crops``, ``--extra-table``) and the table
    pool validated on (``--table-val``, else one of another seed), if any."""
    tx = np.zeros((0, CROP_H, CROP_W, 3), np.uint8)
    ty = np.zeros(0, np.int64)
    check: Check | None = None
    if args.table_crops:
        tx, ty = table_pool(args.seed, args.table_crops, snap=args.table_snap, area=args.table_area)
        check = ("table crops", *table_pool(args.seed + 1000, max(12, args.table_crops // 10), snap=args.table_snap,
                                            area=args.table_area), None)
    for spec in filter(None, args.extra_table.split(",")):
        ex, ey = _pool_spec(spec)
        tx, ty = np.concatenate([tx, ex]), np.concatenate([ty, ey])
    if args.table_val:
        check = ("table crops", *_pool_spec(args.table_val), None)
    return tx, ty, check


def _check_line(net: TileNet, check: Check) -> str:
    """``, NAME ACCURACY`` for one validation pool (and its cut crops alone)."""
    name, x, y, cut = check
    line = f", {name} {evaluate(net, x, y):.4f}"
    if cut is not None:
        line += f" (cut by the edge {evaluate(net, x[cut], y[cut]):.4f})"
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
                        "(scripts.crops.localised_scene_crops, cached); N/10 American scenes of --seed + 1000 are "
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
                        "pipeline cuts them (scripts.crops.localised_photo_crops, cached)")
    p.add_argument("--resume", action="store_true")
    p.add_argument("--init", type=Path, default=None, help="start from these weights: a run's last.pt or an exported classifier.onnx "
                        "(e.g. models/classifier.onnx, the committed model)")
    p.add_argument("--extra-blocks", type=int, default=None,
                   help="residual blocks after the last stage (each ~4 MFLOPs a crop); default: as many as the weights it "
                        "starts from have (--init, or the run's last.pt with --resume / --export-only; else 0); "
                        "blocks that the file lacks start as the identity")
    p.add_argument("--max-batches", type=int, default=0, help="debug: stop each epoch early")
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
