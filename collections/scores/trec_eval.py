"""Per-topic scores computed elsewhere: `trec_eval -q` output and ir_measures' TSV output.

Both are mapped onto ir_measures names (`AP`, `nDCG@10`, `P@20`, …) so that scores imported
from a file and scores tcdb computes itself land in the same measure column. trec_eval names are
translated by ir_measures' own converter (`ir_measures.parse_trec_measure`), not by a table of
ours; counts (`num_rel`, `num_ret`, `num_rel_ret`, `num_q`), `runid` and measures ir_measures
cannot express (`gm_map`, `relstring`, …) are skipped and listed in `skipped`.

Topic ids are held to `tcdb.limits` (one word of at most 200 characters, no control
characters) and values to trec_eval's own number grammar (`tcdb.collections.files.numeric`: a finite
decimal; `nan`, `inf`, `1_0` are refused with file and line).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from tcdb.collections.files.lines import text_lines
from tcdb.collections.files.numeric import parse_score
from tcdb.collections.runs.trec import read_text
from tcdb.errors import InputError
from tcdb.limits import TOPIC_ID_LENGTH, Refused, check_identifier, shown

AGGREGATE_TOPIC = "all"
_COUNTS = {"NumQ", "NumRel", "NumRet", "NumRet(rel=1)"}  # bookkeeping, not effectiveness
_NOT_MEASURES = {"runid", "relstring", "num_q", "num_rel", "num_ret", "num_rel_ret"}


@dataclass(slots=True)
class EvalOutput:
    """Scores read from one evaluation output file.

    `per_topic` holds (measure, topic, value) rows; the `all` rows go to `aggregate` so that a
    caller summing or averaging per-topic values never counts them twice.
    """

    per_topic: list[tuple[str, str, float]] = field(default_factory=list)
    aggregate: dict[str, float] = field(default_factory=dict)
    skipped: set[str] = field(default_factory=set)  # source measure names not imported
    source_format: str = "trec_eval"  # or "ir_measures"
    # How the `all` lines were written, to hold them against the per-topic lines: the line
    # of each, the decimals it was printed with, and trec_eval's `num_q all N` (the topics
    # its means divide by: with -c, every judged topic, answered or not).
    # (where each value was read: not part of what the file says, so not compared)
    aggregate_lines: dict[str, int] = field(default_factory=dict, compare=False)
    aggregate_decimals: dict[str, int] = field(default_factory=dict, compare=False)
    num_q: int | None = None
    lines: dict[tuple[str, str], int] = field(default_factory=dict, compare=False)


@lru_cache(maxsize=1024)
def measure_from_trec_name(name: str) -> str | None:
    """The ir_measures name for a trec_eval measure name, or None when it is not one we keep."""
    import ir_measures

    if name in _NOT_MEASURES:
        return None
    try:
        measures = ir_measures.parse_trec_measure(name)
    except Exception:  # its parser raises ValueError, NameError, … for non-names
        return None
    if len(measures) != 1 or str(measures[0]) in _COUNTS:
        return None
    return str(measures[0])


@lru_cache(maxsize=1024)
def canonical_measure(name: str) -> str | None:
    """An ir_measures measure name in its canonical spelling, or None if it does not parse."""
    import ir_measures

    try:
        return str(ir_measures.parse_measure(name))
    except Exception:  # ast-based parser: ValueError, NameError, SyntaxError, …
        return None


def read_trec_eval(path: Path) -> EvalOutput:
    """Read `trec_eval -q` (`measure topic value`) or ir_measures TSV (`topic measure value`).

    The flavour is decided once per file from its first row: a trec_eval name in the first
    column means trec_eval, a valid ir_measures name in the second means ir_measures.
    """
    path = Path(path)
    rows = [
        (number, line.split())
        for number, line in enumerate(text_lines(read_text(path)), start=1)
        if line.strip()
    ]
    if not rows:
        raise InputError(path, None, "evaluation output has no rows")
    out = EvalOutput(source_format=_detect(path, rows[0][0], rows[0][1]))
    seen: dict[tuple[str, str], int] = {}
    for number, parts in rows:
        if len(parts) == 2 and out.source_format == "ir_measures":
            raw_measure, topic, value_text = parts[0], AGGREGATE_TOPIC, parts[1]
        elif len(parts) != 3:
            raise InputError(path, number, f"expected 3 columns, found {len(parts)}")
        elif out.source_format == "trec_eval":
            raw_measure, topic, value_text = parts
        else:
            topic, raw_measure, value_text = parts
        if out.source_format == "trec_eval":
            if raw_measure == "num_q" and topic == AGGREGATE_TOPIC:
                out.num_q = _count(path, number, value_text)
            measure = measure_from_trec_name(raw_measure)
            if measure is None:
                out.skipped.add(raw_measure)
                continue
        else:
            measure = canonical_measure(raw_measure)
            if measure is None:
                raise InputError(path, number, f"unknown ir_measures measure {raw_measure!r}")
        try:
            check_identifier(topic, "topic id", TOPIC_ID_LENGTH)
            value = parse_score(value_text, "value")
        except Refused as exc:
            reason = f"{exc} ({raw_measure}, topic {shown(topic)})"
            raise InputError(path, number, reason) from None
        first = seen.setdefault((measure, topic), number)
        if first != number:
            reason = f"{measure} for topic {topic!r} appears twice (first on line {first})"
            raise InputError(path, number, reason)
        if topic == AGGREGATE_TOPIC:
            out.aggregate[measure] = value
            out.aggregate_lines[measure] = number
            out.aggregate_decimals[measure] = _decimals(value_text)
        else:
            out.per_topic.append((measure, topic, value))
            out.lines[(measure, topic)] = number
    return out


def _count(path: Path, number: int, text: str) -> int:
    """trec_eval's `num_q all N`: a whole number of topics, refused in one line otherwise."""
    if not text.isdigit():
        raise InputError(path, number, f"num_q is a number of topics, not {shown(text)}")
    return int(text)


def _decimals(text: str) -> int:
    """The decimals a value was printed with (`0.3500` → 4; `1e-3` → 3): its rounding."""
    mantissa, _, exponent = text.lower().partition("e")
    places = len(mantissa.partition(".")[2])
    return max(0, places - int(exponent)) if exponent.lstrip("+-").isdigit() else places


def _detect(path: Path, number: int, parts: list[str]) -> str:
    """Which tool wrote the file, judged from its first row."""
    if len(parts) == 2 and canonical_measure(parts[0]) is not None:
        return "ir_measures"
    if len(parts) == 3:
        first_is_trec = parts[0] in _NOT_MEASURES or measure_from_trec_name(parts[0]) is not None
        second_is_irm = canonical_measure(parts[1]) is not None
        if first_is_trec and not second_is_irm:
            return "trec_eval"
        if second_is_irm and not first_is_trec:
            return "ir_measures"
        if first_is_trec:
            return "trec_eval" if parts[1] == AGGREGATE_TOPIC else "ir_measures"
    reason = (
        "neither trec_eval -q output (`measure topic value`) nor ir_measures output "
        "(`topic measure value`)"
    )
    raise InputError(path, number, reason)
