"""Metrics per group: the whole run reproduces the recorded scalars, and each group's numbers are
what the run's metrics give on that group's samples alone."""

from __future__ import annotations

import math
import shutil
import statistics
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from evtui.scoring.jobs.runner import run_job
from evtui.scoring.jobs.config import ScoringJobConfig
from evtui.scoring.results.groups import ALL_GROUP, group_table
from evtui.store import queries as q
from evtui.store.ingest.files import ingest_paths
from evtui.store.queries.groups import Grouping
from evtui.store.schema import connect

DATA = Path(__file__).parent / "data"
EVSYS_ARM = DATA / "evsys" / ".evsys" / "2026-11-20_14-03-12_prompt-ablation" / "cot__s0"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    logs = tmp_path_factory.mktemp("logs")
    for name in ("qa_match.eval", "mc_epochs.eval", "dict_unscored.eval"):
        shutil.copy2(DATA / "inspect" / name, logs / name)
    shutil.copy2(DATA / "ag2" / "weather-schema-02.json", logs / "weather.json")
    shutil.copytree(EVSYS_ARM, logs / ".evsys" / "x_prompt-ablation" / "cot__s0")
    db_path = logs / "index.db"
    assert ingest_paths(db_path, [logs]).failures == []
    db = connect(db_path)
    ids = {}
    for run_id, path in db.execute("SELECT id, path FROM runs"):
        parts = Path(path).parts
        ids["evsys/" + parts[-2] if parts[-1] == "rollouts.jsonl" else parts[-1]] = run_id
    db.conn.close()
    return db_path, ids, logs


def values(results) -> dict[tuple[str, str | None, str], float | None]:
    return {(r.scorer, r.reducer, r.metric): r.value for r in results}


def recorded(db_path: Path, run_id: int) -> dict[tuple[str, str | None, str], float | None]:
    db = connect(db_path)
    try:
        return values(r for r in q.run_results(db, run_id) if r.job_id == 0)
    finally:
        db.conn.close()


@pytest.mark.parametrize("run", ["qa_match.eval", "mc_epochs.eval", "dict_unscored.eval", "weather.json", "evsys/test", "evsys/val"])
def test_the_whole_run_line_reproduces_the_recorded_scalars(index, run):
    db_path, ids, _ = index
    table = group_table(db_path, ids[run])
    whole = table.groups[0]
    assert whole.is_all and whole.label == ALL_GROUP and whole.error is None
    expected = recorded(db_path, ids[run])
    assert expected
    assert values(whole.results) == pytest.approx(expected)


def test_a_metadata_group_gets_accuracy_and_stderr_of_its_own_samples(index):
    db_path, ids, logs = index
    table = group_table(db_path, ids["qa_match.eval"], Grouping("metadata", "category"))
    log = read_eval_log(str(logs / "qa_match.eval"))
    for group in table.groups[1:]:
        # By hand: C = 1, I = 0; Inspect's stderr is the sample std (n - 1) over sqrt(n).
        scores = [1.0 if s.scores["match"].value == "C" else 0.0 for s in log.samples if s.metadata["category"] == group.label]
        got = values(group.results)
        assert group.rows == group.samples == len(scores)
        assert got[("match", None, "accuracy")] == pytest.approx(sum(scores) / len(scores))
        assert got[("match", None, "stderr")] == pytest.approx(statistics.stdev(scores) / math.sqrt(len(scores)))
    assert [g.label for g in table.groups] == [ALL_GROUP, "geo", "math"]


def test_an_epoch_group_reduces_only_that_epoch(index):
    db_path, ids, logs = index
    table = group_table(db_path, ids["mc_epochs.eval"], Grouping("epoch"))
    log = read_eval_log(str(logs / "mc_epochs.eval"))
    for group in table.groups[1:]:
        scores = [1.0 if s.scores["choice"].value == "C" else 0.0 for s in log.samples if s.epoch == group.value]
        got = values(group.results)
        assert got[("choice", "mean", "accuracy")] == pytest.approx(sum(scores) / len(scores))
        # pass_at_2 needs two epochs: with one, Inspect's reducer gives NaN (shown as no value).
        assert got[("choice", "pass_at_2", "accuracy")] is None


def test_evsys_groups_use_the_reward_metrics_over_tasks(index):
    db_path, ids, logs = index
    table = group_table(db_path, ids["evsys/test"], Grouping("metadata", "toolkit"))
    db = connect(db_path)
    rows = db.execute(
        "SELECT s.sample_id, json_extract(s.metadata, '$.toolkit'), sc.value_num FROM samples s "
        "JOIN scores sc ON sc.sample_rowid = s.id WHERE s.run_id = ?",
        (ids["evsys/test"],),
    ).fetchall()
    db.conn.close()
    for group in table.groups[1:]:
        tasks: dict[str, list[float]] = {}
        for sample_id, toolkit, reward in rows:
            if toolkit == group.value:
                tasks.setdefault(sample_id, []).append(reward)
        got = values(group.results)
        # mean_reward: the mean over tasks of each task's mean reward (EvSys's macro mean).
        assert got[("reward", None, "mean_reward")] == pytest.approx(statistics.mean(statistics.mean(t) for t in tasks.values()))
        assert got[("reward", None, "pass_rate")] == pytest.approx(
            sum(r >= 1.0 for t in tasks.values() for r in t) / sum(len(t) for t in tasks.values())
        )


def test_groups_of_an_evtui_job_use_the_job_metrics(index, tmp_path):
    db_path, ids, _ = index
    work = tmp_path / "index.db"
    shutil.copy2(db_path, work)
    run_id = ids["qa_match.eval"]
    result = run_job(work, ScoringJobConfig(scorers=["includes()"], metrics=["mean"]), [run_id])
    table = group_table(work, run_id, Grouping("metadata", "category"), job_id=result.job_id)
    db = connect(work)
    job_results = values(r for r in q.run_results(db, run_id) if r.job_id == result.job_id)
    db.conn.close()
    assert values(table.groups[0].results) == pytest.approx(job_results)
    assert {key[2] for key in job_results} == {"mean"}
    assert all(values(g.results).keys() == job_results.keys() for g in table.groups[1:])


def test_groups_arrive_one_by_one_after_their_sizes(index):
    from evtui.scoring.results.groups import iter_group_table

    db_path, ids, _ = index
    items = list(iter_group_table(db_path, ids["qa_match.eval"], Grouping("metadata", "category")))
    skeleton, *done = items
    assert [g.label for g in skeleton.groups] == [ALL_GROUP, "geo", "math"]
    assert all(g.pending and not g.results for g in skeleton.groups)
    assert [position for position, _ in done] == [1, 2, 0]  # the whole run last
    assert all(not result.pending and result.results for _, result in done)


def test_only_the_largest_groups_are_computed(index):
    db_path, ids, _ = index
    table = group_table(db_path, ids["qa_match.eval"], Grouping("metadata", "key"), max_groups=5)
    assert len(table.groups) == 1 + 5 and table.hidden == 12 - 5
    assert table.groups[0].rows == 12  # the whole run still counts every sample


def test_a_big_run_shows_its_stored_scalars_on_the_whole_run_line(index, monkeypatch, tmp_path):
    from evtui.scoring.results import groups as group_metrics

    db_path, ids, _ = index
    work = tmp_path / "index.db"
    shutil.copy2(db_path, work)
    db = connect(work)
    # A stored value no recomputation gives: the line must be read, not recomputed.
    db.conn.execute(
        "UPDATE run_results SET value = 0.125 WHERE run_id = ? AND job_id = 0 AND scorer = 'match' AND metric = 'accuracy'",
        (ids["qa_match.eval"],),
    )
    # Recorded results change only when the run is read again, which renews its content stamp
    # (the groups an earlier test computed are kept in the index under the old one).
    db.conn.execute("UPDATE runs SET indexed_at = 'read again' WHERE id = ?", (ids["qa_match.eval"],))
    db.conn.close()
    monkeypatch.setattr(group_metrics, "STORED_WHOLE_RUN_ABOVE", 5)  # qa_match has 24 scores
    table = group_table(work, ids["qa_match.eval"], Grouping("metadata", "category"))
    assert values(table.groups[0].results)[("match", None, "accuracy")] == 0.125
    assert values(table.groups[1].results)[("match", None, "accuracy")] == pytest.approx(0.5)  # geo, computed
