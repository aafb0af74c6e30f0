"""Scalars for runs that record per-sample scores but no metrics (an evtui JSONL run without a
`results` line, a run still being written): "computed" results, shown next to recorded ones.

They are what the groups screen's whole-run line computes (group_columns.py, else
groups.results_for_rows): an Inspect run's recorded scorers and metrics, EvSys's and AG2's own
aggregates, else each scorer's defaults (default_metrics.py). So a computed scalar drills down
(samples, groups, distribution of the run's own scores, job 0) like a recorded one.

Results are computed from columns (columns.py: value codes read straight from the index, epochs
folded with arrays, metrics over arrays); only a plugin metric or reducer that needs each
sample's score object, or values the columns do not cover (dicts, nulls), go through the
per-sample pipeline, and the run's notes say so. A scorer whose scores cannot be folded at all
gets a note naming it and why; the other scorers keep their numbers.

Results are kept in the index with the run's content stamp (store/computed_results.py), so they
are computed once however many screens or processes ask: one thread per run computes while the
others of the process wait for it, and another process that finds the run claimed waits for
the row. They are recomputed only when the run was re-read (its stamp changed), and for a run
being written at most every few times what the last computation cost (the numbers are running
values anyway), so refreshing the runs list stays cheap. With `cached_only`, nothing is
computed: the last numbers (possibly a little behind) come back at once.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from evtui.records import ResultRecord
from evtui.scoring.results.run_notes import RunNote


@dataclass
class Computed:
    """A run's computed results and how they were computed (notes: per-sample fallbacks, failures)."""

    results: list[ResultRecord] = field(default_factory=list)
    notes: list[RunNote] = field(default_factory=list)


@dataclass
class _Cached:
    stamp: str
    computed: Computed
    at: float  # unix time it was computed
    cost: float  # seconds it took


_cache: dict[tuple[str, int], _Cached] = {}
_lock = threading.Lock()
_computing: dict[tuple[str, int], threading.Lock] = {}  # one computation per run at a time in this process
_CACHE_RUNS = 256
MIN_AGE = 1.0  # seconds a changed run's numbers are kept at least …
COST_FACTOR = 4  # … or this many times what computing them cost, whichever is longer
_WAIT_STEP = 0.05  # seconds between looks at another process's claimed row
_NONE = Computed()


def computed_results(
    db: Any, run_id: int, stamp: tuple[Any, ...] | None = None, *, cached_only: bool = False, fresh: bool = False
) -> list[ResultRecord]:
    """The run's metrics computed from its recorded scores (empty when it records metrics or no scores).

    `fresh`: recompute whenever the run changed (else a run changing all the time is recomputed
    at most every max(MIN_AGE, COST_FACTOR × cost) seconds)."""
    return computed_run(db, run_id, stamp, cached_only=cached_only, fresh=fresh).results


def computed_run(
    db: Any, run_id: int, stamp: tuple[Any, ...] | None = None, *, cached_only: bool = False, fresh: bool = False,
    _stored: Any = None,
) -> Computed:
    """computed_results with the notes on how they were computed."""
    from evtui.store import computed_results as persisted
    from evtui.store.run_content import runs_without_metrics

    if stamp is None:
        stamp = runs_without_metrics(db, [run_id]).get(run_id)
        if stamp is None:
            return _NONE
    stamp_text = persisted.stamp_text(stamp)
    key = (_db_name(db), run_id)

    def usable(cached: _Cached | None) -> bool:
        if cached is None:
            return False
        recent = time.time() - cached.at < max(MIN_AGE, COST_FACTOR * cached.cost)
        return cached.stamp == stamp_text or cached_only or (recent and not fresh)

    with _lock:
        cached = _cache.get(key)
    if usable(cached):
        return cached.computed
    stored = _stored if _stored is not None else _read_stored(db, run_id)
    if usable(stored):
        _remember(key, stored)
        return stored.computed
    if cached_only:
        return _NONE
    with _lock:
        running = _computing.setdefault(key, threading.Lock())
    with running:  # another thread computing the same run: its numbers, once done
        with _lock:
            cached = _cache.get(key)
        if cached is not None and cached.stamp == stamp_text:
            return cached.computed
        waited = time.monotonic()
        while True:
            try:
                state = persisted.claim(db, run_id, stamp_text)
            except sqlite3.Error:
                state = "unwritable"  # computed in memory: the numbers matter more than keeping them
            if state == "done":
                stored = _read_stored(db, run_id)
                if stored is not None and stored.stamp == stamp_text:
                    _remember(key, stored)
                    return stored.computed
            if state != "busy" or time.monotonic() - waited > persisted.CLAIM_STALE:
                break
            time.sleep(_WAIT_STEP)  # another process computes these very numbers: wait for its row
        started = time.monotonic()
        try:
            computed = compute_run(db, run_id)
        except BaseException:
            if state == "claimed":
                try:
                    persisted.release(db, run_id)
                except sqlite3.Error:
                    pass
            raise
        cost = time.monotonic() - started
        if state == "claimed":
            try:
                persisted.store(db, run_id, stamp_text, computed.results, [{"level": n.level, "text": n.text} for n in computed.notes], cost)
            except sqlite3.Error:
                pass
        _remember(key, _Cached(stamp_text, computed, time.time(), cost))
        return computed


def _read_stored(db: Any, run_id: int) -> _Cached | None:
    from evtui.store import computed_results as persisted

    try:
        row = persisted.read(db, run_id)
    except sqlite3.Error:
        return None
    return _from_stored(row)


def _from_stored(row: Any) -> _Cached | None:
    if row is None or row.stamp is None:
        return None
    notes = [RunNote(note["text"], note["level"]) for note in row.notes]
    return _Cached(row.stamp, Computed(row.results, notes), row.computed_at or 0.0, row.cost or 0.0)


def _remember(key: tuple[str, int], cached: _Cached) -> None:
    with _lock:
        if key not in _cache and len(_cache) >= _CACHE_RUNS:
            _cache.pop(next(iter(_cache)))
        _cache[key] = cached


def computed_for_runs(db: Any, run_ids: list[int] | None = None, *, cached_only: bool = False) -> dict[int, list[ResultRecord]]:
    """computed_results for every run (of `run_ids`) that needs them."""
    from evtui.store import computed_results as persisted
    from evtui.store.run_content import runs_without_metrics

    needed = runs_without_metrics(db, run_ids)
    try:
        stored = persisted.read_many(db, list(needed))  # one query, not one per run
    except sqlite3.Error:
        stored = {}
    out = {}
    for run_id, stamp in needed.items():
        try:
            kept = _from_stored(stored.get(run_id))
            out[run_id] = computed_run(db, run_id, stamp, cached_only=cached_only, _stored=kept).results
        except Exception:  # noqa: BLE001 - a metric that refuses these scores leaves the run without a scalar
            out[run_id] = []
    return out


def computed_notes(db: Any, run_id: int) -> list[RunNote]:
    """How the run's computed results were computed (none for a run that records metrics)."""
    return list(computed_run(db, run_id).notes)


def listed_runs(db: Any, *, cached_only: bool = False) -> list[Any]:
    """Every run as the runs list shows it (store.queries.RunRow, newest first): a run that
    records scores but no metrics gets computed ones as its headline (`cached_only`: the last
    computed, at once; none where nothing was computed yet). The runs screen and `evtui runs`."""
    from dataclasses import replace

    from evtui.store.queries.runs import list_runs

    runs = list_runs(db)
    computed = computed_for_runs(db, cached_only=cached_only)
    return [replace(run, headline=computed_headline(computed[run.id])) if computed.get(run.id) else run for run in runs]


def computed_headline(results: list[ResultRecord]) -> tuple[Any, ...]:
    """The runs list's headline from computed results: the first scorer × reducer, marked computed."""
    from evtui.store.queries.runs import headline_of

    if not results:
        return ()
    first = (results[0].scorer, results[0].reducer)
    metrics = [(r.scorer, r.reducer, r.metric, r.value, r.scored) for r in results if (r.scorer, r.reducer) == first]
    return headline_of(metrics, computed=True)


def _db_name(db: Any) -> str:
    conn = getattr(db, "conn", db)
    row = conn.execute("PRAGMA database_list").fetchone()
    return str(row[2]) if row else ""


def compute_run(db: Any, run_id: int) -> Computed:
    """The run's computed results, from columns where they cover it (nothing kept or cached)."""
    from evtui.scoring.results.group_columns import plan_for, plan_results, result_records
    from evtui.scoring.results.groups import needs_sample_metadata
    from evtui.store import jobs

    run = jobs.run_info(db, run_id)
    names = jobs.recorded_score_names(db, run_id)
    if not names:
        return Computed()
    metadata = needs_sample_metadata(run, None)
    plan = plan_for(run, None, sample_metadata=metadata)
    notes: list[RunNote] = []
    if plan is not None:
        live = (_db_name(db), run_id) if run.get("status") == "started" else None
        read = _read_columns(db, run_id, names, plan, epochs=int(run.get("epochs") or 0) > 1, live=live)
        if isinstance(read, str):
            notes.append(RunNote.info(f"computed per sample: {read}"))
        else:
            results = plan_results(read, plan)
            if results is not None:
                return Computed(result_records(results.scores))
            notes.append(RunNote.info(f"computed per sample: {_declined(read, plan)}"))
    else:
        why = _per_sample_reason(run, metadata)
        if why:
            notes.append(RunNote.info(f"computed per sample: {why} needs each sample's score object"))
    rows = jobs.recorded_scores(db, run_id, names)
    return Computed(_per_sample(rows, run, names, notes), notes)


@dataclass
class _LiveColumn:
    """A run being written: a scorer's column as last read, to read only what was appended."""

    coded: Any  # score_columns.CodedColumn, with rowids
    epochs: bool
    count: int  # score rows read
    top: int | None  # the greatest score id among them


_live: dict[tuple[str, int], dict[str, _LiveColumn]] = {}
_LIVE_RUNS = 8


def _read_columns(
    db: Any, run_id: int, names: list[str], plan: Any, *, epochs: bool, live: tuple[str, int] | None = None
) -> dict[str, Any] | str:
    """Each scorer's ScoreColumn, or why the columns do not cover the run (said in its notes).
    `live` (a run being written): each column is kept in memory, and the next read takes only
    the samples appended since, unless a score already read was rewritten or removed."""
    from evtui.scoring.results.columns import column_of_codes
    from evtui.scoring.results.pipeline import _unique_names
    from evtui.store.transaction import read_snapshot

    if not plan.defaults:  # the recorded configuration's scorers only: other scores are not folded
        wanted = set(_unique_names([info.name for info in plan.scorers]))
        names = [name for name in names if name in wanted]
    with read_snapshot(db):  # every column from one state of the index, even while it is written
        columns = {}
        for name in names:
            try:
                coded = _coded(db, run_id, name, epochs, live)
            except ValueError as error:
                return f"scorer {name!r}: {error}"
            column = column_of_codes(coded)
            if isinstance(column, str):
                return f"scorer {name!r} has {column}"
            columns[name] = column
        return columns


def _coded(db: Any, run_id: int, name: str, epochs: bool, live: tuple[str, int] | None) -> Any:
    from evtui.store.queries.score_columns import coded_column, rows_up_to

    if live is None:
        return coded_column(db, run_id, name, sample_ids=epochs)
    with _lock:
        kept = _live.get(live, {}).get(name)
    coded = None
    if kept is not None and kept.epochs == epochs and len(kept.coded.rowids):
        last = int(kept.coded.rowids[-1])
        if rows_up_to(db, run_id, name, last) == (kept.count, kept.top):
            coded = kept.coded.then(coded_column(db, run_id, name, sample_ids=epochs, rowids=True, after=last))
    if coded is None:
        coded = coded_column(db, run_id, name, sample_ids=epochs, rowids=True)
    top = rows_up_to(db, run_id, name, int(coded.rowids[-1]))[1] if len(coded.rowids) else None
    with _lock:
        if live not in _live and len(_live) >= _LIVE_RUNS:
            _live.pop(next(iter(_live)))
        _live.setdefault(live, {})[name] = _LiveColumn(coded, epochs, len(coded.codes), top)
    return coded


def _declined(columns: dict[str, Any], plan: Any) -> str:
    """Why the columns declined a run they could read, in words (the run's note)."""
    from evtui.scoring.results.columns import default_infos, mean_is_exact, uncovered_metric

    for name, column in columns.items():
        if column.sample_ids is not None and not mean_is_exact(column.floats):
            return f"scorer {name!r}: epochs whose mean needs exact fractions"
    why = uncovered_metric(default_infos(columns) if plan.defaults else plan.scorers, plan.reducers)
    return f"{why} needs each sample's score object" if why else "the columns declined these scores"


def _per_sample_reason(run: dict[str, Any], metadata: bool) -> str | None:
    """Why group_columns.plan_for sent the run to the per-sample path, when it is a configuration
    (None for EvSys and AG2, which fold their own way)."""
    from evtui.scoring.results.columns import uncovered_metric
    from evtui.scoring.results.recorded import reducers_from_config, scorer_infos_from_config

    if metadata:
        return "a metric that reads sample metadata (grouped)"
    config = run.get("config") or {}
    if not (str(run.get("format", "")).startswith("inspect") and config.get("scorers")):
        return None
    if config.get("metrics"):
        return "the task's own metrics"
    try:
        return uncovered_metric(scorer_infos_from_config(config), reducers_from_config(config))
    except Exception as error:  # noqa: BLE001 - the per-sample path meets the same error and says it
        return f"a metric or reducer ({type(error).__name__}: {error})"


def _per_sample(rows: list[dict[str, Any]], run: dict[str, Any], names: list[str], notes: list[RunNote]) -> list[ResultRecord]:
    """groups.results_for_rows; when that fails, each scorer on its own, and a note naming each
    scorer whose scores cannot be folded (the others keep their numbers)."""
    from evtui.scoring.results.groups import results_for_rows

    try:
        return results_for_rows(rows, run)
    except Exception:  # noqa: BLE001 - find which scorer, below
        pass
    from evtui.scoring.results.group_columns import result_records
    from evtui.scoring.results.groups import _by_scorer
    from evtui.scoring.results.recorded import results_from_recorded

    config = run.get("config") or {}
    declared = str(run.get("format", "")).startswith("inspect") and config.get("scorers")
    kept: list[ResultRecord] = []
    for name in names:
        own = [row for row in rows if row["scorer"] == name]
        try:
            if declared:  # the recorded configuration reports every scorer: keep this one's
                results = results_from_recorded(_by_scorer(own), config).scores
                kept += result_records([result for result in results if result.scorer == name])
            else:
                kept += results_for_rows(own, run)
        except Exception as error:  # noqa: BLE001 - said in the run's notes
            notes.append(RunNote.warning(f"scorer {name!r}: its scores could not be folded ({type(error).__name__}: {error})"))
    return kept


def listed_results(db: Any, run_id: int) -> list[Any]:
    """The run's result rows as the run screen and `evtui report` list them: the metrics computed
    from its scores when it records none (marked `computed`), then its recorded and job rows."""
    from evtui.store.queries.runs import ResultRow, run_results

    computed = [
        ResultRow(0, r.scorer, r.reducer, r.metric, r.value, r.scored, r.unscored, dict(r.params), seq, computed=True)
        for seq, r in enumerate(computed_results(db, run_id))
    ]
    return computed + run_results(db, run_id)
