"""Card text -> syntax values (:class:`HandSpec`), with every error's line and column.

Owns the grammar of rules-spec 4.3 plus the chow extension (``~123g``, ``~xg``).  Nothing here
expands colours or variables; :mod:`companion.rules.card_compile` does that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from companion.rules.card_model import CardIssue, JokerlessMode
from companion.rules.card_where import Constraint, parse_constraint

VARS = "xyzuv"
DIGITS = "123456789"
NEUTRAL = "0FNEWS"
SUITED = DIGITS + "D" + VARS
COLOURS = "rgb?"
EXPLICIT_KINDS = ("RD", "GD", "WD", "anyD", "anyW", "F", "N", "E", "W", "S")
_JOKERLESS: dict[str, JokerlessMode] = {"auto": "auto", "yes": "yes", "no": "no"}
EXPOSURES = {"exposed": False, "X": False, "concealed": True, "C": True}
_ID = re.compile(r"[A-Za-z0-9_.-]+")
_STRING = re.compile(r'"([^"\\]*)"')
_EXPLICIT = re.compile(r"\(([A-Za-z]+)\*([0-9]+)\)")

Symbol = tuple[str, int]
"""One symbol of a group: a base (digit, ``0``, ``D``, ``F``, wind letter or variable) and an
offset added to a number (used by ``~xg`` chows: ``x``, ``x+1``, ``x+2``)."""


@dataclass(frozen=True)
class Simple:
    """One alternative of a group: symbols with a colour, or an explicit ``(KIND*n)`` group."""

    text: str
    col: int
    symbols: tuple[Symbol, ...] = ()
    colour: str | None = None
    nojoker: bool = False
    explicit: str | None = None
    count: int = 0

    @property
    def size(self) -> int:
        return self.count if self.explicit else len(self.symbols)


@dataclass(frozen=True)
class GroupSpec:
    text: str
    col: int
    alts: tuple[Simple, ...]


@dataclass(frozen=True)
class PatternSpec:
    text: str
    col: int
    groups: tuple[GroupSpec, ...]
    complete: bool = True
    """False when some group failed to parse (its size is then unknown)."""


@dataclass
class HandSpec:
    id: str
    name: str
    section: str
    line: int
    col: int
    source: str
    patterns: list[PatternSpec] = field(default_factory=list)
    concealed: bool = False
    value: int = 0
    shift: str = "none"
    shift_col: int = 0
    jokerless: JokerlessMode = "auto"
    where: list[Constraint] = field(default_factory=list)
    where_col: int = 0
    note: str = ""


@dataclass
class CardSpec:
    name: str | None = None
    copies: int = 4
    hands: list[HandSpec] = field(default_factory=list)
    issues: list[CardIssue] = field(default_factory=list)


class _Line:
    """One source line with an issue sink that knows the file and line number."""

    def __init__(self, spec: CardSpec, filename: str, number: int, text: str) -> None:
        self.spec, self.filename, self.number, self.text = spec, filename, number, text

    def error(self, col: int, message: str) -> None:
        self.spec.issues.append(CardIssue(self.filename, self.number, col, message))


def _strip_comment(text: str) -> str:
    in_quote = False
    for i, ch in enumerate(text):
        if ch == '"':
            in_quote = not in_quote
        elif ch == "#" and not in_quote:
            return text[:i]
    return text


def _split_outside_quotes(text: str, sep: str, start: int) -> list[tuple[str, int]]:
    """Split ``text`` on ``sep`` outside double quotes: (piece, 0-based column of the piece)."""
    parts: list[tuple[str, int]] = []
    in_quote, begin, i = False, 0, 0
    while i < len(text):
        if text[i] == '"':
            in_quote = not in_quote
        elif not in_quote and text.startswith(sep, i):
            parts.append((text[begin:i], start + begin))
            begin = i + len(sep)
            i = begin
            continue
        i += 1
    parts.append((text[begin:], start + begin))
    return parts


def _words(text: str, start: int) -> list[tuple[str, int]]:
    return [(m.group(), start + m.start()) for m in re.finditer(r"\S+", text)]


def parse_card_text(text: str, filename: str) -> CardSpec:
    """Parse a whole card file; problems go to ``CardSpec.issues`` and parsing goes on."""
    spec = CardSpec()
    section = ""
    header_line = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = _Line(spec, filename, number, raw)
        body = _strip_comment(raw)
        words = _words(body, 0)
        if not words:
            continue
        keyword, col = words[0]
        if keyword == "card":
            if header_line:
                line.error(col + 1, f"second card header (the first is on line {header_line})")
            header_line = number
            _parse_header(line, body, col + len(keyword))
        elif keyword == "section":
            name = _parse_section(line, body, col + len(keyword))
            section = section if name is None else name
        elif keyword == "hand":
            if not header_line:
                line.error(col + 1, "expected a 'card \"NAME\"' header before the first hand")
                header_line = -1
            hand = _parse_hand(line, body, col + len(keyword), section)
            if hand is not None:
                spec.hands.append(hand)
        else:
            line.error(col + 1, f"expected 'card', 'section', 'hand' or '#', got {keyword!r}")
    if not header_line and not spec.issues:
        spec.issues.append(CardIssue(filename, 1, 1, "empty card: expected a 'card \"NAME\"' header"))
    return spec


def _read_string(line: _Line, text: str, pos: int, what: str) -> tuple[str | None, int]:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    m = _STRING.match(text, pos)
    if not m:
        got = text[pos:].split()[0] if text[pos:].split() else "end of line"
        line.error(pos + 1, f"expected a quoted {what}, got {got!r}")
        return None, pos
    return m.group(1), m.end()


def _parse_header(line: _Line, text: str, pos: int) -> None:
    name, pos = _read_string(line, text, pos, "card name")
    if name is None:
        return
    line.spec.name = name
    for word, col in _words(text[pos:], pos):
        m = re.fullmatch(r"copies=([0-9]+)", word)
        if m and int(m.group(1)) in (4, 8):
            line.spec.copies = int(m.group(1))
        elif m:
            line.error(col + 8, f"copies must be 4 (one set) or 8 (Royale), got {m.group(1)!r}")
        else:
            line.error(col + 1, f"unexpected {word!r} in the card header (expected copies=4|8)")


def _parse_section(line: _Line, text: str, pos: int) -> str | None:
    name, end = _read_string(line, text, pos, "section name")
    rest = text[end:].strip()
    if name is not None and rest:
        line.error(text.index(rest, end) + 1, f"unexpected {rest!r} after the section name")
    return name


def _parse_hand(line: _Line, text: str, pos: int, section: str) -> HandSpec | None:
    m = re.compile(r"\s+").match(text, pos)
    pos = m.end() if m else pos
    idm = _ID.match(text, pos)
    if not idm:
        line.error(pos + 1, "expected a hand id (letters, digits, '_', '-', '.')")
        return None
    name, pos = _read_string(line, text, idm.end(), "hand name")
    if name is None:
        return None
    colon = re.compile(r"\s*:").match(text, pos)
    if not colon:
        line.error(pos + 1, "expected ':' after the hand name")
        return None
    hand = HandSpec(idm.group(), name, section, line.number, idm.start() + 1, text.strip())
    parts = _split_outside_quotes(text[colon.end():], ";", colon.end())
    if len(parts) < 3:
        end = len(text.rstrip()) + 1
        line.error(end, "expected '; exposed|concealed ; VALUE' after the pattern")
        return None
    _parse_patterns(line, hand, *parts[0])
    _parse_exposure(line, hand, *parts[1])
    _parse_value(line, hand, *parts[2])
    seen: set[str] = set()
    for part, col in parts[3:]:
        _parse_option(line, hand, part, col, seen)
    return hand


def _parse_exposure(line: _Line, hand: HandSpec, part: str, col: int) -> None:
    words = _words(part, col)
    if len(words) != 1 or words[0][0] not in EXPOSURES:
        where = words[0][1] + 1 if words else col + 1
        got = part.strip() or "nothing"
        line.error(where, f"expected exposed, concealed, X or C, got {got!r}")
        return
    hand.concealed = EXPOSURES[words[0][0]]


def _parse_value(line: _Line, hand: HandSpec, part: str, col: int) -> None:
    words = _words(part, col)
    if len(words) != 1 or not re.fullmatch(r"[0-9]+", words[0][0]) or int(words[0][0]) <= 0:
        where = words[0][1] + 1 if words else col + 1
        line.error(where, f"expected the hand's value (a positive whole number), got {part.strip()!r}")
        return
    hand.value = int(words[0][0])


def _parse_option(line: _Line, hand: HandSpec, part: str, col: int, seen: set[str]) -> None:
    words = _words(part, col)
    if not words:
        line.error(col + 1, "empty option after ';'")
        return
    word, wcol = words[0]
    key = word.split("=", 1)[0]
    if key in seen:
        line.error(wcol + 1, f"option {key!r} given twice")
    seen.add(key)
    stripped = part.strip()
    if word == "where":
        hand.where_col = wcol + 1
        _parse_where(line, hand, part[part.index("where") + 5:], col + part.index("where") + 5)
    elif key == "shift":
        value = stripped[len("shift="):]
        if not word.startswith("shift=") or value not in ("none", "any", "even"):
            line.error(wcol + 1, f"expected shift=none|any|even, got {stripped!r}")
        hand.shift, hand.shift_col = value, wcol + 1
    elif key == "jokerless":
        value = stripped[len("jokerless="):]
        if value in _JOKERLESS:
            hand.jokerless = _JOKERLESS[value]
        else:
            line.error(wcol + 1, f"expected jokerless=auto|yes|no, got {stripped!r}")
    elif key == "note":
        m = re.fullmatch(r'note=\s*"([^"]*)"', stripped)
        if m:
            hand.note = m.group(1)
        else:
            line.error(wcol + 1, f'expected note="TEXT", got {stripped!r}')
    else:
        line.error(wcol + 1, f"unknown option {word!r} (expected where, shift=, jokerless= or note=)")


def _parse_where(line: _Line, hand: HandSpec, text: str, start: int) -> None:
    pieces = _split_outside_quotes(text, "&", start)
    for piece, col in pieces:
        stripped = piece.strip()
        ccol = col + (len(piece) - len(piece.lstrip())) + 1
        constraint = parse_constraint(stripped, ccol)
        if constraint is None:
            line.error(ccol, f"bad constraint {stripped!r} (expected x=y[+-n], x!=y, x in 1,2, "
                       "x even|odd, x<=n or x>=n with variables x y z u v)")
        else:
            hand.where.append(constraint)


def _parse_patterns(line: _Line, hand: HandSpec, text: str, start: int) -> None:
    for ptext, pcol in _split_outside_quotes(text, "||", start):
        groups: list[GroupSpec] = []
        complete = True
        for word, wcol in _words(ptext, pcol):
            group = _parse_group(line, word, wcol)
            if group is not None:
                groups.append(group)
            complete = complete and group is not None
        if not ptext.strip():
            line.error(pcol + 1, "empty pattern (expected groups such as FFF 22g 444g)")
            continue
        lead = len(ptext) - len(ptext.lstrip())
        hand.patterns.append(PatternSpec(ptext.strip(), pcol + lead + 1, tuple(groups), complete))


def _parse_group(line: _Line, word: str, col: int) -> GroupSpec | None:
    alts: list[Simple] = []
    ok = True
    for alt, acol in _split_outside_quotes(word, "|", col):
        if not alt:
            line.error(acol + 1, f"empty alternative in {word!r}")
            ok = False
            continue
        simple = _parse_simple(line, alt, acol)
        ok = ok and simple is not None
        if simple is not None:
            alts.append(simple)
    if not ok or not alts:
        return None
    sizes = {a.size for a in alts}
    if len(sizes) > 1:
        line.error(col + 1, f"alternatives of {word!r} differ in size ({', '.join(str(a.size) for a in alts)} tiles)")
        return None
    return GroupSpec(word, col + 1, tuple(alts))


def _parse_simple(line: _Line, text: str, col: int) -> Simple | None:
    nojoker = text.startswith("!")
    body, bcol = (text[1:], col + 1) if nojoker else (text, col)
    if body.startswith("("):
        return _parse_explicit(line, text, body, bcol, nojoker)
    if body.startswith("~"):
        return _parse_chow(line, text, body, bcol, nojoker)
    colour: str | None = None
    if body and body[-1] in COLOURS:
        colour, body = body[-1], body[:-1]
    if not body:
        line.error(col + 1, f"expected tile symbols in {text!r}")
        return None
    for i, ch in enumerate(body):
        if ch not in SUITED and ch not in NEUTRAL:
            line.error(bcol + i + 1, f"unexpected {ch!r} in group {text!r} (symbols are 1-9 0 D F N E W S "
                       "x y z u v, then a colour r g b ?)")
            return None
    suited = any(ch in SUITED for ch in body)
    if suited and colour is None:
        line.error(col + 1, f"group {text!r} needs a colour r, g, b or ? after its numbers or D")
        return None
    if not suited and colour is not None:
        line.error(bcol + len(body) + 1, f"group {text!r} holds only neutral tiles (F N E W S 0) and takes no colour")
        return None
    if len(body) > 14:
        line.error(col + 1, f"group {text!r} has {len(body)} tiles; a hand has 14")
        return None
    return Simple(text, col + 1, tuple((ch, 0) for ch in body), colour, nojoker)


def _parse_explicit(line: _Line, text: str, body: str, col: int, nojoker: bool) -> Simple | None:
    m = _EXPLICIT.fullmatch(body)
    if not m:
        line.error(col + 1, f"bad explicit group {text!r} (expected (KIND*n) with KIND one of {', '.join(EXPLICIT_KINDS)})")
        return None
    kind, count = m.group(1), int(m.group(2))
    if kind not in EXPLICIT_KINDS:
        line.error(col + 2, f"unknown kind {kind!r} in {text!r} (expected one of {', '.join(EXPLICIT_KINDS)})")
        return None
    if not 1 <= count <= 8:
        line.error(col + 2 + len(kind) + 1, f"group {text!r}: count must be 1..8")
        return None
    return Simple(text, col + 1, (), None, nojoker, kind, count)


def _parse_chow(line: _Line, text: str, body: str, col: int, nojoker: bool) -> Simple | None:
    m = re.fullmatch(r"~([0-9][0-9][0-9]|[xyzuv])([rgb?])", body)
    if not m:
        line.error(col + 1, f"bad chow {text!r} (expected ~123g, three consecutive digits, or ~xg)")
        return None
    digits, colour = m.group(1), m.group(2)
    if len(digits) == 1:
        symbols: tuple[Symbol, ...] = ((digits, 0), (digits, 1), (digits, 2))
    elif "0" in digits or [int(d) - int(digits[0]) for d in digits] != [0, 1, 2]:
        line.error(col + 2, f"chow {text!r} must be three consecutive numbers 1-9")
        return None
    else:
        symbols = tuple((d, 0) for d in digits)
    return Simple(text, col + 1, symbols, colour, nojoker)
