"""What an enrolled tile set was taught, for the enroll page to show and the player to check.

- ``GET /api/tilesets/<name>``: the set's layout, its codes in layout order, the layout's row
  lengths, the places its enrollment marked (``{place: "check" | "moved"}``,
  :func:`vision.tileset_sheet.marks`), what to check in words, the places put back and the pairs
  exchanged as asked, and whether its photo is kept (to enroll it again from: ``POST /api/enroll``
  with no photo);
- ``GET /api/tilesets/<name>/crops/<i>.png``: the crop enrolled for the ``i``-th place;
- ``GET /api/tilesets/<name>/check.png``: every crop under its code in one picture
  (:func:`vision.tileset_sheet.sheet_of`).

A bad name is a 400 naming it, a set or crop not there a 404, a ``tileset.json`` that cannot be
read a 422; never a 500.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flask import Blueprint, Response, abort, jsonify

bp = Blueprint("tilesets", __name__)


def _folder(name: str) -> Path:
    """The stored set's folder; 400 for a bad name, 404 where no set of that name is enrolled."""
    from vision.tileset import TileSetError, tileset_dir

    try:
        folder = tileset_dir(name)
    except TileSetError as exc:
        abort(400, description=str(exc))
    if not (folder / "tileset.json").is_file():
        abort(404, description=f"no enrolled tile set {name!r}")
    return folder


def _info(folder: Path) -> dict[str, Any]:
    from vision.tileset import TileSetError, tileset_info

    try:
        info = tileset_info(folder)
    except TileSetError as exc:
        abort(422, description=str(exc))
    if not isinstance(info.get("codes"), list):
        abort(422, description=f"cannot read {folder / 'tileset.json'}: no list of codes")
    return info


def _list(info: dict[str, Any], key: str) -> list[Any]:
    """A list field of ``tileset.json``; none where a hand-edited file gives something else."""
    value = info.get(key)
    return value if isinstance(value, list) else []


@bp.get("/api/tilesets/<name>")
def tileset(name: str) -> Response:
    from vision.tileset import stored_photo, to_check
    from vision.tileset_sheet import marks, rows_of

    folder = _folder(name)
    info = _info(folder)
    codes = [str(c) for c in info["codes"]]
    put_back = [str(m["place"]) for m in _list(info, "reordered") if isinstance(m, dict) and "place" in m]
    exchanged = [[str(a), str(b)] for a, b in (q for q in _list(info, "exchanged") if isinstance(q, list) and len(q) == 2)]
    return jsonify(name=name, layout=info.get("layout"), codes=codes, rows=rows_of(str(info.get("layout")), len(codes)),
                   marks=marks(info), to_check=to_check(folder), photo=stored_photo(folder) is not None,
                   put_back=put_back, exchanged=exchanged)


@bp.get("/api/tilesets/<name>/crops/<int:index>.png")
def crop(name: str, index: int) -> Response:
    folder = _folder(name)
    files = sorted((folder / "crops").glob(f"{index:02d}_*.png"))
    if not files:
        abort(404, description=f"tile set {name!r} has no crop {index}")
    return Response(files[0].read_bytes(), mimetype="image/png", headers={"Cache-Control": "no-store"})


@bp.get("/api/tilesets/<name>/check.png")
def check(name: str) -> Response:
    import cv2

    from vision.tileset_sheet import sheet_of

    sheet = sheet_of(_folder(name))
    if sheet is None:
        abort(422, description=f"tile set {name!r}: its crops or its tileset.json cannot be read")
    return Response(cv2.imencode(".png", sheet)[1].tobytes(), mimetype="image/png",
                    headers={"Cache-Control": "no-store"})
