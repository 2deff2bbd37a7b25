"""Chinese-style settlement (seed 004): losers pay the winner the difference, East double.

``difference`` (the page): each loser pays (winner score - own points), never negative.
``classical`` [R-HARR]: each loser pays the winner's full score; losers settle differences
among themselves.  East pays and receives double in both.
"""

from __future__ import annotations

from collections.abc import Mapping

from companion.rules.settle import Payment

EAST = "E"


def settle_chinese(winner: str, score: int, losers: Mapping[str, int],
                   method: str = "difference", east_double: bool = True) -> list[Payment]:
    """Payments between seats (wind letters) after ``winner`` went out with ``score``."""

    def _east(a: str, b: str) -> int:
        return 2 if east_double and EAST in (a, b) else 1

    if winner in losers:
        raise ValueError(f"the winner {winner!r} cannot also be a loser")
    if method not in ("difference", "classical"):
        raise ValueError(f"unknown chinese settlement method: {method!r}")
    payments = []
    for seat, points in losers.items():
        owed = score if method == "classical" else max(0, score - points)
        if owed:
            payments.append(Payment(seat, winner, owed * _east(seat, winner)))
    if method == "classical":
        seats = list(losers)
        for i, a in enumerate(seats):
            for b in seats[i + 1:]:
                diff = losers[a] - losers[b]
                if diff:
                    payer, payee = (b, a) if diff > 0 else (a, b)
                    payments.append(Payment(payer, payee, abs(diff) * _east(a, b)))
    return payments
