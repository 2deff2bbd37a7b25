"""The training plan's steps read from their arguments: what a step starts from, reads and writes
(:func:`needed`, the steps one committed file needs), its arguments cut for ``--smoke``
(:func:`smoke_args`) and filled in (:func:`resolved`), and the plan's check against the training
scripts' own command lines and its own order (:func:`check`).

Torch-free at import; :func:`check` imports the training scripts (and so torch) when called.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from scripts.train_plan import CLF, COMMITTED, COPY, LOC, PLAN, QUANT, Step


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
