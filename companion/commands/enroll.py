"""``enroll``: teach the system a tile set from one photo, or print the layout sheet.

``python -m companion enroll --sheet OUT.png|pdf|svg [--layout american|chinese]`` writes the sheet;
``python -m companion enroll --name NAME PHOTO [--layout ...]`` finds the tiles, orders them by the
layout and stores crops + embeddings under ``calibration/tilesets/NAME/``, with the photo; without
PHOTO, a set enrolled before is enrolled again from its own photo (e.g. with ``--swap``).  Exit codes: 0 done,
2 usage or unreadable input, 3 the photo does not show the layout (wrong tile count or rows) or a
tile is laid twice in place of another.  Two tiles laid in each other's places are put back
(``--as-laid`` keeps every tile where it lies).  ``--list`` prints a line a set: its layout, tile
count, the share read as laid out and what its enrollment said to check.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from companion.cli import CommandError

if TYPE_CHECKING:
    from vision.tileset import TileSet

NAME = "enroll"
HELP = "teach a tile set from a photo of one of each tile (--sheet prints the layout to lay out)"
EXIT_NOT_LAYOUT = 3


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("photo", nargs="?", help="photo of one of each tile laid out as the sheet shows (left out with "
                   "--name of a set enrolled before: that set's own photo, kept in its folder, e.g. with --swap)")
    p.add_argument("--name", help="name of the tile set (letters, digits, _ . -)")
    p.add_argument("--layout", choices=["american", "chinese"],
                   help="the sheet the tiles are laid out by (default american; a set enrolled again: its own)")
    p.add_argument(
        "--sheet", metavar="OUT", help="write the layout sheet (.png, .pdf or .svg) and exit"
    )
    p.add_argument(
        "--root", type=Path, default=None, help="tile sets folder (default calibration/tilesets)"
    )
    p.add_argument(
        "--model", type=Path, default=None, help="classifier model (default the photo classifier: models/classifier-int8.onnx, else models/classifier.onnx)"
    )
    p.add_argument(
        "--list", action="store_true",
        help="list the enrolled tile sets, a line each: layout, tiles, share read as laid out, places to check",
    )
    p.add_argument(
        "--swap", action="append", metavar="A,B",
        help="the tiles in places A and B lie in each other's places: enroll each as the other "
             "(e.g. --swap 6B,FL1, as a warning of enroll may suggest; repeat for more pairs)",
    )
    p.add_argument(
        "--laid-right", action="append", metavar="PLACE",
        help="the tile in PLACE is the one the sheet asks for there, though it reads as another place's "
             "(e.g. --laid-right 7B where enroll took it for a tile laid twice; repeat for more places)",
    )
    p.add_argument(
        "--as-laid", action="store_true",
        help="keep every tile where it lies (by default two tiles that read surely as each other's "
             "codes are put back in each other's places, two that read likelier so are named, and a tile "
             "laid twice is refused)",
    )


def write_sheet(out: Path, layout: str) -> None:
    from vision.enroll import layout_sheet_svg

    svg = layout_sheet_svg(layout)
    suffix = out.suffix.lower()
    if suffix == ".svg":
        out.write_text(svg)
        return
    if suffix not in (".png", ".pdf"):
        raise CommandError(f"sheet must be .png, .pdf or .svg: {str(out)!r}")
    exe = shutil.which("rsvg-convert")
    if exe is None:
        raise CommandError(
            "rsvg-convert is needed for .png/.pdf sheets (Debian librsvg2-bin); use .svg"
        )
    res = subprocess.run(
        [exe, "-f", suffix[1:], "-o", str(out)], input=svg.encode(), capture_output=True
    )
    if res.returncode != 0:
        raise CommandError(
            f"cannot write sheet {str(out)!r}: {res.stderr.decode(errors='replace')[:200]}"
        )


def enroll(
    photo: Path, name: str, layout: str, root: Path | None, model: Path | None, as_laid: bool = False,
    swap: tuple[str, ...] = (), laid_right: tuple[str, ...] = (),
) -> Path:
    from dataclasses import replace

    import numpy as np

    from vision.classify import DEFAULT_MODEL, TileClassifier
    from vision.enroll import EnrollError, enroll_image, exchanges, places_of
    from vision.io import ImageLoadError, load_image
    from vision.runtime import sha256_of
    from vision.tileset import check_name, save_photo, save_tileset

    check_name(name)
    try:
        exchanged, right = exchanges(swap, layout), places_of(laid_right, layout)
    except ValueError as exc:
        raise CommandError(str(exc)) from exc
    if not photo.is_file():
        raise CommandError(f"photo not found: {str(photo)!r}")
    try:
        data = photo.read_bytes()
        image = load_image(photo)
    except (ImageLoadError, OSError) as exc:
        raise CommandError(str(exc)) from exc
    clf = TileClassifier(model or DEFAULT_MODEL)
    try:
        tileset, crops, agree = enroll_image(np.asarray(image, np.uint8), layout, clf, name, as_laid=as_laid,
                                            exchanged=exchanged, laid_right=right)
    except EnrollError as exc:
        raise CommandError(f"{photo}: {exc}", EXIT_NOT_LAYOUT) from exc
    meta = {
        **tileset.meta,  # turned_degrees: the photo was read turned upright
        "photo": str(photo),
        "classifier_sha256": sha256_of(clf.path),
        "base_agreement": round(agree, 3),
    }
    folder = save_tileset(replace(tileset, meta=meta), crops, root)
    save_photo(folder, data, photo.suffix)
    print(f"enrolled {len(tileset.codes)} tiles as {name!r} in {folder}")
    _report(tileset, agree, folder)
    return folder


def _report(tileset: TileSet, agree: float, folder: Path) -> None:
    """What the enrollment did and what the player should check: a photo read turned, tiles put
    back, two places that may hold each other's tiles, few tiles read as laid out; and the check
    sheet, every tile under the code it is enrolled as."""
    from vision.tileset import CHECK_SHEET

    sheet = folder / CHECK_SHEET
    print(f"each tile under the code it is enrolled as, laid out as the sheet lays them: {sheet} (compare it"
          " with the sheet; a tile under another tile's code was laid in the wrong place)")
    if tileset.meta.get("turned_degrees"):
        print(f"the photo was taken turned: read turned by {tileset.meta['turned_degrees']} degrees"
              " (counter-clockwise), where its tiles form the layout's rows")
    for a, b in tileset.meta.get("exchanged", []):
        print(f"exchanged as asked: the tile in {a}'s place is enrolled as {b}, the tile in {b}'s place as {a}")
    for place in tileset.meta.get("laid_right", []):
        print(f"laid right as said: the tile in {place}'s place is enrolled as {place}")
    for places in tileset.meta.get("exchanged_read_otherwise", []):
        where = " and ".join(f"{p}'s" for p in places)
        print(f"warning: exchanged as asked, though the tiles now in {where} places read surely as"
              f" each other's: look at them, framed in amber in {sheet}; if they were laid right, enroll again without"
              " that exchange")
    moved = tileset.meta.get("reordered")
    if moved:
        where = ", ".join(f"{m['tile']} in {m['place']}'s place" for m in moved)
        print(f"{len(moved)} tiles lay in each other's places: {where}; each is enrolled as the tile it"
              " reads surely (--as-laid keeps them as laid)")
    for a, b in tileset.meta.get("maybe_swapped", []):
        print(f"warning: the tiles in {a}'s and {b}'s places may lie in each other's places (each reads likelier"
              f" as the other's tile, though not surely): look at the two framed in amber in {sheet}; if they do,"
              f" enroll the same photo again with --swap {a},{b}, or lay them right and enroll again")
    print(f"the base classifier already reads {agree:.0%} of them as laid out")
    if agree < 0.3:
        print("warning: few tiles read as laid out; check that the tiles lie in the sheet's order")


def describe(name: str, root: Path | None = None) -> str:
    """One line for ``enroll --list``: the set's name, layout and tile count, how many the base
    classifier read as laid out, and what the enrollment said to check (tiles put back, two
    places that may hold each other's tiles); what its ``tileset.json`` lacks is left out."""
    import vision.tileset

    path = (root or vision.tileset.TILESETS_DIR) / name / "tileset.json"
    try:
        info = vision.tileset.tileset_info(path.parent)  # a TileSetError is a ValueError
        parts = [f"{info['layout']} layout, {len(info['codes'])} tiles"]
        if isinstance(info.get("base_agreement"), (int, float)):
            parts.append(f"{info['base_agreement']:.0%} read as laid out")
        parts += [f"exchanged as asked: {a} and {b}" for a, b in info.get("exchanged") or []]
        parts += [f"laid right as said: {p}" for p in info.get("laid_right") or []]
        moved = info.get("reordered") or []
        if moved:
            parts.append("put back: " + ", ".join(f"{m['tile']} in {m['place']}'s place" for m in moved))
    except (OSError, ValueError, KeyError, TypeError) as exc:  # a file written by hand, or cut short
        return f"{name}: unreadable {path}: {exc!r}"
    parts += [f"to check: {a} and {b} may lie in each other's places"
              for a, b in vision.tileset.places_to_check(path.parent)]
    return f"{name}: " + "; ".join(parts)


def run(args: argparse.Namespace) -> int:
    if args.sheet:
        write_sheet(Path(args.sheet), args.layout or "american")
        print(f"wrote {args.sheet}")
        return 0
    if args.list:
        from vision.tileset import list_tilesets

        for name in list_tilesets(args.root):
            print(describe(name, args.root))
        return 0
    if not args.name:
        raise CommandError("enroll needs --name NAME and a PHOTO (or --sheet OUT, or --list)")
    photo, layout = Path(args.photo) if args.photo else kept_photo(args.name, args.root), args.layout
    if not args.photo:
        print(f"enrolling {args.name!r} again from its own photo, {photo}")
        layout = layout or kept_layout(args.name, args.root)
    enroll(photo, args.name, layout or "american", args.root, args.model, args.as_laid, tuple(args.swap or ()),
           tuple(args.laid_right or ()))
    return 0


def kept_photo(name: str, root: Path | None) -> Path:
    """The photo kept with an enrolled set, to enroll it again from; a :class:`CommandError` that
    says what to give instead where there is none."""
    from vision.tileset import TileSetError, stored_photo

    try:
        photo = stored_photo(name, root)
    except TileSetError as exc:
        raise CommandError(str(exc)) from exc
    if photo is None:
        raise CommandError(f"enroll needs a PHOTO: there is no tile set {name!r} with its photo kept (a set enrolled"
                           " by an older version keeps none: give its photo again)")
    return photo


def kept_layout(name: str, root: Path | None) -> str | None:
    """The layout an enrolled set was laid out by, where its ``tileset.json`` says."""
    from vision.tileset import TileSetError, tileset_info

    try:
        layout = tileset_info(name, root).get("layout")
    except TileSetError:
        return None
    return layout if layout in ("american", "chinese") else None
