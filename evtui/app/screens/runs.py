"""The home screen: every indexed run with its status, sample counts and headline metrics;
`g` groups them by task or by eval set under header rows that Enter folds."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from textual import on, work
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Header, Input, Static

from evtui.safe_text import safe_line
from evtui.store.queries.run_list import GROUP_BYS, RunGroup, filter_runs, group_runs, sort_runs

from evtui.app.job_runner import ScoresChanged
from evtui.app.messages import IndexChanged, LoadFailed, RunsLoaded
from evtui.app.run_cells import group_cells, run_cells
from evtui.app.widgets.bounded_table import BoundedTable, FittingCell
from evtui.app.widgets.key_footer import KeyFooter
from evtui.app.widgets.status_line import StatusLine

# (label, sort key in run_list.RUN_SORTS). The run's name (job/run folder or file, cut from the
# middle) comes early so it shows at 80 columns; args and tags, often long, come last.
COLUMN_SORTS = (
    ("Task", "task"), ("Model", "model"), ("Run", "run"), ("Status", "status"), ("Samples", "samples"),
    ("Headline", "headline"), ("Created", "created"), ("Completed", "completed"), ("Duration", "duration"),
    ("Ep", "epochs"), ("Tokens", "tokens"), ("Cost", "cost"), ("Args", "args"), ("Tags", "tags"),
)
COLUMNS = tuple(label for label, _ in COLUMN_SORTS)
DEFAULT_SORT = ("created", True)  # newest first, as the index lists them


def now() -> datetime:
    """The moment relative times are counted from (a function, so snapshots can fix it)."""
    return datetime.now(timezone.utc)


class RunsScreen(Screen[None]):
    """Lists runs from the index; Enter opens a run. Reloads whenever indexing adds runs."""

    TITLE = "Runs"
    AUTO_FOCUS = "#runs-table"  # not the filter line, hidden until `/`
    BINDINGS = [  # in the footer's order: at 80 columns the last ones are left out (all are in ? help)
        Binding("enter", "open_run", "Open run", show=False, id="runs.open"),
        Binding("slash", "focus_filter", "Filter", key_display="/", id="runs.filter"),
        Binding("o", "next_sort", "Sort", id="runs.sort"),
        Binding("space", "toggle_mark", "Mark", id="runs.mark"),
        Binding("c", "compare", "Compare", id="runs.compare"),
        Binding("a", "samples_across", "Across", id="runs.across"),
        Binding("s", "configure_scoring", "Score", id="runs.score"),
        Binding("i", "toggle_intervals", "95% CI", id="runs.intervals"),
        Binding("x", "export", "Export", id="runs.export"),
        # Last of the footer's: shown where the footer has room (at 80 columns it is full by `c`).
        Binding("g", "next_grouping", "Group", tooltip="Group by task / eval set", id="runs.group"),
        Binding("r", "reload", "Reload", show=False, id="runs.reload"),  # the list reloads by itself as runs change
        Binding("M", "matrix", "Matrix", show=False, id="runs.matrix"),  # in ? help; the footer is full at 80 columns
        Binding("O", "reverse_sort", "Reverse sort", show=False, id="runs.sort_reverse"),
        Binding("T", "toggle_absolute", "Absolute times", show=False, id="runs.absolute_times"),
        Binding("escape", "clear_filter", "Clear filter", show=False, id="runs.clear_filter"),
    ]
    DEFAULT_CSS = """
    RunsScreen #runs-filter { display: none; border: none; height: 1; padding: 0 1; }
    RunsScreen #runs-filter.-shown { display: block; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[Any] = []
        self.marked: set[int] = set()
        """Run ids marked with space (for compare)."""
        self.live: dict[int, Any] = {}
        """Live buffer state of runs still being written (evtui.store.live.LiveRun), by run id."""
        self.intervals = False
        """Headlines show a 95% confidence interval instead of ± stderr (i toggles)."""
        self.scales: dict[tuple[int, str], Any] = {}
        """(run id, scorer) -> its scores' range, read when `i` is first pressed: it decides the interval."""
        # Each load is numbered: a superseded load's thread is not stopped by its cancel and may
        # post after a newer one (the list stuck at the first run read while indexing a directory).
        self._load_number = 0
        self.all_runs: list[Any] = []
        """Every run the index holds; `runs` is them filtered and sorted as shown."""
        self.filter_text = ""
        """The runs filter (`task:X model:Y status:Z words`, run_list.parse_run_filter)."""
        self.sort: tuple[str, bool] = DEFAULT_SORT
        """(run_list.RUN_SORTS key, descending)."""
        self.absolute_times = False
        """Created and Completed read as dates instead of `3h ago` (T toggles)."""
        self.group_by: str | None = None
        """None, or a run_list.GROUP_BYS word: the runs under a header row per task or eval set (g cycles)."""
        self.groups: list[RunGroup] = []
        self.folded: set[str] = set()
        """Keys of the groups folded to their header row (Enter on the header)."""
        self.entries: list[Any] = []
        """The table's rows in order: RunGroup headers and RunRows (the runs alone when not grouped)."""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(placeholder="filter: task:NAME model:NAME status:error words…  (Enter keeps, Esc clears)",
                    id="runs-filter")
        yield BoundedTable(COLUMNS, enter_label="Open run", id="runs-table", name_columns=("Task", "Model", "Run"))
        yield Static("", id="empty-hint")
        yield StatusLine(id="runs-status")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.sub_title = getattr(self.app, "source_label", "")
        self.query_one("#empty-hint").display = False
        self.reload_runs()

    def reload_runs(self) -> None:
        """Read the run list again; only the newest load's rows are shown."""
        self._load_number += 1
        self.load_runs(self._load_number)

    @work(thread=True, exclusive=True, group="load-runs", exit_on_error=False)
    def load_runs(self, number: int) -> None:
        """Fetch the run list in a thread; the result arrives as RunsLoaded (with `number`)."""
        from evtui.app.store_calls import fetch_live_runs, fetch_runs

        try:
            # The counts first (computed scalars as last computed), then the scalars brought up to
            # date, sent again only when they changed.
            posted: list[Any] = []
            for cached_only in (True, False):
                runs = fetch_runs(self.app.db_path, cached_only=cached_only)  # type: ignore[attr-defined]
                started = [run.id for run in runs if run.status == "started"]
                live = fetch_live_runs(self.app.db_path, started) if started else {}  # type: ignore[attr-defined]
                if not cached_only and [run.headline for run in runs] == [run.headline for run in posted]:
                    break
                posted = runs
                self.post_message(RunsLoaded(runs, live, number))
        except Exception as error:  # shown to the user; the screen stays usable
            self.post_message(LoadFailed("runs", f"{type(error).__name__}: {error}"))
            return

    @on(IndexChanged)
    def _on_index_changed(self) -> None:
        self.reload_runs()

    @on(LoadFailed)
    def _on_load_failed(self, message: LoadFailed) -> None:
        self.notify(f"Could not load {message.what}: {message.error}", severity="error", markup=False)

    @on(RunsLoaded)
    def _on_runs_loaded(self, message: RunsLoaded) -> None:
        if message.number != self._load_number:  # posted by a load a newer one superseded
            return
        table = self.query_one("#runs-table", BoundedTable)
        # Stay on the selected row as the list grows, unless on the first row: then stay at the top.
        selected = self._selected_key() if table.cursor_row > 0 else None
        self.all_runs = message.runs
        self.live = message.live
        self.marked &= {run.id for run in message.runs}
        self._arrange(keep=selected)
        hint = self.query_one("#empty-hint", Static)
        indexing = getattr(self.app, "ingest_running", False)
        hint.update("Indexing… runs appear here as they are read." if indexing else "No runs found.")
        hint.display = not self.all_runs
        if self.intervals and any(run.headline and run.id not in {owner for owner, _ in self.scales} for run in self.runs):
            self.load_scales([run.id for run in self.runs])

    def _arrange(self, keep: str | None = None) -> None:
        """Filter and sort every run into `runs`, group them when grouping, and show them; the
        cursor stays on row `keep` (a _row_key), or on the header of the folded group holding it."""
        column, descending = self.sort
        self.runs = sort_runs(filter_runs(self.all_runs, self.filter_text), column, descending)
        self.groups = group_runs(self.runs, self.group_by) if self.group_by else []
        if self.group_by:
            self.entries = []
            for group in self.groups:
                self.entries.append(group)
                if group.key not in self.folded:
                    self.entries.extend(group.runs)
        else:
            self.entries = list(self.runs)
        self._show_rows()
        if keep is not None:
            keys = [_row_key(entry) for entry in self.entries]
            if keep not in keys and keep.startswith("run:"):
                keep = next((_row_key(g) for g in self.groups if any(_row_key(r) == keep for r in g.runs)), keep)
            if keep in keys:
                self.query_one("#runs-table", BoundedTable).move_cursor(row=keys.index(keep), animate=False)
        self._show_count()

    def _show_rows(self) -> None:
        table = self.query_one("#runs-table", BoundedTable)
        column, descending = self.sort
        table.sort_mark = (next(i for i, (_, key) in enumerate(COLUMN_SORTS) if key == column), descending)
        moment = now()
        name_width = table.name_cap()
        rows = [
            group_cells(entry, folded=entry.key in self.folded, marked=self.marked, now=moment,
                        absolute_times=self.absolute_times, name_width=name_width)
            if isinstance(entry, RunGroup) else
            run_cells(entry, marked=entry.id in self.marked, live=self.live.get(entry.id), intervals=self.intervals,
                      scales=self._scales_of(entry.id), now=moment, absolute_times=self.absolute_times, name_width=name_width,
                      indent=bool(self.group_by))
            for entry in self.entries
        ]  # fmt: skip
        table.show_rows(rows, keys=[_row_key(entry) for entry in self.entries])

    def _show_count(self) -> None:
        count = len(self.runs)
        detail = f"{count} run{'s' if count != 1 else ''}"
        if self.filter_text.strip():
            detail = f"{count} of {len(self.all_runs)} runs (filter: {safe_line(self.filter_text, 60)})"
        column, descending = self.sort
        label = next(label for label, key in COLUMN_SORTS if key == column)
        detail += f" · by {label.lower()}{' ↓' if descending else ' ↑'}"
        if self.group_by:
            detail += f" · {len(self.groups)} {'task' if self.group_by == 'task' else 'eval set'} group{'s' if len(self.groups) != 1 else ''} (⏎ folds)"
        if self.marked:
            detail += f" · {len(self.marked)} marked (c: compare · a: samples across)"
        if self.intervals:
            detail += " · headlines: value [95% interval] and its method"
        self.query_one(StatusLine).set_detail(detail)

    # ------------------------------------------------------------------------- filter and sort

    def action_focus_filter(self) -> None:
        """Show the filter line and type in it; the list narrows as you type."""
        box = self.query_one("#runs-filter", Input)
        box.add_class("-shown")
        box.focus()

    @on(Input.Changed, "#runs-filter")
    def _on_filter_typed(self, event: Input.Changed) -> None:
        self.filter_text = event.value
        self._arrange(keep=self._selected_key())

    @on(Input.Submitted, "#runs-filter")
    def _on_filter_submitted(self) -> None:
        box = self.query_one("#runs-filter", Input)
        if not box.value.strip():
            box.remove_class("-shown")
        self.query_one("#runs-table", BoundedTable).focus()

    def action_clear_filter(self) -> None:
        """Esc: clear the filter (in its line or not) and go back to the whole list."""
        box = self.query_one("#runs-filter", Input)
        if not self.filter_text and not box.has_class("-shown"):
            raise SkipAction()
        box.value = ""
        box.remove_class("-shown")
        self.filter_text = ""
        self._arrange(keep=self._selected_key())
        self.query_one("#runs-table", BoundedTable).focus()

    def sort_by(self, column: str, descending: bool | None = None) -> None:
        """Order the list by a RUN_SORTS column; the same column again reverses it. Text columns
        start ascending, numbers and times descending (biggest, newest first)."""
        if descending is None:
            current, was_descending = self.sort
            descending = not was_descending if current == column else column not in ("task", "model", "run", "status", "args", "tags")
        self.sort = (column, descending)
        self._arrange(keep=self._selected_key())

    def action_next_sort(self) -> None:
        """o: sort by the next column."""
        keys = [key for _, key in COLUMN_SORTS]
        self.sort_by(keys[(keys.index(self.sort[0]) + 1) % len(keys)])

    def action_reverse_sort(self) -> None:
        self.sort_by(self.sort[0], not self.sort[1])

    @on(DataTable.HeaderSelected, "#runs-table")
    def _on_header_selected(self, event: DataTable.HeaderSelected) -> None:
        """A click on a column's header sorts by it (again: reversed)."""
        if 0 <= event.column_index < len(COLUMN_SORTS):
            self.sort_by(COLUMN_SORTS[event.column_index][1])

    def action_next_grouping(self) -> None:
        """g: group by task, then by eval set, then no groups; the cursor stays on its run."""
        order = (None, *GROUP_BYS)
        self.group_by = order[(order.index(self.group_by) + 1) % len(order)]
        self.folded.clear()
        self._arrange(keep=self._selected_key())

    def toggle_fold(self, group: RunGroup) -> None:
        """Fold a group to its header row, or unfold it."""
        self.folded ^= {group.key}
        self._arrange(keep=_row_key(group))

    def action_toggle_absolute(self) -> None:
        """T: Created and Completed as dates, or back to `3h ago`."""
        self.absolute_times = not self.absolute_times
        self._show_rows()

    def action_export(self) -> None:
        """Export the runs table as it shows (headlines, counts, tokens…) to CSV or JSON."""
        from evtui.app.dialogs.export_view import export_table_view

        table = self.query_one("#runs-table", BoundedTable)
        if not self.group_by:
            export_table_view(self, table, "runs", title="runs")
            return
        # Grouped: each run's row with its group's name first (folded groups' runs too); header
        # rows are not runs. Names whole, not cut to the screen.
        from evtui.app.dialogs.export_view import ExportViewDialog
        from evtui.store.export.view import TableView

        moment = now()
        rows = tuple(
            (safe_line(group.name), *(str(cell.forms[0] if isinstance(cell, FittingCell) else cell) for cell in run_cells(
                run, marked=run.id in self.marked, live=self.live.get(run.id), intervals=self.intervals,
                scales=self._scales_of(run.id), now=moment, absolute_times=self.absolute_times, name_width=10_000)))
            for group in self.groups for run in group.runs
        )  # fmt: skip
        view = TableView("runs", ("Group", *COLUMNS), rows)
        self.app.push_screen(ExportViewDialog(self.app.db_path, view, getattr(self.app, "ingest_paths", []), title="runs"))  # type: ignore[attr-defined]

    def action_toggle_intervals(self) -> None:
        """Show each headline's 95% confidence interval instead of ± stderr, or back."""
        self.intervals = not self.intervals
        if self.intervals:
            self.load_scales([run.id for run in self.runs])
        self._show_rows()
        self._show_count()

    def _scales_of(self, run_id: int) -> dict[str, Any]:
        return {scorer: scale for (owner, scorer), scale in self.scales.items() if owner == run_id}

    @work(thread=True, exclusive=True, group="load-scales", exit_on_error=False)
    def load_scales(self, run_ids: list[int]) -> None:
        from evtui.app.store_calls import fetch_score_scales

        try:
            scales = fetch_score_scales(self.app.db_path, run_ids)  # type: ignore[attr-defined]
        except Exception as error:  # noqa: BLE001 - the intervals still show, by the metrics' names
            self.post_message(LoadFailed("score ranges", f"{type(error).__name__}: {error}"))
            return
        self.app.call_from_thread(self._on_scales, scales)

    def _on_scales(self, scales: dict[tuple[int, str], Any]) -> None:
        self.scales = scales
        if self.intervals:
            self._show_rows()

    def action_toggle_mark(self) -> None:
        """Mark or unmark the run under the cursor; on a group's header, every run of the group
        (unmark them when all are marked)."""
        entry = self._selected_entry()
        if entry is None:
            return
        if isinstance(entry, RunGroup):
            ids = {run.id for run in entry.runs}
            self.marked = self.marked - ids if ids <= self.marked else self.marked | ids
        else:
            self.marked ^= {entry.id}
        self._show_rows()
        self._show_count()

    def action_compare(self) -> None:
        """Compare the marked runs (in list order) side by side."""
        from evtui.app.screens.compare.pairs import CompareScreen

        run_ids = [run.id for run in self.runs if run.id in self.marked]
        entry = self._selected_entry()
        if not run_ids and isinstance(entry, RunGroup):  # on a group's header: its runs
            run_ids = [run.id for run in entry.runs]
        if len(run_ids) < 2:
            self.notify("Mark two or more runs with space, then press c to compare them.", markup=False)
            return
        self.app.push_screen(CompareScreen(self.app.db_path, run_ids))  # type: ignore[attr-defined]

    def action_samples_across(self) -> None:
        """The samples of the marked runs in one table; with none marked, of the runs of the group
        under the cursor (on its header), else of every run of the cursor run's task."""
        run_ids = [run.id for run in self.runs if run.id in self.marked]
        if run_ids:
            self._open_across(run_ids, f"{len(run_ids)} marked runs")
            return
        entry = self._selected_entry()
        if isinstance(entry, RunGroup):
            self._open_across([run.id for run in entry.runs], f"every run of {safe_line(entry.name, 80)}")
            return
        run_id = self._selected_run_id()
        if run_id is not None:
            self._find_task_runs(run_id)

    @work(thread=True, exclusive=True, group="task-runs", exit_on_error=False)
    def _find_task_runs(self, run_id: int) -> None:
        from evtui.app.store_calls import fetch_task_runs

        try:
            run_ids = fetch_task_runs(self.app.db_path, run_id)  # type: ignore[attr-defined]
        except Exception as error:  # said; the list stays
            self.notify(f"Could not find the task's runs: {type(error).__name__}: {error}", severity="error", markup=False)
            return
        task = next((run.task for run in self.all_runs if run.id == run_id), None)
        self.app.call_from_thread(self._open_across, run_ids, f"every run of {safe_line(task or '–', 80)}")

    def _open_across(self, run_ids: list[int], title: str) -> None:
        from evtui.app.screens.across.table import AcrossRunsScreen

        self.app.push_screen(AcrossRunsScreen(run_ids, title=title))

    def action_matrix(self) -> None:
        """Every run as tasks × models, the headline metric with its interval."""
        from evtui.app.screens.compare.matrix import MatrixScreen

        self.app.push_screen(MatrixScreen())

    def _selected_entry(self) -> Any:
        """The RunRow or RunGroup header under the cursor, or None."""
        table = self.query_one("#runs-table", DataTable)
        if not self.entries or table.cursor_row < 0 or table.cursor_row >= len(self.entries):
            return None
        return self.entries[table.cursor_row]

    def _selected_run_id(self) -> int | None:
        entry = self._selected_entry()
        return None if entry is None or isinstance(entry, RunGroup) else entry.id

    def _selected_key(self) -> str | None:
        entry = self._selected_entry()
        return None if entry is None else _row_key(entry)

    @on(DataTable.RowSelected, "#runs-table")
    def _on_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open_run()

    def action_open_run(self) -> None:
        """Enter: open the run; on a group's header, fold or unfold the group."""
        from evtui.app.screens.run import RunScreen

        entry = self._selected_entry()
        if isinstance(entry, RunGroup):
            self.toggle_fold(entry)
        elif entry is not None:
            self.app.push_screen(RunScreen(entry.id))

    def action_reload(self) -> None:
        self.reload_runs()

    @on(ScoresChanged)
    def _on_scores_changed(self) -> None:
        self.reload_runs()

    def action_configure_scoring(self) -> None:
        """Score the marked runs, or when none is marked the run (or the group's runs) under the cursor."""
        from evtui.app.dialogs.configure_scoring import open_configure_scoring

        run_ids = [run.id for run in self.runs if run.id in self.marked]
        entry = self._selected_entry()
        if not run_ids and isinstance(entry, RunGroup):
            run_ids = [run.id for run in entry.runs]
        elif not run_ids and entry is not None:
            run_ids = [entry.id]
        open_configure_scoring(self.app, run_ids)


def _row_key(entry: Any) -> str:
    """A table row's key: `run:<id>`, or `group:<key>` for a group's header."""
    return f"group:{entry.key}" if isinstance(entry, RunGroup) else f"run:{entry.id}"
