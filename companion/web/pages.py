"""HTML pages of the dashboard: live view, settings, calibration, enrollment, phone camera, pairing QR."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, current_app, render_template, request

from companion.web.qr import qr_svg

bp = Blueprint("pages", __name__)


def _ctx() -> dict[str, Any]:
    cfg = current_app.extensions["companion"]
    token = cfg["token"]
    pair_url = ""
    if token and cfg["host_url"]:
        pair_url = f"{cfg['host_url'].rstrip('/')}/?token={token}"
    local = request.remote_addr in ("127.0.0.1", "::1", None)
    return {"pair_url": pair_url if local else "", "lan": cfg["lan"]}


@bp.get("/")
def index() -> str:
    return render_template("index.html", **_ctx())


def _tilesets() -> list[str]:
    try:
        from vision.tileset import list_tilesets

        return list_tilesets()
    except (ImportError, OSError, ValueError):
        return []


@bp.get("/settings")
def settings() -> str:
    from companion.rules.variants import VARIANTS

    return render_template("settings.html", variants=sorted(VARIANTS), tilesets=_tilesets(), **_ctx())


@bp.get("/calibrate")
def calibrate() -> str:
    return render_template("calibrate.html", **_ctx())


@bp.get("/enroll")
def enroll() -> str:
    in_use = current_app.extensions["live"].config.tileset
    return render_template("enroll.html", tilesets=_tilesets(), in_use=in_use, **_ctx())


@bp.get("/enroll/sheet.svg")
def enroll_sheet() -> Response:
    from vision.enroll import EnrollError, layout_sheet_svg

    try:
        svg = layout_sheet_svg(request.args.get("layout", "american"))
    except EnrollError as exc:
        return Response(str(exc), status=400, mimetype="text/plain")
    return Response(svg, mimetype="image/svg+xml")


@bp.get("/camera")
def camera() -> str:
    return render_template("camera.html", **_ctx())


TILE_STYLES = ("gnome-smooth", "american-synth")  # gnome for the naturals, synthetic J/F/BK


def _tile_png(code: str) -> bytes | None:
    cache: dict[str, bytes | None] = current_app.extensions.setdefault("tile_pngs", {})
    if code not in cache:
        cache[code] = None
        try:
            import cv2

            from vision.artwork import tile_faces

            for style in TILE_STYLES:
                faces = tile_faces(style)
                if code in faces:
                    ok, buf = cv2.imencode(".png", faces[code][0])
                    cache[code] = buf.tobytes() if ok else None
                    break
        except (ImportError, OSError, ValueError):  # no shared artwork here: the page shows codes
            pass
    return cache[code]


@bp.get("/tiles/<code>.png")
def tile_picture(code: str) -> Response:
    from companion.rules.tiles import ALL_CODES

    if code not in ALL_CODES:
        return Response(f"unknown tile code: {code!r}", status=404, mimetype="text/plain")
    png = _tile_png(code)
    if png is None:
        return Response(f"no picture for {code}", status=404, mimetype="text/plain")
    return Response(png, mimetype="image/png", headers={"Cache-Control": "max-age=86400"})


@bp.get("/pair.svg")
def pair_svg() -> Response:
    ctx = _ctx()
    if not ctx["pair_url"]:
        return Response("pairing QR is shown only on the host, with --lan", status=404)
    return Response(qr_svg(ctx["pair_url"]), mimetype="image/svg+xml")
