"""How far the judge can be trusted: judge vs each reviewer, reviewer vs reviewer and all raters
together (agreement, Cohen's kappa unweighted / linear / quadratic, Krippendorff's alpha, each
with its 95% bootstrap interval), the confusion matrix of the pair under the cursor as a heat map
(`t`: its table, where Enter on a cell lists the samples behind it), `g` per group, and the
judge's rate after calibration next to its headline (scoring/review.py computes all of it)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static

from evtui.app.safe_content import plain, plain_block
from evtui.app.widgets.bounded_table import BoundedTable
from evtui.app.widgets.key_footer import KeyFooter
from evtui.app.widgets.plots.heatmap import HeatmapChart
from evtui.app.widgets.plots.lines import LineChart, LineSeries
from evtui.app.widgets.plots.panel import PlotPanel

FIGURES = ("agreement", "kappa", "kappa_linear", "kappa_quadratic", "alpha_nominal", "alpha_ordinal")
COLUMNS = ("Group", "Raters", "n", "Agreement", "κ", "κ linear", "κ quadratic", "α nominal", "α ordinal")


def figure(agreement: Any, name: str) -> str:
    value = getattr(agreement, name)
    if value is None or not math.isfinite(value):
        return "—"
    low, high = agreement.intervals.get(name, (None, None))
    return f"{value:.3f}" + (f" [{low:.2f}, {high:.2f}]" if low is not None and math.isfinite(low) else "")


def calibration_text(calibration: Any) -> str:
    """The judge's headline and its number after calibration, as the view's first lines."""
    lines: list[str] = []
    rate = calibration.rate
    if rate is not None:
        lines.append(f"Judge pass rate {rate.judge_rate:.3f} over {rate.n_judged} samples")
        if rate.estimate is None:
            lines.append(f"calibrated: {rate.note}")
        else:
            halve = (f"{rate.more_reviews_to_halve} more reviews would halve the interval"
                     if rate.more_reviews_to_halve is not None else "more reviews alone cannot halve the interval")
            lines.append(f"→ calibrated {rate.estimate:.3f} [{rate.low:.3f}, {rate.high:.3f}] {rate.method} "
                         f"(Se {rate.sensitivity:.2f}, Sp {rate.specificity:.2f}, {calibration.reviewed} reviewed; {halve})")
    if calibration.mean is not None:
        ppi = calibration.mean
        small = " n<30" if ppi.n_reviewed < 30 else ""
        lines.append(f"judge mean {ppi.judge_mean:.3f} → prediction-powered {ppi.estimate:.3f} [{ppi.low:.3f}, {ppi.high:.3f}] "
                     f"{ppi.method}{small}" + (" (kept inside [0, 1])" if ppi.clipped else ""))
    if not lines:
        lines.append("No human verdicts on this scorer yet: review some (r on the run screen).")
    if calibration.reviewed and not calibration.random_sample:
        lines.append("⚠ the reviewed samples were not drawn at random: the calibrated number may be biased "
                     "(review a random queue)")
    return "\n".join(lines)


class AgreementScreen(Screen[None]):
    TITLE = "Agreement"
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="agreement.back"),
        Binding("t", "toggle_chart", "Chart/table", id="agreement.toggle"),
        Binding("g", "next_group_by", "Group by", id="agreement.group"),
        Binding("l", "toggle_reliability", "Reliability", id="agreement.reliability"),
        Binding("b", "open_judges", "Between sources", id="agreement.between"),
    ]
    DEFAULT_CSS = """
    AgreementScreen #agreement-headline { height: auto; padding: 0 1; border: round $primary; }
    AgreementScreen #agreement-pairs { height: auto; max-height: 40%; }
    AgreementScreen #agreement-panel, AgreementScreen #agreement-reliability { height: 1fr; }
    AgreementScreen #agreement-hint { height: auto; padding: 0 1; color: $text-muted; }  /* two lines at 80 columns */
    """

    @dataclass
    class Loaded(Message):
        groups: list[Any]
        calibration: Any
        reliability: list[Any]
        keys: list[str]

    def __init__(self, run_id: int, scorer: str, *, title: str = "") -> None:
        super().__init__()
        self.run_id, self.scorer, self.run_title = run_id, scorer, title
        self.group_by: str | None = None
        self.metadata_keys: list[str] = []
        self.rows: list[tuple[Any, Any]] = []  # (group, Agreement) per table row
        self.groups: list[Any] = []
        self.calibration: Any = None
        self.reliability: list[Any] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("computing the agreement…", id="agreement-headline")
        yield BoundedTable(COLUMNS, id="agreement-pairs")
        with PlotPanel(id="agreement-panel"):
            yield HeatmapChart(id="agreement-heatmap")
            yield BoundedTable(("",), enter_label="Samples", id="agreement-confusion")
        with PlotPanel(id="agreement-reliability"):
            yield LineChart(id="agreement-reliability-chart")
            yield BoundedTable(("Judge", "Human mean", "95% interval", "n"), id="agreement-reliability-table")
        yield Static("", id="agreement-hint")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.sub_title = plain(f"{self.run_title} · {self.scorer}", 160).plain
        self.query_one("#agreement-confusion", DataTable).cursor_type = "cell"
        self.query_one("#agreement-reliability").display = False
        self.load()

    @work(thread=True, exclusive=True, group="agreement", exit_on_error=False)
    def load(self) -> None:
        from evtui.app.store_calls import fetch_agreement, fetch_metadata_keys

        groups, calibration, reliability = fetch_agreement(  # type: ignore[attr-defined]
            self.app.db_path, self.run_id, self.scorer, group_by=self.group_by)  # type: ignore[attr-defined]
        keys = fetch_metadata_keys(self.app.db_path, self.run_id)  # type: ignore[attr-defined]
        self.post_message(self.Loaded(groups, calibration, reliability, keys))

    @on(Loaded)
    def _on_loaded(self, message: Loaded) -> None:
        self.groups, self.calibration, self.metadata_keys = message.groups, message.calibration, message.keys
        headline = self.query_one("#agreement-headline", Static)
        headline.border_title = plain(f"{self.scorer}: the judge after calibration", 120)
        headline.update(plain_block(calibration_text(message.calibration)))
        self.rows = []
        for group in message.groups:
            for agreement in [*group.pairs, *([group.together] if group.together else [])]:
                self.rows.append((group.group, agreement))
        cells = [[
            "all" if group is None else f"{self.group_by}={group}",
            " vs ".join(agreement.raters) if len(agreement.raters) == 2 else "all raters",
            str(agreement.n), *(figure(agreement, name) for name in FIGURES),
        ] for group, agreement in self.rows]
        self.query_one("#agreement-pairs", BoundedTable).show_rows(cells)
        self.query_one("#agreement-hint", Static).update(plain(
            ("no pairs of raters yet" if not self.rows
             else "[ ]: 95% percentile bootstrap over samples · ↑↓ a pair · t chart/table · Enter on a cell: its samples")
            + (f" · grouped by {self.group_by}" if self.group_by else " · g groups by a metadata key"), None))
        self._show_confusion()
        self._show_reliability(message.reliability)

    def _show_reliability(self, points: list[Any]) -> None:
        """A numeric judge's reliability curve (empty for letter grades)."""
        self.reliability = points
        chart = self.query_one(LineChart)
        if points:
            methods = ", ".join(dict.fromkeys(p.method for p in points))
            chart.show_lines([LineSeries("human mean", [p.judge for p in points], [p.human for p in points],
                                         [p.low for p in points], [p.high for p in points], f"95% band ({methods})")],
                             x_label=f"{self.scorer} (judge)", y_label="human verdict", diagonal=True)
        else:
            chart.show_lines([], x_label="judge", y_label="human")
        self.query_one("#agreement-reliability-table", BoundedTable).show_rows(
            [[f"{p.judge:g}", f"{p.human:.3f}", f"[{p.low:.3f}, {p.high:.3f}] {p.method}" + (" n<30" if p.n < 30 else ""),
              str(p.n)] for p in points])  # fmt: skip

    @on(DataTable.RowHighlighted, "#agreement-pairs")
    def _show_confusion(self) -> None:
        pair = self._pair()
        heatmap = self.query_one(HeatmapChart)
        table = self.query_one("#agreement-confusion", BoundedTable)
        if pair is None or pair.confusion is None:
            heatmap.show_matrix([], [], [], title="no pair of raters")
            table.column_labels = [""]
            table.show_rows([])
            return
        labels = [str(c) for c in pair.scale.categories]
        first, second = pair.raters
        # Rows and columns are labelled by grade (a long rater name cut to the label's width left
        # only the name); the title says whose grades run down and across.
        heatmap.show_matrix(labels, labels, [[float(v) for v in row] for row in pair.confusion],
                            title=f"rows: {first}'s grade · columns: {second}'s grade", digits=0)
        table.column_labels = [f"{first} \\ {second}", *labels]
        table.show_rows([[label, *(str(v) for v in row)] for label, row in zip(labels, pair.confusion, strict=True)])

    def _pair(self) -> Any:
        table = self.query_one("#agreement-pairs", DataTable)
        if not 0 <= table.cursor_row < len(self.rows):
            return None
        agreement = self.rows[table.cursor_row][1]
        return agreement if len(agreement.raters) == 2 else None

    @on(DataTable.CellSelected, "#agreement-confusion")
    def _open_cell(self, event: DataTable.CellSelected) -> None:
        pair = self._pair()
        row, column = event.coordinate.row, event.coordinate.column - 1
        if pair is None or column < 0:
            return
        categories = pair.scale.categories
        self._cell_samples(pair.raters[0], pair.raters[1], categories[row], categories[column])

    @work(thread=True, exclusive=True, group="agreement-cell", exit_on_error=False)
    def _cell_samples(self, first: str, second: str, first_value: Any, second_value: Any) -> None:
        from evtui.app.store_calls import fetch_confusion_samples

        samples = fetch_confusion_samples(self.app.db_path, self.run_id, self.scorer, first, second,  # type: ignore[attr-defined]
                                          first_value, second_value)
        self.app.call_from_thread(self._show_cell, f"{first} {first_value} · {second} {second_value}", samples)

    def _show_cell(self, label: str, samples: list[tuple[str, int]]) -> None:
        from evtui.app.dialogs.confusion_samples import ConfusionSamplesDialog

        self.app.push_screen(ConfusionSamplesDialog(self.run_id, self.scorer, label, samples))

    def action_toggle_chart(self) -> None:
        panel = self.query_one("#agreement-reliability" if self.query_one("#agreement-reliability").display
                               else "#agreement-panel", PlotPanel)
        panel.toggle()

    def action_toggle_reliability(self) -> None:
        """Swap the confusion matrix for the judge's reliability curve (numeric judges)."""
        reliability = self.query_one("#agreement-reliability")
        if not reliability.display and not self.reliability:
            self.notify("A reliability curve needs a numeric judge and numeric verdicts.", severity="warning")
            return
        reliability.display = not reliability.display
        self.query_one("#agreement-panel").display = not reliability.display

    def action_next_group_by(self) -> None:
        """Cycle the grouping: none, then each metadata key of the run."""
        choices: list[str | None] = [None, *self.metadata_keys]
        index = choices.index(self.group_by) if self.group_by in choices else 0
        self.group_by = choices[(index + 1) % len(choices)]
        self.query_one("#agreement-headline", Static).update("computing the agreement…")
        self.load()

    def action_open_judges(self) -> None:
        """Any two sources of this scorer side by side: the log's judge, a job, a reviewer (issue 32)."""
        from evtui.app.screens.review.judges import JudgesScreen

        self.app.push_screen(JudgesScreen(self.run_id, self.scorer, title=self.run_title))
