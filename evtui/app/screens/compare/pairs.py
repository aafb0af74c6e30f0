"""Runs compared honestly: per scorer each run's value with its 95% interval and, for each pair
(or each run against a baseline), the paired difference B − A with its stderr, interval, p-value
(test named, Holm/BH adjusted), correlation, counts and MDE; a forest plot of the differences;
below, every metric the runs report lined up by scorer (whichever job or review made it).

Keys: b baseline (cycles), k cluster key (cycles the metadata keys), a adjustment (Holm/BH),
n samples needed for a difference you type, d discordant samples of the highlighted pair.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Header, Input, Static

from evtui.app import formatting as fmt
from evtui.app.messages import IndexChanged, LoadFailed
from evtui.number_text import p_value, signed
from evtui.safe_text import run_file_label, safe_line
from evtui.app.widgets.bounded_table import BoundedTable
from evtui.app.screens.compare.forest import FOREST_COLUMNS, draw_forest, forest_height, forest_table
from evtui.app.widgets.plots.intervals import IntervalChart
from evtui.app.widgets.plots.panel import PlotPanel
from evtui.app.widgets.key_footer import KeyFooter
from evtui.app.widgets.status_line import StatusLine

RUN_LABEL_WIDTH = 28
# What answers "is B better, by how much" first, so a narrow terminal shows it without scrolling.
PAIR_COLUMNS = ("Scorer", "B − A", "difference [95% CI]", "p (test)", "adj. p", "A [95%]", "B [95%]", "r",
                "n both/A/B", "unscored A/B", "MDE", "Metric")  # fmt: skip
TESTS = {"mcnemar_exact": "McNemar", "paired_t": "t"}
ADJUSTMENTS = {"holm": "Holm", "bh": "BH"}
DISCORDANT_FILTER_LIMIT = 500  # sample ids in one `id in (...)` filter


def safe(text: object) -> str:
    """Run text (task, model, sample ids, paths) as it may be drawn: through the one sanitiser."""
    return safe_line(text)


@dataclass(frozen=True)
class Comparison:
    """What the screen shows: scoring.compare.ComparisonReport."""

    report: Any

    @property
    def runs(self) -> tuple[Any, ...]:
        return self.report.runs

    @property
    def rows(self) -> tuple[Any, ...]:
        return self.report.rows


def load_comparison(db_path: Path, run_ids: Sequence[int], baseline: int | None = None, cluster: str | None = None,
                    adjustment: str = "holm") -> Comparison:  # fmt: skip
    """The comparison, computed on this (worker) thread with its own connections."""
    from evtui.scoring.compare import compare_runs

    return Comparison(compare_runs(db_path, run_ids, baseline=baseline, cluster=cluster, adjustment=adjustment))


class CompareScreen(Screen[None]):
    """Marked runs compared: paired differences per scorer, a forest plot, every metric lined up."""

    TITLE = "Compare runs"
    DEFAULT_CSS = """
    CompareScreen #compare-body { height: 1fr; }
    CompareScreen #compare-runs { height: auto; padding: 0 1; border: round $panel; }
    CompareScreen #compare-notes { height: auto; padding: 0 1; color: $warning; }
    CompareScreen #compare-pairs { height: auto; max-height: 14; }
    CompareScreen #compare-forest-panel { height: 10; margin: 1 0 0 0; }
    CompareScreen #compare-table { height: auto; max-height: 20; margin: 1 0 0 0; }
    CompareScreen #compare-detect { display: none; }
    CompareScreen #compare-detect.shown { display: block; }
    """
    BINDINGS = [
        Binding("escape", "back", "Back", id="compare.back"),
        Binding("b", "cycle_baseline", "Baseline", id="compare.baseline"),
        Binding("d", "discordant", "Discordant", id="compare.discordant"),
        Binding("k", "cycle_cluster", "Cluster", id="compare.cluster"),
        Binding("a", "cycle_adjustment", "Holm/BH", show=False, id="compare.adjust"),
        Binding("n", "ask_detect", "Power", id="compare.detect"),
        Binding("t", "toggle_chart", "Table", id="compare.chart"),
        Binding("x", "export", "Export", id="compare.export"),
        Binding("D", "open_decisions", "Decisions", key_display="D", show=False, id="compare.decisions"),  # in ? help: the footer is full at 80 columns
    ]

    @dataclass
    class Loaded(Message):
        comparison: Comparison

    @dataclass
    class KeysLoaded(Message):
        keys: list[str]

    def __init__(self, db_path: Path, run_ids: Sequence[int]) -> None:
        super().__init__()
        self.db_path = Path(db_path)
        self.run_ids = list(run_ids)
        self.comparison: Comparison | None = None
        self.baseline: int | None = None
        self.cluster: str | None = None
        self.cluster_keys: list[str] = []
        self.adjustment = "holm"

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="compare-body"):
            yield Static("loading…", id="compare-runs")
            yield Static("", id="compare-notes")
            yield BoundedTable(PAIR_COLUMNS, id="compare-pairs")
            with PlotPanel(id="compare-forest-panel"):
                yield IntervalChart(id="compare-forest")
                yield BoundedTable(FOREST_COLUMNS, id="compare-forest-table")
            yield BoundedTable(["Scorer", "Reducer", "Metric"], id="compare-table")
        yield Input(placeholder="difference to detect (e.g. 0.05), Enter", id="compare-detect")
        yield StatusLine(id="compare-status")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.sub_title = f"{len(self.run_ids)} runs"
        self.load()
        self.load_keys()

    def action_back(self) -> None:
        detect = self.query_one("#compare-detect", Input)
        if detect.has_class("shown"):
            detect.remove_class("shown")
            self.query_one("#compare-pairs").focus()
            return
        self.app.pop_screen()

    @work(thread=True, exclusive=True, group="load-compare", exit_on_error=False, description="Compare runs")
    def load(self) -> None:
        try:
            comparison = load_comparison(self.db_path, self.run_ids, self.baseline, self.cluster, self.adjustment)
        except Exception as error:  # shown on screen; the app stays usable
            self.post_message(LoadFailed("comparison", f"{type(error).__name__}: {error}"))
            return
        self.post_message(self.Loaded(comparison))

    @work(thread=True, exclusive=True, group="compare-keys", exit_on_error=False)
    def load_keys(self) -> None:
        from evtui.app.store_calls import fetch_metadata_keys

        try:
            keys = fetch_metadata_keys(self.db_path, self.run_ids[0]) if self.run_ids else []
        except Exception:  # noqa: BLE001 - no cluster keys to offer; the comparison still shows
            keys = []
        self.post_message(self.KeysLoaded(keys))

    @on(KeysLoaded)
    def _on_keys(self, message: KeysLoaded) -> None:
        self.cluster_keys = message.keys

    @on(Loaded)
    def _on_loaded(self, message: Loaded) -> None:
        self.comparison = comparison = message.comparison
        report = comparison.report
        labels = run_labels(comparison.runs)
        display = getattr(self.app, "display_path", str)
        legend = [
            Content.assemble((f"{safe_line(label, 80)}  ", "bold $primary"), _run_description(run, display),
                             (" (baseline)" if run is not None and run.id == report.baseline else "", "bold $accent"),
                             (_integrity_suffix(report.integrity.get(run.id) if run is not None else None), "$warning"))
            for label, run in zip(labels, comparison.runs, strict=True)
        ]  # fmt: skip
        self.query_one("#compare-runs", Static).update(Content("\n").join(legend))
        notes = [f"! {safe(m)}" for m in report.messages] + [f"note: {n}" for n in report.notes]
        notes += sorted({f"! {safe(pair.scorer)}: {safe(w)}" for pair in report.pairs for w in pair.warnings})
        notes_widget = self.query_one("#compare-notes", Static)
        notes_widget.update(Content("\n".join(notes)))
        notes_widget.display = bool(notes)
        by_id = {run.id: label for run, label in zip(comparison.runs, labels) if run is not None}
        pairs = self.query_one("#compare-pairs", BoundedTable)
        pairs.show_rows([pair_cells(pair, by_id, report.adjustment) for pair in report.pairs])
        if self.focused is None or self.focused is self.query_one("#compare-body"):
            pairs.focus()
        self.query_one("#compare-forest-panel", PlotPanel).styles.height = forest_height(len(report.pairs))
        draw_forest(self.query_one("#compare-forest", IntervalChart), report.pairs, by_id, self.cluster)
        self.query_one("#compare-forest-table", BoundedTable).show_rows(forest_table(report.pairs, by_id))
        table = self.query_one("#compare-table", BoundedTable)
        table.column_labels = [Text(label) for label in ("Scorer", "Reducer", "Metric", *labels)]  # never markup
        table.show_rows([row_cells(row) for row in comparison.rows])
        self._show_status()

    def _show_status(self, extra: str = "") -> None:
        report = self.comparison.report if self.comparison else None
        count = len(report.pairs) if report else 0
        parts = [f"{count} comparison{'s' if count != 1 else ''}",
                 f"p adjusted: {ADJUSTMENTS[self.adjustment]}",
                 f"cluster: metadata.{safe(self.cluster)}" if self.cluster else "no clusters",
                 "baseline: " + (f"#{self.baseline}" if self.baseline else "none (every pair)")]  # fmt: skip
        if extra:
            parts.append(extra)
        self.query_one(StatusLine).set_detail(" · ".join(parts))

    @on(LoadFailed)
    def _on_load_failed(self, message: LoadFailed) -> None:
        self.query_one("#compare-runs", Static).update(
            Content.styled(f"Could not load the {message.what}: {safe(message.error)}", "$score-fail")
        )

    @on(IndexChanged)
    def _on_index_changed(self) -> None:
        self.load()

    # ------------------------------------------------------------------ actions

    def action_cycle_baseline(self) -> None:
        """None (every pair) → the first run → the second … → none."""
        options: list[int | None] = [None, *self.run_ids]
        self.baseline = options[(options.index(self.baseline) + 1) % len(options)]
        self._show_status("recomputing…")
        self.load()

    def action_cycle_cluster(self) -> None:
        """No clusters → each of the first run's metadata keys in turn → none."""
        if not self.cluster_keys:
            self.notify("The runs' samples have no metadata keys to cluster on.", markup=False)
            return
        options: list[str | None] = [None, *self.cluster_keys]
        self.cluster = options[(options.index(self.cluster) + 1) % len(options)] if self.cluster in options else None
        self._show_status("recomputing…")
        self.load()

    def action_cycle_adjustment(self) -> None:
        """Holm ↔ Benjamini–Hochberg, on the figures already computed."""
        from evtui.scoring.compare import readjusted

        self.adjustment = "bh" if self.adjustment == "holm" else "holm"
        if self.comparison is None:
            self.load()
            return
        self.post_message(self.Loaded(Comparison(readjusted(self.comparison.report, self.adjustment))))

    def _selected_pair(self) -> Any:
        if self.comparison is None or not self.comparison.report.pairs:
            return None
        table = self.query_one("#compare-pairs", BoundedTable)
        pairs = self.comparison.report.pairs
        return pairs[min(max(table.cursor_row, 0), len(pairs) - 1)]

    def action_ask_detect(self) -> None:
        detect = self.query_one("#compare-detect", Input)
        detect.add_class("shown")
        detect.focus()

    @on(Input.Submitted, "#compare-detect")
    def _on_detect(self, event: Input.Submitted) -> None:
        from evtui.scoring.stats.power import samples_needed

        pair = self._selected_pair()
        try:
            delta = float(event.value)
        except ValueError:
            self.notify(f"Not a number: {safe(event.value)}", severity="error", markup=False)
            return
        if pair is None or pair.result is None:
            self.notify("The highlighted comparison has no paired figures.", markup=False)
            return
        needed = samples_needed(pair.result.design_sd, delta)
        text = (f"{safe(pair.scorer)}: {needed:,} paired samples to detect {delta:g} (80% power, α = 0.05; "
                f"now {pair.result.n:,}, MDE {fmt.format_number(pair.result.mde)})") if needed else \
            f"{safe(pair.scorer)}: cannot say for {delta:g} (no variation in the differences)"  # fmt: skip
        self._show_status(text)
        event.input.remove_class("shown")
        self.query_one("#compare-pairs").focus()

    def action_discordant(self) -> None:
        """Open run A's samples where A and B disagree (A right B wrong, and the reverse)."""
        from evtui.app.screens.samples import SamplesScreen

        pair = self._selected_pair()
        if pair is None or pair.result is None:
            self.notify("Highlight a comparison with paired samples first.", markup=False)
            return
        ids = list(pair.a_right_b_wrong) + list(pair.b_right_a_wrong)
        if not ids:
            self.notify("The two runs agree on every shared sample.", markup=False)
            return
        shown = ids[:DISCORDANT_FILTER_LIMIT]
        expression = "id in (" + ", ".join(quote(sample_id) for sample_id in shown) + ")"
        kind = "A right, B wrong" if pair.result.test == "mcnemar_exact" else "A higher"
        title = (f"#{pair.a} vs #{pair.b} {safe(pair.scorer)}: {len(pair.a_right_b_wrong):,} {kind} · "
                 f"{len(pair.b_right_a_wrong):,} the reverse")  # fmt: skip
        if len(ids) > len(shown):
            self.notify(f"Showing the first {len(shown)} of {len(ids):,} discordant samples.", markup=False)
        self.app.push_screen(SamplesScreen(pair.a, scorer=pair.scorer, title=title, filter=expression, compare_run_id=pair.b))

    def action_open_decisions(self) -> None:
        """Variance split, decisions across tasks and the live stopping signal (issue 34)."""
        from evtui.app.screens.compare.decisions import DecisionsScreen

        self.app.push_screen(DecisionsScreen(self.run_ids, self.baseline, title=self.sub_title))

    def action_toggle_chart(self) -> None:
        """Swap the forest plot for the table of its numbers and back."""
        self.query_one("#compare-forest-panel", PlotPanel).toggle()

    def action_export(self) -> None:
        """Export the table with the focus as it shows (the paired comparison, or every metric
        lined up when that has the focus or there are no pairs) to CSV or JSON; from the forest
        plot's numbers (`t`): the forest plot as SVG, or those numbers."""
        from evtui.app.dialogs.export_view import export_table_view

        forest = self.query_one("#compare-forest-table", BoundedTable)
        if self.focused is forest and self.comparison is not None:  # after `t`: the forest plot as SVG, or its numbers
            from evtui.app.dialogs.export_view import export_plot_view
            from evtui.store.export.view import TableView

            rows = tuple(tuple(str(cell) for cell in forest.get_row_at(i)) for i in range(forest.row_count))
            export_plot_view(self, self.query_one("#compare-forest-panel", PlotPanel), TableView("compare-forest", FOREST_COLUMNS, rows),
                             title="paired differences B − A, 95% CI")  # fmt: skip
            return
        pairs = self.query_one("#compare-pairs", BoundedTable)
        metrics = self.query_one("#compare-table", BoundedTable)
        table = metrics if self.focused is metrics or not pairs.row_count else pairs
        name, title = ("compare", "runs compared") if table is metrics else ("compare-pairs", "paired differences")
        export_table_view(self, table, name, title=title)

    @on(DataTable.RowHighlighted, "#compare-pairs")
    def _on_pair_highlighted(self, event: DataTable.RowHighlighted) -> None:
        pair = self._selected_pair()
        if pair is not None and pair.result is not None:
            result = pair.result
            extra = f"highlighted: {safe(pair.scorer)} #{pair.a} vs #{pair.b}, r = {fmt.format_number(result.correlation, 2)}"
            if result.test == "mcnemar_exact":
                extra += f", discordant {result.a_only_right} A-only / {result.b_only_right} B-only (d opens them)"
            self._show_status(extra)


def quote(text: str) -> str:
    from evtui.store.queries.filters import quote as filter_quote

    return filter_quote(str(text))


def run_labels(runs: Sequence[Any]) -> list[str]:
    """Short unique column labels: `#3 qa_match`, the run id keeps equal tasks apart."""
    labels = []
    for run in runs:
        if run is None:
            labels.append("(gone)")
            continue
        name = safe(run.task or Path(run.path).stem)
        label = f"#{run.id} {name}"
        labels.append(label if len(label) <= RUN_LABEL_WIDTH else label[: RUN_LABEL_WIDTH - 1] + "…")
    return labels


def _run_description(run: Any, display_path: Any) -> Content:
    if run is None:
        return Content.styled("no longer in the index", "$foreground-muted")
    return Content.assemble(
        f"{safe(run.model or '?')}  ",
        fmt.status_content(run.status),
        (f"  {fmt.format_samples(run.samples_completed, run.samples_total)} samples  {run_file_label(display_path(run.path), getattr(run, 'part', ''))}", "$foreground-muted"),
    )


def _integrity_suffix(integrity: Any) -> str:
    """`  · 2 errored · 5 unscored`: what a run's averages leave out ('' when nothing)."""
    if integrity is None:
        return ""
    unscored = sum(scorer.unscored for scorer in integrity.scorers)
    parts = ([f"{integrity.errored:,} errored"] if integrity.errored else []) + ([f"{unscored:,} unscored"] if unscored else [])
    return "".join(f"  · {part}" for part in parts)


def _interval_text(side: Any) -> Content:
    if side is None or side.interval is None:
        return Content.styled("no scores", "$foreground-muted")
    interval = side.interval
    return Content(fmt.format_value_interval(interval.value, interval.low, interval.high) + " " + interval.short)


def pair_cells(pair: Any, labels: dict[int, str], adjustment: str) -> list[Any]:
    """One comparison as the pairs table shows it; what prevented the figures in their place."""
    result = pair.result
    which = f"#{pair.b} − #{pair.a}"
    counts = f"{pair.n_paired:,}/{pair.only_a:,}/{pair.only_b:,}"
    counts_cell = Content.styled(counts + " ≠", "$warning") if pair.different_samples else Content(counts)
    unscored = f"{pair.side_a.unscored:,}/{pair.side_b.unscored:,}" if pair.side_a and pair.side_b else "–"
    sides = [_interval_text(pair.side_a), _interval_text(pair.side_b)]
    if result is None:
        return [safe(pair.scorer), which, Content.styled(safe(pair.message), "$warning"), "–", "–", *sides, "–",
                counts_cell, unscored, "–", pair.metric]  # fmt: skip
    difference = f"{signed(result.difference)} [{signed(result.ci[0])}, {signed(result.ci[1])}]"
    significant = not math.isnan(result.p_value) and result.p_value < 0.05
    p_text = f"{p_value(result.p_value)} {TESTS[result.test]}"
    if result.note:
        p_text = f"– ({result.note})" if math.isnan(result.p_value) else f"{p_text} · {result.note}"
    adjusted = "–" if math.isnan(pair.p_adjusted) else f"{p_value(pair.p_adjusted)} {ADJUSTMENTS[adjustment]}"
    shown = Content.styled(difference, "bold") if significant else Content(difference)
    if pair.not_comparable:  # the reasons are in the notes above the table
        shown = Content.assemble(shown, (" ⚠ not comparable", "$warning"))
    return [
        safe(pair.scorer), which, shown,
        p_text, adjusted, *sides, fmt.format_number(result.correlation, 2), counts_cell, unscored,
        fmt.format_number(result.mde), pair.metric,
    ]  # fmt: skip


def row_cells(row: Any) -> list[Any]:
    """Scorer, reducer, metric, then one cell per run (where a cell came from when the runs' differ)."""
    cells: list[Any] = [safe(row.scorer), row.reducer or "–", row.metric]
    mixed = row.mixed_sources
    for cell in row.cells:
        if cell is None:
            cells.append(Content.styled("–", "$foreground-muted"))
            continue
        text = metric_value_text(row.metric, cell.value, cell.stderr)
        if mixed or cell.reviews:
            text += f" ({cell.source})"
        cells.append(Content.styled(text, "bold $score-pass") if cell.best else Content(text))
    return cells


def metric_value_text(metric: str, value: float | None, stderr: float | None) -> str:
    """`0.583 ± 0.149`; counts (AG2's `count:<label>`) read as whole numbers."""
    if metric.startswith("count:") and value is not None and float(value).is_integer():
        return f"{int(value):,}"
    return fmt.format_value_stderr(value, stderr)
