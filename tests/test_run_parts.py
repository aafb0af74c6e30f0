"""Several runs read from one file (issue 17): a Harbor job is a run per `evals` key, an lm-eval
results file also holds the run of each task whose samples file is missing. The index keys runs
by (path, part); ids survive a re-read; an index of the previous version opens and reads them."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from evtui.store.ingest.files import ingest_paths
from evtui.store.queries import get_run, list_runs, run_results
from evtui.store.schema import SCHEMA_VERSION, connect
from tests.old_index import write_old_index

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).parent.parent
TWO_AGENTS = DATA / "harbor" / "jobs" / "two-agents"
HARBOR_RESULT = json.loads((TWO_AGENTS / "result.json").read_text())
LM_EVAL = DATA / "lm_eval" / "evtui__scripted-tiny"
LM_RESULTS = next(LM_EVAL.glob("results_*.json"))
LM_TS = LM_RESULTS.name[len("results_") : -len(".json")]
LM_RECORDED = json.loads(LM_RESULTS.read_text())


def evtui(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "evtui", *args], capture_output=True, text=True, timeout=300, env=env)


def _job(tmp_path: Path) -> Path:
    job = tmp_path / "jobs" / "two-agents"
    shutil.copytree(TWO_AGENTS, job)
    return job


def _indexed_job(tmp_path: Path) -> tuple[Path, Path]:
    """The two-agents job copied under `tmp_path` and indexed: (job folder, index path)."""
    job = _job(tmp_path)
    db_path = tmp_path / "index.db"
    ingest_paths(db_path, [job])
    return job, db_path


def _runs_by_part(db_path: Path) -> dict[str, object]:
    db = connect(db_path)
    try:
        return {run.part: run for run in list_runs(db)}
    finally:
        db.conn.close()


def test_a_job_of_two_agents_is_a_run_per_evals_key_with_harbors_numbers(tmp_path: Path) -> None:
    job = _job(tmp_path)
    db_path = tmp_path / "index.db"
    report = ingest_paths(db_path, [job])
    assert report.failures == []
    evals = HARBOR_RESULT["stats"]["evals"]
    assert sorted(f.part for f in report.files) == sorted(evals)
    db = connect(db_path)
    try:
        runs = {run.part: run for run in list_runs(db)}
        assert set(runs) == set(evals)
        for key, stats in evals.items():
            run = runs[key]
            assert run.path == str(job / "result.json")
            agent, *model, _dataset = key.split("__")
            assert run.model == (model[0] if model else agent)
            assert run.task == "two-agents"  # an adhoc dataset: the job's name
            recorded = {(r.scorer, r.metric): r.value for r in run_results(db, run.id) if r.recorded}
            metrics = stats["metrics"][0]
            expected = {("reward", "mean"): metrics["mean"]} | {
                ("reward", f"pass@{k}"): value for k, value in stats["pass_at_k"].items()
            }
            assert recorded == expected  # exactly Harbor's numbers for this key, none of the other's
            # The key's trials, as Harbor lists them under its rewards; ids are plain task names.
            trials = {name for names in stats["reward_stats"]["reward"].values() for name in names}
            rows = db.execute(
                "SELECT sample_id, detail_ref, json_extract(metadata, '$.evals_key') FROM samples WHERE run_id = ?",
                [run.id],
            ).fetchall()
            assert {row[1] for row in rows} == trials
            assert {row[2] for row in rows} == {None}  # the run names the key (below), not each sample
            assert {row[0] for row in rows} == {"hello-pass", "wrong-answer"}
            assert run.samples_indexed == stats["n_trials"]
            assert get_run(db, run.id).metadata["evals_key"] == key
    finally:
        db.conn.close()


def test_re_ingest_after_a_change_keeps_run_and_sample_ids(tmp_path: Path) -> None:
    job, db_path = _indexed_job(tmp_path)
    conn = sqlite3.connect(db_path)
    before = conn.execute("SELECT r.part, r.id, s.sample_id, s.id FROM runs r JOIN samples s ON s.run_id = r.id ORDER BY 1, 3").fetchall()
    conn.close()
    result = job / "result.json"
    result.write_text(result.read_text() + "\n")  # Harbor rewrote the job file
    report = ingest_paths(db_path, [job])
    assert {(f.part, f.change) for f in report.files} == {(p, "updated") for p in HARBOR_RESULT["stats"]["evals"]}
    conn = sqlite3.connect(db_path)
    after = conn.execute("SELECT r.part, r.id, s.sample_id, s.id FROM runs r JOIN samples s ON s.run_id = r.id ORDER BY 1, 3").fetchall()
    conn.close()
    assert after == before
    assert {(f.part, f.change) for f in ingest_paths(db_path, [job]).files} == {
        (p, "unchanged") for p in HARBOR_RESULT["stats"]["evals"]
    }


def test_an_lm_eval_task_without_its_samples_file_is_a_run_with_the_recorded_numbers(tmp_path: Path) -> None:
    out = tmp_path / "out" / LM_EVAL.name
    shutil.copytree(LM_EVAL, out)
    gone = out / f"samples_evtui_arith_{LM_TS}.jsonl"
    kept = gone.read_bytes()
    gone.unlink()
    db_path = tmp_path / "index.db"
    assert ingest_paths(db_path, [out]).failures == []
    db = connect(db_path)
    try:
        runs = {(Path(r.path).name, r.part): r for r in list_runs(db)}
        arith = runs[(LM_RESULTS.name, "evtui_arith")]
        assert (arith.task, arith.samples_indexed) == ("evtui_arith", 0)
        entry = LM_RECORDED["results"]["evtui_arith"]
        got = {r.params["key"]: r.value for r in run_results(db, arith.id)}
        assert got == {key: value for key, value in entry.items() if "," in key}  # lm-eval's numbers, exactly
        note = get_run(db, arith.id).metadata["missing"]
        assert f"samples_evtui_arith_{LM_TS}.jsonl is missing" in note and LM_RESULTS.name in note
        assert arith.samples_total == LM_RECORDED["n-samples"]["evtui_arith"]["effective"]
        # The tasks with their samples files are runs of those files, as before; the invocation stays one run.
        assert (f"samples_evtui_capitals_{LM_TS}.jsonl", "") in runs and (LM_RESULTS.name, "") in runs
    finally:
        db.conn.close()
    # The samples file comes back: the task is its run again, the results file's part goes.
    gone.write_bytes(kept)
    ingest_paths(db_path, [out])
    db = connect(db_path)
    try:
        parts = {(Path(r.path).name, r.part) for r in list_runs(db)}
    finally:
        db.conn.close()
    assert (LM_RESULTS.name, "evtui_arith") not in parts
    assert (gone.name, "") in parts


def test_an_index_of_version_6_opens_and_reads_the_job_as_a_run_per_key(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    _job(logs)
    shutil.copy2(DATA / "inspect" / "qa_match.eval", logs)
    db_path = tmp_path / "old.db"
    # As evtui 6 left it: the job as one run (its samples prefixed with the evals key).
    from evtui.readers import detect
    from evtui.readers.harbor import jobs as harbor

    write_old_index(db_path, 6, [logs], reader=lambda p: harbor.read(p) if p.name == "result.json" else detect.read_run(p))
    old = sqlite3.connect(db_path)
    inspect_id = old.execute("SELECT id FROM runs WHERE format = 'inspect_eval'").fetchone()[0]
    assert old.execute("SELECT count(*) FROM runs WHERE format = 'harbor'").fetchone()[0] == 1
    old.close()
    db = connect(db_path)  # migrated: the Inspect run keeps its id, the job run is there with part ''
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 12
    assert [r.part for r in list_runs(db) if r.format == "harbor"] == [""]
    db.conn.close()
    report = ingest_paths(db_path, [logs])
    assert report.failures == []
    runs = _runs_by_part(db_path)
    assert set(runs) == {"", *HARBOR_RESULT["stats"]["evals"]}
    assert runs[""].format == "inspect_eval" and runs[""].id == inspect_id
    assert {f.change for f in report.files if f.format == "inspect_eval"} == {"unchanged"}


def test_cli_ingest_report_and_export_name_the_parts(tmp_path: Path) -> None:
    job = _job(tmp_path)
    done = evtui("ingest", str(job), "--json")
    assert done.returncode == 0, done.stderr
    keys = sorted(HARBOR_RESULT["stats"]["evals"])
    assert sorted(r["part"] for r in json.loads(done.stdout)["runs"]) == keys
    text = evtui("ingest", str(job))
    assert f"result.json · {keys[0]}" in text.stdout
    report = evtui("report", str(job), "--json")
    assert report.returncode == 0, report.stderr
    entries = {run["part"]: run for run in json.loads(report.stdout)}
    assert sorted(entries) == keys
    for key, entry in entries.items():
        mean = HARBOR_RESULT["stats"]["evals"][key]["metrics"][0]["mean"]
        assert [(r["scorer"], r["metric"], r["value"]) for r in entry["results"]] == [("reward", "mean", mean)]
    exported = evtui("export", str(job), "--format", "csv")
    assert exported.returncode == 0, exported.stderr
    rows = list(csv.DictReader(io.StringIO(exported.stdout)))
    assert sorted({row["part"] for row in rows}) == keys
    assert len(rows) == sum(e["n_trials"] for e in HARBOR_RESULT["stats"]["evals"].values())


def test_a_verdict_on_one_part_is_not_a_verdict_on_the_other(tmp_path: Path) -> None:
    """Both agents ran task hello-pass (sample id and epoch alike): reviews name the run by file and part."""
    from evtui.store.review.ledger import sample_verdicts
    from evtui.store.review.writes import record_verdict

    job, db_path = _indexed_job(tmp_path)
    runs = _runs_by_part(db_path)
    oracle, scripted = runs["oracle__adhoc"].id, runs["scripted__fake/scripted-1__adhoc"].id
    db = connect(db_path)
    try:
        record_verdict(db, oracle, "reward", "hello-pass", 1, 0.0, reviewer="alice")
        assert [v.value for v in sample_verdicts(db, oracle, "reward", "hello-pass", 1)] == [0.0]
        assert sample_verdicts(db, scripted, "reward", "hello-pass", 1) == []
        assert db.execute("SELECT run_path FROM review_verdicts").fetchall() == [(f"{job / 'result.json'} · oracle__adhoc",)]
    finally:
        db.conn.close()


def test_a_sample_of_a_part_opens_its_trial_and_no_other_parts(tmp_path: Path) -> None:
    from evtui.readers.base import ReaderError
    from evtui.readers.detect import load_sample_detail
    from evtui.sample_view.view import load_sample_view

    job, db_path = _indexed_job(tmp_path)
    runs = _runs_by_part(db_path)
    db = connect(db_path)
    try:
        rowid, detail_ref = db.execute(
            "SELECT id, detail_ref FROM samples WHERE run_id = ? AND sample_id = 'hello-pass'", [runs["oracle__adhoc"].id]
        ).fetchone()
    finally:
        db.conn.close()
    view = load_sample_view(db_path, rowid)
    assert (view.run_part, view.transcript_note) == ("oracle__adhoc", None)
    assert view.file_record["result"]["trial_name"] == detail_ref
    with pytest.raises(ReaderError, match="belongs to 'oracle__adhoc'"):
        load_sample_detail("harbor", job / "result.json", detail_ref, "scripted__fake/scripted-1__adhoc")
