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
"committed") are steps too.

Everything is written under ``OUT`` (default ``runs/all``): each run in its own folder, and the
chain's models folder ``OUT/models``, where the runs read and write what the card's commands read
and wrote in ``models/`` (the localised crops are cut with the files there,
``scripts.crops.TRAIN_MODELS_ENV``).  The repository's ``models/`` is never touched; compare
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
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

LOC = "scripts/train_localizer.py"
CLF = "scripts/train_classifier.py"
QUANT = "scripts/quantize_model.py"
COPY = "copy"

BOOST_S4 = "J:2000,F:800,WD:400,1C:400,2C:600,3C:600,5C:300,6C:300,7C:300,8C:400,9C:300"
BOOST_S7 = "J:3000,F:1500,WD:800,1C:800,2C:1200,3C:1200,4C:600,5C:600,6C:600,7C:600,8C:800,9C:600"
BOOST_S8 = "J:3000,F:1500,WD:800,GD:400,RD:400,1C:800,2C:1200,3C:1200,4C:600,5C:600,6C:600,7C:600,8C:800,9C:600"
BOOST_S10 = BOOST_S8 + ",4B:400,6B:400,7B:400,8B:400"
OLD_POOLS = "1017:150:0.7,1018:250:0.7,1019:250:0.7,1021:150:0.7"
WIDE = (
    "23:1200:0.7,24:1200:0.7,31:600:0.7:american-mix,32:600:0.7:american-mix,"
    "41:1000:0.7:wide-mix,42:1000:0.7:wide-mix"
)


@dataclass(frozen=True)
class Step:
    """One run of the chain: ``script`` with ``args`` (``{runs}`` and ``{models}`` stand for the
    output folder and the chain's models folder), or a copy of a model file (``COPY``:
    ``args = [source, destination]``, with its ``.json`` and ``.sha256``)."""

    id: str
    script: str
    args: tuple[str, ...]
    makes: str = ""  # the committed file this step writes into the chain's models folder, if any
    note: str = ""  # where the card records it


def _loc(step_id: str, line: str, makes: str = "", note: str = "") -> Step:
    return Step(step_id, LOC, tuple(line.split()), makes, note)


def _clf(step_id: str, line: str, makes: str = "", note: str = "") -> Step:
    return Step(step_id, CLF, tuple(line.split()), makes, note)


def recipe_stages(out: Path, export: Path, seed: int) -> list[list[str]]:
    """The command lines of the photo localiser's recipe (``train_localizer.py --recipe``, which
    runs them; :data:`PLAN` runs them as steps of its own): three stages, each into
    ``OUT/stageN``, the last exported to ``export``."""
    synth = ["--synth", "0.25"]
    stages = [
        ["--epochs", "12", "--stop-epoch", "7", "--band", "0"],
        ["--epochs", "11", *synth],
        ["--epochs", "4", "--lr", "1e-3", *synth],
    ]
    lines = []
    for i, extra in enumerate(stages, 1):
        dest = export if i == len(stages) else out / f"stage{i}" / "localizer.onnx"
        init = ["--init", str(out / f"stage{i - 1}" / "last.pt")] if i > 1 else []
        argv = [*extra, *init, "--seed", str(seed + i - 1), "--out", str(out / f"stage{i}")]
        lines.append([*argv, "--export", str(dest)])
    return lines


def _recipe() -> list[Step]:
    """The photo localiser's three stages (``train_localizer.py --recipe --seed 1``) as steps."""
    lines = recipe_stages(Path("{runs}/loc"), Path("{models}/localizer.onnx"), 1)
    return [Step(f"L1.{i}", LOC, tuple([*argv, "--threads", "1"]), "localizer.onnx" if i == 3 else "",
                 f"MODEL_CARD.md 'Localiser', Training: --recipe, stage {i}")
            for i, argv in enumerate(lines, 1)]


PLAN: tuple[Step, ...] = (
    *_recipe(),
    _clf("C1", "--epochs 10 --seed 7 --synth-per-class 400 --run-dir {runs}/classifier --out {models}",
         "classifier.onnx", "first session"),
    _clf("C2", "--init {runs}/classifier/last.pt --epochs 4 --lr 1e-3 --seed 8 --synth-per-class 300 "
         "--run-dir {runs}/classifier2 --out {runs}/classifier2/export"),
    _clf("C3", "--init {runs}/classifier2/last.pt --epochs 3 --lr 1e-3 --seed 9 --synth-per-class 500 "
         "--run-dir {runs}/classifier3 --out {runs}/classifier3/export"),
    _clf("C4", "--init {runs}/classifier3/last.pt --epochs 4 --lr 1e-3 --seed 11 --synth-seed 9 "
         "--synth-per-class 500 --table-crops 300 --run-dir {runs}/classifier4 --out {runs}/classifier4/export",
         note="table-scale fine-tuning"),
    _clf("C5", "--init {runs}/classifier4/last.pt --epochs 5 --lr 7e-4 --seed 12 --synth-seed 9 "
         "--synth-per-class 500 --table-crops 600 --run-dir {runs}/classifier5 --out {runs}/classifier5/export"),
    _clf("C6", "--init {runs}/classifier5/last.pt --epochs 4 --lr 5e-4 --seed 13 --synth-seed 9 "
         "--synth-per-class 500 --table-crops 600 --run-dir {runs}/classifier6 --out {runs}/classifier6/export"),
    _loc("LT1", "--init {runs}/loc/stage3/last.pt --out {runs}/loc5 --export {runs}/loc5/localizer.onnx "
         "--epochs 4 --steps 100 --lr 1e-3 --synth 0.25 --table 0.35 --table-frames 45 --seed 21 --threads 1",
         note="MODEL_CARD.md 'Table localiser' (runs/loc3/last.pt there: the recipe's stage 3)"),
    _loc("LT2", "--init {runs}/loc5/last.pt --out {runs}/loc6 --export {runs}/loc6/localizer.onnx "
         "--epochs 3 --steps 100 --lr 5e-4 --synth 0.2 --table 0.5 --table-frames 60 --seed 22 --threads 1"),
    _clf("C7", "--init {runs}/classifier6/last.pt --epochs 3 --lr 4e-4 --seed 14 --synth-seed 9 "
         "--synth-per-class 500 --table-crops 600 --threads 1 --run-dir {runs}/classifier7 "
         "--out {runs}/classifier7/export", note="second session"),
    _clf("C8", "--init {runs}/classifier7/last.pt --epochs 6 --lr 5e-4 --seed 15 --synth-seed 9 "
         "--synth-per-class 500 --table-crops 2000 --threads 1 --run-dir {runs}/clf_table1 "
         "--out {runs}/clf_table1/export"),
    _clf("C9", "--init {runs}/clf_table1/last.pt --epochs 2 --lr 2e-4 --seed 15 --synth-seed 9 "
         "--synth-per-class 500 --table-crops 2000 --boost J:2000,F:800,2D:300,2C:300,8C:300 --threads 1 "
         "--run-dir {runs}/clf_table2 --out {models}", "classifier.onnx"),
    _loc("LT3", "--init {runs}/loc6/last.pt --out {runs}/loc8 --export {runs}/loc8/localizer.onnx "
         "--epochs 20 --steps 100 --lr 1e-3 --synth 0.15 --table 0.6 --top-down 0.7 --table-frames 150 "
         "--band 0.1 --seed 24 --threads 1"),
    Step("LT3p", COPY, ("{runs}/loc8/localizer.onnx", "{models}/localizer-table.onnx"), "localizer-table.onnx",
         "cp runs/loc8/localizer.onnx models/localizer-table.onnx"),
    _clf("C10", "--init {models}/classifier.onnx --epochs 3 --lr 3e-4 --seed 17 --synth-seed 9 "
         "--synth-per-class 500 --table-crops 1500 --table-snap 0.7 --extra-table 16:2500 "
         "--boost J:2000,F:800,2C:300,3C:300,8C:300,9C:300 --threads 2 --run-dir {runs}/clf_s3 "
         "--out {runs}/clf_s3/export", note="third session: from the committed ONNX file"),
    _clf("C11", "--init {runs}/clf_s3/last.pt --epochs 4 --lr 2e-4 --seed 18 --synth-seed 9 "
         "--synth-per-class 500 --table-crops 2500 --table-snap 0.7 --extra-table 17:1500:0.7,16:2500 "
         f"--boost {BOOST_S4} --threads 1 --run-dir {{runs}}/clf_s4 --out {{models}}", "classifier.onnx"),
    _clf("C12", "--init {models}/classifier.onnx --extra-blocks 1 --epochs 5 --lr 4e-4 --seed 19 "
         "--synth-seed 9 --synth-per-class 500 --table-crops 2500 --table-snap 0.7 --extra-table 20:800:0.7 "
         f"--boost {BOOST_S7} --threads 2 --run-dir {{runs}}/clf_s7 --out {{runs}}/clf_s7/export",
         note="fourth session: grown by one residual block"),
    _clf("C13", "--init {runs}/clf_s7/last.pt --epochs 6 --lr 2.5e-4 --seed 21 --synth-seed 9 "
         "--synth-per-class 500 --table-crops 1500 --table-snap 0.7 --extra-table 20:800:0.7,19:2500:0.7 "
         f"--boost {BOOST_S8} --threads 2 --run-dir {{runs}}/clf_s8 --out {{models}}", "classifier.onnx"),
    _clf("C14", "--init {models}/classifier.onnx --epochs 5 --lr 2.5e-4 --seed 22 --synth-seed 9 "
         "--synth-per-class 500 --table-crops 1500 --table-snap 0.7 --extra-table 20:800:0.7,19:2500:0.7 "
         f"--boost {BOOST_S10} --photo-repeat 3 --drop-loose --threads 2 --run-dir {{runs}}/clf_s10 "
         "--out {runs}/clf_s10/export", note="fifth session"),
    _clf("C15", "--init {runs}/clf_s10/export/classifier.onnx --epochs 4 --lr 2e-4 --seed 22 --synth-seed 9 "
         "--synth-per-class 500 --table-crops 1500 --table-snap 0.7 --extra-table 20:800:0.7,19:2500:0.7 "
         f"--boost {BOOST_S10} --photo-repeat 3 --drop-loose --localised-crops 2 --threads 2 "
         "--run-dir {runs}/clf_s12 --out {models}", "classifier.onnx"),
    _loc("L2", "--init {models}/localizer.onnx --out {runs}/loc_am --export {runs}/loc_am/localizer.onnx "
         "--epochs 10 --steps 150 --lr 1e-3 --synth 0.3 --american 0.5 --band 0.15 --seed 71 --threads 1",
         note="seventh session (committed in the ninth)"),
    Step("R1", COPY, ("{models}/classifier.onnx", "{models}/classifier-table.onnx"), "classifier-table.onnx",
         "eighth session: the fifth session's classifier kept as the table classifier"),
    _clf("C16", "--init {models}/classifier-table.onnx --epochs 4 --lr 2e-4 --seed 22 --synth-seed 9 "
         f"--synth-per-class 500 --boost {BOOST_S10} --extra-table {OLD_POOLS} --table-val 1022:150:0.7 "
         "--photo-repeat 3 --drop-loose --localised-crops 2 --scene-crops 2000:0.5 --threads 1 --run-dir {runs}/clf_s14 --out {runs}/clf_s14/export",
         note="eighth session: tiles cut from synthetic scenes where the photo localiser puts them"),
    _clf("C17", "--init {runs}/clf_s14/last.pt --epochs 2 --lr 1.5e-4 --seed 22 --synth-seed 9 "
         f"--synth-per-class 500 --boost {BOOST_S10} --extra-table 23:1200:0.7,{OLD_POOLS} "
         "--table-val 1022:150:0.7 --photo-repeat 3 --drop-loose --localised-crops 2 --scene-crops 2000:0.5 "
         "--threads 2 --run-dir {runs}/clf_s15 --out {runs}/clf_s15/export"),
    _clf("C18", "--init {runs}/clf_s15/last.pt --epochs 3 --lr 1e-4 --seed 22 --synth-seed 9 "
         f"--synth-per-class 500 --boost {BOOST_S10} --extra-table 23:1200:0.7,{OLD_POOLS} "
         "--table-val 1022:150:0.7 --photo-repeat 3 --drop-loose --localised-crops 2 "
         "--scene-crops 3000:0.5:24 --threads 2 --run-dir {runs}/clf_s16 --out {models}", "classifier.onnx"),
    Step("L2p", COPY, ("{runs}/loc_am/localizer.onnx", "{models}/localizer.onnx"), "localizer.onnx",
         "ninth session: the American fine-tune committed"),
    _clf("C19", "--init {models}/classifier.onnx --epochs 3 --lr 1e-4 --seed 22 --synth-seed 9 "
         f"--synth-per-class 500 --boost {BOOST_S10} --photo-repeat 3 --drop-loose --localised-crops 2 "
         "--scene-crops 3000:0.5:25 --threads 2 --run-dir {runs}/clf_s17 --out {runs}/clf_s17/export",
         note="ninth session: scenes cut at the ninth session's photo localiser"),
    Step("C19p", COPY, ("{runs}/clf_s17/export/classifier.onnx", "{models}/classifier.onnx"), "classifier.onnx",
         "ninth session: kept"),
    _clf("T1", "--init {models}/classifier-table.onnx --epochs 4 --lr 1.5e-4 --seed 41 --synth-seed 9 "
         f"--synth-per-class 500 --extra-table {WIDE},{OLD_POOLS} --table-val 1022:150:0.7 --recolour 0.3 "
         "--photo-repeat 3 --drop-loose --threads 2 --run-dir {runs}/clf_w1 --out {runs}/clf_w1/export",
         note="eleventh session: towards sets it never saw"),
    Step("T1p", COPY, ("{runs}/clf_w1/export/classifier.onnx", "{models}/classifier-table.onnx"),
         "classifier-table.onnx"),
    _clf("T2", "--init {models}/classifier-table.onnx --epochs 4 --lr 1.5e-4 --seed 43 --synth-seed 9 "
         f"--synth-per-class 500 --extra-table {WIDE},43:1000:0.7:wide-mix2,44:1000:0.7:wide-mix2,{OLD_POOLS} "
         "--table-val 1022:150:0.7 --recolour 0.3 --photo-repeat 3 --drop-loose --threads 2 "
         "--run-dir {runs}/clf_w2 --out {runs}/clf_w2/export", note="twelfth session"),
    Step("T2p", COPY, ("{runs}/clf_w2/export/classifier.onnx", "{models}/classifier-table.onnx"),
         "classifier-table.onnx"),
    _clf("T3", "--init {models}/classifier-table.onnx --epochs 4 --lr 1.5e-4 --seed 45 --synth-seed 9 "
         f"--synth-per-class 500 --extra-table {WIDE},43:1000:0.7:wide-mix2,44:1000:0.7:wide-mix2,"
         f"45:1000:0.7:wide-mix3,46:1000:0.7:wide-mix3,{OLD_POOLS} --table-val 1022:150:0.7 --recolour 0.3 "
         "--photo-repeat 3 --drop-loose --threads 2 --run-dir {runs}/clf_w3 --out {runs}/clf_w3/export",
         note="fourteenth session"),
    Step("T3p", COPY, ("{runs}/clf_w3/export/classifier.onnx", "{models}/classifier-table.onnx"),
         "classifier-table.onnx"),
    _clf("T4", "--init {models}/classifier-table.onnx --epochs 3 --lr 1.5e-4 --seed 61 --synth-seed 9 "
         "--synth-per-class 500 --extra-table 61:1500:0.7::0.7,62:1000:0.7:wide-mix3:0.7,"
         "63:1000:0.7:wide-mix2:0.7,64:600:0.7:american-mix:0.7,65:1000:0.7:wide-mix:0.7 "
         "--table-val 2022:150:0.7::1 --recolour 0.3 --photo-repeat 3 --drop-loose --threads 2 "
         "--run-dir {runs}/clf_a1 --out {runs}/clf_a1/export",
         note="twenty-first session, committed in the twenty-second: area-sampled tables"),
    Step("K1", COPY, ("{models}/classifier-table.onnx", "{models}/classifier-table-check.onnx"),
         "classifier-table-check.onnx", "twenty-second session: the file T4 started from kept as the check"),
    Step("T4p", COPY, ("{runs}/clf_a1/export/classifier.onnx", "{models}/classifier-table.onnx"),
         "classifier-table.onnx"),
    Step("Q1", QUANT, tuple("--src {models}/classifier.onnx --out {models}/classifier-int8.onnx "
                            "--calibration 2048 --seed 0".split()), "classifier-int8.onnx",
         "twenty-second session"),
    _loc("L3", "--init {models}/localizer.onnx --grow --out {runs}/loc_grow --export {runs}/loc_grow/localizer.onnx "
         "--epochs 10 --steps 150 --lr 1e-3 --synth 0.3 --american 0.5 --backs 0.08 --band 0.15 --seed 311 "
         "--threads 2 --backs-ignored blue",
         note="thirty-first session: grown by five residual blocks (--grow); thirty-second: the photos' "
              "unlabelled blue backs ignored (--backs-ignored blue)"),
    Step("L3p", COPY, ("{runs}/loc_grow/localizer.onnx", "{models}/localizer.onnx"), "localizer.onnx",
         "thirty-first session: the grown localiser committed"),
)
"""The chain, in the order it runs (models/MODEL_CARD.md: each file's section, "Training")."""

COMMITTED = ("localizer.onnx", "localizer-table.onnx", "classifier.onnx", "classifier-table.onnx",
             "classifier-table-check.onnx", "classifier-int8.onnx")


def _sources(step: Step) -> list[str]:
    """The paths a step starts from: its ``--init`` or ``--src``, or a copy's source."""
    found = [step.args[step.args.index(f) + 1] for f in ("--init", "--src") if f in step.args]
    return found + ([step.args[0]] if step.script == COPY else [])


def _model_name(path: str) -> str:
    """``NAME.onnx`` for a path in the chain's models folder (``{models}/NAME.onnx``), else ''."""
    m = re.fullmatch(r"\{models\}/([\w.-]+\.onnx)", path)
    return m.group(1) if m else ""


def _reads(step: Step) -> set[str]:
    """The chain's models a step reads: an ``--init``/``--src`` or a copy's source in the models
    folder, and, for a run that cuts localised crops, the photo localiser and classifier."""
    names = {_model_name(p) for p in _sources(step)} - {""}
    if any(a in step.args for a in ("--localised-crops", "--scene-crops")) or step.script == QUANT:
        names |= {"localizer.onnx", "classifier.onnx"}
    return names


def needed(only: str | None) -> list[Step]:
    """The steps of :data:`PLAN` that make ``only`` (a committed file's name), in order, or every
    step: each step kept with every earlier step whose output it reads."""
    if only is None:
        return list(PLAN)
    if only not in COMMITTED:
        raise SystemExit(f"--only: {only!r} is not a committed model ({', '.join(COMMITTED)})")
    keep: set[str] = set()
    want: set[str] = {only}  # models-folder files still to account for
    runs_wanted: set[str] = set()  # run folders still to account for
    for step in reversed(PLAN):
        writes_models = step.makes in want
        writes_runs = any(_run_dir(step, a) in runs_wanted for a in ("--run-dir", "--out"))
        if not (writes_models or writes_runs):
            continue
        keep.add(step.id)
        if writes_models:
            want.discard(step.makes)
        want |= _reads(step)
        runs_wanted |= {_folder(p) for p in _sources(step)} - {""}
    return [s for s in PLAN if s.id in keep]


def _folder(path: str) -> str:
    """The run folder ``{runs}/NAME`` (or ``{runs}/NAME/stageN``) a path lies in; '' for the models folder."""
    m = re.match(r"\{runs\}/([\w.-]+(?:/stage\d)?)", path)
    return m.group(0) if m else ""


def _run_dir(step: Step, flag: str) -> str:
    return _folder(step.args[step.args.index(flag) + 1]) if flag in step.args else ""


SMOKE_LOC = ("--epochs", "1", "--stop-epoch", "1", "--steps", "2", "--batch", "2", "--eval-photos", "2")


def smoke_args(step: Step) -> tuple[str, ...]:
    """``step``'s arguments cut to a batch or two and to pools of a few frames or crops: the chain
    runs end to end in minutes (``--smoke``), its data and flags as the real run's."""
    a = list(step.args)
    if step.script == LOC:
        for flag in ("--epochs", "--stop-epoch", "--steps", "--batch", "--eval-photos"):
            while flag in a:
                i = a.index(flag)
                del a[i : i + 2]
        if "--table-frames" in a:
            a[a.index("--table-frames") + 1] = "2"
        return (*a, *SMOKE_LOC)
    if step.script == CLF:
        def shrink(spec: str) -> str:  # SEED:FRAMES[:...] -> SEED:2[:...]
            return ",".join(":".join([p.split(":")[0], "2", *p.split(":")[2:]]) for p in spec.split(","))

        for flag, value in (("--epochs", "1"), ("--synth-per-class", "2"), ("--table-crops", "2")):
            if flag in a:
                a[a.index(flag) + 1] = value
        for flag in ("--extra-table", "--table-val"):
            if flag in a:
                a[a.index(flag) + 1] = shrink(a[a.index(flag) + 1])
        if "--scene-crops" in a:
            i = a.index("--scene-crops") + 1
            a[i] = ":".join(["4", *a[i].split(":")[1:]])
        if "--boost" in a:
            i = a.index("--boost") + 1
            a[i] = ",".join(f"{p.split(':')[0]}:2" for p in a[i].split(","))
        return (*a, "--max-batches", "2", "--batch", "16")
    if step.script == QUANT:  # a localiser of a few batches finds no tile to calibrate on
        a[a.index("--calibration") + 1] = "16"
        a.append("--labelled")
    return tuple(a)


def resolved(step: Step, out: Path, seed: int, smoke: bool) -> list[str]:
    """The step's arguments with the folders filled in and the seed moved."""
    args = list(smoke_args(step) if smoke else step.args)
    if seed and "--seed" in args and step.script in (LOC, CLF):
        i = args.index("--seed") + 1
        args[i] = str(int(args[i]) + seed)
    return [a.replace("{runs}", str(out)).replace("{models}", str(out / "models")) for a in args]


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
    from scripts.crops import TRAIN_MODELS_ENV

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


def _parse(step: Step, args: list[str]) -> str:
    """'' when ``args`` parse with ``step``'s script's own command line, else why not."""
    import contextlib
    import io

    if step.script == COPY:
        return "" if len(args) == 2 else f"a copy takes a source and a destination, not {args}"
    if step.script == LOC:
        from scripts.train_localizer import parse_args as parse
    elif step.script == CLF:
        from scripts.train_classifier import parser

        parse = parser().parse_args
    else:
        from scripts.quantize_model import parser as quant_parser

        parse = quant_parser().parse_args
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            parse(args)
    except SystemExit:
        return err.getvalue().strip().splitlines()[-1]
    return ""


def _outputs(step: Step) -> tuple[set[str], set[str]]:
    """``(run folders, models-folder files)`` a step writes."""
    def value(flag: str) -> str:
        return step.args[step.args.index(flag) + 1] if flag in step.args else ""

    dests = {LOC: [value("--out"), value("--export")], CLF: [value("--run-dir")], QUANT: [value("--out")],
             COPY: [step.args[-1]]}[step.script]
    if step.script == CLF:
        out = value("--out")
        dests.append(f"{out}/classifier.onnx" if out.startswith("{models}") else out)
    folders = {_folder(d) for d in dests} - {""}
    models = {_model_name(d) for d in dests} - {""}
    return folders, models


def check(plan: tuple[Step, ...] | list[Step] = PLAN) -> list[str]:
    """What is wrong with ``plan``: a step whose arguments (or smoke arguments) its script refuses,
    a step that reads a run folder or a model no earlier step wrote, a committed file never made."""
    problems: list[str] = []
    folders: set[str] = set()
    models: set[str] = set()
    for step in plan:
        for args in (list(step.args), list(smoke_args(step))):
            why = _parse(step, resolved(replace(step, args=tuple(args)), Path("/tmp/out"), 0, False))
            if why:
                problems.append(f"{step.id}: {why}")
        for src in _sources(step):
            folder, name = _folder(src), _model_name(src)
            if folder and folder not in folders:
                problems.append(f"{step.id} reads {src}, which no step before it writes")
            if name and name not in models:
                problems.append(f"{step.id} reads {src}, which no step before it makes")
        for name in sorted(_reads(step) - models):
            problems.append(f"{step.id} cuts crops with {{models}}/{name}, which no step before it makes")
        new_folders, new_models = _outputs(step)
        folders |= new_folders
        models |= new_models
        if step.makes and step.makes not in new_models:
            problems.append(f"{step.id} is said to make {step.makes} but writes {sorted(new_models) or 'none'}")
    problems += [f"no step makes {name}" for name in COMMITTED if name not in models]
    return problems


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
