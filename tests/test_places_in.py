"""`places_in`: where each document id of a run entry sits among a snapshot's sorted ids, by a
table (dense ids) or a binary search (sparse ones) — the same answer either way."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.mark.parametrize("spread", [1, 3, 10_000_000])  # dense ids, gaps, sparse
def test_places_equal_a_dictionary_lookup(spread: int) -> None:
    from tcdb.queries.runs import places_in

    rng = np.random.default_rng(7)
    keys = np.unique(rng.integers(0, 5_000 * spread, 5_000)).astype(np.int64)
    absent = np.setdiff1d(np.arange(-3, 5_000 * spread + 5, max(1, spread // 7)), keys)
    values = np.concatenate([rng.choice(keys, 20_000), absent[:500],
                             [-5, int(keys[-1]) + 1, int(keys[-1]) + 10**9]]).astype(np.int64)
    rng.shuffle(values)
    where = {int(k): i for i, k in enumerate(keys)}
    assert places_in(keys, values).tolist() == [where.get(int(v), -1) for v in values]


def test_no_keys() -> None:
    from tcdb.queries.runs import places_in

    assert places_in(np.empty(0, dtype=np.int64), np.array([0, 4])).tolist() == [-1, -1]
