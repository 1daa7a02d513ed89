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
DOT_X, DOT_Y = 0.012, 0.025  # a dot's half width and half height, in the same shares
EDGE_PX = 18  # px of room added at each end of a scatter's scales: no dot sits on the edge


def as_numbers(values: pd.Series) -> pd.Series:
    """Positions as floats: dates as nanoseconds (a time axis places labels like a number one)."""
    if pd.api.types.is_datetime64_any_dtype(values):
        return values.astype("int64").astype(float)
    return values.astype(float)


def place_labels(frame: pd.DataFrame, x: str, y: str, name: str,
                 within: pd.DataFrame | None = None) -> pd.DataFrame:
    """`frame` with where each point's name goes: `_label_side` (right or left of the point) and
    `_label_y` (its height, in data units): beside the point, else a line up or down, else on the
    other side, so that no two names overlap, no name lies on a dot (of `within`, when only some
    points are named) and none runs past the plot's edge, where the data leave room (greedily,
    in the order of the rows; the plot's extent is estimated from the data's)."""
    every = frame if within is None else within
    all_x, all_y = as_numbers(every[x]), as_numbers(every[y])
    x0, y0 = float(all_x.min()), float(all_y.min())
    width = float(all_x.max()) - x0 or 1.0
    height = float(all_y.max()) - y0 or 1.0
    dots = list(zip((all_x - x0) / width, (all_y - y0) / height, strict=True))
    placed: list[tuple[float, float, float]] = []  # left, right, middle (shares)
    spots = []
    for px, py, text in zip((as_numbers(frame[x]) - x0) / width,
                            (as_numbers(frame[y]) - y0) / height, frame[name].astype(str),
                            strict=True):
        length = CHAR_SHARE * (len(text) + 1)
        # beside the point on either side before a line up or down (a name far from its
        # point names another); near the right edge left first, not over the legend
        sides = (("left", px - 0.015 - length), ("right", px + 0.015))
        if px + 0.015 + length <= 1.0:
            sides = sides[::-1]
        tries = [(side, start, py + k * LINE_SHARE) for k in (0, 1, -1, 2, -2)
                 for side, start in sides]

        def free(t: tuple[str, float, float], dots_too: bool = True,
                 length: float = length) -> bool:
            side, start, middle = t
            if start < -0.02 or start + length > 1.02:
                return False
            if any(start <= b and start + length >= a and abs(middle - m) < LINE_SHARE
                   for a, b, m in placed):
                return False
            return not dots_too or all(
                not (start - DOT_X < qx < start + length + DOT_X
                     and abs(qy - middle) < LINE_SHARE / 2 + DOT_Y) for qx, qy in dots)

        side, start, middle = next((t for t in tries if free(t)), None) or next(
            (t for t in tries if free(t, dots_too=False)), tries[0])
        placed.append((start, start + length, middle))
        spots.append((side, y0 + middle * height))
    return frame.assign(_label_side=[s[0] for s in spots], _label_y=[s[1] for s in spots])


def with_room(channel: alt.X | alt.Y, px: int = EDGE_PX) -> dict[str, Any]:
    """A position channel's spec with `px` of room at each end of its scale (Vega-Lite's scale
    padding): a dot at the data's extreme is drawn whole, with room for its name."""
    spec = cast(dict[str, Any], channel.to_dict())
    return {**spec, "scale": {**spec.get("scale", {}), "padding": px}}


def named_points(frame: pd.DataFrame, x: alt.X, y: alt.Y, name: str, *,
                 color: Any = alt.value("#1f6fb2"), tooltip: Sequence[Any] = (),
                 by: str | None = None, size: int = 80, shape: Any = None,
                 named: str | None = None, label_color: Any = None) -> alt.LayerChart:
    """A scatter whose points are runs (or systems), each named beside its point; both scales
    leave room at their ends (`with_room`), so that no dot or name is cut at the edge.

    `shape`: an encoding that tells points of one run apart (say, its snapshots); `named`: a
    boolean column choosing the points that carry the name (say, a system's latest one);
    `label_color`: the names' colour when not the points' (light dots, dark names).
    """
    x_spec, y_spec = with_room(x), with_room(y)
    x, y = alt.X(**x_spec), alt.Y(**y_spec)
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
                x=x, y=label_y, text=f"{name}:N",
                color=color if label_color is None else label_color))
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


LEGEND_LIMIT = 0  # px a legend's label or title may take: 0 = whole, never cut with "…"
AXIS_LABEL_PX = 0  # px an axis label may take: 0 = whole (Streamlit's theme cuts at 100 px)
NARROW_PLOT_PX = 640  # about the width of a chart on a 1024 px screen, axis labels included


def text_px(text: str, font_px: float = 11.0) -> float:
    """About how wide `text` is drawn at this font size (Vega's default sans-serif): enough
    to tell whether names fit side by side."""
    return 0.62 * font_px * len(text)


def legible(figure: Any) -> Any:
    """The chart configured so that no legend entry or axis label is cut short with "…"
    (Vega cuts legend labels at 160 px, Streamlit's theme axis labels at 100 px)."""
    return figure.configure_legend(labelLimit=LEGEND_LIMIT, titleLimit=LEGEND_LIMIT).configure_axis(
        labelLimit=AXIS_LABEL_PX)
