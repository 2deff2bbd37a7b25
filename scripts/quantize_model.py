"""Quantize the photo classifier to 8-bit integers for onnxruntime on the CPU.

    python scripts/quantize_model.py [--src models/classifier.onnx] [--out models/classifier-int8.onnx]
                                     [--calibration 2048] [--seed 0]

Static quantization (``vision.runtime.quantize_int8``, onnxruntime's ``quantize_static``): QDQ format, unsigned 8-bit
activations, signed 8-bit weights per output channel, with ``reduce_range`` (7-bit weights), so
that CPUs without VNNI instructions (AVX2-only ones, common in older laptops) cannot saturate their 16-bit
accumulators and read a tile differently from ours.  The activation ranges are calibrated (min /
max) on ``--calibration`` tiles of ``tiles-photos-v4/train`` cut where the photo localiser puts
them, as the pipeline cuts them (``scripts.localised_crops.localised_photo_crops``; never
``valid/``), drawn with ``--seed``.  The float file stays the master: training fine-tunes from it
(``--init models/classifier.onnx``), and this script makes the integer file from it again.

Writes ``OUT``, ``OUT.sha256`` and the spec ``OUT`` with ``.json`` (the float file's, its
``sha256`` replaced and a ``quantized`` entry added), which ``vision.classify.TileClassifier``
reads beside the model.  Needs the ``onnx`` package (the ``train`` extra).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import numpy.typing as npt

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from vision.runtime import quantize_int8, sha256_of  # noqa: E402


def quantize_classifier(src: Path, out: Path, crops: npt.NDArray[np.uint8], note: dict[str, object] | None = None) -> str:
    """Quantize the classifier ``src`` to ``out``, calibrated on ``crops`` ``(N, 64, 48, 3)`` uint8
    BGR; writes ``out``'s ``.sha256`` and ``.json`` beside it and returns its sha256."""
    from vision.classify import TileClassifier

    if len(crops) == 0:
        raise ValueError("no calibration crops")
    clf = TileClassifier(src)
    quantize_int8(src, out, [clf.preprocess(crops[i:i + 32]) for i in range(0, len(crops), 32)])
    digest = sha256_of(out)
    out.with_suffix(out.suffix + ".sha256").write_text(f"{digest}  {out.name}\n")
    spec = json.loads(src.with_suffix(".json").read_text())
    spec["sha256"] = digest
    spec["quantized"] = {"from_sha256": sha256_of(src), "calibration_crops": len(crops), "format": "QDQ",
                         "activations": "uint8", "weights": "int8 per channel, reduce_range", **(note or {})}
    out.with_suffix(".json").write_text(json.dumps(spec, indent=1) + "\n")
    return digest


def parser() -> argparse.ArgumentParser:
    """The command line (``scripts/train_all.py`` checks its plan's steps against it)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", type=Path, default=REPO / "models" / "classifier.onnx")
    ap.add_argument("--out", type=Path, default=REPO / "models" / "classifier-int8.onnx")
    ap.add_argument("--calibration", type=int, default=2048, help="train tiles to calibrate on")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--labelled", action="store_true",
                    help="calibrate on train tiles cut at their labelled boxes, not where the photo localiser "
                         "puts them (for a localiser that finds nothing yet: scripts/train_all.py --smoke)")
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = parser()
    args = ap.parse_args(argv)
    if args.out.resolve() == args.src.resolve():
        ap.error("--out must not be --src: the float file stays the master")
    from scripts.crops import cached_photo_patches, jitter_patch
    from scripts.localised_crops import localised_photo_crops

    if args.labelled:
        patches, _, _ = cached_photo_patches("train")
        x = np.stack([jitter_patch(p, np.random.default_rng(0), 0.0) for p in patches])
    else:
        x, _ = localised_photo_crops("train")
    if len(x) == 0:
        ap.error("the photo localiser found no train tile to calibrate on (--labelled cuts them at their labels)")
    pick = np.sort(np.random.default_rng(args.seed).choice(len(x), min(args.calibration, len(x)), replace=False))
    kind = "labelled" if args.labelled else "localised"
    digest = quantize_classifier(args.src, args.out, np.asarray(x[pick]),
                                 {"calibration_seed": args.seed, "calibration_set": f"tiles-photos-v4/train, {kind}"})
    print(f"wrote {args.out} (sha256 {digest}) from {args.src}, calibrated on {len(pick)} train tiles")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
