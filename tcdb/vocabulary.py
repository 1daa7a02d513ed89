"""The field's words as enums: one definition each, shared by the schema, the core and the CLI.

Kinds, statuses and choices that are stored (`QrelsKind`, `TieOrder`, …) and those that only
choose what a command does (`ExportFormat`, `Correction`, …). This module imports nothing, so
the CLI can build its options from it and `tcdb --help` stays fast; `tcdb.schema` re-exports
the stored ones beside its tables.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TypeVar

_Word = TypeVar("_Word", bound=StrEnum)


class DocIdentity(StrEnum):
    """How a document keeps its identity across snapshots."""

    doc_id = "doc_id"
    url = "url"


class TopicIdentity(StrEnum):
    """How a topic keeps its identity across snapshots (LongEval re-numbers queries: use text)."""

    query_id = "query_id"
    text = "text"


class TopicMatch(StrEnum):
    """Under topic identity by text, which texts are one: exactly equal ones, or those equal
    after `normalise_query` (NFKC, casefold, spacing, end punctuation: LongEval's re-typed
    queries). "Energy" and "energy" are one topic when normalised, two when exact."""

    normalised = "normalised"
    exact = "exact"


class SnapshotStatus(StrEnum):
    """A snapshot is visible to reports only when `complete`."""

    ingesting = "ingesting"
    complete = "complete"
    failed = "failed"


class QrelsKind(StrEnum):
    """Where a qrels set comes from."""

    original = "original"  # shipped with the snapshot or published by the organisers
    pooled = "pooled"  # judgments collected on one of our pools
    expanded = "expanded"  # a parent set ∪ a pooled set
    derived = "derived"  # a parent set filtered (leave-one-group-out, topic subset, …)
    # The official judgments known only through scores published with them (`trec_eval -q`
    # output, a tidy table): no judgment rows; its topics are those its scores name.
    published = "published"


class JudgeKind(StrEnum):
    """Who judged a qrels set: people, an LLM, a click model (LongEval's pseudo-qrels from raw
    clicks or from click-through rates), something else, or not recorded (sets stored before
    tcdb kept it)."""

    human = "human"
    llm = "llm"
    clicks = "clicks"
    click_through_rate = "click_through_rate"
    other = "other"
    unknown = "unknown"


class RunType(StrEnum):
    """How a run was produced, in TREC's words."""

    automatic = "automatic"
    manual = "manual"  # a person shaped the queries or the ranking
    feedback = "feedback"  # used relevance judgments of earlier rounds (TREC-COVID)


class RunCategory(StrEnum):
    """What kind of system produced a run."""

    lexical = "lexical"
    neural = "neural"
    llm = "llm"
    other = "other"


class PoolStatus(StrEnum):
    """Where a pool is in its life: built, sent to assessors, fully judged."""

    open = "open"
    exported = "exported"
    judged = "judged"


class ResultRole(StrEnum):
    """What a reported figure in the literature stands for."""

    baseline = "baseline"
    best = "best"
    other = "other"


class ModelCategory(StrEnum):
    """What kind of model a figure reported in the literature is for (trend lines per kind)."""

    probabilistic = "probabilistic"  # BM25, query likelihood, RM3, …
    neural = "neural"  # learned sparse or dense retrievers, cross-encoders
    llm = "llm"  # large language models as rankers or generators


class TieOrder(StrEnum):
    """How equal scores are broken when a run is ranked for a pool (see `tcdb.pools`)."""

    trec_eval = "trec_eval"  # score desc, then document id desc: what evaluation sees
    docid_asc = "docid-asc"  # score desc, then document id asc: trectools' TrecRun order
    file_rank = "file-rank"  # the run file's rank column


class PoolExportFormat(StrEnum):
    """Files a pool is exported in for assessors (always blind)."""

    trec = "trec"  # a qrels template: topic 0 docid, the grade left to fill; ids only
    jsonl = "jsonl"  # with query, description, document text and "grade": null
    csv = "csv"


class PoolExportOrder(StrEnum):
    """The order of a topic's documents in a pool export: neither says anything about rank."""

    docid = "docid"
    shuffle = "shuffle"


class JudgmentFormat(StrEnum):
    """Files judgments come back from assessors in."""

    trec = "trec"  # TREC qrels lines
    csv = "csv"  # topic_id,doc_id,grade
    jsonl = "jsonl"  # {"topic_id": …, "doc_id": …, "grade": …} per line


class Prefer(StrEnum):
    """Which grade wins when an expanded set's base and pooled judgments disagree."""

    base = "base"
    new = "new"


class Correction(StrEnum):
    """Multiple-comparison correction of p-values within a family of tests."""

    holm = "holm"
    bonferroni = "bonferroni"
    bh = "bh"  # Benjamini–Hochberg: controls the false discovery rate, not the family-wise error
    none = "none"


class PairedTest(StrEnum):
    """A significance test of two runs' per-topic scores (`tcdb.analysis.significance`)."""

    t = "t"
    wilcoxon = "wilcoxon"
    permutation = "permutation"
    sign = "sign"
    ranksum = "ranksum"


class OnBadLines(StrEnum):
    """What a reader does with a line (a record) it cannot read: pandas' `on_bad_lines` words.

    Big official files hold a few bad lines (TREC-COVID's round-1 id list has 25 author names
    among 51,103 ids); `warn` and `skip` set them aside, never silently: each goes to the
    rejects file with its file, line and reason, and the summary and the record count them.
    """

    error = "error"  # refuse the file at its first bad line (nothing is written)
    warn = "warn"  # set bad lines aside, and name the first few in the summary
    skip = "skip"  # set bad lines aside, and only count them in the summary


class OnDuplicate(StrEnum):
    """What ingest does with a document id repeated with another text in one snapshot.

    A repeat with the same text is always kept once (official id lists repeat ids).
    """

    error = "error"  # refuse the snapshot, naming how many ids and the first ones
    first = "first"  # keep the first text
    last = "last"  # keep the last text


class Grouping(StrEnum):
    """How contributing runs are grouped when each group is left out of the qrels in turn."""

    group = "group"  # participant group
    run_type = "run-type"  # automatic / manual / feedback (TREC-8's "minus manual runs")
    category = "category"  # lexical / neural / llm


# How reports name the persistence figures their JSON keys hold (Sakai's RΔ, Breuer et al.'s
# ER and ΔRI): one spelling for the terminal, the dashboard and the docs. `snapshot` is the
# later snapshot each row compares with the first.
PERSISTENCE_FIGURES = {"snapshot": "snapshot", "arp": "ARP", "result_delta": "RΔ",
                       "relative_drop": "relative drop", "er": "ER", "delta_ri": "ΔRI",
                       "p_value": "p", "p_value_paired": "p paired", "n_paired": "paired topics"}

# How the reusability, leave-out and demo reports name their rank correlations (JSON keys →
# names). `kendall_tau` is Goodman–Kruskal γ, Kendall's τ over the pairs of runs ordered in both
# rankings: beside scipy's τ-b it must say that it omits ties, or a reader takes one for the
# other (runs tie often on one topic, so per-topic τ-b and γ differ).
TAU_FIGURES = {"kendall_tau": "τ (ties omitted)", "tau_b": "τ-b", "tau_ap": "τ_AP"}


def tau_legend(truth: str) -> str:
    """The line under every report that prints `TAU_FIGURES`: what each τ is, and which
    ranking τ_AP takes as the truth (`truth`, in the report's words)."""
    named = TAU_FIGURES
    return (f"{named['kendall_tau']}: Kendall's τ over the pairs of runs ordered in both "
            f"rankings (Goodman–Kruskal γ) · {named['tau_b']}: scipy.stats.kendalltau, ties "
            f"counted · {named['tau_ap']}: Yilmaz et al. 2008, truth {truth}")


# How the source-bias report names its figures (JSON keys → column names): the terminal table,
# the dashboard's table and its legend line say the same words.
SOURCE_BIAS_FIGURES = {"run": "run", "effectiveness": "effectiveness", "human": "human",
                       "llm": "llm", "relative_delta": "Relative Δ %", "ci_low": "CI low",
                       "ci_high": "CI high", "p_t": "p (t)", "first_stage": "first stage"}


def source_bias_legend(tests: dict[str, str]) -> str:
    """The line under a source-bias table naming its interval and its p-value's test
    (`tests`: the report's `tests`)."""
    named = SOURCE_BIAS_FIGURES
    return (f"{named['ci_low']} / {named['ci_high']}: {tests['ci_low/ci_high']} · "
            f"{named['p_t']}: {tests['p_t']}")


# What each test behind a reported p-value is, in the words the JSON (`tests`), the CLI's
# legends and the dashboard's help all print: a p-value that does not name its test is misread.
SIGNIFICANCE_TESTS = {
    "t": "paired t-test (two-sided; scipy ttest_rel)",
    "unpaired_t": "unpaired t-test (two-sided, Student, equal variances; scipy ttest_ind)",
    "wilcoxon": "Wilcoxon signed-rank test (two-sided; scipy wilcoxon, zero differences "
                "dropped)",
    "ranksum": "Wilcoxon rank-sum test (two-sided, unpaired; scipy ranksums)",
    "sign": "sign test (two-sided binomial test of wins vs losses, ties dropped)",
    "permutation": "paired randomisation test of the mean difference (two-sided; scipy "
                   "permutation_test)",
    "binomial": "binomial test (two-sided, p = 0.5; scipy binomtest)",
}

# A correction in words: what it controls (Correction's values as keys).
CORRECTIONS = {"holm": "Holm step-down (family-wise error rate)",
               "bonferroni": "Bonferroni (family-wise error rate)",
               "bh": "Benjamini–Hochberg (false discovery rate)",
               "none": "none (uncorrected)"}

# The percentile bootstrap over topics, as the reports that print an interval name it.
PERCENTILE_BOOTSTRAP = "percentile bootstrap over topics (topics resampled with replacement)"

# `evaluation.source` of scores of a run of one snapshot on another snapshot's qrels (evaluate
# --run-from, persistence --cross-snapshot): `tcdb db check` tells them from misplaced rows.
MAPPED_SCORES_SOURCE = "ir_measures:run_from"

# The one bootstrap default of tcdb: every request field, the demo and the dashboard take these,
# so one figure has one interval wherever it is read (and every interval prints them).
BOOTSTRAP_SAMPLES = 10_000
BOOTSTRAP_SEED = 0


def bootstrap_said(n_samples: int, seed: int) -> str:
    """`10,000 resamples, seed 0`: what goes beside every interval."""
    return f"{n_samples:,} resamples, seed {seed}"


def persistence_tests(paired: bool) -> dict[str, str]:
    """The persistence report's p-values by JSON key: what `tests` says of each."""
    tests = {"p_value": SIGNIFICANCE_TESTS["unpaired_t"] + " of the system's per-topic scores "
             "in the first snapshot vs each later one"}
    if paired:
        tests["p_value_paired"] = (SIGNIFICANCE_TESTS["t"] + " of the system's scores on the "
                                   "core topics of the first and each later snapshot")
    return tests


def format_p(value: float | None) -> str:
    """A p-value as every front end shows it (CLI tables, dashboard, paper tables): 4 decimals,
    and below 0.0001 two significant digits (`3.1e-09`), never a bare 0.0000 that hides how
    small it is; `–` when there is none. The one rule, so one figure reads alike everywhere."""
    if value is None:
        return "–"
    value = float(value)
    if value != value:  # NaN
        return "–"
    return f"{value:.4f}" if value >= 1e-4 or value == 0 else f"{value:.1e}"


def format_change(value: int | float | None) -> str:
    """A change in rank (places) as every front end shows it: `+3`, `-2`, and `0` for no
    change (not `+0`, which reads as a gain); `–` when there is none."""
    if value is None or value != value:  # None or NaN
        return "–"
    return f"{int(value):+,d}" if value else "0"


# An ER of a system whose ARP in the first snapshot is below the pivot's reads backwards: its
# "gain" over the pivot is a shortfall, so ER above 1 means the shortfall grew. The terminal,
# the paper tables and the dashboard mark such an ER alike and say the same legend.
BELOW_PIVOT_MARK = "§"


def below_pivot_said(pivot: str, first: str) -> str:
    """The legend of `BELOW_PIVOT_MARK`."""
    return (f"{BELOW_PIVOT_MARK}: the system is below the pivot {pivot} in {first}, so its ER "
            "reads backwards (its gain is a shortfall: ER above 1 means the shortfall grew)")
