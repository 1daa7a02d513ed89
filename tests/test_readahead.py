"""Reading ahead in a forked process or a thread gives the same items, errors and clean-up."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator

import pytest

from tcdb.errors import InputError
from tcdb.ingest.readahead import fork_is_safe, read_ahead

MODES = ["process", "thread"]


def numbers(n: int, fail_at: int | None = None, error: BaseException | None = None
            ) -> Iterator[tuple[int, str]]:
    for i in range(n):
        if i == fail_at:
            raise error or InputError("docs.trec", 12, "document without <DOCNO>")
        yield i, "é" * i


@pytest.mark.parametrize("mode", MODES)
def test_every_item_in_order(mode: str) -> None:
    assert list(read_ahead(lambda: numbers(200), mode=mode)) == list(numbers(200))


@pytest.mark.parametrize("mode", MODES)
def test_the_producers_error_reraises_with_file_line_and_reason(mode: str) -> None:
    seen = []
    with pytest.raises(InputError) as info:
        for item in read_ahead(lambda: numbers(50, fail_at=30), mode=mode):
            seen.append(item)
    assert (info.value.file, info.value.line, info.value.reason) == \
        ("docs.trec", 12, "document without <DOCNO>")
    assert len(seen) == 30


def test_an_error_that_does_not_pickle_still_reaches_the_consumer() -> None:
    class Local(Exception):  # a local class cannot be pickled
        pass

    with pytest.raises(RuntimeError, match="Local: cannot pickle me"):
        list(read_ahead(lambda: numbers(5, 2, Local("cannot pickle me")), mode="process"))


def test_a_reader_process_that_dies_is_an_error() -> None:
    def die() -> Iterator[int]:
        yield 1
        os._exit(3)

    with pytest.raises(RuntimeError, match="exit code 3"):
        list(read_ahead(die, mode="process"))


def _children() -> list[str]:
    import multiprocessing

    return [p.name for p in multiprocessing.active_children()]


@pytest.mark.parametrize("mode", MODES)
def test_a_consumer_that_stops_early_stops_the_reader(mode: str) -> None:
    def endless() -> Iterator[int]:
        i = 0
        while True:
            yield i
            i += 1

    items = read_ahead(endless, mode=mode, name="endless-reader")
    assert [next(items) for _ in range(3)] == [0, 1, 2]
    items.close()  # what a `for` loop left by an exception does
    assert "endless-reader" not in _children()
    deadline = time.monotonic() + 5
    while any(t.name == "endless-reader" for t in threading.enumerate()):
        assert time.monotonic() < deadline, "the reader thread did not stop"
        time.sleep(0.01)


def test_fork_only_from_a_single_threaded_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.platform", "linux")
    assert fork_is_safe() == (threading.active_count() == 1)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not fork_is_safe()
    finally:
        stop.set()
        other.join()
    monkeypatch.setattr("sys.platform", "darwin")
    assert not fork_is_safe()


def test_tcdb_reader_chooses_the_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TCDB_READER", "thread")
    assert list(read_ahead(lambda: numbers(3))) == list(numbers(3))
    monkeypatch.setenv("TCDB_READER", "sometimes")
    from tcdb.errors import TcdbError

    with pytest.raises(TcdbError) as caught:
        read_ahead(lambda: numbers(3))
    assert str(caught.value) == "TCDB_READER='sometimes': must be 'auto', 'process' or 'thread'"


@pytest.mark.kill
def test_a_reader_whose_consumer_dies_ends() -> None:
    """The child holds no reading end of its own pipe, so a killed consumer cannot strand it."""
    import multiprocessing
    import signal

    def consumer(pids: object) -> None:
        items = read_ahead(lambda: iter(range(10**9)), mode="process", name="orphan-reader")
        next(items)
        pids.put(multiprocessing.active_children()[0].pid)  # type: ignore[attr-defined]
        time.sleep(60)

    pids: multiprocessing.Queue[int] = multiprocessing.get_context("fork").Queue()
    parent = multiprocessing.get_context("fork").Process(target=consumer, args=(pids,))
    parent.start()
    child = pids.get(timeout=10)
    os.kill(parent.pid or 0, signal.SIGKILL)
    parent.join()
    deadline = time.monotonic() + 10
    while _alive(child):
        assert time.monotonic() < deadline, "the reader outlived its consumer"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
