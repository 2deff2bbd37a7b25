"""The dashboard: ``create_app(live, config)`` builds the Flask app around a running :class:`Live`.

No module-level globals: the live companion and the config ride on ``app.extensions``.  Blueprints:
:mod:`.pages` (HTML pages), :mod:`.api` (JSON, SSE, MJPEG, uploads), :mod:`.tilesets` (what an
enrolled set was taught).  With ``config["token"]``
set (``serve --lan``) every request must carry the pairing token (``?token=`` once, then a
cookie, or an ``X-Companion-Token`` header); others get 403.  Requests from the host itself
(loopback) pass, so the host's page can show the pairing QR code.
"""

from __future__ import annotations

import hmac
import threading
from typing import Any

from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException

DEFAULTS: dict[str, Any] = {"token": None, "max_upload": 4 * 1024 * 1024, "lan": False, "host_url": ""}
TOKEN_COOKIE = "companion_token"
LOOPBACK = ("127.0.0.1", "::1")


def create_app(live: Any, config: dict[str, Any] | None = None) -> Flask:
    cfg = {**DEFAULTS, **(config or {})}
    unknown = set(cfg) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"unknown web config keys: {sorted(unknown)}")
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = int(cfg["max_upload"])
    app.extensions["live"] = live
    app.extensions["companion"] = cfg
    app.extensions["enroll_lock"] = threading.Lock()  # enrollments one at a time (companion.web.api.enroll)

    from companion.web import api, pages, tilesets

    app.register_blueprint(pages.bp)
    app.register_blueprint(api.bp)
    app.register_blueprint(tilesets.bp)

    @app.before_request
    def _check_token() -> Any:
        token = cfg["token"]
        if not token or request.remote_addr in LOOPBACK:
            return None  # the host itself needs no token: its page shows the pairing QR code
        given = (request.args.get("token") or request.headers.get("X-Companion-Token")
                 or request.cookies.get(TOKEN_COOKIE) or "")
        if not hmac.compare_digest(str(given), str(token)):
            return jsonify(error="pairing token required: scan the QR code on the host's page"), 403
        return None

    @app.after_request
    def _remember_token(resp: Response) -> Response:
        if cfg["token"] and request.args.get("token") == cfg["token"]:
            resp.set_cookie(TOKEN_COOKIE, str(cfg["token"]), httponly=True, samesite="Strict")
        return resp

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException) -> Any:
        if request.path.startswith("/api/"):
            said = exc.description or exc.name
            if exc.code == 413:
                limit = int(cfg["max_upload"])
                size = f"{limit / 2**20:g} MiB" if limit >= 2**20 else f"{limit // 1024} KiB"
                said = (f"upload too large: {size} at most (a photo: make it smaller, e.g. 3000 pixels on its long "
                        "side; the enroll page does so itself)")
            return jsonify(error=said), exc.code
        return exc

    return app
