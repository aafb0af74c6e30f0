"""A grading job killed mid-way (SIGKILL, nothing flushed on the way out) loses only the requests
in flight: running it again finishes it without asking the grader twice for the rest."""

from __future__ import annotations

import collections
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from evtui.store import grader_cache, jobs
from evtui.store.schema import connect
from tests.grader_server import GraderServer

DATA = Path(__file__).parent / "data"
CONCURRENCY = 2


def evtui_score(logs: Path, index: Path, server: GraderServer, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "evtui", "score", str(logs), "--db", str(index), "--grader-url", server.base_url,
        "--grader-model", "judge", "--concurrency", str(CONCURRENCY), "--json", *extra,
    ]


def test_a_killed_grading_job_resumes_and_asks_again_only_what_was_in_flight(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(DATA / "inspect" / "qa_match.eval", logs / "qa_match.eval")  # 12 samples
    index = tmp_path / "index.db"
    with GraderServer(delay=0.15, default_reply="The answer holds.\nGRADE: C") as server:
        job = subprocess.Popen(evtui_score(logs, index, server, "--scorer", "model_graded_qa()"),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while len(server.requests) - server.in_flight < 6:  # half the samples answered
            assert job.poll() is None, f"the job ended early: {job.stderr.read().decode()}"
            assert time.monotonic() < deadline, "the grader never got 6 requests"
            time.sleep(0.01)
        # From now on the grader holds new requests, so what is in flight at the kill is known;
        # replies already under way arrive within 0.15 s and are written 50 ms later.
        server.script.delay = 60.0
        time.sleep(1.0)
        job.kill()
        job.wait(timeout=30)
        answered_before_kill = len(server.requests) - server.in_flight

        db = connect(index)
        try:
            cached = grader_cache.count(db)
            (job_row,) = db.execute("SELECT id, status FROM scoring_jobs").fetchall()
        finally:
            db.conn.close()
        assert job_row[1] == "running"  # as a killed process leaves it
        assert cached >= answered_before_kill - CONCURRENCY

        server.script.delay = 0.0
        finished = subprocess.run(evtui_score(logs, index, server, "--job", str(job_row[0])),
                                  capture_output=True, text=True, timeout=300)
        assert finished.returncode == 0, finished.stderr
        result = json.loads(finished.stdout)
        assert result["status"] == "done" and result["scored"] == result["total"] == 12 and result["errors"] == 0

    asked = collections.Counter(request.prompt for request in server.requests)
    assert len(asked) == 12  # every sample was graded
    asked_twice = [prompt for prompt, times in asked.items() if times > 1]
    assert len(asked_twice) <= CONCURRENCY  # only what was in flight when the job died
    db = connect(index)
    try:
        run_id = jobs.run_ids_under(db, [logs])[0]
        assert len(jobs.job_scores(db, run_id, job_row[0])) == 12
    finally:
        db.conn.close()
