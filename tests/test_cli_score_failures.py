"""`evtui score` when grading fails, as a user runs it: a real subprocess, the real loopback
grader (tests/grader_server.py) with faults injected, or a port with nothing listening (issue 11.2, 11.11)."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from grader_server import GraderServer

from evtui.sample_view.view import load_sample_view
from evtui.store import jobs
from evtui.store.location import default_index_path
from evtui.store.queries.paging import count_samples, page_samples
from evtui.store.schema import connect

DATA = Path(__file__).parent / "data" / "inspect"
SCORER = "model_graded_qa()"


def evtui(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evtui", *args], capture_output=True, text=True, timeout=300)


def _runs(tmp_path: Path, name: str = "model_graded.eval") -> Path:
    runs = tmp_path / "logs"
    runs.mkdir()
    shutil.copy(DATA / name, runs / name)
    return runs


def _dead_url() -> str:
    with GraderServer() as gone:
        return gone.base_url  # the port is closed again: connections are refused


def test_a_grader_unreachable_from_the_start_stops_the_job_at_once_with_the_reason(tmp_path):
    runs = _runs(tmp_path)
    url = _dead_url()
    host = url.split("//")[1].split("/")[0]
    started = time.monotonic()
    done = evtui("score", str(runs), "--scorer", SCORER, "--grader-url", url, "--grader-model", "x")
    took = time.monotonic() - started
    assert done.returncode == 1
    assert f"connection refused ({host})" in done.stderr and "could not be reached" in done.stderr
    assert "failed" in done.stderr
    assert took < 20  # before: 7 attempts with backoff for every sample, ~50 s
    db = connect(default_index_path(runs.resolve()))
    try:
        (job,) = jobs.list_jobs(db)
        assert job["status"] == "failed"
        (run_id,) = jobs.run_ids_under(db, [runs])
        assert jobs.job_scores(db, run_id, job["id"]) == []  # nothing stored: a resume grades every sample
    finally:
        db.conn.close()


def test_a_job_whose_every_request_failed_counts_them_unscored_and_exits_non_zero(tmp_path):
    runs = _runs(tmp_path)
    with GraderServer() as server:
        server.inject("400", times=99, message="no such model")
        host = server.base_url.split("//")[1].split("/")[0]
        text = evtui("score", str(runs), "--scorer", SCORER, "--grader-url", server.base_url, "--grader-model", "x")
        as_json = evtui("score", str(runs), "--scorer", SCORER, "--grader-url", server.base_url, "--grader-model", "x", "--json")
    assert text.returncode == 1 and as_json.returncode == 1
    assert f"0/5 scored, 5 unscored: HTTP 400 ({host})" in text.stdout
    assert "scored nothing" in text.stderr
    result = json.loads(as_json.stdout)
    assert (result["scored"], result["unscored"], result["unscored_reasons"]) == (0, 5, {f"HTTP 400 ({host})": 5})


def test_an_unscored_job_score_never_hides_the_logs_grade(tmp_path):
    runs = _runs(tmp_path)
    db_path = default_index_path(runs.resolve())
    with GraderServer() as server:
        server.inject("400", times=99)
        evtui("score", str(runs), "--scorer", SCORER, "--grader-url", server.base_url, "--grader-model", "x")
    db = connect(db_path)
    try:
        (run_id,) = jobs.run_ids_under(db, [runs])
        columns = ["model_graded_qa"]
        recorded = count_samples(db, run_id, 'model_graded_qa@log == "C"', score_columns=columns)
        assert recorded > 0
        # The filter, the list's cells and the sample view all take the log's grade.
        assert count_samples(db, run_id, 'model_graded_qa == "C"', score_columns=columns) == recorded
        page = page_samples(db, run_id, limit=10, score_columns=columns)
        rowids = [row.rowid for row in page.rows]
    finally:
        db.conn.close()
    for rowid in rowids:
        view = load_sample_view(db_path, rowid)
        (counts,) = [s for s in view.scores if s.score.scorer == "model_graded_qa" and s.effective]
        assert counts.origin == "recorded", counts


def test_an_interrupt_names_the_job_to_resume(tmp_path):
    runs = _runs(tmp_path)
    with GraderServer(delay=2.0) as server:
        process = subprocess.Popen(
            [sys.executable, "-m", "evtui", "score", str(runs), "--scorer", SCORER,
             "--grader-url", server.base_url, "--grader-model", "x"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        deadline = time.monotonic() + 60
        while not server.requests and time.monotonic() < deadline:  # the job is under way
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130
    assert "resume with --job 1" in stderr


def test_the_jobs_screen_headline_counts_unscored_samples_with_their_reason():
    from evtui.app.widgets.job_progress import progress_summary
    from evtui.scoring.jobs.config import JobProgress

    progress = JobProgress(job_id=6, status="done", done=5, total=5, errors=0, unscored={"connection refused (127.0.0.1:9)": 5})
    assert progress_summary(progress).startswith("job 6 · done · 0/5 scored · 5 unscored: connection refused (127.0.0.1:9)")


def _no_grader_env(**extra: str) -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVTUI_GRADER", "OPENAI_"))}
    return {**env, **extra}


def _jobs_in(runs: Path) -> list[dict]:
    db = connect(default_index_path(runs.resolve()))
    try:
        return jobs.list_jobs(db)
    finally:
        db.conn.close()


def test_a_graded_scorer_without_a_grader_model_is_refused_before_a_job_exists(tmp_path):
    """Issue 31 item 4: the job was made and ended `done · 0/5`, which report then listed as a result."""
    runs = _runs(tmp_path)
    done = subprocess.run([sys.executable, "-m", "evtui", "score", str(runs), "--scorer", SCORER], capture_output=True,
                          text=True, timeout=300, env=_no_grader_env())
    assert done.returncode == 2, done.stderr
    assert "no grader model: pass --grader-model" in done.stderr
    assert _jobs_in(runs) == []


def test_a_served_session_without_grading_refuses_a_graded_job_with_the_reason(tmp_path):
    from evtui.grading.settings import GRADING_OFF_ENV

    runs = _runs(tmp_path)
    done = subprocess.run([sys.executable, "-m", "evtui", "score", str(runs), "--scorer", SCORER, "--grader-model", "x"],
                          capture_output=True, text=True, timeout=300, env=_no_grader_env(**{GRADING_OFF_ENV: "1"}))
    assert done.returncode == 2 and "grading is off" in done.stderr
    assert _jobs_in(runs) == []


def test_report_never_shows_a_job_that_scored_nothing_as_a_result(tmp_path):
    runs = _runs(tmp_path)
    with GraderServer() as server:
        server.inject("400", times=99, message="no such model")
        scored = evtui("score", str(runs), "--scorer", SCORER, "--grader-url", server.base_url, "--grader-model", "x")
    assert scored.returncode == 1 and "scored nothing" in scored.stderr
    report = evtui("report", str(runs), "--json")
    assert report.returncode == 0, report.stderr
    (run,) = json.loads(report.stdout)
    assert run["results"] and all(result["source"] == "recorded" for result in run["results"]), run["results"]
