"""What an ingest's writing carries from one batch to the next: the snapshot's token totals
as they are written (`TokenTotals`), whether keys and texts are taken to be new without a
lookup (`Guess`), and the garbage collector kept off the heap that was there before
(`collector_off_the_old_heap`). Used by `tcdb.ingest.documents`."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


class TokenTotals:
    """A snapshot's token totals (`snapshot.tokens_*`: memberships counted, tokens, min, max),
    summed as its memberships are written from the count each one's version has in the
    database — what `live_token_totals` reads back afterwards with a join over all of the
    snapshot's versions (~2 µs a document on PostgreSQL, and the whole `content` heap to
    read). Not `exact` once a membership written before is replaced (`--on-duplicate last`):
    the caller then asks the database.
    """

    __slots__ = ("counted", "exact", "high", "low", "total")

    def __init__(self) -> None:
        self.counted, self.total = 0, 0
        self.low: int | None = None
        self.high: int | None = None
        self.exact = True

    def add(self, counts: list[int]) -> None:
        if not counts:
            return
        self.counted += len(counts)
        self.total += sum(counts)
        low, high = min(counts), max(counts)
        self.low = low if self.low is None else min(self.low, low)
        self.high = high if self.high is None else max(self.high, high)

    def state(self) -> tuple[int, int, int | None, int | None, bool]:
        return self.counted, self.total, self.low, self.high, self.exact

    def restore(self, state: tuple[int, int, int | None, int | None, bool]) -> None:
        self.counted, self.total, self.low, self.high, self.exact = state

    def totals(self) -> tuple[int, int, int | None, int | None] | None:
        """(counted, total, min, max) as `live_token_totals` gives them, or None if not exact."""
        return (self.counted, self.total, self.low, self.high) if self.exact else None


class Guess:
    """Whether a batch's keys and versions are taken to be new and written without looking
    them up (PostgreSQL only): once a batch's lookup found none of them — a collection's first
    snapshot, texts no snapshot had — the next batches skip that lookup (~1 µs of the
    server's time a document for keys, ~1.6 for hashes, and the client's building of the
    arrays). A wrong guess breaks a unique constraint inside the batch's savepoint: the batch is
    rolled back and written again with its lookups, and nothing is guessed again in this
    ingest, so a wrong guess costs one batch once.
    """

    __slots__ = ("contents", "documents", "enabled")

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.documents = False
        self.contents = False

    def off(self) -> None:
        self.enabled = self.documents = self.contents = False


@contextmanager
def collector_off_the_old_heap() -> Iterator[None]:
    """Keep the cyclic garbage collector's full passes off the objects that exist before the
    writing starts (the ORM, the drivers: most of the heap), and give them back after.

    Each batch unpickles ~10,000 tuples, which set off collections; a full one walked the
    whole heap (~2 µs per document at 50,000 documents, bench/ingest.py). What the batches
    leave behind is collected as before. A process that froze objects of its own (a server
    preloading its code) is left as it is: unfreezing would undo its freeze too.
    """
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
