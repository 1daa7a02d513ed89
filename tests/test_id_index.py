"""The run import's id lookup gives one answer whichever way it takes: a Python dict for small
lookups (no pandas to import) and pandas' hash table for large ones; and the topic codes of
trec_eval's order (numpy's unique) equal pandas' sorted factorize they replaced."""

from __future__ import annotations

import importlib
import random

import numpy as np
import pandas as pd

from tcdb.runs.id_index import PANDAS_FROM, IdIndex
from tcdb.runs.trec_eval_order import trec_eval_order


def _keys(rng: random.Random, n: int) -> list[str]:
    alphabet = ["doc", "café", "cafe\u0301", "nan", "None", "", " ", "𝔡", "0", "-1"]
    return [f"{rng.choice(alphabet)}{rng.randrange(10**6)}" for _ in range(n)]


def test_dict_and_pandas_lookups_agree() -> None:
    rng = random.Random(7)
    known = list(dict.fromkeys(_keys(rng, 5_000) + ["nan", "None", "", "café", "cafe\u0301"]))
    mapping = {key: 10 * i + 3 for i, key in enumerate(known)}
    asked = [rng.choice(known) if rng.random() < 0.7 else f"unknown{i}"
             for i in range(PANDAS_FROM)]
    index = IdIndex(mapping)
    big_ids, big_positions = index.lookup(asked)  # pandas: as many keys as PANDAS_FROM
    small_ids, small_positions = IdIndex(mapping).lookup(asked[:PANDAS_FROM - 1])  # the dict
    assert (big_ids[:-1] == small_ids).all() and (big_positions[:-1] == small_positions).all()
    # and both equal the plain meaning, computed without IdIndex
    expected = np.array([mapping.get(key, -1) for key in asked])
    assert (big_ids == expected).all()
    assert [known[p] if p >= 0 else None for p in small_positions[:50]] == \
        [key if key in mapping else None for key in asked[:50]]


def test_empty_index_and_empty_lookup() -> None:
    ids, positions = IdIndex({}).lookup(["a", "b"])
    assert ids.tolist() == [-1, -1] and positions.tolist() == [-1, -1]
    ids, positions = IdIndex({"a": 1}).lookup([])
    assert len(ids) == len(positions) == 0


def test_topic_codes_equal_pandas_factorize(monkeypatch) -> None:
    trec_eval_order_module = importlib.import_module("tcdb.runs.trec_eval_order")

    rng = np.random.default_rng(3)
    for threshold in (PANDAS_FROM, 0):  # numpy's unique, then pandas' factorize
        monkeypatch.setattr(trec_eval_order_module, "PANDAS_FROM", threshold)
        _check_topic_codes(rng)


def _check_topic_codes(rng: np.random.Generator) -> None:
    for topics in (rng.integers(0, 50, 2_000), np.array(rng.choice(["b", "a", "é", "10", "9"],
                                                                    2_000), dtype=object)):
        scores = rng.random(len(topics)).round(1)
        docs = rng.integers(0, 300, len(topics))
        codes = pd.factorize(np.asarray(topics), sort=True)[0]
        expected = np.lexsort((-docs, -scores, codes))
        order, _ = trec_eval_order(topics, docs, scores)
        assert (order == expected).all()


def test_byte_order_equal_both_ways(monkeypatch) -> None:
    """Python's sort (small indexes) and pyarrow's (large) give each key the same place,
    which is UTF-8 byte order (trec_eval's strcmp)."""
    import tcdb.runs.id_index as id_index

    rng = random.Random(11)
    keys = list(dict.fromkeys(_keys(rng, 3_000) + ["é", "z", "Z", "\U0001d521", "\uffff"]))
    mapping = {key: i for i, key in enumerate(keys)}
    positions = np.arange(len(keys))
    small = IdIndex(mapping).byte_order(positions)
    monkeypatch.setattr(id_index, "PANDAS_FROM", 0)
    large = IdIndex(mapping).byte_order(positions)
    assert (small == large).all()
    by_bytes = sorted(range(len(keys)), key=lambda i: keys[i].encode("utf-8"))
    assert [keys[i] for i in by_bytes] == [keys[i] for i in np.argsort(small)]
