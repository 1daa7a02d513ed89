"""Measures by their ir_measures names: parsing what people write, and their stored ids."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator
from sqlmodel import Session, col, select

from tcdb.errors import FieldError, TcdbError
from tcdb.limits import GRADE_RANGE, RANK_RANGE, shown
from tcdb.operations.request import as_labels
from tcdb.schema import Measure


def canonical_measure(name: str, field: str = "measures") -> str:
    """The ir_measures spelling of a measure, in any case where exactly one measure matches
    (`ndcg@10`, `NDCG@10`, `ndcg_cut_10` → nDCG@10; `map`, `MAP` → AP; `p@10`, `P_10` → P@10).

    Why one rule: the CLI, the API and `literature import` read the same names the same way.
    Written as ir_measures or trec_eval spell it, a name is taken as is; otherwise its case is
    folded, and refused when the folded spellings name different measures.
    """
    text = name.strip()
    found = _parsed(text)
    if found is not None:
        return _within_edges(found, name, field)
    meanings = sorted({m for v in _case_variants(text) if (m := _parsed(v)) is not None})
    if len(meanings) == 1:
        return _within_edges(meanings[0], name, field)
    if meanings:
        raise FieldError(field, f"{name!r} is ambiguous in another case: it could be "
                         f"{' or '.join(meanings)} (write it as ir_measures spells it)")
    raise FieldError(field, f"{name!r} is not a measure ir_measures knows "
                     "(e.g. nDCG@10, AP, P@10, Bpref, RR, Judged@10, or trec_eval names)")


def _within_edges(measure: str, given: str, field: str) -> str:
    """`measure` when its parameters are within their edges; else `FieldError`.

    Why here: ir_measures parses `P@0` and `P@99999999999999999999`, and then pytrec_eval
    kills the process in C (a zero cutoff) or raises an overflow from deep inside. A cutoff
    is a rank, a whole number from 1 to the largest rank stored (`tcdb.limits.RANK_RANGE`);
    a relevance threshold `rel` is a grade (`GRADE_RANGE`); every other parameter is checked
    against the types ir_measures declares for it, before any provider sees it.
    """
    import ir_measures

    parsed = ir_measures.parse_measure(measure)
    for param, bounds, what in (("cutoff", (1, RANK_RANGE[1]), "a cutoff is a rank"),
                                ("rel", GRADE_RANGE, "rel is a relevance grade")):
        value = parsed.params.get(param)
        if value is None:
            continue
        if (isinstance(value, bool) or not isinstance(value, int)
                or not bounds[0] <= value <= bounds[1]):
            raise FieldError(field, f"{given!r}: {param}={value!r} is out of range ({what}: "
                             f"a whole number from {bounds[0]:,} to {bounds[1]:,})")
    try:
        parsed.validate_params()
    except Exception as error:  # noqa: BLE001 - ir_measures asserts: a value of the wrong type
        reason = re.sub(r"<object object at 0x[0-9a-f]+>", "(not given)", _first_line(error))
        raise FieldError(field, f"{given!r}: {reason} (ir_measures' parameters "
                         f"of {parsed.NAME}: {', '.join(sorted(parsed.SUPPORTED_PARAMS))})"
                         ) from None
    return measure


def _first_line(error: BaseException) -> str:
    """An exception's message as one line (its type when it has none)."""
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def _parsed(text: str) -> str | None:
    """`text` as ir_measures or trec_eval spell a measure, canonical; None when neither."""
    from tcdb.collections.scores.trec_eval import canonical_measure as irm_name
    from tcdb.collections.scores.trec_eval import measure_from_trec_name

    return irm_name(text) or measure_from_trec_name(text)


def _case_variants(text: str) -> list[str]:
    """`text` with its leading measure name in each case ir_measures registers it under
    (`ndcg@10` → NDCG@10, nDCG@10; `p_10` → P_10), and in lower case (trec_eval's `MAP`)."""
    import ir_measures

    registered: dict[str, list[str]] = {}
    for known in ir_measures.measures.registry:
        registered.setdefault(known.lower(), []).append(known)
    cuts = [i for i, c in enumerate(text) if c in "@(_"] + [len(text)]
    variants = [known + text[cut:] for cut in cuts
                for known in registered.get(text[:cut].lower(), [])]
    return list(dict.fromkeys([*variants, text.lower()]))


def parse_measures(names: Iterable[str], field: str = "measures") -> list[str]:
    """Canonical names, de-duplicated in order; each must be computable by ir_measures."""
    import ir_measures

    result = list(dict.fromkeys(canonical_measure(n, field) for n in names))
    if not result:
        raise FieldError(field, "give at least one measure")
    for name in result:
        try:
            supported = ir_measures.DefaultPipeline.supports(ir_measures.parse_measure(name))
        except Exception as error:  # noqa: BLE001 - a provider's check asserts on a parameter
            raise FieldError(field, f"{name}: {_first_line(error)}") from None
        if not supported:
            raise FieldError(field, f"no installed ir_measures provider computes "
                              f"{name}")
    return result


def _measures_field(names: list[str]) -> list[str]:
    try:
        return parse_measures(names)
    except FieldError as exc:  # said by the request as the field it is
        raise ValueError(exc.reason) from None


def _measure_field(name: str) -> str:
    return _measures_field([name])[0]


# A request's measures, parsed where they enter (`parse_measures`: ir_measures' spelling,
# de-duplicated, computable by an installed provider), so the operation below never parses
# them again; a bad one is a `FieldError` naming the field.
MeasureNames = Annotated[list[str], BeforeValidator(as_labels), AfterValidator(_measures_field)]
MeasureName = Annotated[str, AfterValidator(_measure_field)]


# What each provider with limits of its own cannot take, and what computes instead.
GDEVAL_MAX_GRADE = 4  # gdeval.pl's $MAX_JUDGMENT
_INSTEAD = {"ERR": "RR or nDCG@k (pytrec_eval) on these topics, or ERR on topics numbered "
            "1, 2, …", "nDCG": "nDCG@k (pytrec_eval, linear gains) on these topics"}


def check_providers(names: Iterable[str],
                    data: Callable[[], tuple[Sequence[str], int | None]],
                    field: str = "measures") -> None:
    """Refuse, before anything runs, a measure whose provider cannot take this data: one
    line naming the measure, the provider, the reason and what works instead.

    Why: ir_measures' gdeval provider (ERR@k, nDCG(dcg='exp-log2')@k) runs a Perl script that
    reads whole-number topic ids and grades up to 4 only; on `q06225923` it dies with
    `format error on line 1` and a hundred lines of traceback. `data()` gives the external
    topic ids the run and qrels files it is given would hold and the largest grade; it is
    called only when a measure's provider has limits.
    """
    import shutil

    import ir_measures

    loaded: tuple[Sequence[str], int | None] | None = None
    for name in names:
        measure = ir_measures.parse_measure(name)
        provider = provider_of(measure)
        if provider != "gdeval":
            continue
        if loaded is None:
            loaded = data()
        ids, max_grade = loaded
        reason = None
        if shutil.which("perl") is None:
            reason = "it runs a Perl script and perl is not installed"
        elif (wrong := [t for t in ids if not (t.isascii() and t.isdigit())]):
            reason = (f"its Perl script reads whole-number topic ids only, and {len(wrong):,} "
                      f"of {len(ids):,} topic ids are not (e.g. {shown(wrong[0])})")
        elif max_grade is not None and max_grade > GDEVAL_MAX_GRADE:
            reason = (f"its Perl script reads grades up to {GDEVAL_MAX_GRADE} only, and these "
                      f"judgments go up to {max_grade}")
        if reason:
            instead = _INSTEAD.get(str(measure.NAME), "a measure pytrec_eval computes")
            raise FieldError(field, f"{name} is computed by ir_measures' gdeval provider, which "
                             f"cannot take this data: {reason}; use {instead}")


class ProviderError(TcdbError):
    """A measure's provider failed while computing (a crash of its own, not bad input)."""


def provider_failed(measures: Iterable[str], error: BaseException) -> ProviderError:
    """The one line for a provider that failed computing `measures`: which measure(s), which
    provider, and its reason (the first line of what it raised)."""
    import ir_measures

    named = [f"{m} ({provider_of(ir_measures.parse_measure(m)) or 'no provider'})"
             for m in measures]
    return ProviderError(f"computing {', '.join(named)} failed in ir_measures: "
                         f"{type(error).__name__}: {_first_line(error)}")


# Measures whose values are proportions, 0 to 1 (ir_measures' names), and counts, 0 or more.
_PROPORTIONS = frozenset({
    "AP", "AP_IA", "Accuracy", "Bpref", "Compat", "ERR", "ERR_IA", "IPrec", "Judged",
    "NERR8", "NERR9", "NERR10", "NERR11", "P", "P_IA", "R", "RBP", "RR", "Rprec", "SDCG",
    "SetAP", "SetF", "SetP", "SetR", "SetRelP", "StRecall", "Success", "alpha_nDCG", "infAP",
    "nDCG", "nERR_IA", "nNRBP"})
_COUNTS = frozenset({"NumQ", "NumRel", "NumRet", "NumRelRet"})


def value_range(name: str) -> tuple[float, float] | None:
    """The values `name` can take: (0, 1) for a proportion (AP, nDCG, P, …), (0, ∞) for a
    count; None when ir_measures does not bound it (DCG-like sums, custom gains, unknown).

    Why: a published nDCG of 1.2 or AP of −0.1 is a broken file, not a score to store.
    """
    import ir_measures

    try:
        parsed = ir_measures.parse_measure(name)
    except Exception:  # noqa: BLE001 - a name ir_measures does not parse: not bounded here
        return None
    if parsed.params.get("gains") is not None:  # custom gains may be negative or large
        return None
    if parsed.NAME in _PROPORTIONS:
        return (0.0, 1.0)
    if parsed.NAME in _COUNTS:
        return (0.0, math.inf)
    return None


def measure_id(session: Session, name: str) -> int:
    """The id of a measure by its ir_measures name, created on first use.

    Created with INSERT … ON CONFLICT DO NOTHING: two processes evaluating a new measure at
    once both get its id, neither a unique-constraint error.
    """
    existing = session.exec(select(col(Measure.id)).where(col(Measure.name) == name)).first()
    if existing is not None:
        return existing
    conn = session.connection()
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert  # type: ignore[assignment]
    conn.execute(insert(Measure).values(name=name).on_conflict_do_nothing())
    created = session.exec(select(col(Measure.id)).where(col(Measure.name) == name)).one()
    assert created is not None
    return created


def ranking_depth(names: Iterable[str]) -> int | None:
    """How deep into each ranking these measures look: the largest cutoff when every measure
    has one and ir_measures computes it with pytrec_eval; None when one needs the whole run.

    Why: nDCG@10 reads ten documents of a thousand; reading and scoring only those is ~100×
    less work. pytrec_eval ranks as trec_eval does (score descending, document id descending),
    which is the stored `eval_rank`, so the top `depth` by `eval_rank` is exactly what it would
    take from the whole run. Other providers may break ties otherwise: no depth for them. A
    judged-only measure (`nDCG(judged_only=True)@10`, trec_eval -J) drops the unjudged
    documents before it cuts, so a document below the cutoff can count: no depth either.
    """
    import ir_measures

    depth = 0
    for name in names:
        measure = ir_measures.parse_measure(name)
        cutoff = measure.params.get("cutoff")
        if (cutoff is None or measure.params.get("judged_only")
                or provider_of(measure) != "pytrec_eval"):
            return None
        depth = max(depth, int(cutoff))
    return depth or None


def provider_of(measure: object) -> str | None:
    """The provider ir_measures' default pipeline computes `measure` with (its first that can)."""
    import ir_measures

    for provider in ir_measures.DefaultPipeline.providers:
        try:
            if provider.supports(measure):
                return str(provider.NAME)
        except Exception:  # noqa: BLE001, S112 - a provider that cannot load supports nothing
            continue
    return None
