"""A run's metrics per group of samples: the same scalars the run reports, computed on each group.

"The same" means the same code path per format: an Inspect run's recorded scorers, reducers and
metrics (results_from_recorded), EvSys's reward metrics over tasks, AG2's feedback aggregates,
an evtui job's own configuration (run_results_for); runs that record no configuration (plain
JSONL) get the pipeline's defaults for unknown scorers (accuracy and stderr).

No Textual here: the groups screen calls `group_table` from a worker thread.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from evtui.gc_pause import gc_paused
from evtui.scoring.results.group_columns import iter_group_results, plan_for, result_records as _records, to_float_or_none as _float
from evtui.records import ResultRecord
from evtui.score_values import SampleScore, Score

__all__ = ["GroupResult", "GroupTable", "results_for_rows", "iter_group_table", "group_table", "ALL_GROUP", "MAX_GROUPS"]

ALL_GROUP = "(all)"
# Metrics are computed for at most this many groups (the largest): grouping a big run by sample
# id would otherwise run the pipeline once per sample, and the table is a bounded DataTable.
MAX_GROUPS = 500
# Above this many scores the whole-run line shows the run's stored results instead of recomputing.
STORED_WHOLE_RUN_ABOVE = 50_000


@dataclass(frozen=True)
class GroupResult:
    """One group's metrics; `error` says why they could not be computed (e.g. a metric refused)."""

    value: Any  # the group value as SQL returned it (None: samples without the key)
    label: str
    samples: int  # distinct sample ids in the group
    rows: int  # sample × epoch rows in the group
    results: tuple[ResultRecord, ...]
    error: str | None = None
    is_all: bool = False
    pending: bool = False  # not computed yet (iter_group_table yields it later)


@dataclass(frozen=True)
class GroupTable:
    """Everything the groups screen shows for one run, grouping and job."""

    run_id: int
    job_id: int
    grouping: Any  # store.queries.groups.Grouping
    groupings: tuple[Any, ...]  # every grouping the run offers
    groups: tuple[GroupResult, ...]  # the whole run first, then each group
    method: str  # how the metrics were computed, in words
    hidden: int = 0  # smaller groups left out (beyond the largest MAX_GROUPS)


def _sample_score(row: Mapping[str, Any], *, declared: bool = True) -> SampleScore:
    score = Score(row["value"], answer=row["answer"], explanation=row["explanation"], reason=row["reason"], metadata=row["metadata"])
    # scorer=None tells the pipeline no scorer declared this score, so it picks default metrics.
    scorer = row["scorer"] if declared else None
    return SampleScore(score=score, sample_id=row["sample_id"], sample_metadata=row["sample_metadata"], scorer=scorer)


def _by_scorer(rows: Sequence[Mapping[str, Any]], *, declared: bool = True) -> dict[str, list[SampleScore]]:
    by_scorer: dict[str, list[SampleScore]] = {}
    for row in rows:
        by_scorer.setdefault(row["scorer"], []).append(_sample_score(row, declared=declared))
    return by_scorer


def method_for(run: Mapping[str, Any], job_config: Mapping[str, Any] | None) -> str:
    """Which code path computes a run's metrics (said on screen so numbers are not a mystery)."""
    if job_config is not None:
        return "the evtui job's scorers, reducers and metrics"
    fmt = str(run.get("format", ""))
    config = run.get("config") or {}
    if fmt.startswith("inspect") and config.get("scorers"):
        return "the run's recorded scorers, reducers and metrics (Inspect)"
    if fmt == "evsys":
        return "the run's EvSys metrics over tasks"
    if fmt == "ag2":
        return "AG2's feedback aggregates"
    return "default metrics (accuracy or mean, and stderr, by value type): the run records none"


def results_for_rows(
    rows: Sequence[Mapping[str, Any]], run: Mapping[str, Any], job_config: Mapping[str, Any] | None = None
) -> list[ResultRecord]:
    """The run's metrics computed on `rows` only (score rows as store.jobs.job_scores returns them).

    `run` is store.jobs.run_info's dict; `job_config` the stored config of the evtui job whose
    scores `rows` are (None: the run's recorded scores)."""
    if job_config is not None:
        return _job_results(rows, run, job_config)
    fmt = str(run.get("format", ""))
    config = run.get("config") or {}
    if fmt.startswith("inspect") and config.get("scorers"):
        from evtui.scoring.results.recorded import results_from_recorded
        from evtui.scoring.results.recorded_checks import check_recorded_config, inspect_names

        # A metric or reducer defined in the task's code is left out (the run's notes name it).
        checked = check_recorded_config(config, inspect_names(config))
        return _records(results_from_recorded(_by_scorer(rows), checked.config).scores)
    if fmt == "evsys":
        return _evsys_results(rows, config)
    if fmt == "ag2":
        from evtui.scoring.ag2.feedback import aggregate_feedback, score_to_feedback

        return aggregate_feedback(
            score_to_feedback(row["scorer"], row["value"], answer=row["answer"], explanation=row["explanation"], metadata=row["metadata"])
            for row in rows
        )
    from evtui.scoring.results.default_metrics import default_scorer_infos
    from evtui.scoring.results.pipeline import compute_results

    by_scorer = _by_scorer(rows)
    return _records(compute_results(by_scorer, default_scorer_infos(by_scorer), scorer_names=list(by_scorer)).scores)


def _evsys_results(rows: Sequence[Mapping[str, Any]], config: Mapping[str, Any]) -> list[ResultRecord]:
    """EvSys metrics per scorer: rollouts of one task (sample id) in epoch (file) order."""
    from evtui.scoring.evsys import metrics as evsys

    names = [name for name in config.get("metrics") or ["mean_reward", "pass_rate"] if name != "n_tasks"]
    by_scorer: dict[str, dict[str, list[tuple[int, SampleScore]]]] = {}
    for row in rows:
        tasks = by_scorer.setdefault(row["scorer"], {})
        tasks.setdefault(str(row["sample_id"]), []).append((row["epoch"], _sample_score(row)))
    results: list[ResultRecord] = []
    for scorer, tasks in by_scorer.items():
        ordered = {task: [score for _, score in sorted(items, key=lambda item: item[0])] for task, items in tasks.items()}
        rewards = evsys.task_rewards_from_scores(ordered)
        for name in names:
            if evsys.metric_class(name) is None:
                continue
            results.append(ResultRecord(scorer=scorer, metric=name, value=_float(evsys.compute(name, rewards)), scored=len(rewards)))
    return results


def _job_results(rows: Sequence[Mapping[str, Any]], run: Mapping[str, Any], job_config: Mapping[str, Any]) -> list[ResultRecord]:
    from evtui.scoring.jobs.config import ScoringJobConfig
    from evtui.scoring.jobs.units import plan_units, run_results_for

    from evtui.store.jobs import JOB_EXTRA_KEYS

    stored = {key: value for key, value in job_config.items() if key not in JOB_EXTRA_KEYS}
    names = list(dict.fromkeys(row["scorer"] for row in rows))
    plan = plan_units(ScoringJobConfig.model_validate(stored), dict(run), names)
    return run_results_for(plan, [dict(row) for row in rows])


def _one(value, label, samples, count, rows, run, job_config, *, is_all: bool = False) -> GroupResult:
    try:
        results = tuple(results_for_rows(rows, run, job_config))
        error = None
    except Exception as exc:  # noqa: BLE001 - one group's failing metric must not hide the others
        results, error = (), f"{type(exc).__name__}: {exc}"
    return GroupResult(value, label, samples, count, results, error, is_all)


def needs_sample_metadata(run: Mapping[str, Any], job_config: Mapping[str, Any] | None) -> bool:
    """Only metrics like `grouped` read sample metadata; skipping it saves parsing every sample's."""
    return "grouped" in json.dumps([run.get("config"), job_config], default=str)


def iter_group_table(
    db_path: Path, run_id: int, grouping: Any | None = None, *, job_id: int = 0, max_groups: int = MAX_GROUPS,
    reviewed: bool = False,
) -> Iterator[GroupTable | tuple[int, GroupResult]]:
    """A run's metrics per group, as they are computed (own connection: call from one thread).

    Yields first the GroupTable with every group pending (sizes from SQL), then `(position,
    GroupResult)` as each group's metrics are done: the groups in order, the whole run (position
    0) last. Only the `max_groups` largest groups are kept (`hidden` counts the others).
    `grouping` None: the first the run offers (a metadata key if it has one). `reviewed`: the
    job's scores with hand reviews in place (store/queries/groups.py group_score_rows).

    The recorded scores' groups (job 0, without reviews) read nothing that changes before the run
    is read again: the finished table is kept in the index under the run's content stamp
    (store/computed_results.py), and the next ask for the same grouping yields it at once."""
    with gc_paused():  # a million score rows held: see evtui/gc_pause.py
        if job_id or reviewed:  # a job's scores change as it runs, reviews as people review: not kept
            yield from _iter_group_table(db_path, run_id, grouping, job_id=job_id, max_groups=max_groups, reviewed=reviewed)
            return
        yield from _kept_group_table(db_path, run_id, grouping, max_groups)


def _kept_group_table(db_path: Path, run_id: int, grouping: Any | None, max_groups: int) -> Iterator[GroupTable | tuple[int, GroupResult]]:
    """_iter_group_table of the recorded scores, from the index when it keeps this table for the
    run's current content, else computed and kept (the stamp read before: a run re-read meanwhile
    keeps them under the old stamp, which no later ask matches)."""
    from evtui.store import computed_results as kept
    from evtui.store.schema import connect

    kind = "groups " + json.dumps([None, None] if grouping is None else [grouping.kind, grouping.key]) + f" {max_groups}"
    db = connect(db_path)
    try:
        stamp = kept.content_stamps(db, [run_id]).get(run_id)
        found = kept.read_figures(db, kind, {run_id: (stamp, "")}) if stamp is not None else {}
    finally:
        db.conn.close()
    try:
        stored = _table_from_json(run_id, found[run_id]) if run_id in found else None
    except (KeyError, TypeError, ValueError):  # a row in a shape this evtui does not write: computed again
        stored = None
    if stored is not None:  # as computed: the sizes first, then each group, the whole run last
        yield replace(stored, groups=tuple(replace(group, results=(), error=None, pending=True) for group in stored.groups))
        for position in [*range(1, len(stored.groups)), 0]:
            yield position, stored.groups[position]
        return
    started = time.monotonic()
    table: GroupTable | None = None
    groups: list[GroupResult] = []
    for item in _iter_group_table(db_path, run_id, grouping, job_id=0, max_groups=max_groups, reviewed=False):
        if isinstance(item, GroupTable):
            table, groups = item, list(item.groups)
        else:
            groups[item[0]] = item[1]
        yield item
    if table is None or stamp is None or any(group.pending for group in groups):
        return
    try:
        figures = _table_json(replace(table, groups=tuple(groups)))
    except (TypeError, ValueError):  # a group value JSON cannot hold (bytes): not kept
        return
    db = connect(db_path)
    try:
        kept.store_figures(db, kind, {run_id: (stamp, "", figures)}, time.monotonic() - started)
    finally:
        db.conn.close()


def _table_json(table: GroupTable) -> Any:
    """A finished GroupTable as JSON text's objects (checked to read back: json.dumps raises here)."""
    groups = [[g.value, g.label, g.samples, g.rows, [r.model_dump() for r in g.results], g.error, g.is_all] for g in table.groups]
    figures = {
        "grouping": [table.grouping.kind, table.grouping.key], "groupings": [[g.kind, g.key] for g in table.groupings],
        "groups": groups, "method": table.method, "hidden": table.hidden,
    }  # fmt: skip
    json.dumps(figures, allow_nan=True)
    return figures


def _table_from_json(run_id: int, figures: dict[str, Any]) -> GroupTable:
    from evtui.store.queries.groups import Grouping

    groups = tuple(
        GroupResult(value, label, samples, rows, tuple(ResultRecord.model_construct(**r) for r in results), error, is_all)
        for value, label, samples, rows, results, error, is_all in figures["groups"]
    )
    return GroupTable(run_id, 0, Grouping(*figures["grouping"]), tuple(Grouping(*g) for g in figures["groupings"]), groups,
                      figures["method"], figures["hidden"])  # fmt: skip


def _iter_group_table(db_path: Path, run_id: int, grouping: Any | None, *, job_id: int, max_groups: int, reviewed: bool):
    from evtui.store import jobs
    from evtui.store.queries.groups import group_score_rows, group_sizes, grouping_options, run_sample_counts
    from evtui.store.queries.runs import run_results
    from evtui.store.schema import connect

    db = connect(db_path)
    try:
        run = jobs.run_info(db, run_id)
        job_config = None
        if job_id:
            job = jobs.get_job(db, job_id)
            if job is None:
                raise LookupError(f"no scoring job {job_id} in the index")
            job_config = job["config"]
        options = tuple(grouping_options(db, run_id))
        chosen = grouping if grouping is not None else options[0]
        sizes = group_sizes(db, run_id, chosen)
        samples, count = run_sample_counts(db, run_id)
        kept = sizes
        if len(sizes) > max_groups:
            largest = {id(size) for size in sorted(sizes, key=lambda size: -size.rows)[:max_groups]}
            kept = [size for size in sizes if id(size) in largest]
        whole = GroupResult(None, ALL_GROUP, samples, count, (), is_all=True, pending=True)
        pending = [GroupResult(size.value, size.label, size.samples, size.rows, (), pending=True) for size in kept]
        yield GroupTable(run_id, job_id, chosen, options, (whole, *pending), method_for(run, job_config), len(sizes) - len(kept))
        stored = [
            ResultRecord(scorer=r.scorer, reducer=r.reducer, metric=r.metric, value=r.value, scored=r.scored, unscored=r.unscored)
            for r in run_results(db, run_id)
            if r.job_id == job_id
        ]
        if not stored and not job_id and not reviewed and count > STORED_WHOLE_RUN_ABOVE:
            stored = _kept_computed(db, run_id)
        metadata = needs_sample_metadata(run, job_config)
        plan = plan_for(run, job_config, sample_metadata=metadata)
        if plan is not None:
            # Recorded Inspect scores with the basic reducer and metrics: columns, not objects.
            done = yield from _columnar_groups(db, run, run_id, chosen, kept, plan, samples, count, stored, job_id=job_id, reviewed=reviewed)
            if done:
                return
        rows = group_score_rows(db, run_id, chosen, job_id=job_id, sample_metadata=metadata, reviewed=reviewed)
    finally:
        db.conn.close()
    by_group: dict[Any, list[Mapping[str, Any]]] = {}
    for row in rows:
        by_group.setdefault(row["group"], []).append(row)
    for position, size in enumerate(kept, start=1):
        yield position, _one(size.value, size.label, size.samples, size.rows, by_group.get(size.value, []), run, job_config)
    if len(rows) > STORED_WHOLE_RUN_ABOVE and stored and not reviewed:
        # The run's own scalars are the whole-run line: recomputing a million scores would
        # double the wait for numbers the index already holds.
        yield 0, GroupResult(None, ALL_GROUP, samples, count, tuple(stored), is_all=True)
        return
    yield 0, _one(None, ALL_GROUP, samples, count, rows, run, job_config, is_all=True)


def _kept_computed(db: Any, run_id: int) -> list[ResultRecord]:
    """A run that records no metrics: its computed ones as the index keeps them for its current
    content (computed.py), which are the whole-run line as recorded ones are; none when they were
    not computed for this content yet (the line is computed with the groups then)."""
    import sqlite3

    from evtui.store import computed_results as kept
    from evtui.store.run_content import runs_without_metrics

    stamp = runs_without_metrics(db, [run_id]).get(run_id)
    try:
        row = kept.read(db, run_id)
    except sqlite3.Error:
        return []
    if stamp is None or row is None or row.stamp != kept.stamp_text(stamp):
        return []
    return list(row.results)


def _columnar_groups(db, run, run_id: int, chosen, kept, plan, samples: int, count: int, stored, *, job_id: int, reviewed: bool):
    """Yield _iter_group_table's results from columns (group_columns.py), in the same order, and
    return True; return False, having yielded nothing, when a grouping without an index has
    too many groups for one scan. A group whose values the columns do not cover (a dict value,
    say) is computed from rows, as before."""
    from evtui.store.queries.groups import group_score_rows

    # Score rows ≈ sample rows × scorers (the per-sample path counts the rows it read).
    whole = not (count * max(len({r.scorer for r in stored}), 1) > STORED_WHOLE_RUN_ABOVE and stored and not reviewed)
    results = iter_group_results(
        db, run_id, chosen, [size.value for size in kept], plan, job_id=job_id, reviewed=reviewed, epochs=count > samples, whole=whole
    )  # fmt: skip
    by_group: dict[Any, list[Mapping[str, Any]]] | None = None

    def from_rows(value: Any, *, everything: bool = False) -> list[Mapping[str, Any]]:
        nonlocal by_group
        if by_group is None:
            by_group = {}
            run_rows = group_score_rows(db, run_id, chosen, job_id=job_id, sample_metadata=False, reviewed=reviewed)
            by_group[ALL_GROUP] = run_rows
            for row in run_rows:
                by_group.setdefault(row["group"], []).append(row)
        return by_group[ALL_GROUP] if everything else by_group.get(value, [])

    position = 0
    while True:
        try:
            value, records = next(results)
        except StopIteration:
            break
        except ValueError:
            if position == 0:
                return False  # too many groups to scan for: the per-sample path
            raise
        position += 1
        if position <= len(kept):
            size = kept[position - 1]
            if records is None:
                yield position, _one(size.value, size.label, size.samples, size.rows, from_rows(size.value), run, None)
            else:
                yield position, GroupResult(size.value, size.label, size.samples, size.rows, tuple(records))
        elif records is None:
            yield 0, _one(None, ALL_GROUP, samples, count, from_rows(None, everything=True), run, None, is_all=True)
        else:
            yield 0, GroupResult(None, ALL_GROUP, samples, count, tuple(records), is_all=True)
    if not whole:
        yield 0, GroupResult(None, ALL_GROUP, samples, count, tuple(stored), is_all=True)
    return True


def group_table(
    db_path: Path, run_id: int, grouping: Any | None = None, *, job_id: int = 0, max_groups: int = MAX_GROUPS,
    reviewed: bool = False,
) -> GroupTable:
    """Every group's metrics at once (see iter_group_table)."""
    table: GroupTable | None = None
    groups: list[GroupResult] = []
    for item in iter_group_table(db_path, run_id, grouping, job_id=job_id, max_groups=max_groups, reviewed=reviewed):
        if isinstance(item, GroupTable):
            table, groups = item, list(item.groups)
        else:
            groups[item[0]] = item[1]
    assert table is not None
    return replace(table, groups=tuple(groups))
