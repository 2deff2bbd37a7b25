"""Chinese-style scoring (seed 004, rules-spec 3.6): hands, point and double catalogues, limit
hands, the best-decomposition scorer and the losers' settlement.

Entry points: :func:`score_hand`, :func:`set_points`, :func:`settle_chinese`, :func:`hand_from_dict`.
"""

from companion.rules.chinese.hand import ChineseHand, Meld, hand_from_dict
from companion.rules.chinese.points import set_points
from companion.rules.chinese.score import ChineseScore, score_hand
from companion.rules.chinese.settle import settle_chinese

__all__ = [
    "ChineseHand",
    "ChineseScore",
    "Meld",
    "hand_from_dict",
    "score_hand",
    "set_points",
    "settle_chinese",
]
