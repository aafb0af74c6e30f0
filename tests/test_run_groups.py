"""Runs grouped by task or by eval set (issue 30, item 1): the runs screen's `g` and `evtui runs
--group-by`, both from store/queries/run_list.group_runs. An eval set is Inspect's (the logs of
one `eval_set()`, named by its folder), a Harbor job, an EvSys experiment or an lm-eval
invocation; runs made in none (Terminal-Bench, single Inspect logs) are `(no eval set)`, last.

Fixtures are the real frameworks' output: tests/data/inspect_logical/evalset (inspect_ai's
eval_set, scripts/make_logical_run_fixtures.py), harbor/ (make_harbor_fixtures.py), evsys/,
lm_eval/, inspect_reruns/, terminal_bench/.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from evtui.scoring.results.computed import listed_runs
from evtui.store.ingest.files import ingest_paths
from evtui.store.queries.run_list import NO_EVAL_SET, filter_runs, group_runs, sort_runs
from evtui.store.schema import connect

DATA = Path(__file__).resolve().parent / "data"
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    logs = tmp_path_factory.mktemp("groups") / "logs"
    shutil.copytree(DATA / "inspect_logical" / "evalset", logs / "evalset")
    shutil.copytree(DATA / "inspect_reruns", logs / "reruns")
    shutil.copytree(DATA / "harbor" / "jobs", logs / "harbor" / "jobs")
    shutil.copytree(DATA / "evsys", logs / "evsys")
    shutil.copytree(DATA / "lm_eval", logs / "lm_eval")
    shutil.copytree(DATA / "terminal_bench", logs / "terminal_bench")
    db_path = logs.parent / "index.db"
    report = ingest_paths(db_path, [logs])
    assert report.failures == []
    db = connect(db_path)
    try:
        runs = listed_runs(db)
    finally:
        db.conn.close()
    return logs, db_path, runs


def _by_name(groups):
    return {group.name: group for group in groups}


def test_an_inspect_eval_set_is_one_group_named_by_its_folder_holding_each_tasks_latest_attempt(indexed):
    logs, _, runs = indexed
    groups = _by_name(group_runs(runs, "eval-set"))
    evalset = groups["evalset"]
    # what inspect_ai itself reads from the logs: one set id, the two tasks of the manifest
    headers = [read_eval_log(str(path), header_only=True) for path in sorted((logs / "evalset").glob("*.eval"))]
    assert {h.eval.eval_set_id for h in headers} == {json.loads((logs / "evalset" / "eval-set.json").read_text())["eval_set_id"]}
    assert evalset.key == f"inspect:{headers[0].eval.eval_set_id}"
    assert sorted(run.task for run in evalset.runs) == sorted({h.eval.task for h in headers}) == ["flaky", "steady"]
    assert all(run.eval_set_name == "evalset" for run in evalset.runs)
    # the retried task shows once (its latest attempt), as the ungrouped list shows it
    assert next(run for run in evalset.runs if run.task == "flaky").attempts == 3


def test_harbor_jobs_evsys_experiments_and_lm_eval_invocations_are_eval_sets_the_rest_none(indexed):
    logs, _, runs = indexed
    groups = group_runs(runs, "eval-set")
    named = _by_name(groups)
    harbor = {run.id for run in runs if run.format == "harbor"}
    for job in ("two-agents", "multi-key", "binary-attempts"):  # a job per folder, its agents' runs inside
        config = json.loads((logs / "harbor" / "jobs" / job / "config.json").read_text())
        group = named[config.get("job_name") or job]
        assert {run.format for run in group.runs} == {"harbor"} and all(run.path.endswith(f"{job}/result.json") for run in group.runs)
    assert len(named["two-agents"].runs) == 2  # two agents × one dataset: two runs of one job
    assert sum(len(named[job].runs) for job in ("two-agents", "multi-key", "binary-attempts")) == len(harbor)

    evsys = named["prompt-ablation"]  # .evsys/2026-11-20_14-03-12_prompt-ablation/<arm>/logs/<split>
    assert {run.format for run in evsys.runs} == {"evsys"} and len(evsys.runs) == sum(r.format == "evsys" for r in runs)

    lm_eval = [group for group in groups if group.key.startswith("lm_eval:")]
    assert lm_eval and all({run.format for run in group.runs} == {"lm_eval"} for group in lm_eval)
    for group in lm_eval:  # one invocation: its results file and the task runs of its timestamp
        stamp = group.name.rsplit(" · ", 1)[1]
        assert any(Path(run.path).name == f"results_{stamp}.json" for run in group.runs)
        assert all(stamp in Path(run.path).name for run in group.runs)

    last = groups[-1]
    assert last.name == NO_EVAL_SET and last.key == ""
    assert {run.format for run in last.runs} == {"inspect_eval", "inspect_json", "terminal_bench"}
    assert sum(len(group.runs) for group in groups) == len(runs)  # every run in exactly one group


def test_groups_follow_the_sort_and_the_filter_and_runs_keep_their_order_inside(indexed):
    _, _, runs = indexed
    ordered = sort_runs(runs, "created", True)
    groups = group_runs(ordered, "task")
    flat = [run for group in groups for run in group.runs]
    assert sorted(r.id for r in flat) == sorted(r.id for r in ordered)
    for group in groups:  # each group's runs in the list's order
        assert [r.id for r in group.runs] == [r.id for r in ordered if r.id in {x.id for x in group.runs}]
    firsts = [ordered.index(group.runs[0]) for group in groups]
    assert firsts == sorted(firsts)  # groups in the order of their best-placed run
    assert groups[0].newest == max((r.created for r in ordered if r.created), key=lambda c: c)

    by_task = group_runs(sort_runs(runs, "task"), "task")
    assert [g.name for g in by_task] == sorted((g.name for g in by_task), key=str.lower)
    reruns = _by_name(group_runs(filter_runs(runs, "nightly"), "task"))
    assert list(reruns) == ["arith_reruns"] and sorted(Path(r.path).name for r in reruns["arith_reruns"].runs) == ["rerun_a.eval", "rerun_b.eval"]
    with pytest.raises(ValueError):
        group_runs(runs, "model")


def _evtui(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evtui", *args], capture_output=True, text=True, cwd=cwd, timeout=300,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HOME": str(cwd)})  # fmt: skip


def test_evtui_runs_group_by_prints_the_groups_the_screen_shows_and_json_has_every_run(indexed):
    logs, db_path, runs = indexed
    done = _evtui("runs", str(logs), "--db", str(db_path), "--group-by", "eval-set", "--json", cwd=logs.parent)
    assert done.returncode == 0, done.stderr
    listing = json.loads(done.stdout)
    want = group_runs(sort_runs(runs, "created", True), "eval-set")
    assert [(g["name"], g["key"], g["count"]) for g in listing["groups"]] == [(g.name, g.key, len(g.runs)) for g in want]
    assert [[r["id"] for r in g["runs"]] for g in listing["groups"]] == [[r.id for r in g.runs] for g in want]
    steady = next(r for g in listing["groups"] for r in g["runs"] if r["task"] == "steady")
    assert steady["eval_set"] == {"key": want[[g.name for g in want].index("evalset")].key, "name": "evalset"}
    assert steady["headline"][0]["metric"] == "accuracy" and steady["samples_total"] == 3

    done = _evtui("runs", str(logs), "--db", str(db_path), "--group-by", "task", "--sort", "task", "--filter", "task:arith", cwd=logs.parent)
    assert done.returncode == 0, done.stderr
    headers = [line for line in done.stdout.splitlines() if line.startswith("▼ ")]
    assert headers and all("arith" in line for line in headers)
    assert headers == sorted(headers, key=str.lower)
    assert any(line.startswith("▼ arith_reruns (4 runs, newest ") for line in headers)

    done = _evtui("runs", str(logs), "--db", str(db_path), "--group-by", "model", cwd=logs.parent)
    assert done.returncode == 2 and "--group-by" in done.stderr and "task" in done.stderr and "eval-set" in done.stderr


def test_evtui_runs_prints_hostile_names_inert(tmp_path):
    from hostile_strings import FORBIDDEN_CHARS

    logs = tmp_path / "logs"
    (logs / "set\x1b]0;PWN\x07[b]x").mkdir(parents=True)  # an eval-set folder named to attack
    for path in (DATA / "inspect_logical" / "evalset").iterdir():
        shutil.copy2(path, logs / "set\x1b]0;PWN\x07[b]x" / path.name)
    shutil.copy2(DATA / "inspect" / "hostile.eval", logs / "hostile.eval")  # hostile task and model names
    done = _evtui("runs", str(logs), "--group-by", "eval-set", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert not {char for char in done.stdout if char in FORBIDDEN_CHARS}
    assert "▼ set" in done.stdout and "(no eval set)" in done.stdout and "task:[@click" in done.stdout
