"""Review verdicts and queues on disk, on a model-graded log written by the real inspect-ai:
several reviewers, the effective-score policy, adjudication, undo, scale refusal, queues that
survive re-indexing, vanished samples, an index made before the review tables, two writers."""

from __future__ import annotations

import json
import sqlite3

import pytest

from evtui.store.ingest.files import ingest_paths
from evtui.store.queries import count_samples
from evtui.store.review.ledger import review_status, sample_verdicts
from evtui.store.review.policy import review_state
from evtui.store.review.queues import QueueError, Selection, create_queue, get_queue, list_queues, queue_items, resume_position, select_samples
from evtui.store.review.scale import ScaleError, review_scale
from evtui.store.review.writes import VanishedSampleError, record_verdict, reviewer_name, undo_verdict
from evtui.store.schema import SCHEMA_VERSION, connect
from evtui.store.score_edits import add_human_edit
from tests.fixture_index import INSPECT, ingested

SCORER = "model_graded_qa"


@pytest.fixture
def graded(tmp_path):
    db_path, db, run_id = ingested(tmp_path, "model_graded.eval")
    yield db_path, db, run_id
    db.conn.close()


def human_value(db, run_id, sample_id):
    row = db.execute(
        "SELECT h.value, h.reason FROM scores h JOIN samples s ON s.id = h.sample_rowid "
        "WHERE s.run_id = ? AND s.sample_id = ? AND h.source = 'human'", (run_id, sample_id)).fetchone()
    return None if row is None else (json.loads(row[0]), row[1])


def test_two_reviewers_disagree_then_an_adjudication_decides(graded):
    _, db, run_id = graded
    record_verdict(db, run_id, SCORER, "2", 1, "C", reviewer="alice", note="right answer", blind=True)
    assert human_value(db, run_id, "2") == ("C", "right answer")  # one reviewer: their verdict counts
    record_verdict(db, run_id, SCORER, "2", 1, "I", reviewer="bob", blind=True)
    state = review_state(sample_verdicts(db, run_id, SCORER, "2", 1))
    assert (state.status, state.value, state.reviewers) == ("disputed", None, {"alice": "C", "bob": "I"})
    # Disputed: the grade as graded stands (the judge said I), marked as disputed.
    assert human_value(db, run_id, "2") == ("I", "disputed")
    assert select_samples(db, run_id, SCORER, Selection(kind="disputed")) == [("2", 1)]

    record_verdict(db, run_id, SCORER, "2", 1, "C", reviewer="carol", kind="adjudication", note="Paris is right")
    state = review_state(sample_verdicts(db, run_id, SCORER, "2", 1))
    assert (state.status, state.value) == ("adjudicated", "C")
    assert human_value(db, run_id, "2") == ("C", "Paris is right")
    assert count_samples(db, run_id, filter=f'{SCORER} == "C" and id == "2"', score_columns=[SCORER]) == 1
    # Each reviewer keeps their own verdict; every verdict is one score_edits entry with provenance.
    history = sample_verdicts(db, run_id, SCORER, "2", 1)
    assert [(v.reviewer, v.kind, v.value, v.value_before, v.blind) for v in history] == [
        ("alice", "verdict", "C", "I", True), ("bob", "verdict", "I", "C", True), ("carol", "adjudication", "C", "I", False),
    ]
    edits = db.execute(
        "SELECT e.seq, e.value, e.author, e.edit_reason, e.metadata FROM score_edits e JOIN review_verdicts v ON v.edit_id = e.id "
        "ORDER BY e.seq").fetchall()
    assert [(seq, json.loads(value), author) for seq, value, author, _, _ in edits] == [(1, "C", "alice"), (2, "I", "bob"), (3, "C", "carol")]
    assert json.loads(edits[0][4])["review"] == {"kind": "verdict", "queue": None, "blind": True, "value_before": '"I"'}
    assert all(v.time.endswith("Z") for v in history)
    status = review_status(db, run_id, SCORER)
    assert status.counts == {"adjudicated": 1} and status.reviewers == {"alice": 1, "bob": 1} and status.vanished == []


def test_reviewers_who_agree_and_undo(graded):
    _, db, run_id = graded
    record_verdict(db, run_id, SCORER, "1", 1, "I", reviewer="alice")
    record_verdict(db, run_id, SCORER, "1", 1, "I", reviewer="bob")
    assert review_state(sample_verdicts(db, run_id, SCORER, "1", 1)).status == "agreed"
    record_verdict(db, run_id, SCORER, "1", 1, "P", reviewer="bob")  # bob changes his mind
    assert review_state(sample_verdicts(db, run_id, SCORER, "1", 1)).status == "disputed"
    undo_verdict(db, run_id, SCORER, "1", 1, reviewer="bob")  # back to his first verdict
    state = review_state(sample_verdicts(db, run_id, SCORER, "1", 1))
    assert (state.status, state.reviewers) == ("agreed", {"alice": "I", "bob": "I"})
    undo_verdict(db, run_id, SCORER, "1", 1, reviewer="bob")
    undo_verdict(db, run_id, SCORER, "1", 1, reviewer="alice")
    assert review_state(sample_verdicts(db, run_id, SCORER, "1", 1)).status == "none"
    assert human_value(db, run_id, "1") == ("C", None)  # nothing left: as graded
    assert undo_verdict(db, run_id, SCORER, "1", 1, reviewer="alice") is None
    assert len(sample_verdicts(db, run_id, SCORER, "1", 1)) == 6  # history kept: 3 verdicts, 3 retracts


def test_a_hand_edit_counts_as_an_adjudication(graded):
    _, db, run_id = graded
    record_verdict(db, run_id, SCORER, "3", 1, "I", reviewer="alice")
    record_verdict(db, run_id, SCORER, "3", 1, "C", reviewer="bob")
    score_id = db.execute("SELECT x.id FROM scores x JOIN samples s ON s.id = x.sample_rowid WHERE s.sample_id = '3' "
                          "AND x.source = 'log'").fetchone()[0]
    add_human_edit(db, score_id, "P", reason="half", author="dana")
    assert review_state(sample_verdicts(db, run_id, SCORER, "3", 1)).status == "adjudicated"
    assert human_value(db, run_id, "3") == ("P", "half")


@pytest.mark.parametrize("value", ["X", 1, 0.5, "correct"])
def test_a_verdict_outside_the_scale_is_refused_and_nothing_is_written(graded, value):
    _, db, run_id = graded
    assert review_scale(db, run_id, SCORER) == ("C", "P", "I", "N")
    with pytest.raises(ScaleError, match="outside the scale of model_graded_qa: C, P, I, N"):
        record_verdict(db, run_id, SCORER, "1", 1, value, reviewer="alice")
    assert db.execute("SELECT count(*) FROM review_verdicts").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM scores WHERE source = 'human'").fetchone()[0] == 0


def test_a_likert_scale_from_the_queue(graded):
    _, db, run_id = graded
    with pytest.raises(ScaleError, match="1, 2, 3, 4, 5"):
        record_verdict(db, run_id, SCORER, "1", 1, 6, reviewer="alice", scale=(1, 2, 3, 4, 5))
    assert record_verdict(db, run_id, SCORER, "1", 1, 4.0, reviewer="alice", scale=(1, 2, 3, 4, 5)).value == 4


def test_reviewer_name_precedence(monkeypatch, tmp_path):
    monkeypatch.setenv("EVTUI_REVIEWER", "env-reviewer")
    assert reviewer_name("  given ") == "given"
    assert reviewer_name() == "env-reviewer"
    monkeypatch.delenv("EVTUI_REVIEWER")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
    (tmp_path / "gitconfig").write_text("[user]\n\tname = Git Person\n")
    monkeypatch.chdir(tmp_path)
    assert reviewer_name() == "Git Person"
    (tmp_path / "gitconfig").write_text("")
    monkeypatch.setenv("USER", "loginname")
    monkeypatch.setenv("LOGNAME", "loginname")
    assert reviewer_name() == "loginname"


def test_a_queue_is_frozen_resumes_and_survives_reindexing(graded, tmp_path):
    db_path, db, run_id = graded
    queue = create_queue(db, "first pass", run_id, SCORER, Selection(), reviewer="alice", blind=True)
    assert (queue.size, queue.blind, queue.selection["description"]) == (5, True, "all samples")
    with pytest.raises(QueueError, match="exists already"):
        create_queue(db, "first pass", run_id, SCORER, Selection())
    items = queue_items(db, queue, "alice")
    assert [(i.sample_id, i.epoch, i.done) for i in items] == [(s, 1, False) for s in "12345"]
    record_verdict(db, run_id, SCORER, "1", 1, "C", reviewer="alice", queue_id=queue.id, blind=True)
    record_verdict(db, run_id, SCORER, "2", 1, "I", reviewer="alice", queue_id=queue.id, blind=True)
    record_verdict(db, run_id, SCORER, "1", 1, "I", reviewer="bob", queue_id=queue.id, blind=True)
    assert resume_position(db, queue, "alice") == 2
    assert resume_position(db, queue, "bob") == 1
    assert queue_items(db, queue, "bob")[0].others == {"alice": "C"}
    db.conn.close()

    log = tmp_path / "model_graded.eval"
    log.write_bytes(log.read_bytes())  # a new mtime: the run is re-read
    ingest_paths(db_path, [tmp_path])
    db = connect(db_path)
    queue = get_queue(db, "first pass")
    assert [q.name for q in list_queues(db, run_id)] == ["first pass"]
    assert resume_position(db, queue, "alice") == 2
    assert review_state(sample_verdicts(db, run_id, SCORER, "1", 1)).status == "disputed"
    db.conn.close()


def test_a_sample_that_vanished_is_reported_and_its_verdicts_kept(graded):
    _, db, run_id = graded
    queue = create_queue(db, "q", run_id, SCORER, Selection())
    record_verdict(db, run_id, SCORER, "5", 1, "I", reviewer="alice", queue_id=queue.id)
    db.execute("DELETE FROM samples WHERE run_id = ? AND sample_id = '5'", (run_id,))  # what re-ingest does
    items = queue_items(db, queue, "alice")
    assert items[4].vanished and not items[0].vanished
    assert review_status(db, run_id, SCORER).vanished == [("5", 1)]
    assert [v.value for v in sample_verdicts(db, run_id, SCORER, "5", 1)] == ["I"]
    with pytest.raises(VanishedSampleError, match="sample 5 .epoch 1. is no longer in"):
        record_verdict(db, run_id, SCORER, "5", 1, "C", reviewer="alice")


def test_selections(graded):
    _, db, run_id = graded
    assert select_samples(db, run_id, SCORER, Selection(kind="unscored")) == [("4", 1)]
    assert select_samples(db, run_id, SCORER, Selection(kind="filter", filter=f'{SCORER} == "C"')) == [("1", 1), ("3", 1), ("5", 1)]
    first = select_samples(db, run_id, SCORER, Selection(kind="random", n=3, seed=7))
    assert len(first) == 3 and first == select_samples(db, run_id, SCORER, Selection(kind="random", n=3, seed=7))
    # Stratified by the judge's grade: C 3 of 5, I 1, unscored 1 → 2 C, 1 of the others.
    strat = select_samples(db, run_id, SCORER, Selection(kind="random", n=3, seed=1, stratified=True))
    assert len(strat) == 3 and sum(key in {("1", 1), ("3", 1), ("5", 1)} for key in strat) == 2
    record_verdict(db, run_id, SCORER, "3", 1, "I", reviewer="alice")
    assert select_samples(db, run_id, SCORER, Selection(kind="disagreements", disagreement="judge_vs_human")) == [("3", 1)]
    assert select_samples(db, run_id, SCORER, Selection(kind="disagreements", disagreement="humans")) == []
    with pytest.raises(QueueError, match="no samples match"):
        create_queue(db, "empty", run_id, SCORER, Selection(kind="disagreements", disagreement="humans"))


def test_an_index_made_before_the_review_tables_opens_with_its_edits(tmp_path):
    from tests.old_index import write_old_index

    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "model_graded.eval").write_bytes((INSPECT / "model_graded.eval").read_bytes())
    db_path = tmp_path / "old.db"
    write_old_index(db_path, 3, [logs])  # as the evtui before review tables left it
    # Edit with version-3 tables only: simulate the previous evtui by hand.
    old = sqlite3.connect(db_path, isolation_level=None)
    old.execute("PRAGMA foreign_keys=ON")
    score_id, sample_rowid, run_id = old.execute("SELECT id, sample_rowid, run_id FROM scores WHERE value = '\"I\"'").fetchone()
    human = old.execute("INSERT INTO scores (sample_rowid, run_id, scorer, source, job_id, value, value_num) "
                        "VALUES (?, ?, ?, 'human', 0, '\"C\"', 1.0)", (sample_rowid, run_id, SCORER)).lastrowid
    old.execute("INSERT INTO score_edits (score_id, seq, value, author, timestamp, origin) VALUES (?, 0, '\"I\"', NULL, 't0', 'evtui')", (human,))
    old.execute("INSERT INTO score_edits (score_id, seq, value, author, edit_reason, timestamp, origin) "
                "VALUES (?, 1, '\"C\"', 'erin', 'fine', '2026-01-01T00:00:00Z', 'evtui')", (human,))
    old.close()
    db = connect(db_path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 12
    history = sample_verdicts(db, run_id, SCORER, "2", 1)
    assert [(v.reviewer, v.kind, v.value, v.note) for v in history] == [("erin", "edit", "C", "fine")]
    record_verdict(db, run_id, SCORER, "2", 1, "I", reviewer="alice")
    assert review_state(sample_verdicts(db, run_id, SCORER, "2", 1)).status == "adjudicated"
    db.conn.close()


WRITER = """
import sys
from evtui.store.review.writes import record_verdict
from evtui.store.schema import connect
db = connect(sys.argv[1])
for round_ in range(10):
    for sample_id in "1235":
        record_verdict(db, int(sys.argv[2]), "model_graded_qa", sample_id, 1, "CI"[round_ % 2], reviewer=sys.argv[3])
"""


def test_two_processes_at_once_lose_and_duplicate_nothing(graded):
    import os
    import subprocess
    import sys
    from pathlib import Path

    db_path, db, run_id = graded
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(db_path), str(run_id), name], env=env,
                                stderr=subprocess.PIPE, text=True) for name in ("alice", "bob")]
    for writer in writers:
        assert writer.wait(timeout=120) == 0, writer.stderr.read()
    assert db.execute("SELECT count(*) FROM review_verdicts").fetchone()[0] == 80
    # One history entry per verdict, seqs gapless per score.
    rows = db.execute("SELECT score_id, group_concat(seq) FROM (SELECT score_id, seq FROM score_edits ORDER BY seq) GROUP BY score_id").fetchall()
    assert all(seqs == ",".join(str(i) for i in range(21)) for _, seqs in rows) and len(rows) == 4
    assert review_state(sample_verdicts(db, run_id, SCORER, "1", 1)).reviewers == {"alice": "I", "bob": "I"}


def test_a_run_rewritten_without_a_sample_keeps_its_verdicts(graded, tmp_path):
    from inspect_ai.log import read_eval_log, write_eval_log

    db_path, db, run_id = graded
    queue = create_queue(db, "q", run_id, SCORER, Selection())
    record_verdict(db, run_id, SCORER, "5", 1, "I", reviewer="alice", queue_id=queue.id)
    record_verdict(db, run_id, SCORER, "1", 1, "I", reviewer="alice", queue_id=queue.id)
    db.conn.close()
    log_path = tmp_path / "model_graded.eval"
    log = read_eval_log(str(log_path))
    log.samples = [s for s in log.samples if s.id != 5]  # the run re-written by the real inspect_ai
    write_eval_log(log, str(log_path))
    ingest_paths(db_path, [tmp_path])
    db = connect(db_path)
    assert db.execute("SELECT count(*) FROM samples WHERE run_id = ?", (run_id,)).fetchone()[0] == 4
    queue = get_queue(db, "q")
    items = queue_items(db, queue, "alice")
    assert [i.sample_id for i in items if i.vanished] == ["5"] and items[0].done
    assert review_status(db, run_id, SCORER).vanished == [("5", 1)]
    assert [v.value for v in sample_verdicts(db, run_id, SCORER, "5", 1)] == ["I"]
    assert resume_position(db, queue, "alice") == 1  # sample 5 is skipped, not a crash
    db.conn.close()


def test_walking_a_blind_queue_item_by_item(graded):
    from evtui.store.review.queues import give_verdict, item_at, queue_progress, undo_in_queue

    _, db, run_id = graded
    queue = create_queue(db, "walk", run_id, SCORER, Selection(), reviewer="alice", blind=True)
    record_verdict(db, run_id, SCORER, "1", 1, "I", reviewer="bob")
    first = item_at(db, queue, 0, "alice")
    assert (first.sample_id, first.done, first.others) == ("1", False, {"bob": "I"})  # the screen hides `others` when blind
    with pytest.raises(ScaleError, match="outside the scale"):
        give_verdict(db, queue, first, 3, reviewer="alice")
    verdict = give_verdict(db, queue, first, "C", reviewer="alice", note="fine")
    assert (verdict.queue_id, verdict.blind, verdict.kind) == (queue.id, True, "verdict")
    give_verdict(db, queue, item_at(db, queue, 1, "alice"), "I", reviewer="alice")  # the judge said I too
    give_verdict(db, queue, item_at(db, queue, 2, "alice"), "P", reviewer="alice")
    progress = queue_progress(db, queue, "alice")
    assert (progress.done, progress.total, progress.vanished, progress.agreeing) == (3, 5, 0, 2)
    assert progress.first_verdict <= progress.last_verdict
    undo_in_queue(db, queue, item_at(db, queue, 2, "alice"), reviewer="alice")
    assert resume_position(db, queue, "alice") == 2 and item_at(db, queue, 5, "alice") is None
    # An adjudication queue over the disputed sample: its verdicts adjudicate.
    adjudication = create_queue(db, "adjudicate", run_id, SCORER, Selection(kind="disputed"), purpose="adjudication")
    item = item_at(db, adjudication, 0, "carol")
    assert (item.sample_id, item.done, item.others) == ("1", False, {"alice": "C", "bob": "I"})
    give_verdict(db, adjudication, item, "C", reviewer="carol")
    assert item_at(db, adjudication, 0, "carol").done and resume_position(db, adjudication, "carol") is None
    assert review_state(sample_verdicts(db, run_id, SCORER, "1", 1)).status == "adjudicated"


def test_after_review_metrics_follow_the_policy_beside_the_recorded_ones(graded):
    from evtui.scoring.results.reviewed import reviewed_results
    from evtui.store.queries import run_results

    db_path, db, run_id = graded

    def accuracy():
        return next(r.value for r in reviewed_results(db_path, run_id) if r.metric == "accuracy")

    recorded = next(r.value for r in run_results(db, run_id) if r.metric == "accuracy")
    assert recorded == 0.75  # C, I, C, unscored, C
    record_verdict(db, run_id, SCORER, "2", 1, "C", reviewer="alice")
    assert accuracy() == 1.0
    record_verdict(db, run_id, SCORER, "2", 1, "I", reviewer="bob")
    assert accuracy() == 0.75  # disputed: the grade as graded stands
    record_verdict(db, run_id, SCORER, "2", 1, "C", reviewer="carol", kind="adjudication")
    assert accuracy() == 1.0
    assert next(r.value for r in run_results(db, run_id) if r.metric == "accuracy") == 0.75  # as graded, unchanged


def test_a_queue_keeps_its_own_scale_and_display_options(graded):
    from evtui.store.review.queues import give_verdict, item_at, queue_scale, set_queue_options

    _, db, run_id = graded
    queue = create_queue(db, "likert", run_id, SCORER, Selection(), scale=(1, 2, 3, 4, 5), options={"metadata": ["topic"]})
    assert queue_scale(db, queue) == (1, 2, 3, 4, 5) and queue.options == {"metadata": ["topic"]}
    with pytest.raises(ScaleError, match="6 is outside the scale of model_graded_qa: 1, 2, 3, 4, 5"):
        give_verdict(db, queue, item_at(db, queue, 0, "alice"), 6, reviewer="alice")
    assert give_verdict(db, queue, item_at(db, queue, 0, "alice"), 4, reviewer="alice").value == 4
    set_queue_options(db, "likert", {"metadata": []})
    assert get_queue(db, "likert").options == {"metadata": []}
