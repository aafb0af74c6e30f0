"""Queries the Textual app needs that evtui/store/queries.py does not (yet) offer.

Plain functions of a `sqlite_utils.Database` returning dataclasses; no Textual here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlite_utils

# Metrics that describe spread, shown next to a value rather than as a headline of their own.
SPREAD_METRICS = {"stderr", "std", "var", "bootstrap_stderr", "clustered_stderr"}


@dataclass(frozen=True)
class Headline:
    """One headline number of a run: `scorer/metric value ± stderr`."""

    scorer: str
    metric: str
    value: float | None
    stderr: float | None = None
    reducer: str | None = None

    @property
    def name(self) -> str:
        name = self.metric if self.scorer in ("", self.metric) else f"{self.scorer}/{self.metric}"
        # Epoch reducers other than the default mean tell apart rows of the same scorer.
        return f"{name}[{self.reducer}]" if self.reducer and self.reducer != "mean" else name


@dataclass
class RunSummary:
    """A run as the runs and run screens show it."""

    id: int
    path: str
    format: str
    task: str | None
    model: str | None
    status: str
    created: str | None
    duration: float | None
    total_samples: int | None
    completed_samples: int | None
    input_tokens: int | None
    output_tokens: int | None
    total_tokens: int | None
    cost: float | None
    error: str | None
    config: dict[str, Any] = field(default_factory=dict)
    headline: list[Headline] = field(default_factory=list)
    sample_count: int = 0

    @property
    def file_name(self) -> str:
        return Path(self.path).name


@dataclass(frozen=True)
class ResultLine:
    """One scorer × reducer × metric value of a run; `job_id` 0 = recorded in the file."""

    scorer: str
    reducer: str | None
    metric: str
    value: float | None
    scored: int | None
    unscored: int | None
    job_id: int


_RUN_COLUMNS = (
    "id, path, format, task, model, status, created, duration, total_samples, completed_samples, "
    "input_tokens, output_tokens, total_tokens, cost, error, config, sample_count"
)


def list_run_summaries(db: sqlite_utils.Database, headline_limit: int = 2) -> list[RunSummary]:
    """Every run not marked missing, newest first, each with its recorded headline metrics."""
    runs = [
        _run_from_row(row)
        for row in db.execute(
            f"SELECT {_RUN_COLUMNS} FROM runs WHERE missing = 0 ORDER BY created DESC, id DESC"
        ).fetchall()
    ]
    results: dict[int, list[ResultLine]] = {}
    for row in db.execute(
        "SELECT run_id, scorer, reducer, metric, value, scored, unscored, job_id FROM run_results "
        "WHERE job_id = 0 ORDER BY run_id, seq, id"
    ).fetchall():
        results.setdefault(row[0], []).append(ResultLine(*row[1:]))
    for run in runs:
        run.headline = headline_metrics(results.get(run.id, []), headline_limit, run.config.get("headline"))
    return runs


def get_run_summary(db: sqlite_utils.Database, run_id: int) -> RunSummary | None:
    """One run with its headline metrics, or None when it is not in the index."""
    row = db.execute(f"SELECT {_RUN_COLUMNS} FROM runs WHERE id = ?", (run_id,)).fetchone()
    if row is None:
        return None
    run = _run_from_row(row)
    recorded = [line for line in list_result_lines(db, run_id) if not line.job_id]
    run.headline = headline_metrics(recorded, preferred=run.config.get("headline"))
    return run


def list_result_lines(db: sqlite_utils.Database, run_id: int) -> list[ResultLine]:
    """A run's metrics: recorded ones (in file order) first, then each evtui job's."""
    return [
        ResultLine(*row)
        for row in db.execute(
            "SELECT scorer, reducer, metric, value, scored, unscored, job_id FROM run_results "
            "WHERE run_id = ? ORDER BY job_id, seq, id",
            (run_id,),
        ).fetchall()
    ]


def list_failed_files(db: sqlite_utils.Database) -> list[tuple[str, str]]:
    """(path, error) of every file the index could not read."""
    return [(row[0], row[1]) for row in db.execute("SELECT path, error FROM ingest_failures ORDER BY path")]


def headline_metrics(
    lines: list[ResultLine], limit: int = 2, preferred: dict[str, Any] | None = None
) -> list[Headline]:
    """The first non-spread metric of the first `limit` (scorer, reducer) groups, each with its
    stderr if recorded; the run's own headline (config["headline"]: scorer, reducer, metric) first."""
    groups: dict[tuple[str, str | None], list[ResultLine]] = {}
    for line in lines:
        groups.setdefault((line.scorer, line.reducer), []).append(line)
    headlines: list[Headline] = []
    for (scorer, reducer), group in groups.items():
        main = next((line for line in group if line.metric not in SPREAD_METRICS), None)
        if main is None:
            continue
        stderr = next((line.value for line in group if line.metric == "stderr"), None)
        headline = Headline(scorer, main.metric, main.value, stderr, reducer)
        if isinstance(preferred, dict) and _is_preferred(preferred, scorer, reducer):
            wanted = next((line for line in group if line.metric == preferred.get("metric")), main)
            headlines.insert(0, Headline(scorer, wanted.metric, wanted.value, stderr, reducer))
        else:
            headlines.append(headline)
    return headlines[:limit]


def _is_preferred(preferred: dict[str, Any], scorer: str, reducer: str | None) -> bool:
    names = {preferred.get("score"), preferred.get("scorer")}
    return scorer in names and preferred.get("reducer") in (None, reducer)


def _run_from_row(row: tuple[Any, ...]) -> RunSummary:
    values = list(row)
    try:
        config = json.loads(values[15]) if values[15] else {}
    except ValueError:
        config = {}
    return RunSummary(*values[:15], config=config if isinstance(config, dict) else {}, sample_count=values[16] or 0)


# -- sample pages for the samples table ------------------------------------------------------------


@dataclass(frozen=True)
class ScoreCell:
    """One scorer's effective score on a sample (a human's, else the latest job's, else the log's)."""

    value: str | None  # JSON text
    value_num: float | None
    answer: str | None


@dataclass(frozen=True)
class SampleLine:
    """One row of the samples table; `sort_key` is where it sits in the sort (for keyset seeks)."""

    rowid: int
    sample_id: str
    epoch: int
    total_tokens: int | None
    total_time: float | None
    error: str | None
    limit_type: str | None
    scores: dict[str, ScoreCell]
    sort_key: tuple[Any, ...]


_SCORE_ORDER = "CASE sc.source WHEN 'human' THEN 0 WHEN 'job' THEN 1 ELSE 2 END, sc.job_id DESC"


def run_scorers(db: sqlite_utils.Database, run_id: int) -> list[str]:
    """Scorer names with scores in a run: recorded results' order first, then any others."""
    ordered = [
        row[0]
        for row in db.execute(
            "SELECT scorer FROM run_results WHERE run_id = ? GROUP BY scorer ORDER BY min(job_id), min(seq)",
            (run_id,),
        )
    ]
    scored = [row[0] for row in db.execute("SELECT DISTINCT scorer FROM scores WHERE run_id = ?", (run_id,))]
    names = [name for name in ordered if name in scored] + [name for name in scored if name not in ordered]
    return names


def count_run_samples(db: sqlite_utils.Database, run_id: int) -> int:
    return db.execute("SELECT count(*) FROM samples WHERE run_id = ?", (run_id,)).fetchone()[0]


def fetch_sample_lines(
    db: sqlite_utils.Database,
    run_id: int,
    scorers: list[str],
    *,
    sort: str | None = None,
    descending: bool = False,
    limit: int = 200,
    offset: int = 0,
    after: SampleLine | None = None,
    before: SampleLine | None = None,
    total: int | None = None,
) -> list[SampleLine]:
    """Rows [offset, offset + limit) of a run's samples in `sort` order (`id`, `epoch`, `tokens`,
    `time`, `error`, or `score:<scorer>`), seeking by keyset from a neighbour row when given.

    Without a neighbour, rows past the middle are read from the far end (needs `total`).
    """
    key = _sort_key(sort)
    where, params = "s.run_id = ?", [run_id]
    skip, reverse = offset, False
    if after is not None:
        condition, condition_params = key.after(after.sort_key, descending)
        where, skip = f"{where} AND {condition}", 0
        params += condition_params
    elif before is not None:
        condition, condition_params = key.after(before.sort_key, not descending)
        where, skip, reverse = f"{where} AND {condition}", 0, True
        params += condition_params
    elif total is not None and offset > total // 2:
        limit = max(min(limit, total - offset), 0)
        skip, reverse = max(total - offset - limit, 0), True
    desc = descending != reverse
    order = f"{key.column} {'DESC' if desc else 'ASC'}" if key.column else ""
    order = ", ".join(part for part in (order, *(f"{c} {'DESC' if desc else 'ASC'}" for c in key.tail)) if part)
    rows = db.execute(
        f"SELECT s.id, s.sample_id, s.epoch, s.total_tokens, s.total_time, s.error, s.limit_type, "
        f"{key.select} FROM samples s WHERE {where} ORDER BY {order} LIMIT ? OFFSET ?",
        [*key.select_params, *params, *key.column_params, limit, skip],
    ).fetchall()
    if reverse:
        rows.reverse()
    scores = _scores_for([row[0] for row in rows], scorers, db)
    return [SampleLine(*row[:7], scores=scores.get(row[0], {}), sort_key=tuple(row[7:])) for row in rows]


@dataclass(frozen=True)
class _SortKey:
    """A sort: an optional nullable `column` (with its SQL parameters), then unique non-null `tail`."""

    column: str | None
    column_params: tuple[Any, ...]
    tail: tuple[str, ...]

    @property
    def select(self) -> str:
        return ", ".join(([self.column] if self.column else []) + list(self.tail))

    @property
    def select_params(self) -> tuple[Any, ...]:
        return self.column_params

    def after(self, key: tuple[Any, ...], descending: bool) -> tuple[str, list[Any]]:
        """SQL for rows strictly after `key` in this direction (SQLite sorts NULLs first ascending)."""
        op = "<" if descending else ">"
        marks = ", ".join("?" * len(self.tail))
        tail_sql = f"({', '.join(self.tail)}) {op} ({marks})"
        if self.column is None:
            return tail_sql, list(key)
        value, tail_key = key[0], list(key[1:])
        column, cp = self.column, list(self.column_params)
        if value is None:
            if descending:  # NULLs come last: only NULL rows further along remain
                return f"({column} IS NULL AND {tail_sql})", cp + tail_key
            return f"(({column} IS NULL AND {tail_sql}) OR {column} IS NOT NULL)", cp + tail_key + cp
        condition = f"({column} {op} ? OR ({column} = ? AND {tail_sql}))"
        params = cp + [value] + cp + [value] + tail_key
        if descending:
            condition = f"({condition} OR {column} IS NULL)"
            params += cp
        return condition, params


# Sort name -> SQL of its nullable sort column.
SAMPLE_SORT_COLUMNS = {"epoch": "s.epoch", "tokens": "s.total_tokens", "time": "s.total_time", "error": "s.error"}


def _sort_key(sort: str | None) -> _SortKey:
    if sort is None or sort == "id":
        return _SortKey(None, (), ("s.id_sort", "s.epoch", "s.id"))
    if sort in SAMPLE_SORT_COLUMNS:
        return _SortKey(SAMPLE_SORT_COLUMNS[sort], (), ("s.id",))
    if sort.startswith("score:"):
        sql = (
            "(SELECT sc.value_num FROM scores sc WHERE sc.sample_rowid = s.id AND sc.scorer = ? "
            f"ORDER BY {_SCORE_ORDER} LIMIT 1)"
        )
        return _SortKey(sql, (sort.removeprefix("score:"),), ("s.id",))
    raise ValueError(f"unknown sample sort {sort!r}")


def _scores_for(rowids: list[int], scorers: list[str], db: sqlite_utils.Database) -> dict[int, dict[str, ScoreCell]]:
    if not rowids or not scorers:
        return {}
    result: dict[int, dict[str, ScoreCell]] = {}
    marks = ",".join("?" * len(rowids))
    names = ",".join("?" * len(scorers))
    # Effective score per (sample, scorer): rows come best-first, the first one seen wins.
    for rowid, scorer, value, value_num, answer in db.execute(
        f"SELECT sc.sample_rowid, sc.scorer, sc.value, sc.value_num, sc.answer FROM scores sc "
        f"WHERE sc.sample_rowid IN ({marks}) AND sc.scorer IN ({names}) "
        f"ORDER BY sc.sample_rowid, sc.scorer, {_SCORE_ORDER}",
        [*rowids, *scorers],
    ):
        cells = result.setdefault(rowid, {})
        if scorer not in cells:
            cells[scorer] = ScoreCell(value, value_num, answer)
    return result
