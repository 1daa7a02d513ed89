"""External ids → integer keys for a whole column at once (run import's hot path).
"""

from __future__ import annotations

from typing import Any

# From this many keys a lookup goes through pandas' C hash table, an order of magnitude faster
# than a Python dict lookup per row; below it, a dict is faster than importing pandas (~0.3 s of
# a one-run import, issue 41 Build 8). Both give the same answer (tests/test_id_index.py).
PANDAS_FROM = 200_000


class IdIndex:
    """External id → integer id, looked up for a whole column at once."""

    def __init__(self, mapping: dict[str, int]) -> None:
        import numpy as np

        self.keys = list(mapping)
        self.ids = np.fromiter(mapping.values(), dtype=np.int64, count=len(mapping))
        self._index: Any = None  # pandas' Index of the keys, built for the first large lookup
        self._positions: dict[str, int] | None = None  # the same for small lookups
        self._byte_order: Any = None

    def lookup(self, keys: list[str]) -> tuple[Any, Any]:
        """(ids, positions) for the keys; an unknown key has id -1 and position -1."""
        positions = self._pandas_positions(keys) if len(keys) >= PANDAS_FROM \
            else self._dict_positions(keys)
        ids = self.ids[positions] if len(self.ids) else positions.copy()
        ids[positions < 0] = -1
        return ids, positions

    def _dict_positions(self, keys: list[str]) -> Any:
        import numpy as np

        if self._positions is None:
            self._positions = {key: place for place, key in enumerate(self.keys)}
        get = self._positions.get
        return np.fromiter((get(key, -1) for key in keys), dtype=np.int64, count=len(keys))

    def _pandas_positions(self, keys: list[str]) -> Any:
        """The keys go in as an object Index: a bare array would be inferred as pandas' Arrow
        string dtype and converted back, which took 60 % of the lookup (pandas 3)."""
        import numpy as np
        import pandas as pd

        if self._index is None:
            self._index = pd.Index(np.asarray(self.keys, dtype=object), dtype=object)
        target = pd.Index(np.asarray(keys, dtype=object), dtype=object)
        return self._index.get_indexer(target).astype(np.int64, copy=False)

    def byte_order(self, positions: Any) -> Any:
        """Each key's place among all keys in byte order (trec_eval's strcmp), by position.

        Sorted once per import, so ranking a run's ties compares integers, not strings.
        """
        import numpy as np

        if self._byte_order is None:
            if len(self.keys) < PANDAS_FROM:  # code-point order is byte order; no pyarrow
                order = np.array(sorted(range(len(self.keys)), key=self.keys.__getitem__),
                                 dtype=np.int64)
            else:
                import pyarrow as pa
                import pyarrow.compute as pc

                order = pc.array_sort_indices(pa.array(self.keys, pa.large_string())).to_numpy()
            places = np.empty(len(order), dtype=np.int64)
            places[order] = np.arange(len(order))
            self._byte_order = places
        return self._byte_order[positions]
