"""Game events the live loop feeds to ``state.apply``, and their JSON dict forms.

Players are named by their names (as in the settle records); racks by index 0/1.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from companion.rules.tiles import parse_tiles, validate_code


@dataclass(frozen=True)
class Draw:
    player: str


@dataclass(frozen=True)
class Discard:
    player: str
    tile: str


@dataclass(frozen=True)
class Expose:
    """Claim the last discard and expose it with ``tiles`` (which include it) on ``rack``.

    ``viable`` is the card matcher's verdict on the rack's exposures after this one (SIA-12);
    None when unknown."""

    player: str
    rack: int
    tiles: tuple[str, ...]
    viable: bool | None = None


@dataclass(frozen=True)
class Correct:
    """Move a just-made exposure to another rack before discarding (MJM correction rule)."""

    player: str
    exposure: int
    to_rack: int
    viable: bool | None = None


@dataclass(frozen=True)
class JokerExchange:
    """``player`` swaps ``natural`` for a joker in exposure ``exposure`` of ``owner``'s ``rack``."""

    player: str
    natural: str
    owner: str
    rack: int
    exposure: int
    from_discard: bool = False


@dataclass(frozen=True)
class DeclareMahjong:
    """A 14-tile Mah Jongg on ``rack`` (the matcher's result as plain values)."""

    player: str
    rack: int
    hand_id: str
    jokerless: bool = False
    value: int = 0
    claimed: bool = False
    simultaneous: bool = False
    tiles: tuple[str, ...] = ()


@dataclass(frozen=True)
class Dead:
    player: str
    rack: int
    cause: tuple[int, ...] = ()
    reason: str = ""


@dataclass(frozen=True)
class Flower:
    """WP/Chinese: a flower or season set aside on ``rack`` and replaced from the flower wall."""

    player: str
    rack: int
    tile: str


@dataclass(frozen=True)
class Kong:
    """WP/Chinese: a declared kong draws a replacement tile (the count rises by one)."""

    player: str


@dataclass(frozen=True)
class WallGame:
    pass


@dataclass(frozen=True)
class Count:
    """An observed tile total for a player (camera K-check)."""

    player: str
    held: int


Event = (Draw | Discard | Expose | Correct | JokerExchange | DeclareMahjong | Dead | Flower | Kong
         | WallGame | Count)
EVENT_TYPES: dict[str, type[Any]] = {
    "draw": Draw, "discard": Discard, "expose": Expose, "correct": Correct,
    "joker_exchange": JokerExchange, "declare_mahjong": DeclareMahjong, "dead": Dead,
    "flower": Flower, "kong": Kong, "wall_game": WallGame, "count": Count,
}
_NAMES = {cls: name for name, cls in EVENT_TYPES.items()}
_TILE_FIELDS = {"tile", "natural"}
_TILES_FIELDS = {"tiles"}


def event_to_dict(event: Event) -> dict[str, Any]:
    d = asdict(event)
    for key, value in d.items():
        if isinstance(value, tuple):
            d[key] = list(value)
    return {"type": _NAMES[type(event)], **d}


def event_from_dict(data: dict[str, Any]) -> Event:
    """Build an event; ValueError naming the bad type, field or tile code."""
    kind = data.get("type")
    cls = EVENT_TYPES.get(str(kind))
    if cls is None:
        raise ValueError(f"unknown event type {kind!r} (known: {', '.join(EVENT_TYPES)})")
    names = {f.name for f in fields(cls)}
    extra = sorted(set(data) - names - {"type"})
    if extra:
        raise ValueError(f"event {kind!r}: unknown field(s) {', '.join(extra)}")
    args: dict[str, Any] = {}
    for key, value in data.items():
        if key == "type":
            continue
        if key in _TILE_FIELDS:
            value = validate_code(str(value))
        elif key in _TILES_FIELDS:
            value = tuple(parse_tiles(value if isinstance(value, str) else " ".join(value)))
        elif key == "cause":
            value = tuple(int(v) for v in value)
        args[key] = value
    try:
        event: Event = cls(**args)
    except TypeError as exc:
        raise ValueError(f"event {kind!r}: {exc}") from None
    return event
