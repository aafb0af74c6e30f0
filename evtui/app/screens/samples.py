"""The samples behind a run's scalars: one virtual table row per (sample, epoch), paged from SQLite."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from evtui.app import formatting as fmt
from evtui.app.messages import IndexChanged, LoadFailed, ScorersLoaded
from evtui.app.widgets.sql_table import Column, PageRequest, SqlTable
from evtui.app.widgets.status_line import StatusLine

SCORE_WIDTH = 10


class SamplePageSource:
    """Pages of a run's samples for SqlTable; made in the table's fetch thread (own connection)."""

    def __init__(self, db_path: Path, run_id: int, scorers: list[str]) -> None:
        from evtui.store.schema import connect

        self._db = connect(db_path)
        self.run_id = run_id
        self.scorers = scorers
        self._total: int | None = None

    def count(self) -> int:
        from evtui.store.queries_ui import count_run_samples

        self._total = count_run_samples(self._db, self.run_id)
        return self._total

    def fetch(self, request: PageRequest) -> list[Any]:
        from evtui.store.queries_ui import fetch_sample_lines

        return fetch_sample_lines(
            self._db,
            self.run_id,
            self.scorers,
            sort=request.sort,
            descending=request.descending,
            limit=request.limit,
            offset=request.offset,
            after=request.after,
            before=request.before,
            total=self._total,
        )

    def close(self) -> None:
        self._db.conn.close()


class SamplesScreen(Screen[None]):
    """A run's samples with each scorer's value, the chosen scorer's answer, tokens, time, error."""

    TITLE = "Samples"
    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="samples.back")]

    def __init__(self, run_id: int, scorer: str | None = None, title: str = "") -> None:
        super().__init__()
        self.run_id = run_id
        self.scorer = scorer
        self.run_title = title
        self.scorers: list[str] | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("loading…", id="samples-hint")
        yield StatusLine(id="samples-status")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = self.run_title + (f" · {self.scorer}" if self.scorer else "")
        self.load_scorers()

    @work(thread=True, exclusive=True, group="load-scorers", exit_on_error=False)
    def load_scorers(self) -> None:
        """Find the run's scorers (the table's columns) in a thread."""
        from evtui.store.queries_ui import run_scorers
        from evtui.store.schema import connect

        try:
            db = connect(self.app.db_path)  # type: ignore[attr-defined]
            try:
                scorers = run_scorers(db, self.run_id)
            finally:
                db.conn.close()
        except Exception as error:  # shown to the user; the screen stays usable
            self.post_message(LoadFailed("samples", f"{type(error).__name__}: {error}"))
            return
        self.post_message(ScorersLoaded(scorers))

    @on(ScorersLoaded)
    def _show_table(self, message: ScorersLoaded) -> None:
        if self.scorers is not None:
            return
        self.scorers = scorers = message.scorers
        answer_scorer = self.scorer if self.scorer in scorers else (scorers[0] if scorers else None)
        db_path = self.app.db_path  # type: ignore[attr-defined]
        table = SqlTable(
            sample_columns(scorers, answer_scorer),
            lambda: SamplePageSource(db_path, self.run_id, scorers),
            sort="id",
            id="samples-table",
        )
        self.query_one("#samples-hint").remove()
        self.mount(table, before=self.query_one(StatusLine))
        table.focus()

    @on(LoadFailed)
    def _on_load_failed(self, message: LoadFailed) -> None:
        self.query_one("#samples-hint", Static).update(f"Could not load the {message.what}: {message.error}")

    @on(IndexChanged)
    def _on_index_changed(self) -> None:
        for table in self.query(SqlTable):
            table.reload()

    @on(SqlTable.Counted)
    def _on_counted(self, message: SqlTable.Counted) -> None:
        count = message.count
        self.query_one(StatusLine).set_detail(
            f"{count:,} sample row{'s' if count != 1 else ''} · s: sort · S: reverse · click a header to sort"
        )

    @on(SqlTable.RowSelected)
    def _on_row_selected(self, message: SqlTable.RowSelected) -> None:
        line = message.row
        self.notify(f"sample {line.sample_id} epoch {line.epoch}", title="Sample")


def sample_columns(scorers: list[str], answer_scorer: str | None) -> list[Column]:
    """Id, epoch, one column per scorer, the answer of `answer_scorer`, tokens, time, error."""
    columns = [
        Column("id", "Id", 12, lambda line: line.sample_id),
        Column("epoch", "Ep", 3, lambda line: str(line.epoch), align="right"),
    ]
    for scorer in scorers:
        columns.append(
            Column(f"score:{scorer}", scorer[:SCORE_WIDTH], SCORE_WIDTH, _score_cell(scorer), align="right")
        )
    if answer_scorer is not None:
        columns.append(Column("answer", "Answer", 24, _answer_cell(answer_scorer), sortable=False))
    columns += [
        Column("tokens", "Tokens", 7, lambda line: fmt.format_tokens(line.total_tokens), align="right"),
        Column("time", "Time", 7, lambda line: fmt.format_duration(line.total_time), align="right"),
        Column("error", "Error", 40, _error_cell),
    ]
    return columns


def score_text(value_json: str | None) -> str:
    """A stored score value as a short cell text: C, 0.75, {"a": 1}."""
    if value_json is None:
        return "–"
    try:
        value = json.loads(value_json)
    except ValueError:
        return value_json
    if isinstance(value, float):
        return fmt.format_number(value, 3)
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value, separators=(",", ":"))


def _score_cell(scorer: str):
    def cell(line: Any) -> tuple[str, str]:
        score = line.scores.get(scorer)
        if score is None:
            return "–", "muted"
        number = score.value_num
        role = "muted" if number is None else "pass" if number >= 1 else "fail" if number <= 0 else "partial"
        return score_text(score.value), role

    return cell


def _answer_cell(scorer: str):
    def cell(line: Any) -> str:
        score = line.scores.get(scorer)
        return (score.answer or "") if score else ""

    return cell


def _error_cell(line: Any) -> tuple[str, str]:
    if line.error:
        return line.error.splitlines()[0] if line.error.strip() else line.error, "fail"
    if line.limit_type:
        return f"limit: {line.limit_type}", "partial"
    return "", ""
