"""Cocktail's own dataset layout (Dai et al., ACL Findings 2024; github.com/KID-22/Cocktail).

A Cocktail dataset folder holds one BEIR corpus per source — ``corpus/human.jsonl`` and one per
LLM (``corpus/llama-2-7b-chat-tmp0.2.jsonl``, …), the same ``_id`` in each for a document and its
rewrites — with BEIR's ``queries.jsonl`` and ``qrels/test.tsv`` (``qrels/dev.tsv`` for MS MARCO)
judging the ids. Cocktail's own evaluation mixes the corpora under ids ``<_id>-<source>`` and
gives every source's copy of a document the judgment of its id; read here the same way:

* each document's id is ``<_id>-<file stem>``, its source ``human`` for ``human.jsonl`` and
  ``llm`` for every other file, and an LLM document's twin is ``<_id>-human`` when the human
  corpus has that id;
* the qrels judge ``<_id>-human``: the LLM rewrites get their original's judgment through the
  twin rule of `tcdb.judging.by_source` (Cocktail's rule), recorded in the derived sets' provenance.

Run files made with Cocktail's code name documents ``<_id>-<source>`` too, so they import as
they are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

from tcdb.collections.documents.jsonl import count_jsonl_documents, read_jsonl_documents
from tcdb.collections.sources.fingerprint import file_fingerprint
from tcdb.collections.sources.records import DocumentRecord, QrelRecord, TopicRecord
from tcdb.errors import InputError

__all__ = ["CocktailSource", "HUMAN_CORPUS"]

HUMAN_CORPUS = "human"  # the stem of the human-written corpus file


class CocktailSource:
    """A snapshot in a Cocktail dataset folder (see the module docstring)."""

    kind = "cocktail"

    def __init__(self, folder: Path | str, split: str | None = None) -> None:
        self.folder = Path(folder).resolve()
        corpus = self.folder / "corpus"
        self.corpora = sorted(corpus.glob("*.jsonl")) if corpus.is_dir() else []
        if not self.corpora:
            raise InputError(corpus, None, "no corpus/*.jsonl: not a Cocktail dataset folder")
        if not any(p.stem == HUMAN_CORPUS for p in self.corpora):
            raise InputError(corpus, None, f"no {HUMAN_CORPUS}.jsonl: the LLM corpora's "
                             "twins are the human documents of the same id")
        self.queries = self.folder / "queries.jsonl"
        if not self.queries.is_file():
            raise InputError(self.queries, None, "no such file")
        splits = [split] if split else ["test", "dev"]
        self.qrels_path = next((self.folder / "qrels" / f"{s}.tsv" for s in splits
                                if (self.folder / "qrels" / f"{s}.tsv").is_file()), None)
        if split and self.qrels_path is None:
            raise InputError(self.folder / "qrels" / f"{split}.tsv", None, "no such file")
        self.description = str(self.folder)

    def fingerprint(self) -> str:
        return file_fingerprint(self.kind, [("corpus", self.folder / "corpus"),
                                            ("queries", self.queries),
                                            ("qrels", self.qrels_path)])

    def documents(self) -> Iterator[DocumentRecord]:
        """Every corpus in turn, the human one first, ids and labels as Cocktail mixes them."""
        human_ids: set[str] = set()
        ordered = sorted(self.corpora, key=lambda p: (p.stem != HUMAN_CORPUS, p.name))
        for path in ordered:
            human = path.stem == HUMAN_CORPUS
            for record in read_jsonl_documents(path):
                if human:
                    human_ids.add(record.doc_id)
                yield dataclasses.replace(
                    record, doc_id=f"{record.doc_id}-{path.stem}",
                    source="human" if human else "llm",
                    twin_of=None if human or record.doc_id not in human_ids
                    else f"{record.doc_id}-{HUMAN_CORPUS}")

    def topics(self) -> Iterator[TopicRecord]:
        from tcdb.collections.topics.formats import read_topics

        return iter(read_topics(self.queries))

    def qrels(self) -> Iterator[QrelRecord] | None:
        """The judgments, of the human documents (`<_id>-human`)."""
        if self.qrels_path is None:
            return None
        from tcdb.collections.qrels.formats import read_qrels

        return (dataclasses.replace(r, doc_id=f"{r.doc_id}-{HUMAN_CORPUS}")
                for r in read_qrels(self.qrels_path))

    def documents_count_hint(self) -> int | None:
        return count_jsonl_documents(self.corpora)
