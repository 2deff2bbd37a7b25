"""The training chain's plan: :class:`Step` (one run of a training script, or a copy of a model
file), the scripts it runs (:data:`LOC`, :data:`CLF`, :data:`QUANT`, :data:`COPY`), :data:`PLAN`
(every step with its command line, in the order it runs; the photo localiser's recipe,
:func:`recipe_stages`, among them) and the files it makes (:data:`COMMITTED`).

Run by ``scripts/train_all.py``; torch-free (``scripts/train_localizer.py --recipe`` imports
:func:`recipe_stages` from here).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

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
