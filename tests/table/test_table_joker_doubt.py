"""Flags that rest on a rack's jokers being jokers are raised only on jokers read surely
(``companion.table_exposures.JOKER_SURE``); a joker in a pair or single is flagged whatever it is."""

from __future__ import annotations

from table_helpers import CARD

from companion.table import TableReader
from companion.table_flags import rack_flags
from companion.table_types import Flag, ZoneReading
from vision.layout import load_layout

CTX = TableReader(load_layout("siamese-2"), card=CARD).ctx


def _rack(*exposures: str, own: dict[int, float] | None = None, uncertain: tuple[int, ...] = (),
          read: bool = True) -> ZoneReading:
    """A rack read by a camera at 0.98 (``own``: tile index -> its own reading, where lower)."""
    exps = tuple(tuple(e.split()) for e in exposures)
    tiles = tuple(c for e in exps for c in e)
    conf = tuple(0.3 if i in uncertain else 0.98 for i in range(len(tiles))) if read else ()
    mine = tuple((own or {}).get(i, c) for i, c in enumerate(conf))
    return ZoneReading("P1-A", "rack", tiles, exps, player=1, hand="A", uncertain=uncertain,
                       confidence=conf, own_confidence=mine)


def _flags(z: ZoneReading) -> list[Flag]:
    return rack_flags(z, CTX)[0]


def test_an_exposure_of_only_jokers_is_flagged_only_when_its_jokers_read_surely() -> None:
    sure = _flags(_rack("J J J J", "N N N"))
    assert [f.kind for f in sure] == ["joker"] and "only jokers" in sure[0].message
    doubtful = _flags(_rack("J J J J", "N N N", own={2: 0.85}))
    assert [(f.kind, f.cause) for f in doubtful] == [("unreadable", "joker")], doubtful
    assert "[J J J J]" in doubtful[0].message and "flower" in doubtful[0].message
    unread = _flags(_rack("J J J J", "N N N", read=False))  # a reading no camera made: as it says
    assert [f.kind for f in unread] == ["joker"]


def test_an_exposure_too_long_for_any_group_is_flagged_only_when_its_jokers_read_surely() -> None:
    """``4D 4D 4D 4D J J J``: the jokers may be another group's tiles (flowers) that joined it."""
    assert [f.kind for f in _flags(_rack("4D 4D 4D 4D J J J"))] == ["tile_count"]
    doubtful = _flags(_rack("4D 4D 4D 4D J J J", own={5: 0.8}))
    assert [(f.kind, f.cause) for f in doubtful] == [("unreadable", "joker")], doubtful
    plain = _flags(_rack("4D 4D 4D 4D 4D 4D 4D", own={5: 0.8}))  # no joker: the size is the size
    assert [f.kind for f in plain] == ["tile_count"]


def test_a_joker_in_a_pair_is_flagged_whatever_the_joker_is() -> None:
    """Two tiles are no group, so ``5D J`` is wrong however surely its joker reads; jokers alone
    are judged as any exposure of only jokers."""
    assert [f.kind for f in _flags(_rack("5D J", "N N N", own={1: 0.6}))] == ["joker"]
    assert {f.kind for f in _flags(_rack("J J", "N N N"))} == {"joker"}
    lone = _flags(_rack("J", "N N N", own={0: 0.8}))  # only jokers, any size: maybe a flower whose pung went unseen
    assert [(f.kind, f.cause) for f in lone] == [("unreadable", "joker")], lone


def test_a_display_in_error_is_called_only_on_jokers_read_surely() -> None:
    """A 14-tile display of pairs that matches no hand as read: ``J J`` read surely is a joker
    pair and the Mah Jongg is in error; read at 0.85 on their own they may be two flowers of an
    unfamiliar set (a pair of a singles-and-pairs hand), and nothing is called on them."""
    display = ("J J", "2D 2D", "4D 4D", "7C 7C", "3D 3D", "5C 5C", "6C 6C")
    sure = _flags(_rack(*display))
    assert sorted(f.kind for f in sure) == ["joker", "wrong_rack"], sure
    doubtful = _flags(_rack(*display, own={0: 0.85}))
    assert [(f.kind, f.cause) for f in doubtful] == [("unreadable", "joker")], doubtful
    assert "14 displayed tiles" in doubtful[0].message
    weak = _flags(_rack(*display, uncertain=(0,)))  # a weak tile: unjudged as before, said once
    assert [f.kind for f in weak] == ["unreadable"], weak
    # jokers read as weakly in groups where jokers may go rest nothing on themselves: still in error
    groups = _flags(_rack("9C J 9C", "9B 9B 9B", "5C 5C J 5C", "3D 3D 3D 3D", own={1: 0.85, 9: 0.8}))
    assert [f.kind for f in groups] == ["wrong_rack"], groups


def test_a_display_is_scored_on_weak_jokers_only_when_flowers_there_make_no_other_score() -> None:
    """``J J J`` in the flowers' place of the Tea Garden (ev1: FFF 22 444 66 8888) scores it with
    jokers; read as flowers it scores jokerless, for twice as much.  Read weakly, those jokers may
    be the flowers: the display is not scored but left to check (never called in error).  A weak
    joker in the 444 pung, which as a flower makes no hand, leaves the score as read."""
    garden = ("2B 2B", "4B 4B 4B", "6C 6C", "8C 8C 8C 8C")
    sure = rack_flags(_rack("J J J", *garden), CTX)
    assert sure[0] == [] and sure[1] is not None and (sure[1]["hand"], sure[1]["jokerless"]) == ("ev1", False)
    flowers = rack_flags(_rack("F F F", *garden), CTX)[1]
    assert flowers is not None and flowers["jokerless"] and flowers["value"] > sure[1]["value"]
    flags, entry, shown = rack_flags(_rack("J J J", *garden, own={0: 0.8, 1: 0.85, 2: 0.82}), CTX)
    assert entry is None and shown
    assert [(f.kind, f.cause) for f in flags] == [("unreadable", "joker")]
    assert "ev1" in flags[0].message and "flowers" in flags[0].message
    pung = rack_flags(_rack("F F F", "2B 2B", "4B 4B J", "6C 6C", "8C 8C 8C 8C", own={7: 0.8}), CTX)
    assert pung[0] == [] and pung[1] is not None and pung[1]["hand"] == "ev1"
