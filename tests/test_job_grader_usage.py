"""A scoring job records what its grader calls cost, and a warm cache costs nothing more."""

from __future__ import annotations

from evtui.store import jobs
from evtui.store.schema import connect
from tests.grader_server import GraderServer
from tests.scoring_job import index_copy, score


def _job_row(index, job_id):
    db = connect(index)
    try:
        return jobs.get_job(db, job_id)
    finally:
        db.conn.close()


def test_job_row_sums_fresh_grader_tokens_and_a_cached_rerun_adds_none(tmp_path):
    with GraderServer(default_reply="The answer matches.\nGRADE: C") as server:
        logs, index = index_copy(tmp_path, "inspect/qa_match.eval")
        grader = {"base_url": server.base_url, "model": "judge"}
        first, rows = score(index, logs, ["model_graded_qa()"], grader=grader)
        calls = len(server.requests)
        job = _job_row(index, first.job_id)
        usages = [row["metadata"]["grader_usage"] for row in rows]
        assert calls == len(rows) > 0
        assert job["grader_input_tokens"] == sum(u["input_tokens"] for u in usages) > 0
        assert job["grader_output_tokens"] == sum(u["output_tokens"] for u in usages) > 0
        assert job["grader_seconds"] > 0

        # A new job over the same samples is answered from the cache: no request, no new spend.
        second, _ = score(index, logs, ["model_graded_qa()"], grader=grader)
        assert len(server.requests) == calls
        again = _job_row(index, second.job_id)
        assert (again["grader_input_tokens"], again["grader_output_tokens"]) == (0, 0)
