"""Run-level read queries: the runs list, one run, its metrics, and the files that failed.

Every function takes a `sqlite_utils.Database` or a `sqlite3.Connection` (from schema.connect)
and returns small frozen dataclasses, so the UI can hand them across threads as messages.
"""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, Union

if TYPE_CHECKING:
    import sqlite_utils

__all__ = [
    "HeadlineMetric",
    "headline_of",
    "RunRow",
    "RunDetail",
    "ResultRow",
    "FailureRow",
    "list_runs",
    "attempt_groups",
    "run_attempts",
    "superseded_attempts",
    "get_run",
    "run_results",
    "list_failures",
    "conn_of",
]

Db = Union["sqlite_utils.Database", sqlite3.Connection]


def sample_rows(db: Db, run_id: int) -> int:
    """How many sample rows (sample × epoch) the run holds: the count ingest and the live writer
    keep in `runs.sample_count` after every write of its samples (store/ingest/files.py,
    live_samples.py), so a look at a big run does not count its samples' index again (0.02 s at
    1M, and a grouped report counted three times); counted when an index has none."""
    conn = conn_of(db)
    row = conn.execute("SELECT sample_count FROM runs WHERE id = ?", (run_id,)).fetchone()
    if row is not None and row[0] is not None:
        return int(row[0])
    return conn.execute("SELECT count(*) FROM samples WHERE run_id = ?", (run_id,)).fetchone()[0]


def run_locator_sql(alias: str = "") -> str:
    """SQL naming a run by its file and part, as review verdicts and queues hold it
    (`run_path`): the path for a file's one run, `<path> · <part>` for one of several."""
    a = f"{alias}." if alias else ""
    return f"({a}path || CASE WHEN {a}part = '' THEN '' ELSE ' · ' || {a}part END)"


def conn_of(db: Db) -> sqlite3.Connection:
    """The sqlite3 connection behind a sqlite_utils Database (or the connection itself)."""
    return getattr(db, "conn", db)


@dataclass(frozen=True)
class HeadlineMetric:
    """One recorded metric of the run's first scorer; `stderr` set when the scorer has one."""

    scorer: str
    reducer: str | None
    metric: str
    value: float | None
    stderr: float | None = None
    scored: int | None = None  # samples the metric was computed over
    computed: bool = False  # computed by evtui from the scores: the run records no metrics
    # (lower, upper, metric name) when the run recorded Inspect's ci()/ci_wilson() for this scorer
    recorded_interval: tuple[float, float, str] | None = None


@dataclass(frozen=True)
class RunRow:
    """One run as the runs list shows it."""

    id: int
    path: str
    format: str
    task: str | None
    model: str | None
    status: str
    created: str | None
    samples_completed: int  # recorded completed samples, else the samples indexed
    samples_total: int  # recorded total (dataset × epochs), else the samples indexed
    samples_indexed: int
    input_tokens: int | None
    output_tokens: int | None
    total_tokens: int | None
    cost: float | None
    duration: float | None  # seconds
    missing: bool  # the file is gone; the data is what was indexed
    error: str | None
    headline: tuple[HeadlineMetric, ...]
    part: str = ""  # which run of the file, when it holds several ('' for its one run)
    # An Inspect eval set's task retried or topped up: how many attempts its log directory holds
    # (1 for every other run), and this run's place among them (1: the latest successful one,
    # the one the runs list shows); `eval_set` is the set's id.
    attempts: int = 1
    attempt: int = 1
    eval_set: str | None = None
    completed_at: str | None = None
    epochs: int | None = None  # as the run was configured (Inspect's config.epochs)
    task_args: str | None = None  # JSON object text: the task's arguments, where the format records them
    tags: str | None = None  # JSON array text: the run's tags, where the format records them
    # The eval set the run was made in, where its format has one (eval_set_of): its identity and
    # the name it is listed by (raw run text). None for a run made on its own.
    eval_set_key: str | None = None
    eval_set_name: str | None = None


@dataclass(frozen=True)
class RunDetail:
    """A run with everything the runs table holds: config and metadata decoded."""

    row: RunRow
    run_key: str | None
    started_at: str | None
    completed_at: str | None
    config: dict[str, Any]
    metadata: dict[str, Any]
    file_size: int | None
    file_mtime_ns: int | None
    indexed_at: str | None


@dataclass(frozen=True)
class ResultRow:
    """One metric of a run: recorded in the file (job_id 0) or computed by evtui job `job_id`;
    with `reviews`, the same metric recomputed with that many hand-reviewed scores in place."""

    job_id: int
    scorer: str
    reducer: str | None
    metric: str
    value: float | None
    scored: int | None
    unscored: int | None
    params: dict[str, Any]
    seq: int
    reviews: int = 0
    computed: bool = False  # job_id 0: computed by evtui from the run's own scores (it records no metrics)

    @property
    def recorded(self) -> bool:
        return self.job_id == 0 and not self.reviews and not self.computed


@dataclass(frozen=True)
class FailureRow:
    path: str
    error: str
    at: str | None


_RUN_COLUMNS = (
    "id, path, format, task, model, status, created, completed_samples, total_samples, sample_count, "
    "input_tokens, output_tokens, total_tokens, cost, duration, missing, error, part, completed_at, "
    "json_extract(config, '$.epochs'), json_extract(config, '$.task_args'), json_extract(metadata, '$.tags'), "
    "run_key, json_extract(metadata, '$.eval_set_id'), json_extract(metadata, '$.eval_set.manifest'), "
    "json_extract(metadata, '$.job_name'), json_extract(metadata, '$.experiment')"
)
_RUN_COLUMN_COUNT = 27


def _headlines(conn: sqlite3.Connection, run_ids: list[int] | None) -> dict[int, tuple[HeadlineMetric, ...]]:
    """Each run's headline: the metrics of its first recorded (scorer, reducer), stderr folded
    into the first metric as `value ± stderr`."""
    sql = ("SELECT run_id, scorer, reducer, metric, value, scored, json_extract(params, '$.group'), "
           "json_extract(params, '$.computed') IS NOT NULL FROM run_results WHERE job_id = 0")
    params: list[Any] = []
    if run_ids is not None:
        sql += f" AND run_id IN ({', '.join('?' * len(run_ids))})"
        params = list(run_ids)
    grouped: dict[int, list[tuple[str, str | None, str, float | None, int | None]]] = {}
    intervals: dict[int, dict[str, tuple[float | None, str]]] = {}  # run -> lower/upper -> (value, ci metric)
    first: dict[int, tuple[str, str | None]] = {}
    computed_runs: set[int] = set()  # a reader computed the headline: the file records none
    for run_id, scorer, reducer, metric, value, scored, group, computed in conn.execute(sql + " ORDER BY run_id, seq, id", params):
        head = first.setdefault(run_id, (scorer, reducer))
        if (scorer, reducer) != head:
            continue
        if group in ("ci", "ci_wilson") and metric.startswith(("lower", "upper")):
            intervals.setdefault(run_id, {}).setdefault(metric[:5], (value, group))
            continue
        grouped.setdefault(run_id, []).append((scorer, reducer, metric, value, scored))
        if computed:
            computed_runs.add(run_id)
    out: dict[int, tuple[HeadlineMetric, ...]] = {}
    for run_id, metrics in grouped.items():
        bounds = intervals.get(run_id, {})
        lower, upper = bounds.get("lower", (None, None)), bounds.get("upper", (None, None))
        recorded = (lower[0], upper[0], str(lower[1])) if lower[0] is not None and upper[0] is not None else None
        out[run_id] = headline_of(metrics, recorded_interval=recorded, computed=run_id in computed_runs)
    return out


def headline_of(
    metrics: list[tuple[str, str | None, str, float | None, int | None]], *, computed: bool = False,
    recorded_interval: tuple[float, float, str] | None = None,
) -> tuple[HeadlineMetric, ...]:
    """A headline from the (scorer, reducer, metric, value, scored) of one scorer × reducer,
    stderr folded into the first metric (and the run's recorded ci() bounds, when it has them)."""
    stderr = next((m[3] for m in metrics if m[2] == "stderr"), None)
    rest = [m for m in metrics if m[2] != "stderr"] or metrics
    return tuple(
        HeadlineMetric(s, r, name, value, stderr if i == 0 and name != "stderr" else None, scored, computed,
                       recorded_interval if i == 0 else None)
        for i, (s, r, name, value, scored) in enumerate(rest)
    )


def _run_row(row: tuple[Any, ...], headline: tuple[HeadlineMetric, ...]) -> RunRow:
    (run_id, path, fmt, task, model, status, created, completed, total, indexed,
     itok, otok, ttok, cost, duration, missing, error, part, completed_at, epochs, task_args, tags,
     run_key, eval_set_id, manifest, job_name, experiment) = row
    eval_set = eval_set_of(fmt, path, run_key, eval_set_id, manifest, job_name, experiment)
    return RunRow(
        run_id, path, fmt, task, model, status, created,
        indexed if completed is None else completed,
        indexed if total is None else total,
        indexed, itok, otok, ttok, cost, duration, bool(missing), error, headline, part,
        completed_at=completed_at, epochs=epochs if isinstance(epochs, int) else None,
        task_args=_json_text(task_args, "{"), tags=_json_text(tags, "["),
        eval_set_key=eval_set[0] if eval_set else None, eval_set_name=eval_set[1] if eval_set else None,
    )


_LM_EVAL_STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?$")


def eval_set_of(
    fmt: str, path: str, run_key: str | None, eval_set_id: Any = None, manifest: Any = None,
    job_name: Any = None, experiment: Any = None,
) -> tuple[str, str] | None:
    """(identity, name) of the set of runs a run was made with, where its format has one:

    * Inspect: its eval set (`eval_set_id`), named by the eval-set folder (where `eval-set.json`
      is, else the log's folder);
    * Harbor: its job (one `result.json`, a run per agent × model × dataset), by `job_name`;
    * EvSys: its experiment (`<date>_<experiment>/` holding the arms);
    * lm-eval: its invocation (one `results_<ts>.json` and the task runs of that timestamp).

    None for the other formats (Terminal-Bench, verifiers, AG2, JSONL: one run per command)."""
    folder = PurePosixPath(str(path).replace("\\", "/")).parent
    if fmt.startswith("inspect") and isinstance(eval_set_id, str) and eval_set_id:
        home = PurePosixPath(manifest.replace("\\", "/")).parent if isinstance(manifest, str) and manifest else folder
        return f"inspect:{eval_set_id}", home.name or eval_set_id
    if fmt == "harbor":
        return f"harbor:{folder}", job_name if isinstance(job_name, str) and job_name else folder.name
    if fmt == "evsys" and isinstance(experiment, str) and experiment and run_key:
        folder_name = run_key.split("/", 1)[0]  # `<date>_<experiment>`, a folder above the run's
        home = next((p for p in folder.parents if p.name == folder_name), PurePosixPath(folder_name))
        return f"evsys:{home}", experiment
    if fmt == "lm_eval" and run_key and _LM_EVAL_STAMP.match(run_key.split("/", 1)[0]):
        stamp = run_key.split("/", 1)[0]
        return f"lm_eval:{folder}/{stamp}", f"{folder.name} · {stamp}"
    return None


def _json_text(value: Any, opening: str) -> str | None:
    """json_extract's text of an object or array (`opening`), None when absent or empty."""
    if not isinstance(value, str) or not value.startswith(opening) or value in ("{}", "[]"):
        return None
    return value


def list_runs(db: Db, *, all_attempts: bool = False) -> list[RunRow]:
    """Every indexed run, newest first (by the run's own `created`, then index order); of an
    eval set's attempts at one task only the first (see attempt_groups), with the number of
    attempts, unless `all_attempts`.

    Reads only the runs and run_results tables (no sample scans), so it stays fast on indexes
    of millions of samples.
    """
    conn = conn_of(db)
    headlines = _headlines(conn, None)
    groups = attempt_groups(conn)
    rows = conn.execute(f"SELECT {_RUN_COLUMNS} FROM runs ORDER BY created DESC, id DESC").fetchall()
    out = []
    for row in rows:
        group = groups.get(row[0])
        if group is not None and group.rank > 1 and not all_attempts:
            continue
        out.append(_with_attempts(_run_row(row, headlines.get(row[0], ())), group))
    return out


@dataclass(frozen=True)
class AttemptGroup:
    """A run's place among its eval set's attempts at the same task."""

    eval_set: str
    task_id: str
    order: tuple[int, ...]  # run ids: the latest successful attempt first, then newest first
    rank: int  # this run's place in `order`, 1-based

    @property
    def head(self) -> int:
        return self.order[0]


def _with_attempts(row: RunRow, group: AttemptGroup | None) -> RunRow:
    if group is None:
        return row
    from dataclasses import replace

    return replace(row, attempts=len(group.order), attempt=group.rank, eval_set=group.eval_set)


def attempt_groups(db: Db) -> dict[int, AttemptGroup]:
    """Inspect eval-set runs grouped as attempts at one task, by run id.

    An eval set retries a failed task and tops up an unfinished one by writing a new log with
    the same `eval_set_id` and `task_id` (and removes the older log, unless retry_cleanup is
    off): those logs are attempts at one task. They are ordered as Inspect picks a task's log:
    logs still on disk before those gone, successful ones before the rest, then newest first
    (the run's `created`, then the latest indexed). Runs outside an eval set have no group.
    """
    conn = conn_of(db)
    rows = conn.execute(
        "SELECT id, json_extract(metadata, '$.eval_set_id') AS eval_set, json_extract(metadata, '$.task_id') AS task_id, "
        "status, created, missing FROM runs WHERE format IN ('inspect_eval', 'inspect_json') "
        "AND json_type(metadata, '$.eval_set_id') = 'text' AND json_type(metadata, '$.task_id') = 'text'"
    ).fetchall()
    by_task: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
    for row in rows:
        by_task.setdefault((row[1], row[2]), []).append(row)
    groups: dict[int, AttemptGroup] = {}
    for (eval_set, task_id), members in by_task.items():
        members.sort(key=lambda r: (r[4] or "", r[0]), reverse=True)  # newest first (stable sorts)
        members.sort(key=lambda r: (r[5] != 0, r[3] != "success"))
        order = tuple(r[0] for r in members)
        for rank, run_id in enumerate(order, 1):
            groups[run_id] = AttemptGroup(eval_set, task_id, order, rank)
    return groups


def run_attempts(db: Db, run_id: int) -> list[RunRow]:
    """The attempts at the task of `run_id` (itself alone when it is in no eval set), first first."""
    conn = conn_of(db)
    groups = attempt_groups(conn)
    group = groups.get(run_id)
    ids = list(group.order) if group is not None else [run_id]
    headlines = _headlines(conn, ids)
    rows = {row[0]: row for row in conn.execute(
        f"SELECT {_RUN_COLUMNS} FROM runs WHERE id IN ({', '.join('?' * len(ids))})", ids)}
    return [_with_attempts(_run_row(rows[i], headlines.get(i, ())), groups.get(i)) for i in ids if i in rows]


def superseded_attempts(db: Db, run_ids: list[int]) -> set[int]:
    """Those of `run_ids` that are not the first attempt at their eval-set task."""
    groups = attempt_groups(db)
    return {run_id for run_id in run_ids if run_id in groups and groups[run_id].rank > 1}


def get_run(db: Db, run_id: int) -> RunDetail | None:
    """One run with its recorded config and metadata, or None if there is no such run."""
    conn = conn_of(db)
    row = conn.execute(
        f"SELECT {_RUN_COLUMNS}, run_key, started_at, completed_at, config, metadata, file_size, "
        "file_mtime_ns, indexed_at FROM runs WHERE id = ?",
        (run_id,),
    ).fetchone()
    if row is None:
        return None
    base = _with_attempts(_run_row(row[:_RUN_COLUMN_COUNT], _headlines(conn, [run_id]).get(run_id, ())), attempt_groups(conn).get(run_id))
    run_key, started, completed, config, metadata, size, mtime, indexed = row[_RUN_COLUMN_COUNT:]
    return RunDetail(base, run_key, started, completed, json.loads(config or "{}"),
                     json.loads(metadata or "{}"), size, mtime, indexed)


def run_results(db: Db, run_id: int) -> list[ResultRow]:
    """All metrics of a run: recorded ones (job_id 0) first, then each evtui job's, in order. A job
    that scored none of the run's samples has no result to show (its figures are NaN over nothing)."""
    conn = conn_of(db)
    rows = []
    for job_id, scorer, reducer, metric, value, scored, unscored, params, seq in conn.execute(
        "SELECT job_id, scorer, reducer, metric, value, scored, unscored, params, seq "
        "FROM run_results WHERE run_id = ? AND NOT (job_id != 0 AND scored = 0) ORDER BY job_id, seq, id",
        (run_id,),
    ):
        decoded = json.loads(params or "{}")
        # A reader that computed a headline the file does not record says so in params["computed"].
        computed = job_id == 0 and isinstance(decoded, dict) and bool(decoded.get("computed"))
        rows.append(ResultRow(job_id, scorer, reducer, metric, value, scored, unscored, decoded, seq, computed=computed))
    return rows


def list_failures(db: Db) -> list[FailureRow]:
    """Files that could not be read at their last attempt, by path."""
    conn = conn_of(db)
    return [FailureRow(*row) for row in conn.execute("SELECT path, error, at FROM ingest_failures ORDER BY path")]
