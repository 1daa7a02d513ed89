"""Results reported in the literature, summarised: pure pandas and scipy over a frame of rows
(`publication, year, model, category, role, metric, value, cross_validated`), no database.

* per year and category: the highest `best` and the highest `baseline` figure, with counts;
* a least-squares trend per category over every `best` figure (one point per publication's
  best): slope per year, intercept, Pearson r, its p-value and a 95 % CI of the slope from its
  standard error and Student's t with n − 2 degrees of freedom (undefined below 3 points);
* each best figure's gain in % over a reference value;
* how many publications report each metric (over all metrics of the collection).
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from tcdb.vocabulary import ModelCategory

CONFIDENCE = 0.95
MIN_TREND_POINTS = 3  # two points fit any line exactly: no interval, no test


def gain(value: float, reference: float | None) -> float | None:
    """`value`'s gain over `reference` in % (0.5 over 0.4: 25.0); None without a reference or
    against 0."""
    if reference is None or reference == 0 or math.isnan(reference):
        return None
    return (value - reference) / reference * 100.0


def _categories(frame: pd.DataFrame) -> list[str]:
    """The categories present, in the vocabulary's order (anything else after, sorted)."""
    present = set(frame["category"].dropna())
    known = [c.value for c in ModelCategory if c.value in present]
    return known + sorted(present - set(known))


def per_year(frame: pd.DataFrame, reference: float | None = None) -> pd.DataFrame:
    """One row per (year, category): `best` (highest best figure), `n_best`, `baseline`
    (highest baseline figure), `n_baseline`, `best_gain` (% over `reference`)."""
    columns = ["year", "category", "best", "n_best", "baseline", "n_baseline", "best_gain"]
    rows = []
    order = {c: i for i, c in enumerate(_categories(frame))}
    for (year, category), group in frame.groupby(["year", "category"], sort=False):
        best = group.loc[group["role"] == "best", "value"]
        baseline = group.loc[group["role"] == "baseline", "value"]
        top = float(best.max()) if len(best) else None
        rows.append((int(year), category, top, len(best),
                     float(baseline.max()) if len(baseline) else None, len(baseline),
                     None if top is None else gain(top, reference)))
    out = pd.DataFrame(rows, columns=columns)
    out = out.assign(_order=out["category"].map(order))
    return out.sort_values(["year", "_order"]).drop(columns="_order").reset_index(drop=True)


def trend(years: pd.Series, values: pd.Series) -> dict[str, Any]:
    """Least-squares line through (year, value): `{n, slope, intercept, r, p, ci_low, ci_high}`
    (slope per year; every figure None below 3 points or when all years are equal)."""
    from scipy import stats

    n = len(years)
    empty: dict[str, Any] = {"n": n, "slope": None, "intercept": None, "r": None, "p": None,
                             "ci_low": None, "ci_high": None}
    if n < MIN_TREND_POINTS or years.nunique() < 2:
        return empty
    fit = stats.linregress(years.astype(float), values.astype(float))
    half = float(stats.t.ppf((1 + CONFIDENCE) / 2, n - 2)) * float(fit.stderr)
    return {"n": n, "slope": float(fit.slope), "intercept": float(fit.intercept),
            "r": float(fit.rvalue), "p": float(fit.pvalue),
            "ci_low": float(fit.slope) - half, "ci_high": float(fit.slope) + half}


def trends(frame: pd.DataFrame) -> pd.DataFrame:
    """One trend (`trend`) per category over its best figures, with the years it spans."""
    rows = []
    best = frame[frame["role"] == "best"]
    for category in _categories(frame):
        points = best[best["category"] == category]
        rows.append({"category": category, **trend(points["year"], points["value"]),
                     "first_year": int(points["year"].min()) if len(points) else None,
                     "last_year": int(points["year"].max()) if len(points) else None})
    return pd.DataFrame(rows, columns=["category", "n", "slope", "intercept", "r", "p",
                                       "ci_low", "ci_high", "first_year", "last_year"]).astype(
        {"n": "int64", "first_year": "Int64", "last_year": "Int64"})


def gains(frame: pd.DataFrame, reference: float | None) -> pd.DataFrame:
    """Every best figure with its gain in % over `reference` (None without one)."""
    best = frame[frame["role"] == "best"]
    out = best[["publication", "year", "model", "category", "value", "cross_validated"]].copy()
    out["gain"] = [gain(float(v), reference) for v in out["value"]]
    return out.sort_values(["year", "publication", "model"], kind="stable").reset_index(drop=True)


def metric_usage(frame: pd.DataFrame) -> pd.DataFrame:
    """Per metric: how many publications report it and how many figures; most used first."""
    if frame.empty:
        return pd.DataFrame(columns=["metric", "n_publications", "n_results"])
    grouped = frame.groupby("metric").agg(n_publications=("publication", "nunique"),
                                          n_results=("value", "size")).reset_index()
    return grouped.sort_values(["n_publications", "n_results", "metric"],
                               ascending=[False, False, True]).reset_index(drop=True)


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as dicts of plain Python values, missing ones None (JSON's null)."""
    out = []
    for row in frame.astype(object).to_dict("records"):
        out.append({k: None if v is pd.NA or (isinstance(v, float) and math.isnan(v)) else
                    (v.item() if hasattr(v, "item") else v) for k, v in row.items()})
    return out


def literature_summary(frame: pd.DataFrame, metric: str, reference: float | None = None
                       ) -> dict[str, Any]:
    """The report over every reported result of a collection (`frame`) for one `metric`:
    `{n_results, n_publications, per_year, trends, gains, metric_usage}`."""
    rows = frame[frame["metric"] == metric]
    return {"n_results": len(rows), "n_publications": int(rows["publication"].nunique()),
            "per_year": _records(per_year(rows, reference)),
            "trends": _records(trends(rows)),
            "gains": _records(gains(rows, reference)),
            "metric_usage": _records(metric_usage(frame))}
