"""The cheaper per-document paths of ingest give exactly what the paths they short-cut give.

* the TREC reader's look at each block's raw bytes (`_kind_of`): a block of printable ASCII and
  newlines skips the per-document search for other line separators and control characters;
* `version_of`'s newline-only path for ASCII text;
* the snapshot's token totals summed as memberships are written instead of read back;
* on PostgreSQL, keys and versions written without a lookup once a batch found none new
  (`Guess`), and a wrong guess rolled back and written again.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from sqlalchemy import text

from tcdb.catalog.collections import add_collection
from tcdb.collections.documents import trec as trec_documents
from tcdb.collections.documents.trec import read_trec_documents
from tcdb.collections.sources.snapshot import LocalSource
from tcdb.ingest import ingest_snapshot
from tcdb.operations import Database
from tcdb.queries.snapshot_stats import live_token_totals

# Bodies: plain ones, and ones holding what sends a block off the plain path.
BODIES = [
    "plain words on one line", "two\nlines", "  spaced   out  ", "", "été non-ASCII",
    "tab\there", "form\x0cfeed", "carriage\r\nreturn", "nul\x00byte", "bell\x07and\x1bescape",
    "line\u2028separator", "next\x85line", "unit\x1fseparator", "a & b", "x < y",
]


def _corpus(rng: random.Random, n: int) -> str:
    """TREC documents, most of them plain, some with one of the rarer bodies."""
    docs = []
    for i in range(n):
        body = rng.choice(BODIES) if rng.random() < 0.3 else " ".join(
            rng.choice(["word", "other", "w0123x"]) for _ in range(rng.randrange(1, 30)))
        docs.append(f"<DOC>\n<DOCNO>d{i}</DOCNO>\n<TEXT>\n{body}\n</TEXT>\n</DOC>\n")
    return "".join(docs)


@pytest.mark.parametrize("block", [16, 61, 200, 4096])
def test_block_kinds_change_no_document(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        block: int) -> None:
    """Read with blocks of several sizes (documents cut across blocks, plain blocks beside
    dirty ones) the records equal those of the per-document checks everywhere."""
    path = tmp_path / "docs.trec"
    path.write_text(_corpus(random.Random(block), 300), encoding="utf-8")
    monkeypatch.setattr(trec_documents, "_kind_of", lambda chunk: trec_documents._DIRTY)
    checked = list(read_trec_documents(path))
    monkeypatch.undo()
    monkeypatch.setattr(trec_documents, "_BLOCK_SIZE", block)
    assert list(read_trec_documents(path)) == checked
    texts = {r.doc_id: r.text for r in checked}
    assert all("\x00" not in t and "\x07" not in t and "\x1b" not in t for t in texts.values())


def test_kind_of_a_block() -> None:
    kind = trec_documents._kind_of
    assert kind(b"<DOC>\nplain text ~ all printable\n") == trec_documents._PLAIN
    for clean in (b"tab\t", b"cr\r\n", b"ff\x0c", b"\xc3\xa9t\xc3\xa9", b"\xe2\x80\xa8", b"\x1f"):
        assert kind(clean) == trec_documents._CLEAN, clean
    for dirty in (b"nul\x00", b"bell\x07", b"esc\x1b", b"\x01"):
        assert kind(dirty) == trec_documents._DIRTY, dirty


def test_version_of_newline_only_texts_equal_the_reference() -> None:
    from tcdb.ingest import content_hash, normalise_text, version_of

    rng = random.Random(5)
    texts = ["\n", "a\nb", "\n\na  b\n", " \n ", "a\n\n\nb c"]
    texts += ["".join(rng.choice(["a", "bc", " ", "\n", "\n\n", "  "]) for _ in range(30))
              for _ in range(2000)]
    for text_ in texts:
        normalised = normalise_text(text_)
        assert version_of(text_) == (content_hash(normalised), len(normalised),
                                     len(text_.split())), repr(text_)


def _write(path: Path, docs: list[tuple[str, str]]) -> Path:
    path.write_text("".join(f"<DOC>\n<DOCNO>{d}</DOCNO>\n<TEXT>\n{t}\n</TEXT>\n</DOC>\n"
                            for d, t in docs), encoding="utf-8")
    return path


def _stored(snapshot: str) -> tuple[tuple[int, int, int | None, int | None],
                                    tuple[int, int, int | None, int | None],
                                    list[tuple[str, str]]]:
    """The snapshot's stored token totals, the totals read back from its memberships, and its
    (external id, text) pairs."""
    with Database().engine().connect() as conn:
        sid, *kept = conn.execute(text(
            "SELECT id, tokens_counted, tokens_total, tokens_min, tokens_max FROM snapshot "
            "WHERE label = :l"), {"l": snapshot}).one()
        live = live_token_totals(conn, [sid])[sid]
        rows = conn.execute(text(
            "SELECT sd.external_id, c.text FROM snapshot_document sd JOIN content c "
            "ON c.id = sd.content_id WHERE sd.snapshot_id = :s ORDER BY sd.external_id"),
            {"s": sid}).all()
    return tuple(kept), live, [tuple(r) for r in rows]


@pytest.mark.parametrize("on_duplicate", ["first", "last"])
def test_token_totals_summed_while_writing_equal_the_database(
        db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on_duplicate: str) -> None:
    """Repeats within and across batches, identical and conflicting, a text shared by two
    ids: the stored totals are what the memberships give."""
    monkeypatch.setattr("tcdb.ingest.batches.BATCH", 3)
    add_collection(Database(), "c")
    docs = [("a", "one two"), ("b", "three"), ("a", "one two"), ("c", "x y z w"),
            ("d", "shared text here"), ("b", "three  changed words"), ("e", "shared text here"),
            ("f", ""), ("c", "x y z w"), ("g", "last")]
    ingest_snapshot(Database(), "c", "s1", LocalSource(_write(tmp_path / "d.trec", docs)),
                    on_duplicate=on_duplicate)
    kept, live, _ = _stored("s1")
    assert kept == live
    assert kept[0] == 7


@pytest.mark.parametrize("stored", ["key", "text"])
def test_a_wrong_guess_is_written_again_with_lookups(
        db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stored: str) -> None:
    """A snapshot whose first batch holds only new keys and texts, the next one a key (or a
    text) stored before: on PostgreSQL that batch's guess fails and it is written again with
    lookups; the rows are those SQLite (which never guesses) writes."""
    from tcdb.ingest import batch_state, batches

    monkeypatch.setattr(batches, "BATCH", 2)
    wrong: list[bool] = []
    off = batch_state.Guess.off

    def noted(guess: batch_state.Guess) -> None:
        wrong.append(guess.documents or guess.contents)
        off(guess)

    monkeypatch.setattr(batch_state.Guess, "off", noted)
    add_collection(Database(), "old")
    old = [(f"o{i}", f"old text {i}") for i in range(4)]
    ingest_snapshot(Database(), "old", "s0", LocalSource(_write(tmp_path / "old.trec", old)))
    add_collection(Database(), "new")
    first = [(f"n{i}", f"new text {i}") for i in range(4)]
    ingest_snapshot(Database(), "new", "s1", LocalSource(_write(tmp_path / "s1.trec", first)))
    again = ("n0", "changed text") if stored == "key" else ("x0", "old text 0")
    second = [("m0", "fresh 0"), ("m1", "fresh 1"), again, ("m2", "fresh 2"),
              ("m3", "new text 3"), ("n1", "new text 1")]
    ingest_snapshot(Database(), "new", "s2", LocalSource(_write(tmp_path / "s2.trec", second)))
    kept, live, rows = _stored("s2")
    assert kept == live
    assert [(d, t.strip()) for d, t in rows] == sorted(second)
    with Database().engine().connect() as conn:
        n_contents = conn.execute(text("SELECT COUNT(*) FROM content")).scalar_one()
        keys = conn.execute(text(
            "SELECT d.key FROM document d JOIN collection c ON c.id = d.collection_id "
            "WHERE c.name = 'new'")).scalars().all()
    texts = {t for _, t in old + first + second}
    assert n_contents == len(texts)  # each text once
    assert sorted(keys) == sorted({d for d, _ in first + second})
    assert wrong == ([True] if db.startswith("postgresql") else [])  # the guess was made


def test_messages_read_straight_into_a_reused_buffer() -> None:
    """`_receive` reads what `Connection.send_bytes` sent, larger and smaller messages in
    turn into one buffer, and an early end of the pipe is an EOFError."""
    import multiprocessing
    import os

    from tcdb.ingest.readahead import _receive

    sizes = [0, 1, 5, 16_385, 300_000, 7, 200_000, 300_001]
    messages = [os.urandom(n) for n in sizes]
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)

    def send() -> None:
        for message in messages:
            sender.send_bytes(message)
        sender.send_bytes(b"cut short")  # header says 9 bytes; the pipe ends after them
        os.write(sender.fileno(), (1000).to_bytes(4, "big") + b"only a few")

    child = context.Process(target=send)
    child.start()
    sender.close()
    buffer = bytearray()
    for message in messages:
        buffer, size = _receive(receiver, buffer)
        assert bytes(buffer[:size]) == message
    assert len(buffer) == max(sizes)
    buffer, size = _receive(receiver, buffer)
    assert bytes(buffer[:size]) == b"cut short"
    child.join()
    with pytest.raises(EOFError):
        _receive(receiver, buffer)
    receiver.close()
