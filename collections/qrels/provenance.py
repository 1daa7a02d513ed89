"""Who judged a qrels file: a provenance sidecar (YAML), per-judgment answers (JSONL), and the
provenance UMBRELA keeps in its output file names (docs/qrels-provenance.md).

Each reader refuses a bad line with one `InputError` naming the file, the line and the reason;
nothing here writes. An answer that did not parse carries no grade: tools that write a 0 for it
(UMBRELA's `result_status: 0`, LongEval 2026's judge) are read as "not parsed", never as 0.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tcdb.collections.files.numeric import parse_integer
from tcdb.collections.files.opening import read_input_text
from tcdb.collections.files.yaml_input import YamlDocument, YamlModel, read_yaml, validate
from tcdb.errors import InputError
from tcdb.limits import (
    CHECKSUM_LENGTH,
    DOC_ID_LENGTH,
    GRADE_RANGE,
    NAME_LENGTH,
    TOPIC_ID_LENGTH,
    Refused,
    check_identifier,
)

JudgeKindWord = Literal["human", "llm", "clicks", "click_through_rate", "other", "unknown"]


class Decoding(YamlModel):
    """An LLM's decoding settings, as its API names them."""

    temperature: float | None = None
    top_p: float | None = None
    frequency_penalty: float | None = None
    presence_penalty: float | None = None
    seed: int | None = None


class Sidecar(YamlModel):
    """The provenance sidecar: one YAML mapping beside a plain TREC qrels file."""

    judge_kind: JudgeKindWord
    model: str | None = None
    model_revision: str | None = None  # a revision, snapshot name or digest
    provider: str | None = None
    prompt_template: str | None = None  # the text, or
    prompt_template_file: str | None = None  # a file beside the sidecar holding it
    prompt_sha256: str | None = None  # checked against the template when both are given
    prompt_variant: str | None = None
    few_shot_examples: str | list[str] | None = None
    few_shot_count: int | None = None
    decoding: Decoding | None = None
    samples: int | None = None
    aggregation: str | None = None
    judged_grades: str | None = None
    judged_at: dt.date | None = None


@dataclass
class Provenance:
    """A set's provenance as stored (`qrels_provenance`), whichever file it came from."""

    judge_kind: str
    values: dict[str, Any] = field(default_factory=dict)  # qrels_provenance columns
    document: YamlDocument | None = None  # the sidecar it was read from (for its lines)


def read_sidecar(path: Path | str) -> Provenance:
    """The provenance sidecar at `path`, checked: known keys, types, a prompt's sha256."""
    document = read_yaml(path)
    if not isinstance(document.data, dict):
        raise InputError(path, document.line(()), "a provenance sidecar is one YAML mapping "
                         "(judge_kind, model, prompt_template, …)")
    sidecar = validate(document, Sidecar)
    values = sidecar.model_dump(exclude={"judge_kind", "decoding", "prompt_template_file",
                                         "few_shot_examples"}, exclude_none=True)
    if sidecar.decoding is not None:
        values.update(sidecar.decoding.model_dump(exclude_none=True))
    examples = sidecar.few_shot_examples
    if isinstance(examples, list):
        examples = "\n\n".join(examples)
        values.setdefault("few_shot_count", len(sidecar.few_shot_examples or []))
    if examples is not None:
        values["few_shot_examples"] = examples
    template = sidecar.prompt_template
    if sidecar.prompt_template_file is not None:
        if template is not None:
            raise document.fail(("prompt_template_file",), "give prompt_template or "
                                 "prompt_template_file, not both")
        template_path = Path(path).parent / sidecar.prompt_template_file
        if not template_path.is_file():
            raise document.fail(("prompt_template_file",),
                                f"prompt template file not found: {template_path}")
        template = read_input_text(template_path)
    if template is not None:
        values["prompt_template"] = template
        digest = prompt_sha256(template)
        given = sidecar.prompt_sha256
        if given is not None and given.lower() != digest:
            raise document.fail(("prompt_sha256",), f"prompt_sha256 {given!r} is not the "
                                f"sha256 of the prompt template ({digest})")
        values["prompt_sha256"] = digest
    for key in ("model", "model_revision", "provider", "prompt_variant", "aggregation",
                "judged_grades"):
        if len(values.get(key) or "") > NAME_LENGTH:
            raise document.fail((key,), f"{key} longer than {NAME_LENGTH} characters")
    if len(values.get("prompt_sha256") or "") > CHECKSUM_LENGTH:  # pragma: no cover
        raise document.fail(("prompt_sha256",), "prompt_sha256 too long")
    for key in ("samples", "few_shot_count"):
        if values.get(key) is not None and values[key] < (1 if key == "samples" else 0):
            raise document.fail((key,), f"{key} {values[key]} is not a count")
    return Provenance(sidecar.judge_kind, values, document)


def prompt_sha256(template: str) -> str:
    """The sha256 of a prompt template's UTF-8 text, as stored and shown."""
    return hashlib.sha256(template.encode("utf-8")).hexdigest()


# UMBRELA's `evaluate` writes `{qrel}_{model}_{cats}_{few_shot}_{samples}.txt` (its code);
# its documentation shows `{qrel}_{model}_{cats}{few_shot}_{samples}.txt`. Both are read.
_UMBRELA = re.compile(r"^(?P<qrel>[^_]+)_(?P<model>.+)_(?P<cats>[0-3]+)_(?P<shots>\d+)"
                      r"_(?P<samples>\d+)\.txt$")
_UMBRELA_JOINED = re.compile(r"^(?P<qrel>[^_]+)_(?P<model>.+)_(?P<digits>\d+)"
                             r"_(?P<samples>\d+)\.txt$")


def umbrela_provenance(path: Path | str) -> Provenance:
    """The provenance UMBRELA's file name holds: model, judged grades, few-shot count, samples.

    UMBRELA re-judges only the pairs whose base grade is one of the judged categories (the
    others keep the base qrels' grade), and with several samples keeps their mode.
    """
    name = Path(path).name
    found = _UMBRELA.match(name)
    if found is not None:
        cats, shots = found["cats"], found["shots"]
    else:
        found = _UMBRELA_JOINED.match(name)
        digits = found["digits"] if found is not None else ""
        cut = _categories_end(digits)
        if found is None or cut is None:
            raise InputError(path, None, "not an UMBRELA output file name "
                             "`{qrel}_{model}_{cats}_{few_shot}_{samples}.txt` "
                             "(e.g. dl19-passage_gpt-4o_0123_0_1.txt)")
        cats, shots = digits[:cut], digits[cut:]
    samples = int(found["samples"])
    if samples < 1:
        raise InputError(path, None, "UMBRELA file name gives 0 samples per pair")
    values: dict[str, Any] = {
        "model": found["model"], "judged_grades": cats, "few_shot_count": int(shots),
        "samples": samples, "aggregation": "mode" if samples > 1 else None}
    return Provenance("llm", {k: v for k, v in values.items() if v is not None})


def _categories_end(digits: str) -> int | None:
    """Where UMBRELA's joined `{cats}{few_shot}` splits: the longest strictly increasing run
    of 0–3 that leaves a few-shot count."""
    end = 0
    while (end < len(digits) - 1 and digits[end] in "0123"
           and (end == 0 or digits[end] > digits[end - 1])):
        end += 1
    return end or None


@dataclass(frozen=True)
class Answer:
    """One answer of a judge to (topic, document): raw text, parsed or not, its grade."""

    topic_id: str
    doc_id: str
    sample: int | None
    answer: str | None
    parsed: bool
    grade: int | None
    input_tokens: int | None
    output_tokens: int | None
    cost: float | None
    file: str
    line: int


# the keys of an answers line: this sidecar's own words, then UMBRELA's judge output's
_SYNONYMS = {"qid": "topic", "docid": "doc", "prediction": "answer", "judgment": "grade",
             "result_status": "parsed"}
_KEYS = {"topic", "doc", "sample", "answer", "parsed", "grade", "input_tokens",
         "output_tokens", "cost"}
_IGNORED = {"model", "query", "passage", "prompt", "reasoning"}  # UMBRELA's, kept elsewhere


def read_answers(path: Path | str, judge_input: Path | str | None = None) -> list[Answer]:
    """Per-judgment answers, one JSON object a line (this sidecar's keys or UMBRELA's judge
    output). UMBRELA's output names no pair: with `judge_input` (the JSONL `umbrela judge`
    read) the n-th answer answers its n-th candidate; else each line needs `qid` and `docid`."""
    text = read_input_text(path)
    pairs = read_judge_input(judge_input) if judge_input is not None else None
    answers: list[Answer] = []
    lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if pairs is not None and len(pairs) != len(lines):
        raise InputError(path, None, f"{len(lines):,} answers for the {len(pairs):,} "
                         f"candidates of {judge_input}: UMBRELA writes one per candidate")
    for index, (number, line) in enumerate(lines):
        try:
            record = json.loads(line)
            if pairs is not None and isinstance(record, dict):
                if "qid" in record or "docid" in record:
                    raise ValueError("qid and docid come from the judge input: not here too")
                record = {**record, "qid": pairs[index][0], "docid": pairs[index][1]}
            answers.append(_answer(record, str(path), number))
        except json.JSONDecodeError as exc:
            raise InputError(path, number, f"not JSON: {exc.msg}") from None
        except (Refused, ValueError, TypeError) as exc:
            raise InputError(path, number, str(exc)) from None
    if not answers:
        raise InputError(path, None, "answers file has no answers")
    return answers


def read_judge_input(path: Path | str) -> list[tuple[str, str]]:
    """(qid, docid) of each candidate of UMBRELA's judge input, in order: one JSON object a
    line, `{"query": {"qid", "text"}, "candidates": [{"docid", "doc"}, …]}`."""
    pairs: list[tuple[str, str]] = []
    for number, line in enumerate(read_input_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            query = record.get("query") if isinstance(record, dict) else None
            candidates = record.get("candidates") if isinstance(record, dict) else None
            if not isinstance(query, dict) or "qid" not in query:
                raise ValueError("UMBRELA's judge input needs query.qid to name the topic")
            if not isinstance(candidates, list):
                raise ValueError("UMBRELA's judge input needs its list of candidates")
            for candidate in candidates:
                if not isinstance(candidate, dict) or "docid" not in candidate:
                    raise ValueError("each candidate needs its docid to name the document")
                pairs.append((_identifier(query["qid"], "qid"),
                              _identifier(candidate["docid"], "docid")))
        except json.JSONDecodeError as exc:
            raise InputError(path, number, f"not JSON: {exc.msg}") from None
        except ValueError as exc:
            raise InputError(path, number, str(exc)) from None
    return pairs


def _answer(record: Any, file: str, number: int) -> Answer:
    if not isinstance(record, dict):
        raise ValueError("an answer is a JSON object {topic, doc, answer, parsed, grade, …}")
    values: dict[str, Any] = {}
    for key, value in record.items():
        if key in _IGNORED:
            continue
        word = _SYNONYMS.get(key, key)
        if word not in _KEYS:
            raise ValueError(f"unknown key {key!r} (known: {', '.join(sorted(_KEYS))})")
        if word in values:
            raise ValueError(f"{key!r} given twice (as {word!r})")
        values[word] = value
    for key in ("topic", "doc", "parsed"):
        if key not in values:
            hint = (" (UMBRELA's judge output names no pair: add the qid and docid of its "
                    "judge input)" if key != "parsed" and "prediction" in record else "")
            raise ValueError(f"missing {key!r}{hint}")
    topic, doc = _identifier(values["topic"], "topic"), _identifier(values["doc"], "doc")
    check_identifier(topic, "topic id", TOPIC_ID_LENGTH)
    check_identifier(doc, "document id", DOC_ID_LENGTH)
    parsed = values["parsed"]
    if parsed in (0, 1) and not isinstance(parsed, float):
        parsed = bool(parsed)
    if not isinstance(parsed, bool):
        raise ValueError(f"parsed is {parsed!r}: true or false (UMBRELA's result_status 1 or 0)")
    grade = values.get("grade")
    if parsed:
        if grade is None or isinstance(grade, bool):
            raise ValueError("a parsed answer needs its grade")
        grade = parse_integer(str(grade), "grade", GRADE_RANGE)
    else:
        grade = None  # whatever a tool wrote for it (UMBRELA writes 0) is not a grade
    answer = values.get("answer")
    if answer is not None and not isinstance(answer, str):
        raise ValueError("answer is the judge's raw text")
    return Answer(topic, doc, _count(values, "sample"), answer, parsed, grade,
                  _count(values, "input_tokens"), _count(values, "output_tokens"),
                  _cost(values.get("cost")), file, number)


def _identifier(value: Any, key: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ValueError(f"{key} is an id (text or integer), not {value!r}")
    return str(value)


def _count(values: dict[str, Any], key: str) -> int | None:
    value = values.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**31:
        raise ValueError(f"{key} is {value!r}: a count from 0")
    return value


def _cost(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError(f"cost is {value!r}: a number from 0")
    return float(value)
