"""The Python API: pandas DataFrames for notebooks, no SQL needed.

    import tcdb
    tcdb.api.scores("longeval-web", "2023-01", measures=["nDCG@10", "AP"])

Every function opens its own read transaction on the default database (`TCDB_DATABASE_URL`)
and returns readable columns: collection, snapshot, run, system, topic (external id), measure,
value. Scores that are missing are computed and stored first (pass `compute=False` to only read).

A parameter that takes several snapshots, measures, runs or systems takes one label as a string
(`"2022-06"` is one snapshot, never its characters) or any iterable of labels. Errors name the
parameters of these functions (`snapshots: …`), not the CLI's options (`--snapshots: …`).
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from tcdb.db import session_scope
from tcdb.errors import OptionError

if TYPE_CHECKING:
    import pandas as pd

    from tcdb.reports.results import PersistenceReport, ReusabilityReport

P = ParamSpec("P")
R = TypeVar("R")
Labels = str | Iterable[str]  # one label, or any iterable of labels

__all__ = [
    "documents_by_source", "evaluate", "per_topic_deltas", "per_topic_scores", "persistence",
    "qrels", "qrels_sets", "ranking_agreement", "reusability", "runs", "scores", "source_bias",
    "topic_deltas",
]


def _as_labels(value: Labels, parameter: str) -> list[str]:
    """One label as a list of one, any iterable of labels as a list.

    Why: a string is itself an iterable, of characters; `list("2022-06")` would name seven
    snapshots. Anything that is not text is refused here, naming the parameter.
    """
    if isinstance(value, str):
        return [value]
    if not isinstance(value, Iterable):
        raise OptionError(parameter, f"give a label or a list of labels, not "
                          f"{type(value).__name__} {value!r}")
    found = list(value)
    wrong = [v for v in found if not isinstance(v, str)]
    if wrong:
        raise OptionError(parameter, f"labels are text, not {type(wrong[0]).__name__} "
                          f"{wrong[0]!r}")
    return found


def _labels_or_none(value: Labels | None, parameter: str) -> list[str] | None:
    return None if value is None else _as_labels(value, parameter)


_FLAG = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*|\b[A-Z][A-Z_]*[A-Z]\b")


def _python_name(flag: str, parameters: Collection[str], aliases: Mapping[str, str]) -> str:
    """A CLI option (`--snapshots`, `--measure`, `--residual-of`, `SNAPSHOT`) as the parameter
    of an API function: no dashes, underscores for dashes, lower case; the plural when only the
    plural is a parameter (`--measure` → `measures`); `aliases` for options named otherwise
    (reusability's `--vs` is `qrels_b`)."""
    bare = flag.lstrip("-")
    if bare in aliases:
        return aliases[bare]
    name = bare.replace("-", "_").lower()
    if name not in parameters and f"{name}s" in parameters:
        return f"{name}s"
    return name


def _python_option(option: str, parameters: Collection[str], aliases: Mapping[str, str]) -> str:
    """An OptionError's option in the API's words; combined ones (`--run/--contributed`) part
    by part."""
    return "/".join(_FLAG.sub(lambda m: _python_name(m.group(), parameters, aliases), part, count=1)
                    for part in option.split("/"))


def _python_reason(reason: str, parameters: Collection[str], aliases: Mapping[str, str]) -> str:
    """An OptionError's reason with the options it mentions in the API's words — only those
    that are parameters of the function, so other text stays as written."""
    def say(match: re.Match[str]) -> str:
        name = _python_name(match.group(), parameters, aliases)
        return name if name in parameters else match.group()

    return _FLAG.sub(say, reason)


def _speaks_python(**aliases: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate an API function: the core's OptionErrors name its parameters, not CLI options.

    The core speaks to the CLI (`--snapshots: persistence compares at least two snapshots`); a
    notebook user passed `snapshots=`, and reads `snapshots: …`. The error stays an OptionError
    (an InputError) with its traceback; only the names change.
    """
    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        parameters = list(inspect.signature(fn).parameters)

        @functools.wraps(fn)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return fn(*args, **kwargs)
            except OptionError as exc:
                option = _python_option(exc.option, parameters, aliases)
                reason = _python_reason(exc.reason, parameters, aliases)
                if (option, reason) == (exc.option, exc.reason):
                    raise
                raise OptionError(option, reason).with_traceback(exc.__traceback__) from None

        return call

    return decorate


@_speaks_python()
def runs(collection: str | None = None, snapshot: str | None = None) -> pd.DataFrame:
    """One row per run: collection, snapshot, run (tag), system, group, manual, contributed,
    category, submitted, n_entries, n_unresolved, checksum, …"""
    from tcdb.catalog import get_collection, get_snapshot
    from tcdb.queries import runs_frame

    with session_scope() as session:
        collection_id = get_collection(session, collection).id if collection else None
        if snapshot is not None and collection is not None:
            get_snapshot(session, collection, snapshot)
        return runs_frame(session.connection(), collection_id=collection_id, snapshot=snapshot)


@_speaks_python()
def qrels(collection: str, snapshot: str, name: str = "original") -> pd.DataFrame:
    """A qrels set's judgments: collection, snapshot, qrels, topic, doc, grade (external ids)."""
    from tcdb.catalog import get_snapshot
    from tcdb.qrels import get_qrels_set
    from tcdb.queries import qrels_frame

    with session_scope() as session:
        snap = get_snapshot(session, collection, snapshot)
        qset = get_qrels_set(session, snap, name)
        frame = qrels_frame(session.connection(), qset.pk)
    frame.insert(0, "qrels", name)
    frame.insert(0, "snapshot", snapshot)
    frame.insert(0, "collection", collection)
    return frame


@_speaks_python()
def qrels_sets(collection: str | None = None, snapshot: str | None = None) -> pd.DataFrame:
    """One row per qrels set: kind, parents, provenance, n_judgments, n_topics."""
    import pandas as pd

    from tcdb.qrels import list_qrels

    return pd.DataFrame(list_qrels(collection, snapshot))


@_speaks_python()
def scores(
    collection: str,
    snapshot: str,
    qrels: str = "original",
    measures: Labels = ("nDCG@10",),
    runs: Labels | None = None,
    *,
    per_topic: bool = False,
    intersection: bool = False,
    residual_of: str | None = None,
    compute: bool = True,
) -> pd.DataFrame:
    """Means (`trec_eval -c`; `intersection=True` for answered topics only) or per-topic values.

    `residual_of` names a qrels set (`NAME`, or `SNAPSHOT/NAME`) whose judged documents are
    removed from every ranking before scoring (residual evaluation)."""
    from tcdb.scores import score_table

    return score_table(collection, snapshot, qrels, _as_labels(measures, "measures"),
                       _labels_or_none(runs, "runs"), per_topic, intersection,
                       residual_of=residual_of, compute=compute)


@_speaks_python()
def per_topic_scores(
    collection: str,
    snapshots: Labels,
    qrels: str = "original",
    measure: str = "nDCG@10",
    runs: Labels | None = None,
    *,
    intersection: bool = False,
    compute: bool = True,
) -> pd.DataFrame:
    """Per-topic values of one measure across snapshots; `topic_key` matches topics over time."""
    from tcdb.scores import per_topic_scores as table

    return table(collection, _as_labels(snapshots, "snapshots"), qrels, measure,
                 _labels_or_none(runs, "runs"), intersection=intersection, compute=compute)


@_speaks_python()
def evaluate(
    collection: str,
    snapshot: str,
    qrels: str = "original",
    measures: Labels = ("nDCG@10",),
    runs: Labels | None = None,
    *,
    residual_of: str | None = None,
) -> pd.DataFrame:
    """Compute the missing scores, then return the table of means."""
    return scores(collection, snapshot, qrels, measures, runs, residual_of=residual_of)


@_speaks_python()
def persistence(
    collection: str,
    snapshots: Labels,
    pivot: str,
    measures: Labels = ("nDCG@10",),
    qrels: str | Sequence[str] | Mapping[str, str] = "original",
    topics: str = "all",
    bootstrap: int = 0,
    seed: int = 0,
    systems: Labels | None = None,
    paired: bool = False,
    cross_snapshot: bool = False,
) -> PersistenceReport:
    """ARP, RΔ, ER, ΔRI and p-values of every system against `pivot` (the report's JSON).

    `qrels`: one name for every snapshot, one per snapshot in order, or {snapshot: name};
    `systems`: only these systems (the pivot is always in); `paired`: also the paired t-test
    on the core topics; `cross_snapshot`: the first snapshot's runs scored on every snapshot's
    qrels (documents and topics mapped by identity) instead of each snapshot's own runs."""
    from tcdb.reports.persistence import persistence_report

    return persistence_report(collection, _as_labels(snapshots, "snapshots"), pivot,
                              _as_labels(measures, "measures"), _qrels(qrels), topics,
                              bootstrap, seed, systems=_labels_or_none(systems, "systems"),
                              paired=paired, cross_snapshot=cross_snapshot)


@_speaks_python()
def per_topic_deltas(
    collection: str,
    snapshots: Labels,
    pivot: str,
    measures: Labels = ("nDCG@10",),
    qrels: str | Sequence[str] | Mapping[str, str] = "original",
    topics: str = "all",
    systems: Labels | None = None,
) -> pd.DataFrame:
    """Per-topic improvement of every system over the pivot, per snapshot (the LongEval plot)."""
    from tcdb.reports.persistence import per_topic_deltas_frame

    return per_topic_deltas_frame(collection, _as_labels(snapshots, "snapshots"), pivot,
                                  _as_labels(measures, "measures"), _qrels(qrels), topics,
                                  systems=_labels_or_none(systems, "systems"))


def _qrels(qrels: str | Sequence[str] | Mapping[str, str]) -> str | list[str] | dict[str, str]:
    """One name, names per snapshot, or {snapshot: name}: a string is one name, not letters."""
    if isinstance(qrels, Mapping):
        return dict(qrels)
    return qrels if isinstance(qrels, str) else _as_labels(qrels, "qrels")


@_speaks_python(vs="qrels_b", qrels="qrels_a")
def reusability(
    collection: str,
    snapshot: str,
    qrels_a: str,
    qrels_b: str,
    measures: Labels = ("AP",),
    depth: int = 100,
    topics: str | None = None,
) -> ReusabilityReport:
    """Kendall's τ (tie-omitting, τ-b, τ_AP), per-topic τ and per-run counts, A vs B."""
    from tcdb.reports.reusability import reusability_report

    return reusability_report(collection, snapshot, qrels_a, qrels_b,
                              _as_labels(measures, "measures"), depth=depth, topics=topics)


@_speaks_python()
def topic_deltas(
    collection: str,
    system: str,
    snapshots: Labels,
    measure: str = "nDCG@10",
    qrels: str | Sequence[str] | Mapping[str, str] = "original",
    pivot: str | None = None,
) -> pd.DataFrame:
    """One system's per-topic change from snapshot A to B on the core topics (B − A), largest
    gain first, with the pivot's beside it: `topic_a, topic_b, topic_key, score_a, score_b,
    delta, pivot_a, pivot_b, pivot_delta` (LongEval's per-topic Δ figure)."""
    import pandas as pd

    from tcdb.reports.topic_deltas import topic_deltas_report

    report = topic_deltas_report(collection, system, _as_labels(snapshots, "snapshots"),
                                 measure, _qrels(qrels), pivot)
    a, b = report["snapshots"]
    rows = [{"topic_a": r["topic"][a], "topic_b": r["topic"][b],
             **{k: v for k, v in r.items() if k != "topic"}} for r in report["topics"]]
    return pd.DataFrame(rows, columns=["topic_a", "topic_b", "topic_key", "score_a", "score_b",
                                       "delta", "pivot_a", "pivot_b", "pivot_delta"])


@_speaks_python(k="depth")
def ranking_agreement(
    collection: str,
    system: str,
    snapshots: Labels,
    depth: int = 1000,
    rbo_p: float = 0.8,
) -> pd.DataFrame:
    """KTU and RBO between the system's rankings of each core topic in snapshots A and B,
    documents matched by identity (repro_eval's measures): `topic_a, topic_b, topic_key,
    n_first, n_later, n_compared, common, ktu, rbo, rbo_depth, reason`."""
    import pandas as pd

    from tcdb.reports.agreement import ranking_agreement_report

    report = ranking_agreement_report(collection, system, _as_labels(snapshots, "snapshots"),
                                      depth, rbo_p)
    a, b = report["snapshots"]
    rows = [{"topic_a": r["topic"][a], "topic_b": r["topic"][b],
             **{k: v for k, v in r.items() if k != "topic"}} for r in report["topics"]]
    return pd.DataFrame(rows, columns=["topic_a", "topic_b", "topic_key", "n_first", "n_later",
                                       "n_compared", "common", "ktu", "rbo", "rbo_depth",
                                       "reason"])


@_speaks_python()
def pool_simulation(
    collection: str,
    snapshot: str,
    qrels: str,
    budgets: Sequence[int],
    strategies: Labels | None = None,
    per_topic: bool = False,
    runs: Labels | None = None,
    measure: str = "AP",
    leave_out: bool = True,
) -> pd.DataFrame:
    """Pooling strategies simulated on a complete qrels set before anyone judges, one row per
    (strategy, budget): `strategy, budget, n_judged, relevant_found, relevant_fraction, tau_b,
    tau_ap, logo_tau_b, logo_tau_ap` (`tcdb pool simulate`)."""
    import pandas as pd

    from tcdb.pools.simulate import simulate_pool

    report = simulate_pool(
        collection, snapshot, qrels, list(budgets),
        strategies=_as_labels(strategies, "strategies") if strategies is not None else None,
        per_topic=per_topic, runs=_labels_or_none(runs, "runs"), measure=measure,
        leave_out=leave_out)
    return pd.DataFrame(report["rows"], columns=[
        "strategy", "budget", "n_judged", "relevant_found", "relevant_fraction", "tau_b",
        "tau_ap", "logo_tau_b", "logo_tau_ap"])


@_speaks_python(vs="versus")
def assessor_agreement(
    pool: str,
    versus: str,
    qrels: str | None = None,
    measure: str = "AP",
    weights: str = "linear",
) -> pd.DataFrame:
    """Two assessors on a pool (`tcdb report agreement`), as the confusion matrix of their
    grades (rows: `qrels`, default the pool's pooled set; columns: `versus`); κ (binary,
    graded weighted and unweighted), τ-b, τ_AP and the counts are in `.attrs`."""
    import pandas as pd

    from tcdb.reports.assessor_agreement import assessor_agreement_report

    report = assessor_agreement_report(pool, versus, qrels, measure=measure, weights=weights)
    frame = pd.DataFrame(report["confusion"], index=report["labels"],
                         columns=report["labels"])
    frame.index.name, frame.columns.name = report["qrels"], report["versus"]
    frame.attrs.update({k: v for k, v in report.items() if k not in ("confusion", "labels")})
    return frame


from tcdb import api_source_bias as _bias  # noqa: E402 - beside this module, for its size

source_bias = _speaks_python()(_bias.source_bias)
documents_by_source = _speaks_python()(_bias.documents_by_source)
