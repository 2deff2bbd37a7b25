"""The ``where`` constraints of a hand: their grammar and their test on variable values.

Forms (rules-spec 4.3): ``x=y``, ``y=x+1``, ``z=y-1``, ``x!=y``, ``x in 1,3,5``, ``x even``,
``x odd``, ``x<=4``, ``x>=6``; variables are ``x y z u v`` (numbers 1..9).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Constraint:
    """``a op b[+k]``, ``a in 1,2``, ``a even|odd``, ``a <= n``; ``vars`` are the names it reads."""

    text: str
    col: int
    op: str
    a: str
    b: str | None = None
    k: int = 0
    values: tuple[int, ...] = ()

    @property
    def vars(self) -> tuple[str, ...]:
        return (self.a,) if self.b is None else (self.a, self.b)

    def holds(self, env: dict[str, int]) -> bool:
        x = env[self.a]
        if self.op == "=":
            return x == env[self.b or ""] + self.k
        if self.op == "!=":
            return x != env[self.b or ""]
        if self.op == "in":
            return x in self.values
        if self.op == "even":
            return x % 2 == 0
        if self.op == "odd":
            return x % 2 == 1
        if self.op == "<=":
            return x <= self.k
        return x >= self.k


_CONSTRAINTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("=", re.compile(r"([xyzuv])\s*=\s*([xyzuv])\s*(?:([+-])\s*([0-9]+))?")),
    ("!=", re.compile(r"([xyzuv])\s*!=\s*([xyzuv])")),
    ("in", re.compile(r"([xyzuv])\s+in\s+([0-9](?:\s*,\s*[0-9])*)")),
    ("parity", re.compile(r"([xyzuv])\s+(even|odd)")),
    ("cmp", re.compile(r"([xyzuv])\s*(<=|>=)\s*([0-9]+)")),
)


def parse_constraint(text: str, col: int) -> Constraint | None:
    """One constraint of a ``where`` option, or None when the text is not one."""
    for op, rx in _CONSTRAINTS:
        m = rx.fullmatch(text)
        if not m:
            continue
        if op == "=":
            k = int(m.group(4) or 0) * (-1 if m.group(3) == "-" else 1)
            return Constraint(text, col, "=", m.group(1), m.group(2), k)
        if op == "!=":
            return Constraint(text, col, "!=", m.group(1), m.group(2))
        if op == "in":
            values = tuple(int(v) for v in re.findall(r"[0-9]", m.group(2)))
            return Constraint(text, col, "in", m.group(1), values=values)
        if op == "parity":
            return Constraint(text, col, m.group(2), m.group(1))
        return Constraint(text, col, m.group(2), m.group(1), k=int(m.group(3)))
    return None
