"""Every committed model trained from nothing, with one command and one seed.

    python scripts/train_all.py                          # the whole chain into runs/all (~10 hours, 2 cores)
    python scripts/train_all.py --dry-run                # the plan: one command a step
    python scripts/train_all.py --only localizer.onnx    # the steps one file needs
    python scripts/train_all.py --seed 5                 # every run's seed moved by 5
    python scripts/train_all.py --smoke --out /tmp/smoke # the whole chain at a batch or two a run

The six files in ``models/`` are the end of a chain of runs made over many sessions, each
starting from a file the one before it made (``models/MODEL_CARD.md`` records every command).
:data:`PLAN` is that chain in an order that respects every file the runs read and overwrite: the
photo localiser's three stages and its American fine-tune; the table localiser's three runs from
the photo localiser's stage 3; the classifier's nineteen runs (a block added at the twelfth, tiles
cut where the photo localiser puts them from the fifteenth); the table classifier's four from
the fifteenth's file, the third of which is kept as the check classifier; and the 8-bit photo
classifier quantized from the float one.  Copies the card records in words ("kept as",
"committed") are steps too.  The plan is :mod:`scripts.train_plan`'s; what its steps read and
write, and its check, are :mod:`scripts.train_steps`'; this module runs it (:func:`run`).

Everything is written under ``OUT`` (default ``runs/all``): each run in its own folder, and the
chain's models folder ``OUT/models``, where the runs read and write what the card's commands read
and wrote in ``models/`` (the localised crops are cut with the files there,
``scripts.crop_cache.TRAIN_MODELS_ENV``).  The repository's ``models/`` is never touched; compare
``OUT/models`` with it, or copy the files over by hand.  A step is done once ``OUT/done/ID``
exists; running the command again resumes at the first step not done (each training script
also resumes its own run from its ``last.pt``).

``--seed S`` adds S to every run's ``--seed`` (0, the default, runs the card's seeds); the data
pools' seeds (``--synth-seed``, ``--extra-table``, ``--scene-crops``...) name cached data and stay.
``--smoke`` runs the same chain with every run cut to a batch or two and every pool to a few
frames or crops: it checks that the chain runs end to end, not what it makes.

It will not make the committed files byte for byte: the card records where its chain cannot be
repeated exactly (the photo localiser's first stage then had no strip-pooling layers; the
photo pipeline, which cuts the localised crops, has changed since those runs; table frames are
rendered by today's renderer; torch's CPU kernels differ between machines).  docs/recognition.md,
"Train it".
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scripts.train_plan import COMMITTED, COPY, PLAN, Step  # noqa: E402
from scripts.train_steps import check, needed, resolved  # noqa: E402


def command(step: Step, out: Path, seed: int, smoke: bool) -> list[str]:
    """The command line that runs ``step`` (a copy is done in this process; shown as ``cp``)."""
    args = resolved(step, out, seed, smoke)
    if step.script == COPY:
        return ["cp", *args]
    return [sys.executable, str(REPO / step.script), *args]


def copy_model(src: Path, dst: Path) -> None:
    """A model file copied with its ``.json`` and its ``.sha256`` (the name inside made ``dst``'s)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    sidecar = src.with_suffix(".json")
    if sidecar.is_file():
        shutil.copyfile(sidecar, dst.with_suffix(".json"))
    digest = src.with_suffix(src.suffix + ".sha256")
    if digest.is_file():
        value = digest.read_text().split()[0]
        dst.with_suffix(dst.suffix + ".sha256").write_text(f"{value}  {dst.name}\n")


def run(steps: list[Step], out: Path, seed: int, smoke: bool) -> None:
    from scripts.crop_cache import TRAIN_MODELS_ENV

    done = out / "done"
    done.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, **{TRAIN_MODELS_ENV: str(out / "models")})
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    for n, step in enumerate(steps, 1):
        marker = done / step.id
        if marker.is_file():
            print(f"[{n}/{len(steps)}] {step.id}: done", flush=True)
            continue
        cmd = command(step, out, seed, smoke)
        print(f"[{n}/{len(steps)}] {step.id}: {' '.join(cmd)}", flush=True)
        t0 = time.time()
        if step.script == COPY:
            copy_model(Path(cmd[1]), Path(cmd[2]))
        else:
            proc = subprocess.run(cmd, cwd=REPO, env=env)
            if proc.returncode != 0:
                raise SystemExit(f"step {step.id} failed (exit {proc.returncode}); run the command again to resume")
        marker.write_text(f"{time.time() - t0:.0f} s\n")
    made = [name for name in COMMITTED if (out / "models" / name).is_file()]
    print(f"made in {out / 'models'}: {', '.join(made)}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=REPO / "runs" / "all", help="runs and the chain's models folder")
    ap.add_argument("--seed", type=int, default=0, help="added to every run's --seed (0: the card's seeds)")
    ap.add_argument("--only", metavar="FILE", help="only the steps that make this committed file")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and exit")
    ap.add_argument("--smoke", action="store_true", help="every run cut to a batch or two (checks the chain runs)")
    ap.add_argument("--check", action="store_true",
                    help="check the plan against the scripts' command lines and its own order, and exit")
    args = ap.parse_args(argv)
    if args.check:
        problems = check()
        for line in problems:
            print(line)
        print(f"{len(PLAN)} steps, {len(problems)} problem(s); makes {', '.join(COMMITTED)}")
        return 1 if problems else 0
    steps = needed(args.only)
    if args.dry_run:
        for step in steps:
            made = f"   # -> {step.makes}" if step.makes else ""
            print(f"{step.id}: {' '.join(command(step, args.out, args.seed, args.smoke))}{made}")
        return 0
    run(steps, args.out.resolve(), args.seed, args.smoke)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
