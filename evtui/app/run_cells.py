"""How a run reads as a row of the runs table: its cells (task, model, name cut from the middle,
status, samples, headline in forms that fit, times, tokens, cost, args, tags), a group's header
row, and the headline's text with or without intervals. Text from a run goes through safe_line
and plain here."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from textual.content import Content

from evtui.app import formatting as fmt
from evtui.app.safe_content import plain
from evtui.app.widgets.bounded_table import FittingCell
from evtui.safe_text import safe_line
from evtui.store.queries.run_list import RunGroup, run_args_text, run_name, run_tags_text, timestamp


def group_cells(
    group: RunGroup, *, folded: bool, marked: set[int], now: datetime, absolute_times: bool = False, name_width: int = 40,
) -> tuple[Any, ...]:  # fmt: skip
    """A group's header row: its name (▶ when folded; cut from the middle to the Task column's
    `name_width`), how many runs (and how many marked), the newest run's created time."""
    ids = {run.id for run in group.runs}
    count = len(ids)
    runs = f"{count} run{'s' if count != 1 else ''}"
    if ids & marked:
        runs += f" · {len(ids & marked)} marked"
    at = timestamp(group.newest)
    newest = fmt.format_absolute_time(at) if absolute_times else fmt.format_relative_time(at, now)
    shown = fmt.middle_ellipsis(safe_line(group.name, 200), max(name_width - 2, 8))
    name = Content.assemble(("▶ " if folded else "▼ ", "$accent"), Content.styled(shown, "bold"))
    return (name, "", Content.styled(runs, "bold"), "", "", "", newest, "", "", "", "", "", "", "")


def run_cells(
    run: Any, marked: bool = False, live: Any = None, intervals: bool = False, *, now: datetime | None = None,
    absolute_times: bool = False, name_width: int = 40, scales: dict[str, Any] | None = None, indent: bool = False,
) -> tuple[Any, ...]:  # fmt: skip
    """The table cells for one `queries.RunRow`; a marked run's task starts with a dot, and with
    `indent` (under a group's header) two spaces.

    `live` (a LiveRun) adds what a run still being written is doing: samples in flight, its
    running headline metric, and whether its writer process is gone (killed). The run's name is
    cut from the middle to `name_width`; times read relative to `now` unless `absolute_times`.
    """
    moment = now or datetime.now(timezone.utc)
    name = fmt.middle_ellipsis(safe_line(run_name(run.path, getattr(run, "part", ""))), name_width)

    def when(text: str | None) -> str:
        at = timestamp(text)
        return fmt.format_absolute_time(at) if absolute_times else fmt.format_relative_time(at, moment)
    task = plain(run.task or "–", 200)
    status = fmt.status_content(run.status)
    samples = fmt.format_samples(run.samples_completed, run.samples_total)
    attempts = getattr(run, "attempts", 1)
    if attempts > 1:  # an eval set retried or topped up this task: this is its latest successful log
        status = Content.assemble(status, (f" ({attempts} attempts)", "$foreground-muted"))
    forms = [plain(form) for form in headline_forms(run.headline, intervals=intervals, scales=scales)] or [plain("–")]
    if run.headline and run.headline[0].computed:  # the run records no metrics: evtui computed these
        forms = [Content.assemble(form, (" computed", "$foreground-muted")) for form in forms]
    headline: Content = FittingCell(forms)
    if live is not None:
        if not live.process_alive:
            status = Content.assemble(status, (" (writer gone)", "$foreground-muted"))
        else:
            # Completed samples still in Inspect's buffer count as completed (they are, unflushed).
            samples = Content(fmt.format_samples(run.samples_completed + live.completed_unflushed, run.samples_total))
            if live.running:
                samples = Content.assemble(samples, (f" +{live.running} running", "$foreground-muted"))
        if not run.headline and live.metrics:
            shown = next((m for m in live.metrics if m.headline), live.metrics[0])
            value = "–" if shown.value is None else f"{shown.value:.3f}"
            headline = plain(f"live {shown.scorer} {shown.name} {value}")
    if marked:
        task = Content.assemble(("● ", "$accent"), task)
    return (
        Content.assemble("  ", task) if indent else task,
        plain(run.model or "–", 200),
        Content.styled(f"{name} (missing)", "$foreground-muted") if run.missing else plain(name),
        status,
        samples,
        headline,
        when(run.created),
        when(getattr(run, "completed_at", None)),
        fmt.format_duration(run.duration),
        "–" if getattr(run, "epochs", None) is None else str(run.epochs),
        fmt.format_tokens(run.total_tokens),
        fmt.format_cost(run.cost),
        plain(run_args_text(run) or "–", 200),
        plain(run_tags_text(run) or "–", 200),
    )


def headline_text(headline: Any, *, intervals: bool = False, scales: dict[str, Any] | None = None) -> str:
    """`match accuracy 0.583 ± 0.149`: the run's first recorded scorer and up to two metrics.

    `intervals`: the 95% interval instead, named by its method (scoring/stats/intervals.py): Wilson for
    a proportion (`match accuracy 0.583 [0.320, 0.807] Wilson`), the run's own ci() where it
    recorded one, else t from the stderr; `n<30` where few samples are behind it. `scales`: scorer
    -> the range of its scores (0/1, inside [0, 1]), which decides the method."""
    forms = headline_forms(headline, intervals=intervals, scales=scales)
    return forms[0] if forms else ""


def headline_forms(headline: Any, *, intervals: bool = False, scales: dict[str, Any] | None = None) -> list[str]:
    """`headline_text` and its shorter forms, longest first, each dropping a whole part: the
    intervals (or ± stderr), then the second metric, then the scorer, leaving the value alone.
    Where the column is narrow the table shows the longest that fits, never a number cut short."""
    if not headline:
        return []
    first = headline[0]
    label = first.scorer if not first.reducer or first.reducer == "mean" else f"{first.scorer}[{first.reducer}]"
    shown = headline[:2]
    full = " · ".join(f"{metric.metric} {_metric_text(metric, intervals, (scales or {}).get(metric.scorer))}" for metric in shown)
    bare = [f"{metric.metric} {fmt.format_number(metric.value, 3)}" for metric in shown]
    forms = [f"{label} {full}", f"{label} {' · '.join(bare)}", f"{label} {bare[0]}", bare[0], fmt.format_number(first.value, 3)]
    return list(dict.fromkeys(forms))


def _metric_text(metric: Any, intervals: bool, scale: Any = None) -> str:
    if intervals:
        from evtui.scoring.stats.intervals import recorded, summary_interval

        kept = recorded(*metric.recorded_interval, metric.value) if metric.recorded_interval else None
        interval = summary_interval(metric.metric, metric.value, metric.stderr, metric.scored, scale, metric.reducer, kept)
        if interval is not None:
            return f"{fmt.format_value_interval(metric.value, interval.low, interval.high)} {interval.tag}"
    return fmt.format_value_stderr(metric.value, metric.stderr)
