"""Samples across runs: one virtual table row per sample id × epoch of the marked runs (or of a
task's runs), each run's answer and scores as columns; the filter language and full-text search
keep a row when they match its sample in any run; Enter shows the sample in every run side by side.

Rows and columns are those of `evtui samples` (store/queries/across_runs.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Header, Static

from evtui.app.safe_content import plain
from evtui.app.widgets.filter_bar import FilterBar
from evtui.app.widgets.key_footer import KeyFooter
from evtui.app.widgets.sample.columns import ID_WIDTH, score_text
from evtui.app.widgets.sql_table.parts import Column
from evtui.app.widgets.sql_table.table import PageRequest, SqlTable
from evtui.app.widgets.status_line import StatusLine
from evtui.safe_text import safe_line

PAGE_SIZE = 40  # a screenful: each page reads every run's samples of its ids
ANSWER_WIDTH = 18
SCORE_WIDTH = 8


class AcrossPageSource:
    """Pages of the cross-run table for SqlTable, made in the table's page or count thread (own
    connection). Forward pages continue by key from the row before, backward ones from the row
    after; a jump with no neighbour walks the keys from the start (index entries only)."""

    def __init__(self, db_path: Path, runs: list[Any], filter: str | None, search: str | None) -> None:
        from evtui.store.schema import connect

        self._db = connect(db_path)
        self.runs, self.filter, self.search = runs, filter, search

    def count(self) -> int:
        from evtui.store.queries.across_runs import count_across

        return count_across(self._db, self.runs, self.filter, self.search)

    def interrupt(self) -> None:
        self._db.conn.interrupt()

    def fetch(self, request: PageRequest) -> list[Any]:
        from evtui.store.queries.across_runs import page_across, walk_keys

        descending, limit = request.descending, request.limit
        common = dict(filter=self.filter, search=self.search)
        if request.after is not None:
            return page_across(self._db, self.runs, after=request.after.key, limit=limit, descending=descending, **common)
        if request.before is not None:
            rows = page_across(self._db, self.runs, after=request.before.key, limit=limit, descending=not descending, **common)
            return rows[::-1]
        after = walk_keys(self._db, self.runs, request.offset, descending=descending, **common) if request.offset else None
        if request.offset and after is None:
            return []
        return page_across(self._db, self.runs, after=after, limit=limit, descending=descending, **common)

    def close(self) -> None:
        self._db.conn.close()


def across_table_columns(runs: list[Any], width: int) -> list[Column]:
    """Id, epoch, input, target, then per run its answer and scores (labels `1 answer`, `1 match`:
    the status line says which run is 1). Input and target share what a few runs' columns leave."""
    from evtui.store.queries.across_runs import across_columns

    per_run = [column for column in across_columns(runs)]
    shown_runs = min(len(runs), 2)
    run_width = sum(ANSWER_WIDTH + 1 if c.scorer is None else SCORE_WIDTH + 1 for c in per_run if c.run_index <= shown_runs)
    left = max(width - (ID_WIDTH + 1) - 4 - run_width - 4, 20)
    columns = [
        Column("id", "Id", ID_WIDTH, lambda row: row.sample_id),
        Column("epoch", "Ep", 3, lambda row: str(row.epoch), align="right", sortable=False),
        Column("input", "Input", max(12, int(left * 0.7)), lambda row: " ".join((row.input or "").split()), sortable=False),
        Column("target", "Target", max(6, int(left * 0.3)), lambda row: " | ".join(row.target), sortable=False),
    ]
    for column in per_run:
        if column.scorer is None:
            columns.append(Column(column.key, column.label, ANSWER_WIDTH, _answer_cell(column), sortable=False))
        else:
            columns.append(Column(column.key, column.label, SCORE_WIDTH, _score_cell(column),  # fit_cell: `1 overl…`
                                  align="right", sortable=False))  # fmt: skip
    return columns


def _answer_cell(column: Any):
    def cell(row: Any) -> str | tuple[str, str]:
        if column.run_index not in row.rowids:
            return "–", "muted"  # the run has no such sample
        answer = row.answers.get(column.run_index)
        return " ".join(answer.split()) if answer is not None else ""

    return cell


def _score_cell(column: Any):
    def cell(row: Any) -> tuple[str, str]:
        score = row.scores.get((column.run_index, column.scorer))
        if score is None or score.value is None:
            return "–", "muted"
        number = score.value_num
        role = "muted" if number is None else "pass" if number >= 1 else "fail" if number <= 0 else "partial"
        return score_text(score.value), role

    return cell


@dataclass
class RunsResolved(Message):
    runs: list[Any]


@dataclass
class ResolveFailed(Message):
    error: str


class AcrossRunsScreen(Screen[None]):
    """The samples of several runs in one table; Enter: the sample in every run side by side."""

    TITLE = "Samples across runs"
    BINDINGS = [
        Binding("escape", "back", "Back", id="across.back"),
        Binding("slash", "focus_filter", "Filter", key_display="/", id="across.filter"),
    ]

    def __init__(self, run_ids: list[int], title: str = "") -> None:
        super().__init__()
        self.run_ids = run_ids
        self.runs: list[Any] | None = None
        self.filter: str | None = None
        self.search: str | None = None
        self.table: SqlTable | None = None
        self.shown_count: int | None = None
        self.heading = title

    def compose(self) -> ComposeResult:
        yield Header()
        yield FilterBar(id="across-filter")
        yield Static("loading…", id="across-hint")
        yield Static("", id="across-legend")
        yield StatusLine(id="across-status")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.sub_title = self.heading
        self.resolve_runs()

    @work(thread=True, exclusive=True, group="across-runs", exit_on_error=False)
    def resolve_runs(self) -> None:
        from evtui.app.store_calls import fetch_across_runs

        try:
            runs = fetch_across_runs(self.app.db_path, self.run_ids)  # type: ignore[attr-defined]
        except Exception as error:  # shown; the screen stays usable
            self.post_message(ResolveFailed(f"{type(error).__name__}: {error}"))
            return
        self.post_message(RunsResolved(runs))

    @on(ResolveFailed)
    def _on_failed(self, message: ResolveFailed) -> None:
        self.query_one("#across-hint", Static).update(plain(f"Could not load the runs: {message.error}"))

    @on(RunsResolved)
    def _on_resolved(self, message: RunsResolved) -> None:
        self.runs = message.runs
        scorers = list(dict.fromkeys(scorer for run in message.runs for scorer in run.scorers))
        self.query_one(FilterBar).set_score_columns(scorers)
        self.query_one("#across-hint").remove()
        legend = "  ".join(
            f"{run.index} = {safe_line(Path(run.path).name)}{' · ' + safe_line(run.part) if run.part else ''}"
            f" ({safe_line(run.model or '–')})" for run in message.runs
        )  # fmt: skip
        self.query_one("#across-legend", Static).update(plain(legend, 2000))
        self._mount_table(focus=True)

    def _mount_table(self, *, focus: bool) -> None:
        runs, filter, search = list(self.runs or []), self.filter, self.search
        db_path = self.app.db_path  # type: ignore[attr-defined]
        table = SqlTable(
            across_table_columns(runs, self.size.width or self.app.size.width),
            lambda: AcrossPageSource(db_path, runs, filter, search),
            sort="id", page_size=PAGE_SIZE, id="across-table",
        )  # fmt: skip
        self.table, self.shown_count = table, None
        self.mount(table, before=self.query_one("#across-legend"))
        self._show_count()
        if focus:
            table.focus()

    @on(FilterBar.Changed)
    async def _on_filter_changed(self, message: FilterBar.Changed) -> None:
        self.filter, self.search = message.filter, message.search
        if self.runs is None:
            return
        if self.table is not None:
            await self.table.remove()
        self._mount_table(focus=False)

    @on(FilterBar.Left)
    def _on_filter_left(self) -> None:
        if self.table is not None:
            self.table.focus()

    def action_focus_filter(self) -> None:
        self.query_one(FilterBar).focus_filter()

    async def action_back(self) -> None:
        """Esc: clear the filter and search first; with none, back."""
        if self.filter or self.search:
            self.query_one(FilterBar).set_applied(None, None)
            self.filter = self.search = None
            if self.table is not None:
                await self.table.remove()
            self._mount_table(focus=True)
            return
        self.app.pop_screen()

    @on(SqlTable.Counted)
    def _on_counted(self, message: SqlTable.Counted) -> None:
        if message.table is self.table:
            self.shown_count = message.count
            self._show_count()

    def _show_count(self) -> None:
        count = self.shown_count
        runs = len(self.runs or [])
        shown = "counting…" if count is None else f"{count:,} sample row{'s' if count != 1 else ''}"
        matching = " matching" if self.filter or self.search else ""
        self.query_one(StatusLine).set_detail(f"{shown}{matching} across {runs} runs · /: filter (any run) · ⏎: side by side")

    @on(SqlTable.RowSelected)
    def _on_row_selected(self, message: SqlTable.RowSelected) -> None:
        from evtui.app.screens.across.sample import AcrossSampleScreen

        row = message.row
        self.app.push_screen(AcrossSampleScreen(list(self.runs or []), row.sample_id, row.epoch, dict(row.rowids)))
