"""Samples across runs: one row per sample id × epoch of several runs, each run's answer and
scores as columns (issue 30). The cross-run samples screen and `evtui samples` read these.

Rows are keyed by (id_sort, epoch): natural id order, as the samples list. A page is found by a
keyset seek in each run's (run_id, id_sort, epoch) index and a merge of what they give, then the
runs' samples of the page's ids are read with their scores (one statement for the runs that
share their scorers); nothing scans a run.
The filter language and full-text search keep a row when they match the sample in any run.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from evtui.store.queries.effective_scores import score_column_sql
from evtui.store.queries.paging import PREVIEW_CHARS, ScoreCell, SampleWhere, decode_json
from evtui.store.queries.runs import Db, conn_of
from evtui.store.queries.ui import run_scorers

__all__ = ["AcrossColumn", "AcrossRow", "AcrossRun", "across_columns", "across_rows", "across_runs", "count_across",
           "page_across", "table_header", "table_values", "task_run_ids", "walk_keys"]


@dataclass(frozen=True)
class AcrossRun:
    """One run of the table: its place (1, 2, …), what names it, its scorers (the first gives the answer)."""

    index: int
    run_id: int
    path: str
    part: str
    task: str | None
    model: str | None
    scorers: tuple[str, ...]

    @property
    def answer_scorer(self) -> str | None:
        return self.scorers[0] if self.scorers else None


@dataclass(frozen=True)
class AcrossColumn:
    """A run's answer (`scorer` None) or one of its scorers' values."""

    run_index: int
    scorer: str | None

    @property
    def key(self) -> str:
        return f"run{self.run_index}:" + ("answer" if self.scorer is None else f"score:{self.scorer}")

    @property
    def label(self) -> str:
        return f"{self.run_index} " + ("answer" if self.scorer is None else self.scorer)


@dataclass
class AcrossRow:
    """One sample id × epoch: its input and target (from the first run holding it), and per run
    (by index) the sample's rowid, its answer scorer's answer (else None) and score cells."""

    sample_id: str
    epoch: int
    id_sort: str
    input: str | None
    target: list[str]
    rowids: dict[int, int] = field(default_factory=dict)
    answers: dict[int, str | None] = field(default_factory=dict)
    scores: dict[tuple[int, str], ScoreCell] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, int]:
        return (self.id_sort, self.epoch)

    def cell(self, column: AcrossColumn) -> Any:
        """The column's value: the answer text, or the score's value (None where the run has none)."""
        if column.scorer is None:
            return self.answers.get(column.run_index)
        cell = self.scores.get((column.run_index, column.scorer))
        return None if cell is None else cell.value


def across_runs(db: Db, run_ids: Sequence[int]) -> list[AcrossRun]:
    """The runs in the order given, numbered from 1, with their scorers; unknown ids left out."""
    conn = conn_of(db)
    out: list[AcrossRun] = []
    for run_id in dict.fromkeys(run_ids):
        row = conn.execute("SELECT path, part, task, model FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            continue
        out.append(AcrossRun(len(out) + 1, run_id, row[0], row[1], row[2], row[3], tuple(run_scorers(conn, run_id))))
    return out


def task_run_ids(db: Db, run_id: int) -> list[int]:
    """Every run (still on disk) of the task run `run_id` ran, oldest first; the run alone without a task."""
    conn = conn_of(db)
    row = conn.execute("SELECT task FROM runs WHERE id = ?", (run_id,)).fetchone()
    if row is None or row[0] is None:
        return [run_id]
    return [found[0] for found in conn.execute("SELECT id FROM runs WHERE task = ? AND missing = 0 ORDER BY created, id", (row[0],))]


def across_columns(runs: Sequence[AcrossRun]) -> list[AcrossColumn]:
    """Per run: its answer, then its scorers' values."""
    return [column for run in runs for column in (AcrossColumn(run.index, None), *(AcrossColumn(run.index, s) for s in run.scorers))]


def _score_columns(runs: Sequence[AcrossRun]) -> list[str]:
    """Every scorer any run has: the filter may name each (a run without it reads NULL)."""
    return list(dict.fromkeys(scorer for run in runs for scorer in run.scorers))


# Runs whose samples one statement reads (`run_id IN (…)`: a bound parameter each).
RUNS_PER_STATEMENT = 200


def _chunks(items: Sequence[Any]) -> Iterator[Sequence[Any]]:
    size = RUNS_PER_STATEMENT
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _keys(db: Db, runs: Sequence[AcrossRun], after: tuple[str, int] | None, limit: int, descending: bool,
          filter: str | None, search: str | None) -> list[tuple[str, int]]:
    """The next `limit` distinct (id_sort, epoch) after `after`, over every run (unfiltered: read
    from the (run_id, id_sort, epoch) index alone). A statement per run: in one UNION of them
    SQLite plans a filtered run's seek worse (a filtered first page 0.3 → 1.5 s over 200 runs)."""
    conn = conn_of(db)
    scorers = _score_columns(runs)
    order = " DESC" if descending else ""
    streams = []
    for run in runs:
        where = SampleWhere(run.run_id, filter, search, scorers, db, paging=True)
        if after is not None:
            where.add(f"(s.id_sort, s.epoch) {'<' if descending else '>'} (?, ?)", list(after))
        streams.append(conn.execute(
            f"SELECT s.id_sort, s.epoch FROM {where.source} WHERE {where.sql} "
            f"ORDER BY s.id_sort{order}, s.epoch{order} LIMIT ?", [*where.params, limit],
        ).fetchall())  # fmt: skip
    # Runs of one task mostly hold the same ids: the distinct keys are few, a set finds them faster
    # than a merge walks every run's (Python orders str as SQLite's BINARY orders UTF-8).
    return sorted(set().union(*streams), reverse=descending)[:limit]


def walk_keys(db: Db, runs: Sequence[AcrossRun], position: int, *, descending: bool = False,
              filter: str | None = None, search: str | None = None, chunk: int = 2000) -> tuple[str, int] | None:
    """The key of row `position - 1` (what a page starting at `position` continues after), found by
    walking the keys from the start; None when there are not that many rows."""
    after: tuple[str, int] | None = None
    left = position
    while left > 0:
        keys = _keys(db, runs, after, min(chunk, left), descending, filter, search)
        if len(keys) < min(chunk, left):
            return None
        after, left = keys[-1], left - len(keys)
    return after


def page_across(
    db: Db, runs: Sequence[AcrossRun], *, after: tuple[str, int] | None = None, limit: int = 50,
    descending: bool = False, filter: str | None = None, search: str | None = None,
) -> list[AcrossRow]:  # fmt: skip
    """The `limit` rows after key `after` (None: from the start), ids in natural order (or reversed).

    Raises FilterError for a malformed filter."""
    keys = _keys(db, runs, after, limit, descending, filter, search)
    if not keys:
        return []
    id_sorts = list(dict.fromkeys(id_sort for id_sort, _ in keys))
    marks = ", ".join("?" * len(id_sorts))
    rows = {(id_sort, epoch): AcrossRow("", epoch, id_sort, None, []) for id_sort, epoch in keys}
    conn = conn_of(db)
    cells: dict[tuple[str | None, float | None], ScoreCell] = {}  # a page holds few distinct scores: each made once
    by_scorers: dict[tuple[str, ...], list[AcrossRun]] = {}
    for run in runs:
        by_scorers.setdefault(run.scorers, []).append(run)
    for scorers, sharing in by_scorers.items():
        # Each scorer's effective score found once (its id, by score_column_sql's seek), then
        # read by rowid: value, number and (the answer scorer's) answer without three seeks.
        joins, select, join_params = [], [], []
        for i, scorer in enumerate(scorers):
            id_sql, id_params = score_column_sql(scorer, "id")
            joins.append(f" LEFT JOIN scores e{i} ON e{i}.id = {id_sql}")
            join_params += id_params
            select.append(f", e{i}.value, e{i}.value_num" + (", e0.answer" if i == 0 else ""))
        for chunk in _chunks(sharing):
            index_of = {run.run_id: run.index for run in chunk}
            found = conn.execute(
                f"SELECT s.run_id, s.id, s.id_sort, s.epoch{''.join(select)} FROM samples s{''.join(joins)} "
                f"WHERE s.run_id IN ({', '.join('?' * len(chunk))}) AND s.id_sort IN ({marks})",  # seeks in (run_id, id_sort, epoch)
                [*join_params, *index_of, *id_sorts],
            ).fetchall()  # fmt: skip
            for found_row in found:
                row = rows.get((found_row[2], found_row[3]))
                if row is None:
                    continue  # another epoch of a page's id, filtered out or on another page
                index = index_of[found_row[0]]
                row.rowids[index] = found_row[1]
                column = 4
                for i, scorer in enumerate(scorers):
                    pair = (found_row[column], found_row[column + 1])
                    cell = cells.get(pair)
                    if cell is None:
                        cell = cells[pair] = ScoreCell(decode_json(pair[0]), pair[1])
                    row.scores[(index, scorer)] = cell
                    if i == 0:
                        row.answers[index] = found_row[column + 2]
                        column += 1
                    column += 2
    # The input and target once per row, from the first run that holds it.
    holders = {min(row.rowids.items())[1]: row for row in rows.values() if row.rowids}
    if holders:
        for rowid, sample_id, input_text, target in conn.execute(
            f"SELECT s.id, s.sample_id, substr(s.input_text, 1, {PREVIEW_CHARS}), s.target FROM samples s "
            f"WHERE s.id IN ({', '.join('?' * len(holders))})", list(holders),
        ):  # fmt: skip
            row = holders[rowid]
            row.sample_id, row.input = sample_id, input_text
            row.target.extend(_target(target))
    return [rows[key] for key in keys]


def _target(stored: str | None) -> list[str]:
    try:
        target = json.loads(stored) if stored else []
    except ValueError:
        return [stored or ""]
    return [str(t) for t in target] if isinstance(target, list) else [str(target)]


def count_across(db: Db, runs: Sequence[AcrossRun], filter: str | None = None, search: str | None = None) -> int:
    """How many distinct sample id × epoch rows the table has (a sample matching in any run)."""
    conn = conn_of(db)
    scorers = _score_columns(runs)
    parts, params = [], []
    for run in runs:
        where = SampleWhere(run.run_id, filter, search, scorers, db)
        parts.append(f"SELECT s.id_sort, s.epoch FROM {where.source} WHERE {where.sql}")
        params += where.params
    if not parts:
        return 0
    return conn.execute(f"SELECT count(*) FROM ({' UNION '.join(parts)})", params).fetchone()[0]


def across_rows(db: Db, runs: Sequence[AcrossRun], *, filter: str | None = None, search: str | None = None,
                descending: bool = False, page: int = 200) -> Iterator[AcrossRow]:
    """Every row of the table in order, read page by page (for `evtui samples`)."""
    after: tuple[str, int] | None = None
    while True:
        rows = page_across(db, runs, after=after, limit=page, descending=descending, filter=filter, search=search)
        yield from rows
        if len(rows) < page:
            return
        after = rows[-1].key


def table_header(columns: Sequence[AcrossColumn]) -> list[str]:
    """The table's column names, as the screen heads them and `evtui samples` prints them."""
    return ["Id", "Ep", "Input", "Target", *(column.label for column in columns)]


def table_values(row: AcrossRow, columns: Sequence[AcrossColumn]) -> list[Any]:
    """One row's values under table_header (texts whole as stored in the list: a preview of long ones)."""
    return [row.sample_id, row.epoch, row.input, " | ".join(row.target), *(row.cell(column) for column in columns)]
