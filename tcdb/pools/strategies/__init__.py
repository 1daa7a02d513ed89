"""Pooling strategies behind one interface (`Strategy`), registered by name.

`depth`, `rrf` and `rbp` order documents from the runs' ranks alone; `mtf` and `maxmean` learn
from judgments as they go (in a simulation from a complete qrels set, in real use from the
rounds judged so far). See `tcdb.pools.strategies.base` for the interface.
"""

from tcdb.pools.strategies import adaptive, fixed
from tcdb.pools.strategies.base import (
    REGISTRY,
    Judge,
    RunRanking,
    Strategy,
    TopicRanking,
    cut,
    describe,
    make_strategy,
    register,
    strategy_names,
)

__all__ = ["REGISTRY", "Judge", "RunRanking", "Strategy", "TopicRanking", "adaptive", "cut",
           "describe", "fixed", "make_strategy", "register", "strategy_names"]
