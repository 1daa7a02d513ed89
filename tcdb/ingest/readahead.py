"""Read ahead: run a producer of batches beside the code that writes them to the database.

Ingest is two halves of similar weight: reading and hashing documents (pure Python) and the
database's COPY. In a thread the reader shares the GIL with the writer, which must build COPY
rows; in a process of its own it gets a core to itself, and the pair runs ~20 % faster on two
cores. The process is forked, so the producer needs no pickling (only its batches do), and it
is used only where forking is safe: on Linux, from a process with no other threads (a thread
holding a lock at fork time would leave the child stuck). Elsewhere — under Prefect's worker
threads, on macOS or Windows — the same producer runs in a thread. `TCDB_READER=thread` (or
`process`) overrides the choice.

A source made of several independent parts (a LongEval snapshot is many files) may be read by
several such processes at once (`read_parts_ahead`), each taking every k-th part; the consumer
takes the parts' items back in the parts' order, so what it sees is the same sequence as one
reader's, errors included. `TCDB_READERS` sets how many (default: the cores available but the
two the client and its database backend use, so one on two cores; 1 reads with one process,
as above).
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import queue
import struct
import sys
import threading
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from functools import partial
from typing import Any, Literal, TypeVar

from tcdb.settings import get_settings

T = TypeVar("T")
Mode = Literal["auto", "process", "thread"]


def read_ahead(produce: Callable[[], Iterable[T]], *, mode: Mode | None = None,
               depth: int = 2, name: str = "tcdb-reader") -> Generator[T, None, None]:
    """The items of `produce()`, made `depth` items ahead in a process or a thread.

    Errors raised by the producer re-raise here, in the consumer; when the consumer stops early
    (an error of its own, Ctrl-C) the producer is stopped too.
    """
    mode = mode or _mode_from_environment()
    if mode == "process" or (mode == "auto" and fork_is_safe()):
        return _in_thread(_ChildReader(produce, name), depth, name)
    return _in_thread(iter(produce()), depth, name)


def read_parts_ahead(parts: Sequence[Callable[[], Iterable[T]]],
                     combine: Callable[[Iterator[T]], Iterator[Any]], *, readers: int,
                     depth: int = 2, name: str = "tcdb-reader") -> Generator[Any, None, None]:
    """`combine` of the items of every part, in the parts' order, the parts produced by
    `readers` forked processes at once (part i by process i mod `readers`).

    Only where a forked reader would run (`read_ahead`'s rule); the caller falls back to
    `read_ahead` otherwise. `combine` runs in the consumer's background thread.
    """
    source = _PartsReader(parts, min(readers, len(parts)), name)
    return _in_thread(combine(source), depth, name, owner=source)


def parallel_readers(n_parts: int, mode: Mode | None = None) -> int:
    """How many reader processes to run over a source of `n_parts` parts: `TCDB_READERS`, else
    the cores available but two, at most 4; 1 when the reader is not a forked process or there
    is one part.

    On two cores one reader is best: the client, the reader and the PostgreSQL backend already
    use both (~90 µs of CPU per document between them), and a second reader only adds the
    merging (bench/ingest.py: 1.7× instead of 2.1× ir_datasets' rate at load 5–7).
    """
    settings = get_settings()  # checked whatever the source: a bad TCDB_READERS is said
    mode = mode or settings.reader
    if n_parts < 2 or not (mode == "process" or (mode == "auto" and fork_is_safe())):
        return 1
    wanted = settings.readers
    if wanted is None:  # the client and its database backend keep a core each; 4 is plenty
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
            else os.cpu_count() or 1
        wanted = min(cores - 2, 4)
    return max(1, min(wanted, n_parts))


def fork_is_safe() -> bool:
    """Forking copies only the calling thread: safe on Linux when it is the only thread."""
    return sys.platform.startswith("linux") and threading.active_count() == 1


def _mode_from_environment() -> Mode:
    """`TCDB_READER`, checked with every setting (`tcdb.settings`)."""
    return get_settings().reader


def _in_thread(items: Iterator[T], depth: int = 2, name: str = "tcdb-reader",
               owner: Any = None) -> Generator[T, None, None]:
    """Run an iterator in a background thread, `depth` items ahead; its errors re-raise here.
    `owner` (default: the iterator) is what `cancel()` and `close()` stop at the end."""
    owner = items if owner is None else owner
    slots: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def run() -> None:
        try:
            for item in items:
                while not stop.is_set():
                    try:
                        slots.put(("item", item), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            slots.put(("done", None))
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            slots.put(("error", exc))

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    try:
        while True:
            kind, value = slots.get()
            if kind == "done":
                return
            if kind == "error":
                raise value
            yield value
    finally:
        stop.set()
        cancel = getattr(owner, "cancel", None)
        if cancel is not None:  # a reader process: stop it, or the thread waits on it
            cancel()
        while thread.is_alive():
            try:
                slots.get_nowait()
            except queue.Empty:
                thread.join(timeout=0.1)
        close = getattr(owner, "close", None)
        if close is not None:
            close()


class _ChildReader(Iterator[T]):
    """The consumer's end of a forked producer: `produce()` runs in the child, which sends each
    item back pickled through a pipe.

    The pipe's small buffer is the back-pressure: the child waits while the consumer is behind,
    so memory holds a few items, not the whole source.
    """

    def __init__(self, produce: Callable[[], Iterable[T]], name: str,
                 siblings: Sequence[_ChildReader[Any]] = ()) -> None:
        import multiprocessing

        context = multiprocessing.get_context("fork")
        self._receiver, sender = context.Pipe(duplex=False)
        # The child closes every reading end it inherits, its siblings' too: a reading end
        # left open in another process would keep a writer waiting after the consumer died.
        inherited = [self._receiver, *(s._receiver for s in siblings)]
        self._child = context.Process(target=_produce_into, name=name, daemon=True,
                                      args=(produce, sender, inherited))
        self._child.start()
        sender.close()
        self._name = name
        self._buffer = bytearray()  # the last message's, reused: no fresh pages to fault in

    def __next__(self) -> T:
        try:
            self._buffer, size = _receive(self._receiver, self._buffer)
            kind, value = pickle.loads(memoryview(self._buffer)[:size])
        except (EOFError, OSError):
            self.close()
            raise RuntimeError(f"the reader process {self._name} stopped (exit code "
                               f"{self._child.exitcode}) without saying why") from None
        if kind == "item":
            return value
        self.close()
        if kind == "error":
            raise value
        raise StopIteration

    def cancel(self) -> None:
        """Stop the child; a read waiting on it in another thread then ends."""
        if self._child.is_alive():
            self._child.terminate()
        self._child.join()

    def close(self) -> None:
        self.cancel()
        self._receiver.close()


def _receive(receiver: Any, buffer: bytearray) -> tuple[bytearray, int]:
    """One message `Connection.send_bytes` sent, read straight into the start of `buffer` (or
    of a larger one when it is too small): that buffer and the message's size.

    `Connection.recv_bytes` reads a pipe 64 KB at a time into a `BytesIO` and copies the
    whole out again, into fresh pages each time: for a batch's ~25 MB that cost the consumer
    ~4 µs a document, this ~1. Same wire format: a signed 4-byte big-endian length, -1 then
    an 8-byte one when larger than 2 GB.
    """
    stream = io.FileIO(receiver.fileno(), closefd=False)
    head = memoryview(bytearray(8))
    _read_exactly(stream, head[:4])
    (size,) = struct.unpack("!i", head[:4])
    if size == -1:
        _read_exactly(stream, head)
        (size,) = struct.unpack("!Q", head)
    if size > len(buffer):
        buffer = bytearray(size)
    _read_exactly(stream, memoryview(buffer)[:size])
    return buffer, size


def _read_exactly(stream: io.FileIO, view: memoryview) -> None:
    """Fill `view` from the stream; EOFError when it ends first."""
    got, size = 0, len(view)
    while got < size:
        n = stream.readinto(view[got:])
        if not n:
            raise EOFError
        got += n


def _produce_into(produce: Callable[[], Iterable[Any]], sender: Any,
                  inherited: Sequence[Any]) -> None:
    """The child's whole life: items, then "done" or the error, each one pickled message.

    A broken pipe means the consumer stopped early (or died); the child then just ends. For
    that it must not hold the pipe's reading end itself, which it inherited.
    """
    import gc
    import signal

    for receiver in inherited:
        receiver.close()
    # The heap inherited from the parent outlives this short-lived child anyway: keep the
    # collector's full passes off it (they walked all of it, copying its pages on write;
    # freezing it cut the reader's CPU by 11 %).
    gc.freeze()
    _keep_large_buffers()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    with contextlib.suppress(BrokenPipeError), contextlib.closing(sender):
        try:
            for item in produce():
                sender.send_bytes(pickle.dumps(("item", item), protocol=pickle.HIGHEST_PROTOCOL))
            message = pickle.dumps(("done", None))
        except BrokenPipeError:
            raise
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            try:
                message = pickle.dumps(("error", exc))
            except Exception:  # noqa: BLE001 - an error that does not pickle still gets through
                message = pickle.dumps(("error", RuntimeError(f"{type(exc).__name__}: {exc}")))
        sender.send_bytes(message)


def _keep_large_buffers() -> None:
    """glibc: serve this reader's large buffers (8 MB reads and their decoded text, ~25 MB
    pickled batches) from its heap, and keep the heap, rather than map fresh pages for each
    one and fault every page in again: ~10 % of the reader's CPU went to the kernel for that.
    The child is short-lived; its memory is still bounded by its largest batch. Elsewhere
    (another C library) nothing changes."""
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD: glibc's largest (HEAP_MAX_SIZE / 2)
    mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD


_END = "end"  # what a reader sends after the last item of each of its parts


class _PartsReader(Iterator[T]):
    """The consumer's end of several forked readers over a source's parts, in the parts' order.

    Reader k produces parts k, k + n, k + 2n, …, each followed by an end mark; the consumer
    takes part 0's items from reader 0, part 1's from reader 1, and so on, so the items and
    the first error come in the order one reader would give them.
    """

    def __init__(self, parts: Sequence[Callable[[], Iterable[T]]], readers: int,
                 name: str) -> None:
        self._n_parts = len(parts)
        self._readers: list[_ChildReader[tuple[str, Any]]] = []
        try:
            for k in range(readers):
                mine = parts[k::readers]
                self._readers.append(_ChildReader(partial(_marked, mine), f"{name}-{k}",
                                                  self._readers))
        except BaseException:
            self.close()
            raise
        self._part = 0

    def __next__(self) -> T:
        while self._part < self._n_parts:
            kind, value = next(self._readers[self._part % len(self._readers)])
            if kind != _END:
                return value
            self._part += 1
        self.close()
        raise StopIteration

    def cancel(self) -> None:
        for reader in self._readers:
            reader.cancel()

    def close(self) -> None:
        for reader in self._readers:
            reader.close()


def _marked(parts: Sequence[Callable[[], Iterable[T]]]) -> Iterator[tuple[str, Any]]:
    for part in parts:
        for item in part():
            yield "item", item
        yield _END, None
