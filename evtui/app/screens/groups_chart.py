"""The groups screen's chart: each group's metric as a bar with its 95% interval, highest first,
the whole run as a reference line. The numbers come from scoring.stats.intervals (the one
interval policy: Wilson for a proportion, t for a mean kept inside [0, 1] for a 0..1 score); the
axis line names the method."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.cells import cell_len

from evtui.app.widgets.plots.intervals import IntervalChart, IntervalRow, IntervalSeries
from evtui.scoring.stats.intervals import GroupInterval, group_intervals, plotted_metric

INTERVAL_COLUMNS = ("group", "samples", "value", "stderr", "low 95%", "high 95%", "method")


def chart_intervals(groups: Sequence[Any], scorer: str | None, fit: int,
                    scales: dict[str, Any] | None = None) -> tuple[str, list[GroupInterval], int]:  # fmt: skip
    """(x label, rows to draw, groups with a value) for the chart: at most `fit` groups, the
    largest ones (by samples) when more have a value, drawn highest value first; `scales`:
    scorer -> its scores' range (store/queries/integrity.py), which decides the interval."""
    metric = plotted_metric(groups, scorer)
    if metric is None:
        return "", [], 0
    rows = group_intervals(groups, metric, scale=(scales or {}).get(metric[0]))
    parts = [row for row in rows if not row.is_all]
    count = len(parts)
    if count > fit:
        largest = sorted(parts, key=lambda row: (-row.samples, row.label))[:fit]
        parts = sorted(largest, key=lambda row: (-row.value, row.label))
    name, reducer, metric_name = metric
    label = f"{name} {metric_name}{f' ({reducer})' if reducer else ''}"
    whole = next((row for row in rows if row.is_all), None)
    return label, ([whole] if whole else []) + parts, count


def draw_group_chart(chart: IntervalChart, groups: Sequence[Any], scorer: str | None, scales: dict[str, Any] | None = None) -> str:
    """Draw the groups on `chart`; returns a line saying what it shows."""
    fit = max((chart.size.height or 20) - 5, 4)
    label, rows, count = chart_intervals(groups, scorer, fit, scales)
    whole = next((row for row in rows if row.is_all), None)
    parts = [row for row in rows if not row.is_all]
    if not parts:
        chart.show_intervals([], x_label="no group has a value to draw")
        return "nothing to draw"
    has_interval = any(row.low is not None for row in parts)
    methods = list(dict.fromkeys(row.method for row in parts if row.method))
    few = any(row.tag.endswith("<30") for row in parts)
    small = " (n<30 in some groups)" if few else ""
    x_label = label + (f" · bar = value, ─●─ = 95% interval ({', '.join(methods)}){small}" if has_interval else " (no stderr: no interval)")
    if whole is not None:
        x_label += " · ⡇ = whole run"
    if cell_len(x_label) > (chart.size.width or chart.app.size.width):  # the legend in fewer words (80 columns)
        x_label = label + (f" · ─●─ 95% ({', '.join(methods)}){', n<30' if few else ''}" if has_interval else " · no interval")
        x_label += " · ⡇ whole run" if whole is not None else ""
    low = min([0.0] + [row.low if row.low is not None else row.value for row in parts])
    chart.show_intervals(
        [IntervalSeries("", [IntervalRow(row.label, row.value, row.low, row.high) for row in parts])],
        x_label=x_label, bars=True, origin=min(low, 0.0), reference=whole.value if whole else None,
    )  # fmt: skip
    shown = len(parts)
    return f"{shown} of {count} groups (the largest)" if shown < count else f"{count} groups"


def interval_table(rows: Sequence[GroupInterval]) -> tuple[tuple[str, ...], ...]:
    """The chart's numbers as text rows under INTERVAL_COLUMNS (full precision, for export)."""

    def text(value: float | None) -> str:
        return "" if value is None else repr(float(value))

    return tuple(
        (row.label, str(row.samples), text(row.value), text(row.stderr), text(row.low), text(row.high), row.method or "") for row in rows
    )
