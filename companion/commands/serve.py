"""``serve``: the live companion with its dashboard (camera in, browser page out)."""

from __future__ import annotations

import argparse
import logging
import os
import secrets
import socket
import subprocess
from pathlib import Path

NAME = "serve"
HELP = "follow a game from a camera and serve the live dashboard (default: the bundled demo)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--source", default=None,
                   help="camera index, video file, image folder, MJPEG/RTSP/HTTP URL, 'phone' or 'demo' "
                        "(default: camera 0, else the demo)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--lan", action="store_true",
                   help="serve the local network (binds 0.0.0.0) with a pairing token shown as a QR code")
    p.add_argument("--https", action="store_true", help="serve HTTPS with a self-signed certificate "
                   "(needed for the phone camera page)")
    p.add_argument("--data", default=None, help="data folder for the SQLite store (default ~/.local/share/siamese-companion)")
    p.add_argument("--variant", default="mjm", help="ruleset: grad, mjm, royale, wp (default mjm)")
    p.add_argument("--card", default=None, help="card file (default calibration/cards/example.mjcard)")
    p.add_argument("--layout", default=None, help="table layout JSON (default calibration/layouts/siamese-2.json)")
    p.add_argument("--tileset", default=None, help="an enrolled tile set's name, or american for the base recogniser "
                   "(default: the set last chosen on the dashboard, else american)")
    p.add_argument("--camera-size", default="1920x1080", metavar="WxH",
                   help="the frame size asked of a camera index (default 1920x1080: the far racks' tiles "
                        "read better than at 1280x720, at about the same cost per reading)")
    p.add_argument("--replay-demo", action="store_true",
                   help="with --source demo: replay the readings recorded with the demo's frames instead of "
                        "reading them with the recognition models (the default, when the models load)")
    p.add_argument("--demo-models", action="store_true",
                   help="with --source demo: read the frames with the recognition models (the default; kept "
                        "for scripts)")


def _lan_address() -> str:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("10.255.255.255", 1))  # no packet is sent; this picks the outgoing interface
        return str(s.getsockname()[0])
    except OSError:
        return "127.0.0.1"
    finally:
        s.close()


def self_signed_cert(folder: Path, host: str) -> tuple[Path, Path]:
    """A self-signed certificate for ``host`` (made once, kept in ``folder``), via the openssl CLI."""
    folder.mkdir(parents=True, exist_ok=True)
    cert, key = folder / "cert.pem", folder / "key.pem"
    if cert.is_file() and key.is_file():
        return cert, key
    san = f"subjectAltName=IP:{host},DNS:localhost" if host[0].isdigit() else f"subjectAltName=DNS:{host}"
    cmd = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "825",
           "-keyout", str(key), "-out", str(cert), "-subj", "/CN=siamese-companion", "-addext", san]
    try:
        subprocess.run(cmd, check=True, capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        raise OSError(f"cannot make a self-signed certificate with openssl: {exc}") from exc
    return cert, key


def _pick_source(requested: str | None) -> tuple[str, list[str]]:
    from vision.capture import probe

    if requested is not None:
        return requested, []
    if os.environ.get("COMPANION_NO_CAMERA") != "1" and probe("0"):
        return "0", []
    return "demo", ["No camera opened: playing the bundled demo (start with --source to choose)."]


def run(args: argparse.Namespace) -> int:
    from companion.cli import CommandError
    from companion.live import Live, LiveConfig, data_dir_default
    from companion.rules.variants import get_variant
    from companion.web import create_app

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from vision.capture import parse_size

    get_variant(args.variant)  # an unknown variant is a usage error, before anything starts
    try:
        camera_size = parse_size(args.camera_size)
    except ValueError as exc:
        raise CommandError(f"--camera-size: {exc}") from exc
    source, warnings = _pick_source(args.source)
    data = Path(args.data) if args.data else data_dir_default()
    if source == "demo":
        data = data / "demo"  # the looping demo keeps its games apart from real sessions
    host = "0.0.0.0" if args.lan and args.host == "127.0.0.1" else args.host
    scheme = "https" if args.https else "http"
    token = secrets.token_urlsafe(16) if args.lan else None
    lan_ip = _lan_address() if args.lan else args.host
    config = LiveConfig(source=source, variant=args.variant, card=args.card, layout=args.layout,
                        tileset=args.tileset, data_dir=str(data), warnings=tuple(warnings), camera_size=camera_size,
                        replay=bool(args.replay_demo and not args.demo_models))
    live = Live(config)
    app = create_app(live, {"token": token, "lan": bool(args.lan),
                            "host_url": f"{scheme}://{lan_ip}:{args.port}"})
    ssl_context = self_signed_cert(data / "tls", lan_ip) if args.https else None
    live.start()
    url = f"{scheme}://{'127.0.0.1' if host == '0.0.0.0' else host}:{args.port}/"
    print(f"siamese companion: {url}  (source: {source}, data: {data})", flush=True)
    if token:
        print(f"LAN pairing: {scheme}://{lan_ip}:{args.port}/?token={token}  (QR code on {url})", flush=True)
    try:
        app.run(host=host, port=args.port, threaded=True, ssl_context=ssl_context, use_reloader=False)
    except OSError as exc:
        raise CommandError(f"cannot serve on {host}:{args.port}: {exc}") from exc
    finally:
        live.stop()
    return 0
