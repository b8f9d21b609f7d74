"""Assignment policies = labelling strategies, shared by the simulator and the server.

``one`` (One Worker), ``fixed`` (Fixed Worker), ``majorityN`` (N-worker majority, N odd),
``max3`` (two workers, a third on disagreement), and ``BestPairPolicy`` (which pair of K
systems to judge next).
"""

from humeval.policies.base import LabellingStrategy
from humeval.policies.best_pair import BestPairPolicy
from humeval.policies.majority import Majority
from humeval.policies.max_three import MaxThree
from humeval.policies.registry import STRATEGIES, get_strategy, parse_strategies
from humeval.policies.single import FixedWorker, OneWorker

__all__ = [
    "STRATEGIES",
    "BestPairPolicy",
    "FixedWorker",
    "LabellingStrategy",
    "Majority",
    "MaxThree",
    "OneWorker",
    "get_strategy",
    "parse_strategies",
]
