"""The ten planted systems of the demo collection and what each is meant to show.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

DEMO_COLLECTION = "longeval-web"

DEMO_SNAPSHOTS: tuple[tuple[str, date], ...] = (
    ("2022-06", date(2022, 6, 1)),
    ("2022-07", date(2022, 7, 1)),
    ("2022-09", date(2022, 9, 1)),
)

PIVOT = "bm25"


@dataclass(frozen=True)
class DemoSystem:
    """One planted system: what it is meant to show and how its runs are drawn."""

    tag: str
    planted: str  # pivot | baseline | persistent | decaying | improving | noisy | magical
    contributing: bool  # its runs fed the pools of the original qrels
    group: str
    category: str  # lexical | neural | llm
    strength: tuple[float, float, float]  # weight of the relevance it sees, per snapshot
    noise: float  # scale of its own noise (the shared noise has scale 1)
    hidden: float = 0.0  # weight of relevance hidden from lexical matching (only the magical run)
    like_pivot: float = 0.0  # share of its noise taken from the pivot's (a variant of the pivot)
    description: str = ""
    run_type: str = "automatic"  # or manual


SYSTEMS: tuple[DemoSystem, ...] = (
    DemoSystem("bm25", "pivot", True, "lexical-lab", "lexical", (1.0, 1.0, 1.0), 0.8,
               description="BM25-like pivot every other system is compared with"),
    DemoSystem("qlm", "baseline", True, "lexical-lab", "lexical", (0.85, 0.85, 0.85), 0.8,
               like_pivot=0.6, description="query likelihood: a slightly weaker lexical baseline"),
    DemoSystem("rm3-steady", "persistent", True, "lexical-lab", "lexical",
               (1.35, 1.35, 1.35), 0.8, like_pivot=0.95,
               description="query expansion whose advantage over the pivot persists (ER ≈ 1)"),
    DemoSystem("dense-decay", "decaying", True, "dense-lab", "neural",
               (1.5, 1.25, 1.22), 0.8, like_pivot=0.5,
               description="dense retriever trained on 2022-06 data: its advantage halves"),
    DemoSystem("rerank-rise", "improving", True, "llm-lab", "llm", (1.2, 1.42, 1.6),
               0.8, like_pivot=0.5, description="LLM re-ranker whose advantage keeps growing"),
    DemoSystem("noisy-a", "noisy", True, "noisy-lab", "lexical", (1.1, 0.95, 1.2), 1.2,
               description="noisy lexical variant"),
    DemoSystem("noisy-b", "noisy", True, "noisy-lab", "neural", (0.95, 1.2, 1.05), 1.2,
               description="noisy neural variant"),
    DemoSystem("noisy-c", "noisy", False, "noisy-lab", "lexical", (1.2, 1.0, 0.95), 1.2,
               description="noisy run that did not contribute to the pools"),
    DemoSystem("noisy-d", "noisy", False, "noisy-lab", "neural", (0.9, 1.1, 1.15), 1.2,
               description="noisy run that did not contribute to the pools"),
    DemoSystem("magic", "magical", False, "magic-lab", "llm", (0.9, 0.9, 0.9), 0.8,
               hidden=3.0,
               description="manual run that finds relevant documents the pools never saw",
               run_type="manual"),
)
