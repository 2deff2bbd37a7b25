"""JSON API, server-sent events, MJPEG video and uploads of the dashboard.

``GET /api/state`` everything the page shows; ``GET /api/events`` the same as SSE, pushed on every
change; ``GET /video.mjpg`` the annotated video (a generator that only reads hub snapshots);
``POST /api/correct``, ``/api/flags/<id>``, ``/api/card``, ``/api/settings``, ``/api/game/new``, ``/api/session/finish``,
``/api/phone/frame``, ``/api/calibrate``; ``GET /api/export.json|.csv``.  Bad input gets a 4xx
JSON ``{"error": ...}`` naming what was wrong, never a 500.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Response, abort, current_app, jsonify, request

bp = Blueprint("api", __name__)
BOUNDARY = "frame"


def _live() -> Any:
    return current_app.extensions["live"]


def _json_body() -> dict[str, Any]:
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        abort(400, description="expected a JSON object body")
    return data


@bp.get("/api/state")
def state() -> Response:
    return jsonify(_live().hub.state())


@bp.get("/api/events")
def events() -> Response:
    hub = _live().hub
    once = request.args.get("once") == "1"

    def stream() -> Iterator[str]:
        seq, st = hub.wait_state(-1, timeout=0)
        yield f"id: {seq}\nevent: state\ndata: {json.dumps(st)}\n\n"
        while not once:
            new_seq, st = hub.wait_state(seq, timeout=15)
            if new_seq == seq:
                yield ": keep-alive\n\n"
                continue
            seq = new_seq
            yield f"id: {seq}\nevent: state\ndata: {json.dumps(st)}\n\n"

    return Response(stream(), mimetype="text/event-stream",
                    headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


def mjpeg(hub: Any, limit: int | None = None, wait: float = 2.0) -> Iterator[bytes]:
    """``multipart/x-mixed-replace`` parts from the hub's latest JPEG snapshots; the last frame is
    sent again after ``wait`` seconds without a new one, which keeps the connection alive."""
    seq, sent = -1, 0
    while limit is None or sent < limit:
        seq, jpeg = hub.frame(seq, timeout=wait)
        if not jpeg:
            continue
        sent += 1
        yield (f"--{BOUNDARY}\r\nContent-Type: image/jpeg\r\nContent-Length: {len(jpeg)}\r\n\r\n"
               .encode() + jpeg + b"\r\n")


@bp.get("/video.mjpg")
def video() -> Response:
    limit = request.args.get("frames", type=int)
    return Response(mjpeg(_live().hub, limit), mimetype=f"multipart/x-mixed-replace; boundary={BOUNDARY}")


@bp.get("/snapshot.jpg")
def snapshot() -> Response:
    """The latest annotated frame; ``?raw=1`` the camera's frame without drawings."""
    if request.args.get("raw") == "1":
        jpeg = _live().raw_snapshot()
    else:
        _, jpeg = _live().hub.frame(-1, timeout=2.0)
    if not jpeg:
        abort(503, description="no frame yet")
    return Response(jpeg, mimetype="image/jpeg")


@bp.post("/api/correct")
def correct() -> Response:
    """A tile put right (``code``), a tile the camera missed added after tile ``index``
    (``action: "add"``, ``index`` -1 for first; ``"add_new"`` to start an exposure with it), a tile
    that is none taken out (``"remove"``), or the rack's tiles as the camera read them again
    (``"restore"``)."""
    body = _json_body()
    action = str(body.get("action", "correct"))
    try:
        zone, index = str(body["zone"]), int(body.get("index", -1) if action == "restore" else body["index"])
        code = str(body["code"]) if action in ("correct", "add", "add_new") else ""
    except (KeyError, TypeError, ValueError):
        abort(400, description="expected {zone, index, code} (and an action: correct, add, add_new, remove or restore)")
    try:
        _live().correct(zone, index, code, action)
    except KeyError as exc:
        abort(404, description=str(exc.args[0]))
    except ValueError as exc:
        abort(400, description=str(exc))
    return jsonify(ok=True, action=action, zone=zone, index=index, code=code.strip().upper())


@bp.post("/api/flags/<int:flag_id>")
def flag(flag_id: int) -> Response:
    status = str(_json_body().get("status", ""))
    try:
        rec = _live().set_flag(flag_id, status)
    except KeyError as exc:
        abort(404, description=str(exc.args[0]))
    except ValueError as exc:
        abort(400, description=str(exc))
    return jsonify(rec)


@bp.post("/api/card")
def card() -> Response | tuple[Response, int]:
    from companion.live_readers import check_card

    upload = request.files.get("card")
    if upload is None or not upload.filename:
        abort(400, description="no card file in the upload (form field 'card')")
    try:
        text = upload.read().decode("utf-8")
    except UnicodeDecodeError:
        abort(400, description=f"{upload.filename}: not a UTF-8 text file")
    card_obj, issues = check_card(text, upload.filename)
    if issues:
        return jsonify(error=f"{upload.filename}: {len(issues)} error(s)", issues=issues), 422
    _live().set_card(upload.filename, card_obj, text)
    return jsonify(ok=True, name=upload.filename, hands=len(card_obj.hands))


@bp.post("/api/game/new")
def new_game() -> Response:
    return jsonify(game=_live().new_game())


@bp.post("/api/session/finish")
def finish_session() -> Response:
    return jsonify(_live().finish_session())


@bp.get("/api/export.json")
def export_json() -> Response:
    live = _live()
    session = request.args.get("session", default=live.session_id, type=int)
    try:
        data = live.store.export_session(session)
    except ValueError as exc:
        abort(404, description=str(exc))
    return Response(json.dumps(data, indent=1), mimetype="application/json",
                    headers={"Content-Disposition": f"attachment; filename=session-{session}.json"})


@bp.get("/api/export.csv")
def export_csv() -> Response:
    live = _live()
    session = request.args.get("session", default=live.session_id, type=int)
    return Response(live.store.export_csv(session), mimetype="text/csv",
                    headers={"Content-Disposition": f"attachment; filename=session-{session}.csv"})


@bp.post("/api/phone/frame")
def phone_frame() -> Response:
    data = request.get_data(cache=False)
    if not data or data[:2] != b"\xff\xd8":
        abort(400, description="expected a JPEG body")
    _live().phone.push(data)
    return jsonify(ok=True, t=time.time())


@bp.post("/api/calibrate")
def calibrate() -> Response:
    body = _json_body()
    points = body.get("points")
    if (not isinstance(points, list) or len(points) != 4
            or not all(isinstance(p, list) and len(p) == 2 for p in points)):
        abort(400, description="expected 4 points [[x, y], ...] clicked clockwise from top-left")
    try:
        pts = [[float(x), float(y)] for x, y in points]
    except (TypeError, ValueError):
        abort(400, description="points must be numbers")
    try:
        saved = _live().calibrate(pts, body.get("table_mm"))
    except (ValueError, TypeError) as exc:
        abort(400, description=str(exc))
    return jsonify(saved)


def _enroll_photo(name: str) -> tuple[bytes, str]:
    """The photo to enroll from and its file suffix: the upload, the camera's frame, or else the
    photo kept with the set of that name (enrolled again, e.g. with two places exchanged)."""
    from pathlib import Path

    from vision.tileset import TileSetError, stored_photo

    upload = request.files.get("photo")
    if upload is not None and upload.filename:
        suffix = Path(upload.filename).suffix
        return upload.read(), suffix if suffix.lower() in (".jpg", ".jpeg", ".png", ".webp", ".bmp") else ".jpg"
    if request.form.get("use_camera"):
        data = _live().raw_snapshot()
        if not data:
            abort(503, description="no camera frame yet")
        return data, ".jpg"
    try:
        kept = stored_photo(name)
    except TileSetError as exc:
        abort(400, description=str(exc))
    if kept is None:
        abort(400, description=f"upload a photo (form field 'photo') or set use_camera=1 (tile set {name!r} keeps "
                               "no photo to enroll again from)")
    return kept.read_bytes(), kept.suffix


@bp.post("/api/enroll")
def enroll() -> Response:
    """Enroll a tile set from an uploaded photo (or the current camera frame, or the photo kept with
    the set of that name), as ``enroll`` does."""
    import tempfile
    from pathlib import Path

    from companion.cli import CommandError
    from companion.commands.enroll import enroll as enroll_photo
    from companion.commands.enroll import kept_layout
    from vision.enroll import LaidTwiceError, exchanges, places_of
    from vision.tileset import TileSetError, check_name

    name = (request.form.get("name") or "").strip()
    if not name:
        abort(400, description="give the tile set a name")
    try:
        check_name(name)
    except TileSetError as exc:
        abort(400, description=str(exc))
    layout = request.form.get("layout") or kept_layout(name, None) or "american"
    if layout not in ("american", "chinese"):
        abort(400, description=f"unknown layout: {layout!r} (american or chinese)")
    try:
        exchanges(request.form.getlist("swap"), layout)
        places_of(request.form.getlist("laid_right"), layout)
    except ValueError as exc:
        abort(400, description=str(exc))
    with current_app.extensions["enroll_lock"], tempfile.TemporaryDirectory() as tmp:  # one at a time: a set's folder
        data, suffix = _enroll_photo(name)  # is written whole, and its kept photo read, by one enrollment alone
        photo = Path(tmp) / f"enroll{suffix}"
        photo.write_bytes(data)
        try:
            folder = enroll_photo(photo, name, layout, None, None, as_laid=bool(request.form.get("as_laid")),
                                  swap=tuple(request.form.getlist("swap")), laid_right=tuple(request.form.getlist("laid_right")))
        except CommandError as exc:  # a tile perhaps laid twice: its places, for the page to ask about
            twice = exc.__cause__.places if isinstance(exc.__cause__, LaidTwiceError) else []
            return Response(json.dumps({"error": str(exc), "laid_twice": twice}), status=422, mimetype="application/json")
        except (ValueError, OSError) as exc:  # bad name, missing classifier model, unreadable photo
            abort(422, description=str(exc))
        return _enrolled(name, folder)


def _enrolled(name: str, folder: Any) -> Response:
    """What an enrollment did, for the page; the set read with, enrolled again, read as it is now."""
    from vision.tileset import load_tileset

    meta = load_tileset(folder).meta
    live = _live()
    if live.config.tileset == name:
        try:
            live.set_tileset(name)
        except ValueError as exc:
            abort(422, description=f"enrolled, but the companion cannot read with it: {exc}")
    lists = ("reordered", "maybe_swapped", "exchanged", "exchanged_read_otherwise", "laid_right")
    return jsonify(ok=True, name=name, folder=str(folder), base_agreement=meta.get("base_agreement"),
                   turned_degrees=meta.get("turned_degrees", 0), **{k: meta.get(k, []) for k in lists})


@bp.post("/api/zones")
def zones() -> Response:
    """Zones dragged into place on the calibration snapshot: ``{"zones_px": {name: [[x, y], ...]}}``."""
    body = _json_body()
    zones_px = body.get("zones_px")
    if not isinstance(zones_px, dict) or not all(
            isinstance(v, list) and len(v) >= 3 and all(isinstance(p, list) and len(p) == 2 for p in v)
            for v in zones_px.values()):
        abort(400, description="expected zones_px: {zone name: [[x, y], ...]}")
    try:
        saved = _live().save_zones(zones_px)
    except (ValueError, TypeError) as exc:
        abort(400, description=str(exc))
    return jsonify(saved)


@bp.post("/api/settings")
def settings() -> Response:
    """``{"variant": "grad"}``: switch the ruleset of the running game; ``{"tileset": "mine"}``: read
    with an enrolled set from now on (``american``: the base recogniser), kept for the next start."""
    body = _json_body()
    variant, tileset = body.get("variant"), body.get("tileset")
    if not isinstance(variant, str | None) or not isinstance(tileset, str | None) or (variant is None and tileset is None):
        abort(400, description="expected {variant: NAME} or {tileset: NAME}")
    live = _live()
    try:
        if variant is not None:
            live.set_variant(variant)
        if tileset is not None:
            live.set_tileset(tileset)
    except ValueError as exc:
        abort(400, description=str(exc))
    return jsonify(ok=True, variant=live.config.variant, tileset=live.config.tileset)
