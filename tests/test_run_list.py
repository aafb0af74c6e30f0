"""The runs list a user narrows and orders (issue 30): runs told apart by name, times, task
arguments, tags and epochs; filtered by task, model, status and words; sorted by any column."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from evtui.store.ingest.files import ingest_paths
from evtui.store.queries.run_list import RUN_SORTS, filter_runs, parse_run_filter, run_args_text, run_name, run_tags_text, sort_runs
from evtui.store.queries.runs import list_runs
from evtui.store.schema import connect

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture
def runs(tmp_path):
    logs = tmp_path / "logs"
    shutil.copytree(DATA / "inspect_reruns", logs / "reruns")
    shutil.copytree(DATA / "terminal_bench", logs / "terminal_bench")
    shutil.copytree(DATA / "verifiers", logs / "verifiers")
    shutil.copytree(DATA / "evsys", logs / "evsys")
    shutil.copy2(DATA / "inspect" / "cancelled.eval", logs / "cancelled.eval")
    db_path = tmp_path / "index.db"
    ingest_paths(db_path, [logs])
    db = connect(db_path)
    try:
        yield list_runs(db)
    finally:
        db.conn.close()


def test_re_runs_of_one_task_differ_by_their_recorded_args_tags_epochs_and_times(runs):
    reruns = {Path(run.path).name: run for run in runs if run.task == "arith_reruns"}
    assert sorted(reruns) == ["rerun_a.eval", "rerun_b.eval", "rerun_c.eval", "rerun_d.json"]
    for name, run in reruns.items():
        log = read_eval_log(str(DATA / "inspect_reruns" / name), header_only=True)
        assert run_args_text(run) == ", ".join(f"{k}={v}" for k, v in log.eval.task_args.items())
        assert run_tags_text(run) == ", ".join(log.eval.tags or [])
        assert run.epochs == log.eval.config.epochs
        assert run.created == log.eval.created and run.completed_at == log.stats.completed_at
    assert run_args_text(reruns["rerun_b.eval"]) == "shots=3" and run_tags_text(reruns["rerun_b.eval"]) == "gpu, nightly"
    assert reruns["rerun_c.eval"].epochs == 2
    assert run_tags_text(reruns["rerun_d.json"]) == ""  # no tags: nothing, not "[]"


def test_folder_format_runs_are_named_by_their_job_and_run_folders_not_results_json(runs):
    names = sorted(run_name(run.path, run.part) for run in runs if run.format in ("terminal_bench", "verifiers"))
    assert names == [
        "evtui-arith--scripted--tiny/1faf9f36", "evtui-tools--scripted--tiny/4abf958a",  # verifiers 0.1.5
        "evtui-tools--scripted--tiny/5aa9e983",  # verifiers 0.1.3 (issue 28's fixtures)
        "runs/2026-11-25__08-30-00", "runs/2026-11-25__09-00-00",
        "v04/evtui-arith-v1--scripted--tiny--null--7d16d652",
    ]
    assert all(not name.startswith("results") for name in names)
    assert run_name("/logs/a/qa_match.eval") == "qa_match.eval"  # a file named for its run keeps its name
    assert run_name("/j/job-1/result.json", "oracle__adhoc") == "j/job-1 · oracle__adhoc"


def test_evsys_runs_are_named_by_their_run_folder_and_split(runs):
    """Every EvSys run is a `rollouts.jsonl` under `logs/<split>/`: named by the run and the split."""
    names = sorted(run_name(run.path, run.part) for run in runs if run.format == "evsys")
    assert names, "the fixture folder holds EvSys runs"
    assert len(set(names)) == len(names)
    assert "baseline__s0/test" in names and "cot__s1/val" in names
    assert not any("rollouts" in name or "logs" in name for name in names)


def test_filter_by_task_model_status_and_words(runs):
    assert {run.task for run in filter_runs(runs, "task:ARITH_re")} == {"arith_reruns"}
    assert [Path(r.path).name for r in filter_runs(runs, "status:cancel")] == ["cancelled.eval"]
    assert {r.model for r in filter_runs(runs, "model:gpt-4.1")} == {"openai/gpt-4.1-mini"}
    assert sorted(Path(r.path).name for r in filter_runs(runs, "nightly")) == ["rerun_a.eval", "rerun_b.eval"]
    assert sorted(Path(r.path).name for r in filter_runs(runs, "nightly gpu")) == ["rerun_b.eval"]  # every word
    assert sorted(Path(r.path).name for r in filter_runs(runs, "task:arith shots=3")) == ["rerun_b.eval", "rerun_c.eval"]
    assert filter_runs(runs, "   ") == runs and filter_runs(runs, 'task:"unclosed') == []
    assert parse_run_filter("model:").model == ()  # an empty field filters nothing


def test_sort_by_every_column_puts_unknown_values_last_in_either_direction(runs):
    for column in RUN_SORTS:
        for descending in (False, True):
            ordered = sort_runs(runs, column, descending)
            assert sorted(run.id for run in ordered) == sorted(run.id for run in runs)
            keys = [RUN_SORTS[column](run) for run in ordered]
            known = [key for key in keys if key is not None]
            assert keys == known + [None] * (len(keys) - len(known)), column
            assert known == sorted(known, reverse=descending), column
    by_epochs = [run.epochs for run in sort_runs(runs, "epochs", True) if run.task == "arith_reruns"]
    assert by_epochs == [2, 1, 1, 1]
