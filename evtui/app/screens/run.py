"""One run: what it is and how it was configured, and its scorers × reducers × metrics."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static

from evtui.app.safe_content import plain
from evtui.safe_text import safe_line

from evtui.app import formatting as fmt
from evtui.app.job_runner import ScoresChanged
from evtui.app.messages import IndexChanged, LoadFailed, RunLoaded
from evtui.app.run_summary import run_summary
from evtui.app.widgets.bounded_table import BoundedTable
from evtui.app.widgets.key_footer import KeyFooter
from evtui.app.widgets.plots.live_metric import LiveMetricChart
from evtui.app.widgets.live_progress import LiveProgress
from evtui.app.widgets.status_line import StatusLine


# The rows the run screen needs to show the summary, the Live panel and the live chart (14 rows)
# above the results at once.
LIVE_CHART_ROOM = 42


class RunScreen(Screen[None]):
    """A run's summary and results table; Enter on a result opens its samples."""

    TITLE = "Run"
    AUTO_FOCUS = "#results-table"  # not the live chart's table (a Tab away, and shown by `t` only)
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="run.back"),
        Binding("enter", "open_samples", "Samples", show=False, id="run.samples"),
        Binding("s", "configure_scoring", "Score", id="run.score"),
        Binding("g", "open_groups", "Groups", id="run.groups"),
        Binding("d", "open_distribution", "Distribution", id="run.distribution"),
        Binding("v", "open_variance", "Variance", show=False, id="run.variance"),  # in ? help: the footer is full at 80 columns
        Binding("t", "toggle_live_chart", "Table", id="run.live-chart"),
        Binding("x", "export", "Export", id="run.export"),
        Binding("r", "start_review", "Review", id="run.review"),
        Binding("A", "open_agreement", "Agreement", key_display="A", id="run.agreement"),
        Binding("c", "open_judges", "Judges", show=False, id="run.judges"),  # in ? help: the footer is full at 80 columns
    ]

    @dataclass
    class ReviewedLoaded(Message):
        """The run's metrics with hand reviews in place, computed in a worker for `generation`."""

        generation: int
        results: list[Any]

    def __init__(self, run_id: int) -> None:
        super().__init__()
        self.run_id = run_id
        self.run: Any = None
        self.results: list[Any] = []
        self.scorers: list[str] | None = None
        self._generation = 0  # reviewed metrics of an older load are dropped
        self._failed: dict[str, str] = {}  # part -> why it could not load, said on the status line until it loads
        # Each run load is numbered: a superseded load's thread still posts (its cancel does not
        # stop it), and its results, older than the newest load's, are dropped (as the runs list's).
        self._load_number = 0
        self._live_completed: int | None = None  # a live run's completed count (its live view's)

    def compose(self) -> ComposeResult:
        yield Header()
        summary = Static("loading…", id="run-summary")
        summary.border_title = "Run"
        # At most half the screen: on a short terminal the summary and the integrity lines scroll
        # here rather than push the results below the fold or lose their last lines.
        with VerticalScroll(id="run-info"):
            yield summary
            yield Static("", id="run-integrity")  # samples planned … errored, scored / unscored by whose failure
        yield LiveProgress(id="run-live")  # shown while the run is being written
        live_chart = LiveMetricChart(id="run-live-chart")  # its first metric over the samples, once two counts have one
        live_chart.display = False  # hidden from the start, so its table never takes the first focus
        yield live_chart
        yield Static("Results", id="results-title")
        with VerticalScroll(id="run-notes-box"):  # a sixth of the screen, scrolling when there are more notes
            yield Static("", id="run-notes")  # why a re-score would not reproduce the recorded metrics
        yield BoundedTable(("Scorer", "Reducer", "Metric", "Value", "Scored", "Source"), enter_label="Samples", id="results-table")
        yield StatusLine(id="run-status")
        yield KeyFooter()

    @dataclass
    class NotesLoaded(Message):
        """Why re-scoring the run with what it recorded would not give its recorded metrics (RunNotes)."""

        notes: list[Any]

    @dataclass
    class LiveLoaded(Message):
        """The live view of a run being written (None: it is not, or no longer)."""

        view: Any

    @dataclass
    class IntegrityLoaded(Message):
        """The run's integrity (scoring/results/integrity.py RunIntegrity; None: not known)."""

        integrity: Any

    def on_mount(self) -> None:
        self.query_one("#run-notes").display = False
        self.query_one("#run-integrity").display = False
        self.load_integrity()
        self.query_one(LiveProgress).display = False
        self.reload_run()
        self.load_notes()
        self.load_live()

    def _post_fetched(self, what: str, fetch: Callable[[Any, int], Any], loaded: Callable[[Any], Message]) -> None:
        """In a worker thread: `fetch(db_path, run_id)`'s answer posted as `loaded(answer)`; a
        failure posted as LoadFailed naming `what`, and the rest of the screen stays."""
        try:
            answer = fetch(self.app.db_path, self.run_id)  # type: ignore[attr-defined]
        except Exception as error:  # noqa: BLE001 - the rest of the screen stays; say what is missing
            self.post_message(LoadFailed(what, f"{type(error).__name__}: {error}"))
            return
        self.post_message(loaded(answer))

    @work(thread=True, exclusive=True, group="load-live", exit_on_error=False)
    def load_live(self) -> None:
        from evtui.app.store_calls import fetch_live_view

        self._post_fetched("live view", fetch_live_view, self.LiveLoaded)

    @on(LiveLoaded)
    def _on_live_loaded(self, message: LiveLoaded) -> None:
        self._loaded("live view")
        live = self.query_one(LiveProgress)
        live.display = message.view is not None  # a finished run turns into the finished view
        if message.view is not None:
            live.show(message.view)
        completed = message.view.completed if message.view is not None else None
        if completed != self._live_completed:  # the summary's count is the live view's: one count
            self._live_completed = completed
            if self.run is not None:
                self.query_one("#run-summary", Static).update(
                    run_summary(self.run, self.app.display_path, completed=completed))  # type: ignore[attr-defined]
        chart = self.query_one(LiveMetricChart)
        shown = message.view is not None and chart.record(message.view)
        if shown != chart.display:
            chart.display = shown
            self.refresh_bindings()
        self._fit_live_layout()

    def on_resize(self) -> None:
        self._fit_live_layout()

    def _fit_live_layout(self) -> None:
        """Below LIVE_CHART_ROOM rows a live run's chart would fall below the fold behind the
        summary: the summary gives way (app.tcss, RunScreen.-live-short)."""
        charts = self.query(LiveMetricChart)
        self.set_class(bool(charts) and charts.first().display and self.size.height < LIVE_CHART_ROOM, "-live-short")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "toggle_live_chart":
            charts = self.query(LiveMetricChart)
            return bool(charts) and charts.first().display  # only a live run has the chart
        return True

    def action_toggle_live_chart(self) -> None:
        """Swap the live metric's chart for the table of its points and back."""
        self.query_one(LiveMetricChart).toggle()

    @work(thread=True, exclusive=True, group="load-notes", exit_on_error=False)
    def load_notes(self) -> None:
        from evtui.app.store_calls import fetch_reproduction_notes

        self.post_message(self.NotesLoaded(fetch_reproduction_notes(self.app.db_path, self.run_id)))  # type: ignore[attr-defined]

    @work(thread=True, exclusive=True, group="load-integrity", exit_on_error=False)
    def load_integrity(self) -> None:
        from evtui.app.store_calls import fetch_run_integrity

        self._post_fetched("run's integrity", fetch_run_integrity, self.IntegrityLoaded)

    @on(IntegrityLoaded)
    def _on_integrity_loaded(self, message: IntegrityLoaded) -> None:
        self._loaded("run's integrity")
        panel = self.query_one("#run-integrity", Static)
        integrity = message.integrity
        if integrity is None:
            panel.display = False
            return
        lines = integrity.compact_lines()
        notes = len(integrity.notes)
        plain_lines = [plain(line) for line in lines[: len(lines) - notes]]
        warned = [Content.styled(safe_line(line), "$warning") for line in lines[len(lines) - notes :]]
        panel.update(Content("\n").join([*plain_lines, *warned]))
        panel.display = True

    @on(NotesLoaded)
    def _on_notes_loaded(self, message: NotesLoaded) -> None:
        notes = self.query_one("#run-notes", Static)
        notes.update(fmt.notes_content(message.notes))
        notes.display = bool(message.notes)

    def reload_run(self) -> None:
        """Read the run and its results again; only the newest load's are shown."""
        self._load_number += 1
        self.load_run(self._load_number)

    @work(thread=True, exclusive=True, group="load-run", exit_on_error=False)
    def load_run(self, number: int) -> None:
        """Fetch the run and its results in a thread; they arrive as RunLoaded (with `number`)."""
        from evtui.app.store_calls import fetch_run, fetch_scorers

        try:
            run, results = fetch_run(self.app.db_path, self.run_id)  # type: ignore[attr-defined]
            # Fetched now so the samples table opens without a round trip of its own.
            scorers = fetch_scorers(self.app.db_path, self.run_id)  # type: ignore[attr-defined]
        except Exception as error:  # shown to the user; the screen stays usable
            self.post_message(LoadFailed("run", f"{type(error).__name__}: {error}"))
            return
        self.post_message(RunLoaded(run, results, scorers, number))

    @work(thread=True, exclusive=True, group="load-reviewed", exit_on_error=False)
    def load_reviewed(self, generation: int) -> None:
        """Recompute the reviewed scorers' metrics (seconds on a huge run, so after the rest shows)."""
        from evtui.app.store_calls import fetch_reviewed_results

        try:
            results = fetch_reviewed_results(self.app.db_path, self.run_id)  # type: ignore[attr-defined]
        except Exception as error:  # shown to the user; the recorded metrics stay
            if generation == self._generation:  # not for a load that a newer one replaced
                self.post_message(LoadFailed("metrics with reviews", f"{type(error).__name__}: {error}"))
            return
        self.post_message(self.ReviewedLoaded(generation, results))

    @on(IndexChanged)
    def _on_index_changed(self) -> None:
        self.reload_run()
        self.load_integrity()
        self.load_notes()
        self.load_live()

    @on(ScoresChanged)
    def _on_scores_changed(self, message: ScoresChanged) -> None:
        if self.run_id in message.run_ids:
            self.reload_run()

    def action_export(self) -> None:
        """Export the results table as it shows to CSV or JSON; from the live chart's points (`t`):
        the live chart as SVG, or those points."""
        from evtui.app.dialogs.export_view import export_table_view

        task = self.run.row.task if self.run is not None else None
        live = self.query_one(LiveMetricChart)
        if live.display and self.focused is live.table:
            from evtui.app.dialogs.export_view import export_plot_view

            export_plot_view(self, live, live.points_view(f"{task or 'run'}-live"), title=f"{self.sub_title} · {live.metric_label}")
            return
        export_table_view(self, self.query_one("#results-table", BoundedTable), f"{task or 'run'}-results", title=self.sub_title)

    def action_configure_scoring(self) -> None:
        from evtui.app.dialogs.configure_scoring import open_configure_scoring

        open_configure_scoring(self.app, [self.run_id], self.sub_title)

    @on(LoadFailed)
    def _on_load_failed(self, message: LoadFailed) -> None:
        if message.what != "run":  # the run itself is shown; say what is missing below it
            self._failed[message.what] = message.error
            self._show_status()
            return
        self.query_one("#run-summary", Static).update(plain(f"Could not load the {message.what}: {message.error}"))

    @on(RunLoaded)
    def _on_run_loaded(self, message: RunLoaded) -> None:
        if message.number != self._load_number:  # posted by a load a newer one superseded
            return
        self.run, self.scorers = message.run, message.scorers
        self.results = list(message.results)
        self._generation += 1
        if message.run is None:
            self.query_one("#run-summary", Static).update("This run is no longer in the index.")
            return
        run = message.run.row
        self.sub_title = f"{run.task or '?'} · {run.model or '?'}"
        summary = self.query_one("#run-summary", Static)
        summary.border_title = plain(run.task or "Run", 120)  # Content: a task name is never markup
        summary.update(run_summary(message.run, self.app.display_path, completed=self._live_completed))  # type: ignore[attr-defined]
        self._show_results()
        self.load_reviewed(self._generation)

    @on(ReviewedLoaded)
    def _on_reviewed_loaded(self, message: ReviewedLoaded) -> None:
        if message.generation != self._generation or not message.results:
            return
        # After every other row, so a cursor already on a row stays on the same result.
        self.results = [result for result in self.results if not result.reviews] + message.results
        self._show_results()

    def _loaded(self, what: str) -> None:
        if self._failed.pop(what, None) is not None:
            self._show_status()

    def _show_results(self) -> None:
        self.query_one("#results-table", BoundedTable).show_rows([result_cells(result) for result in self.results])
        self._show_status()

    def _show_status(self) -> None:
        """The results' line, after which what could not load (kept until it loads: the run's
        own load, landing later, used to write its line over a failure)."""
        failed = [f"Could not compute the {what}: {error}" for what, error in self._failed.items()]
        if self.run is None:
            self.query_one(StatusLine).set_detail(" · ".join(failed))
            return
        recorded = sum(1 for result in self.results if result.recorded)
        reviewed = sum(1 for result in self.results if result.reviews)
        from_scores = sum(1 for result in self.results if result.computed)
        computed = len(self.results) - recorded - reviewed - from_scores
        self.query_one(StatusLine).set_detail(
            f"{recorded} recorded metric{'s' if recorded != 1 else ''}"
            + (f", {from_scores} computed from the run's scores (it records none)" if from_scores else "")
            + (f", {computed} computed by evtui" if computed else "")
            + (f", {reviewed} with hand reviews in place" if reviewed else "")
            + (" (the run is still being written: its metrics are recorded when it ends)"
               if not recorded and self.run is not None and self.run.row.status == "started" else "")
            + ("" if self.results else " · Enter lists the samples")
            + "".join(f" · {line}" for line in failed)
        )

    @on(DataTable.RowSelected, "#results-table")
    def _on_result_selected(self) -> None:
        self.action_open_samples()

    def action_open_samples(self) -> None:
        from evtui.app.screens.samples import SamplesScreen

        table = self.query_one("#results-table", DataTable)
        if self.run is None:
            return
        # A run without recorded metrics (e.g. one that errored) still has samples to look at.
        result = self.results[table.cursor_row] if 0 <= table.cursor_row < len(self.results) else None
        scorer = result.scorer if result is not None else None
        self.app.push_screen(SamplesScreen(self.run_id, scorer=scorer, title=self.sub_title, scorers=self.scorers))

    def _result_under_cursor(self) -> Any:
        table = self.query_one("#results-table", DataTable)
        if self.run is None or not self.results or not 0 <= table.cursor_row < len(self.results):
            return None
        return self.results[table.cursor_row]

    def action_open_groups(self) -> None:
        """The run's metrics per group of samples, starting on the scorer under the cursor."""
        from evtui.app.screens.groups import GroupsScreen

        result = self._result_under_cursor()
        scorer, job_id = (result.scorer, result.job_id) if result is not None else (None, 0)
        reviewed = bool(result is not None and result.reviews)
        self.app.push_screen(GroupsScreen(self.run_id, scorer=scorer, job_id=job_id, title=self.sub_title, reviewed=reviewed))

    def action_start_review(self) -> None:
        """A review queue over the scores of the scorer under the cursor (issue 15)."""
        from evtui.app.dialogs.start_review import start_review

        result = self._result_under_cursor()
        start_review(self, self.run_id, result.scorer if result is not None else None)

    def action_open_agreement(self) -> None:
        """Judge–reviewer agreement and the calibrated number for the scorer under the cursor."""
        from evtui.app.screens.review.agreement import AgreementScreen

        result = self._result_under_cursor()
        if result is None:
            self.notify("Put the cursor on a scorer's row.", severity="warning")
            return
        self.app.push_screen(AgreementScreen(self.run_id, result.scorer, title=self.sub_title))

    def action_open_variance(self) -> None:
        """Items against luck: the split across epochs and across runs of this task and model."""
        from evtui.app.screens.variance import VarianceScreen

        self.app.push_screen(VarianceScreen(self.run_id, title=self.sub_title))

    def action_open_judges(self) -> None:
        """The result under the cursor against the log's judge (a job row: that job; else the latest)."""
        from evtui.app.screens.review.judges import JudgesScreen

        result = self._result_under_cursor()
        if result is None:
            return
        second = f"job:{result.job_id}" if result.job_id else None
        self.app.push_screen(JudgesScreen(self.run_id, result.scorer, first="log" if second else None, second=second,
                                          title=self.sub_title))

    def action_open_distribution(self) -> None:
        """How the values of the result under the cursor are spread."""
        from evtui.app.screens.distribution import DistributionScreen

        result = self._result_under_cursor()
        if result is not None:
            self.app.push_screen(DistributionScreen(
                self.run_id, result.scorer, job_id=result.job_id, title=self.sub_title, reviewed=bool(result.reviews)
            ))  # fmt: skip


def result_cells(result: Any) -> tuple[Any, ...]:
    """The results-table cells: computed metrics are marked so they read apart from recorded."""
    base = "recorded" if not result.job_id else f"evtui job {result.job_id}"
    if getattr(result, "computed", False):
        base = "computed"  # from the run's own scores: it records no metrics
    if result.reviews:
        source = Content.styled(f"{base} + {result.reviews} review{'s' if result.reviews != 1 else ''}", "$success")
    elif base == "computed":
        source = Content.styled("computed (run records none)", "$warning")
    elif not result.job_id:
        source = Content.styled("recorded", "$foreground-muted")
    else:
        source = Content.styled(base, "$accent")
    scored = "–" if result.scored is None else str(result.scored)
    if result.unscored:
        scored += f" (+{result.unscored} unscored)"
    value: Any = fmt.format_number(result.value, 4)
    params = result.params if isinstance(getattr(result, "params", None), dict) else {}
    if isinstance(params.get("warning"), str):  # the run's own samples contradict the recorded number
        value = Content.styled(f"{value} ⚠ samples {fmt.format_number(params.get('from_samples'), 4)}", "$warning")
    return (
        result.scorer,
        result.reducer or "–",
        result.metric,
        value,
        scored,
        source,
    )
