"""Table readers for the live loop, and the plug points to the rules helpers.

A reader turns one stable frame into a :class:`~companion.table.TableObservation`:
:class:`ModelReader` wraps ``companion.table.TableReader`` with the tile recogniser when the
models are installed; :class:`ReplayReader` replays the readings recorded beside the bundled
demo frames (used when the models are missing, and said so on the page).  ``check_card`` and
``settle_session`` call the card and scoring modules, degrading to a clear message when a
module is not there.
"""

from __future__ import annotations

import importlib
import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from companion.live_game import observation_from_json
from companion.table import TableObservation
from vision.capture import DEMO_DIR

if TYPE_CHECKING:
    from companion.live import LiveConfig

log = logging.getLogger(__name__)
DEFAULT_LAYOUT = Path(__file__).resolve().parents[1] / "calibration" / "layouts" / "siamese-2.json"


class TableReaderLike(Protocol):
    def read(self, image: np.ndarray, name: str = "") -> TableObservation | None: ...


class ReplayReader:
    """Readings recorded for the demo frames (``readings.json``: frame file name -> observation)."""

    def __init__(self, path: str | Path = DEMO_DIR / "readings.json") -> None:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        self.frames: dict[str, TableObservation] = {
            name: observation_from_json(obs) for name, obs in data["frames"].items()
        }

    def read(self, image: np.ndarray, name: str = "") -> TableObservation | None:
        return self.frames.get(name)


class ModelReader:
    """``companion.table.TableReader`` over the tile recogniser (both built by their helpers)."""

    def __init__(self, reader: Any) -> None:
        self.reader = reader

    def read(self, image: np.ndarray, name: str = "") -> TableObservation | None:
        obs: TableObservation = self.reader.read(image)
        return obs


class NullReader:
    """No recogniser and no recording: the loop still runs, shows video, and reads nothing."""

    def read(self, image: np.ndarray, name: str = "") -> TableObservation | None:
        return None


def _load_card(path: str | None) -> Any:
    if not path:
        return None
    from companion.rules.card import load_card  # type: ignore[import-not-found,unused-ignore]

    return load_card(path)


def _saved_calibration(config: LiveConfig) -> Any:
    """The four-click calibration saved by the dashboard, if any (markers need none)."""
    path = Path(config.data_dir) / "calibration.json"
    if not path.is_file():
        return None
    from vision.calibrate import Calibration

    d = json.loads(path.read_text(encoding="utf-8"))
    return Calibration(np.asarray(d["image_to_table"], np.float64), tuple(d["table_mm"]),
                       tuple(d.get("image_size", (0, 0))), str(d.get("source", "corners")))


def _model_reader(config: LiveConfig) -> ModelReader:
    table = importlib.import_module("companion.table")
    layout_mod = importlib.import_module("vision.layout")
    pipeline = importlib.import_module("vision.pipeline")
    saved = Path(config.data_dir) / "layout.json"
    layout = layout_mod.load_layout(config.layout or (saved if saved.is_file() else DEFAULT_LAYOUT))
    tileset = config.tileset if config.tileset not in (None, "american") else None
    recognizer = pipeline.TileRecognizer(tileset=tileset)
    reader = table.TableReader(layout, recognizer, card=_load_card(config.card or _default_card()),
                               variant=config.variant, calibration=_saved_calibration(config))
    return ModelReader(reader)


def _default_card() -> str | None:
    from companion.live_rules import DEFAULT_CARD

    return str(DEFAULT_CARD) if DEFAULT_CARD.is_file() else None


def make_reader(config: LiveConfig, warnings: list[str]) -> TableReaderLike:
    """The best reader available; every fallback appends a warning for the page's banner."""
    reason = "unknown"
    if config.replay and config.source == "demo":
        warnings.append("The demo replays the readings recorded with its frames (--replay-demo); start "
                        "without it to see the recognition models read them.")
        return ReplayReader()
    try:
        reader = _model_reader(config)
    except Exception as exc:  # missing models or modules must not stop the server
        reason = f"{type(exc).__name__}: {exc}"
        log.warning("tile recognition unavailable: %s", reason)
    else:
        warnings.extend(tileset_warnings(config.tileset or "american"))
        return reader
    if config.source == "demo" and (DEMO_DIR / "readings.json").is_file():
        warnings.append(f"Tile recognition models unavailable ({reason}); the demo replays the "
                        "readings recorded with its frames.")
        return ReplayReader()
    warnings.append(f"Tile recognition models unavailable ({reason}); video only, no readings.")
    return NullReader()


def tileset_warnings(name: str) -> list[str]:
    """What an enrolled set's enrollment asked the player to check (two places that may hold each
    other's tiles, ``vision.tileset.places_to_check``), for the page's banner; none for the base
    recogniser or a set whose ``tileset.json`` does not say (or cannot be read)."""
    if name == "american":
        return []
    from vision.tileset import to_check

    return [f"{line[0].upper()}{line[1:]}." for line in to_check(name)]


TILESET_CHOICE = "tileset.txt"
"""The tile set chosen on the dashboard, kept in the data folder for the next start."""


def chosen_tileset(data_dir: str | Path, warnings: list[str]) -> str:
    """The tile set chosen on the dashboard before (``DATA/tileset.txt``), else ``american`` (the
    base recogniser); a chosen set no longer enrolled is said in ``warnings`` and not used."""
    path = Path(data_dir) / TILESET_CHOICE
    try:
        name = path.read_text(encoding="utf-8").strip()
    except OSError:
        return "american"
    try:
        return check_tileset(name)
    except ValueError as exc:
        warnings.append(f"The tile set chosen before cannot be read ({exc}); reading with the base recogniser.")
        return "american"


def keep_tileset_choice(data_dir: str | Path, name: str) -> None:
    folder = Path(data_dir)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / TILESET_CHOICE).write_text(name + "\n", encoding="utf-8")


def check_tileset(name: str) -> str:
    """``name`` where it is ``american`` (the base recogniser) or an enrolled set that can be read;
    else a ValueError that names it."""
    if name != "american":
        from vision.tileset import load_tileset

        try:
            load_tileset(name)  # TileSetError (a ValueError) names a set not enrolled
        except (OSError, KeyError) as exc:
            raise ValueError(f"tile set {name!r} cannot be read: {exc}") from exc
    return name


def fresh_reader(current: TableReaderLike, config: LiveConfig, warnings: list[str],
                 strict: bool = False) -> TableReaderLike | None:
    """A new recognisers' reader for ``config`` where ``current`` is one (None where it is the
    demo's replay or none).  Where the models cannot load, ``strict`` raises a ValueError that says
    why; otherwise the reason goes to ``warnings`` and None comes back (``current`` stays)."""
    if not isinstance(current, ModelReader):
        return None
    try:
        return _model_reader(config)
    except Exception as exc:  # whatever stops the models from loading is said, not raised on
        said = f"cannot read with tile set {config.tileset!r}: {type(exc).__name__}: {exc}"
        if strict:
            raise ValueError(said) from exc
        warnings.append(f"{said}; the table reader keeps its rules as they were.")
        return None


def check_card(text: str, filename: str) -> tuple[Any, list[dict[str, Any]]]:
    """Parse an uploaded card: (the card or None, issues with file/line/col/message)."""
    from companion.rules.card import CardError, parse_card

    try:
        card = parse_card(text, filename)
    except CardError as exc:
        issues = [{"file": i.file, "line": i.line, "col": i.col, "message": i.message} for i in exc.issues]
        return None, issues or [{"file": filename, "line": None, "col": None, "message": str(exc)}]
    return card, []
