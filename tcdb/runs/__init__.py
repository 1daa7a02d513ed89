"""Runs: importing TREC run files, finding and listing runs, and trec_eval's order of a ranking.

`operations` holds the run operations (`run_import`, …; their requests and results are
`requests`) over `importing`, which validates and writes run files; `metadata` reads what a
campaign knows about its runs, `editing` fixes metadata and deletes runs, `trec_eval_order`
ranks entries as trec_eval does (pure), `id_index` resolves external ids in bulk, `systems` and
`listing` find what is stored.
"""

from tcdb.runs.listing import get_runs, list_runs
from tcdb.runs.metadata import RunMetadata, read_run_metadata, run_metadata
from tcdb.runs.systems import get_system
from tcdb.runs.trec_eval_order import trec_eval_order

__all__ = [
    "RunMetadata", "get_runs", "get_system", "list_runs", "read_run_metadata", "run_metadata",
    "trec_eval_order",
]
