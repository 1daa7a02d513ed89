"""Chart pieces the pages share: run points that carry their names, topic axes that stay
readable with a hundred topics, bars above and below zero.

Altair only; every title is given in the field's words by the caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, cast

import altair as alt
import pandas as pd

LABELLED_RUNS = 12  # up to this many runs every point is named; beyond, those that moved most
TOPIC_LABELS = 25  # up to this many topics the axis names each one; beyond, hover for them
HEIGHT = 320
SCATTER_HEIGHT = 380
# Judged documents grey, the relevant among them blue, on every judgments chart.
JUDGED_RELEVANT = alt.Scale(domain=["judged", "relevant"], range=["#b0bec5", "#1e88e5"])


def runs_to_name(frame: pd.DataFrame, by: str | None = None,
                 limit: int = LABELLED_RUNS) -> pd.DataFrame:
    """The rows whose points carry a name: all of them when there are few, else the `limit`
    with the largest |`by`| (the runs that moved most)."""
    if len(frame) <= limit or by is None:
        return frame
    order = frame[by].abs().sort_values(ascending=False).index[:limit]
    return frame.loc[order]


CHAR_SHARE, LINE_SHARE = 0.011, 0.06  # a label character's width, a line's height: shares
# of the plot's width and height at the usual sizes (600-900 px wide, 380 px high)


def place_labels(frame: pd.DataFrame, x: str, y: str, name: str,
                 within: pd.DataFrame | None = None) -> pd.DataFrame:
    """`frame` with where each point's name goes: `_label_side` (right or left of the point) and
    `_label_y` (its height, in data units): beside the point, else a line up or down, else on the
    other side, so that no two names overlap (greedily, in the order of the rows; the plot's
    extent is estimated from the data's, or from `within`'s when only some points are named)."""
    xs, ys = frame[x].astype(float), frame[y].astype(float)
    every = frame if within is None else within
    x0, y0 = float(every[x].min()), float(every[y].min())
    width = float(every[x].max()) - x0 or 1.0
    height = float(every[y].max()) - y0 or 1.0
    placed: list[tuple[float, float, float]] = []  # left, right, middle (shares)
    spots = []
    for px, py, text in zip((xs - x0) / width, (ys - y0) / height, frame[name].astype(str),
                            strict=True):
        length = CHAR_SHARE * (len(text) + 1)
        right = [("right", px + 0.015, py + k * LINE_SHARE) for k in (0, 1, -1, 2, -2)]
        left = [("left", px - 0.015 - length, py + k * LINE_SHARE) for k in (0, 1, -1)]
        # near the right edge a name goes left of its point, not over the legend
        tries = left + right if px + 0.015 + length > 1.0 else right + left
        side, start, middle = next(
            (t for t in tries if all(t[1] + length < a or t[1] > b or abs(t[2] - m) >= LINE_SHARE
                                     for a, b, m in placed)), tries[0])
        placed.append((start, start + length, middle))
        spots.append((side, y0 + middle * height))
    return frame.assign(_label_side=[s[0] for s in spots], _label_y=[s[1] for s in spots])


def named_points(frame: pd.DataFrame, x: alt.X, y: alt.Y, name: str, *,
                 color: Any = alt.value("#1f6fb2"), tooltip: Sequence[Any] = (),
                 by: str | None = None, size: int = 80, shape: Any = None,
                 named: str | None = None) -> alt.LayerChart:
    """A scatter whose points are runs (or systems), each named beside its point.

    `shape`: an encoding that tells points of one run apart (say, its snapshots); `named`: a
    boolean column choosing the points that carry the name (say, a system's latest one).
    """
    x_spec, y_spec = cast(dict[str, Any], x.to_dict()), cast(dict[str, Any], y.to_dict())
    base = alt.Chart(frame)
    mark = (base.mark_circle(size=size, opacity=0.9) if shape is None
            else base.mark_point(size=size, opacity=0.9, filled=True))
    channels = {"x": x, "y": y, "color": color, "tooltip": list(tooltip)}
    points = mark.encode(**channels, **({"shape": shape} if shape is not None else {}))
    candidates = frame if named is None else frame[frame[named].astype(bool)]
    named_rows = place_labels(runs_to_name(candidates, by), x_spec["field"], y_spec["field"],
                              name, within=frame)
    label_y = alt.Y(**{**y_spec, "field": "_label_y"})
    layers: list[alt.Chart] = [points]
    sides: tuple[tuple[str, Literal["left", "right"], int], ...] = (
        ("right", "left", 8), ("left", "right", -8))
    for side, align, dx in sides:
        here = named_rows[named_rows["_label_side"] == side]
        if len(here):
            layers.append(alt.Chart(here).mark_text(
                align=align, dx=dx, baseline="middle", fontSize=12).encode(
                x=x, y=label_y, text=f"{name}:N", color=color))
    return alt.LayerChart(layer=layers, height=SCATTER_HEIGHT)


def spread(values: Sequence[float], gap: float) -> list[float]:
    """Heights for labels at `values` (in their order) at least `gap` apart: each pushed up
    past the one below, then all moved back down by their mean push (labels stay beside their
    lines on average)."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    placed = [0.0] * len(values)
    floor = float("-inf")
    for i in order:
        placed[i] = floor = max(float(values[i]), floor + gap)
    shift = sum(p - float(v) for p, v in zip(placed, values, strict=True)) / (len(values) or 1)
    return [p - shift for p in placed]


def end_labels(frame: pd.DataFrame, x: alt.X, y: str, name: str, *, color: Any,
               top: float, height: int = HEIGHT) -> alt.Chart:
    """Names at the right end of lines (`frame`: one row per line, at its last x), moved apart
    so that none overlaps another; `top`: the y axis' upper end (its lower end is 0)."""
    gap = top * 15 / max(height - 40, 1)  # a 12 px label's line, in data units
    placed = frame.assign(_label_y=spread(frame[y].astype(float).tolist(), gap))
    return alt.Chart(placed).mark_text(align="left", dx=9, baseline="middle", fontSize=12).encode(
        x=x, y=alt.Y("_label_y:Q"), text=f"{name}:N", color=color)


def topic_axis(n_topics: int, order: str) -> alt.Axis:
    """An x axis of topics: each topic named when there are few; otherwise no labels (they
    would only overlap) and a title that says how the bars are sorted."""
    if n_topics <= TOPIC_LABELS:
        return alt.Axis(title="topic", labelAngle=-45, labelOverlap=True)
    return alt.Axis(title=f"{n_topics:,} topics, {order} (hover a bar for its topic)",
                    labels=False, ticks=False)


def signed_bars(frame: pd.DataFrame, x: str, kind: str, value: str, below: Sequence[str],
                order: Sequence[str], colours: Sequence[str], *, x_title: str | None,
                y_title: str, legend: str) -> alt.Chart:
    """Stacked bars whose `below` kinds hang under zero (drawn negative, labelled positive):
    what makes up a thing above the line, what it lost below."""
    signed = frame.assign(
        _signed=frame[value].where(~frame[kind].isin(below), -frame[value]),
        _order=frame[kind].map({k: i for i, k in enumerate(order)}))
    return alt.Chart(signed).mark_bar().encode(
        x=alt.X(f"{x}:N", sort=None, title=x_title, axis=alt.Axis(labelAngle=0)),
        y=alt.Y("_signed:Q", title=y_title, stack="zero", axis=alt.Axis(format=",d")),
        color=alt.Color(f"{kind}:N", title=legend, sort=list(order),
                        scale=alt.Scale(domain=list(order), range=list(colours))),
        order=alt.Order("_order:Q"),
        tooltip=[alt.Tooltip(f"{x}:N", title=x_title or x), alt.Tooltip(f"{kind}:N", title=legend),
                 alt.Tooltip(f"{value}:Q", title=y_title, format=",d")],
    ).properties(height=HEIGHT)


def zero_rule(field: str = "_signed") -> alt.Chart:
    """A dark line at zero on the y axis of `field` (layer it over the bars)."""
    return alt.Chart(pd.DataFrame({field: [0]})).mark_rule(color="#37474f").encode(
        y=f"{field}:Q")
