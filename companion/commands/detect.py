"""``detect``: recognise every tile in image files and print one JSON line per image."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vision.pipeline import TileRecognizer

NAME = "detect"
HELP = "find and read every tile in image files or a folder's images: one JSON line per image"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("images", nargs="+", metavar="IMAGE",
                   help="image files (JPEG, PNG, ...), or folders: each one's image files, by name")
    p.add_argument(
        "--jsonl", action="store_true", help="JSON lines (the default output; kept for scripts)"
    )
    p.add_argument(
        "--tileset", metavar="NAME", help="an enrolled tile set (python -m companion enroll)"
    )
    p.add_argument("--models", metavar="DIR", help="folder with localizer.onnx and classifier.onnx")
    p.add_argument(
        "--min-confidence", type=float, default=0.0, help="drop tiles read below this confidence"
    )
    p.add_argument(
        "--min-score",
        type=float,
        default=None,
        help="drop tiles whose localiser objectness times confidence is below this (default: 0.2, "
        "vision.pipeline.MIN_SCORE; 0 lists every tile found)",
    )
    p.add_argument(
        "--input-size", type=int, metavar="PX", help="localiser input long side, one scale (default: auto: half the image; a photo at up to three scales, the best-reading one kept)"
    )
    p.add_argument(
        "--piles", action="store_true",
        help="also read the face-up tiles heaped in a pile beside the rows (discards), which the "
        "default reading leaves out as the labelled photos do; one more reading of each photo "
        "(a valid photo: a median 44 ms against 18), its boxes less sure than a row's (docs/recognition.md)",
    )
    p.add_argument(
        "--annotate",
        metavar="DIR",
        help="also draw each image's tiles (outline and code; orange with '?' where read below 0.6) "
        "into DIR as NAME.tiles.png, named in the image's JSON line as \"annotated\"",
    )


def expand_folders(paths: list[str]) -> list[str]:
    """``paths`` with each folder replaced by its image files (:func:`vision.capture.image_files`:
    sorted by name, not its subfolders); a folder with none stays as it is, for the caller to
    report."""
    from vision.capture import image_files

    out: list[str] = []
    for p in paths:
        folder = Path(p)
        if not folder.is_dir():
            out.append(p)
            continue
        out.extend([str(f) for f in image_files(folder)] or [p])
    return out


def annotated_path(folder: Path, image: str, taken: set[Path]) -> Path:
    """Where ``image``'s drawing goes in ``folder``: ``NAME.tiles.png``, numbered (``NAME.2.tiles.png``
    and on) where another image of this run already took the name (two folders' ``IMG_1.jpg``)."""
    stem = Path(image).stem or "image"
    out, n = folder / f"{stem}.tiles.png", 1
    while out in taken:
        n += 1
        out = folder / f"{stem}.{n}.tiles.png"
    taken.add(out)
    return out


def run(args: argparse.Namespace) -> int:
    folder = _drawings_folder(args.annotate)
    rec = _recognizer(args)
    taken: set[Path] = set()
    failures = sum(_detect_one(rec, path, args.min_confidence, folder, taken) for path in expand_folders(args.images))
    return 2 if failures else 0


def _drawings_folder(annotate: str | None) -> Path | None:
    """``--annotate``'s folder, made if missing; None without it."""
    from companion.cli import CommandError

    if not annotate:
        return None
    folder = Path(annotate)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CommandError(f"cannot make the folder for the drawings {str(folder)!r}: {exc.strerror or exc}") from exc
    return folder


def _recognizer(args: argparse.Namespace) -> TileRecognizer:
    """The recogniser the options ask for; a missing or damaged model file is a clear error (exit 3)."""
    from companion.cli import CommandError
    from vision.mend import MIN_SCORE
    from vision.pipeline import REPO, TileRecognizer
    from vision.runtime import ModelFileError

    try:
        rec = TileRecognizer(
            models_dir=Path(args.models) if args.models else REPO / "models",
            tileset=args.tileset,
            input_long_side=args.input_size,
            min_score=MIN_SCORE if args.min_score is None else args.min_score,
            piles=args.piles,
        )
    except ModelFileError as exc:
        raise CommandError(str(exc), 3) from exc
    if args.tileset:
        _say_places_to_check(args.tileset)
    return rec


def _say_places_to_check(tileset: str) -> None:
    """Two places the set's enrollment named as perhaps swapped, on stderr (the JSON lines stay on
    stdout)."""
    from vision.tileset import to_check

    for line in to_check(tileset):
        print(f"warning: {line}", file=sys.stderr)


def _detect_one(rec: TileRecognizer, path: str, min_confidence: float, folder: Path | None, taken: set[Path]) -> int:
    """One image read and its JSON line printed (an error line for a folder with no images or an
    unreadable file, named on stderr); with ``folder``, its drawing written there.  1 where
    something failed, else 0."""
    from vision.io import ImageLoadError, load_image

    if Path(path).is_dir():
        print(f"error: no image files (JPEG, PNG, ...) in the folder {path!r}", file=sys.stderr)
        print(json.dumps({"image": path, "error": "a folder with no image files"}), flush=True)
        return 1
    try:
        image = load_image(path)
    except ImageLoadError as exc:
        print(f"error: {exc}", file=sys.stderr)
        print(json.dumps({"image": path, "error": exc.reason}), flush=True)
        return 1
    d = rec.detect(image, name=path)
    if min_confidence > 0:
        d = d[d.confidence >= min_confidence]
    line: dict[str, object] = {"image": path, "tiles": d.to_json(), "ms": d.meta["ms"]}
    failed = 0
    if folder is not None:
        from vision.annotate import annotate

        out = annotated_path(folder, path, taken)
        if _write(out, annotate(image, d)):
            line["annotated"] = str(out)
        else:
            print(f"error: cannot write the drawing of {path!r} to {str(out)!r}", file=sys.stderr)
            failed = 1
    print(json.dumps(line), flush=True)
    return failed


def _write(path: Path, image: object) -> bool:
    """``cv2.imwrite``, False where it fails (a full disk, a folder gone) instead of raising."""
    import cv2

    try:
        return bool(cv2.imwrite(str(path), image))  # type: ignore[call-overload]
    except cv2.error:
        return False
