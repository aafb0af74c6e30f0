"""load_sample_view on an index of real Inspect logs: transcript, scores, epochs, neighbours, fallback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from evtui.sample_view.view import SampleOrdering, load_sample_view
from evtui.store.ingest.files import ingest_paths
from evtui.store.schema import connect

INSPECT = Path(__file__).parent / "data" / "inspect"


@pytest.fixture
def index(tmp_path) -> Path:
    logs = tmp_path / "logs"
    logs.mkdir()
    for name in ("tool_agent.eval", "model_graded.eval", "mc_epochs.eval", "qa_edited.eval"):
        shutil.copy2(INSPECT / name, logs / name)
    db_path = tmp_path / "index.db"
    report = ingest_paths(db_path, [logs])
    assert not report.failures
    return db_path


def rowid(db_path: Path, file_name: str, sample_id: str, epoch: int = 1) -> int:
    db = connect(db_path)
    try:
        return db.execute(
            "SELECT s.id FROM samples s JOIN runs r ON r.id = s.run_id WHERE r.path LIKE ? AND s.sample_id = ? "
            "AND s.epoch = ?",
            (f"%{file_name}", sample_id, epoch),
        ).fetchone()[0]
    finally:
        db.conn.close()


def test_tool_calls_results_and_tool_errors_come_from_the_run_file(index):
    view = load_sample_view(index, rowid(index, "tool_agent.eval", "3"))
    assert view.transcript_from_file and view.transcript_note is None
    assert [m.role for m in view.messages] == ["user", "assistant", "tool", "assistant"]
    call = view.messages[1].tool_calls[0]
    assert (call.function, call.arguments) == ("lookup", '{"city": "Atlantis"}')
    result = view.messages[2]
    assert result.tool_call_id == call.id and result.function == "lookup"
    assert result.error == "No such city: Atlantis"
    kinds = [e.kind for e in view.events]
    assert kinds.count("model") == 2 and "tool" in kinds and "score" in kinds
    tool_event = next(e for e in view.events if e.kind == "tool")
    assert tool_event.error == "No such city: Atlantis"


def test_a_sample_that_crashed_in_a_tool_shows_the_failed_call_and_the_traceback(index):
    view = load_sample_view(index, rowid(index, "tool_agent.eval", "4"))
    log = read_eval_log(str(INSPECT / "tool_agent.eval"))
    crashed = next(s for s in log.samples if s.id == 4)
    assert view.sample.error == crashed.error.message
    assert view.error_traceback == crashed.error.traceback
    assert view.messages[-1].role == "tool"
    assert "failed" in view.messages[-1].error
    assert any(e.kind == "error" for e in view.events)


def test_model_graded_scores_keep_the_graders_explanation_and_messages(index):
    view = load_sample_view(index, rowid(index, "model_graded.eval", "5"))
    [score] = view.scores
    assert score.origin == "recorded" and score.effective
    assert score.score.explanation == "Reasoning...\nGRADE: I\nOn reflection GRADE: C"
    assert score.score.metadata["grading"][-1]["role"] == "assistant"


def test_recorded_edit_history_is_part_of_the_score(index):
    view = load_sample_view(index, rowid(index, "qa_edited.eval", "8"))
    log = read_eval_log(str(INSPECT / "qa_edited.eval"))
    recorded = next(s for s in log.samples if s.id == 8).scores
    edited = next(v for v in view.scores if v.score.edits)
    history = recorded[edited.score.scorer].history
    assert [e.value for e in edited.score.edits] == [h.value for h in history]
    assert [e.author for e in edited.score.edits] == [h.provenance.author if h.provenance else None for h in history]
    assert edited.score.value == recorded[edited.score.scorer].value


def test_epochs_sit_side_by_side_and_each_epoch_is_its_own_sample(index):
    log = read_eval_log(str(INSPECT / "mc_epochs.eval"))
    epochs = log.eval.config.epochs
    first = log.samples[0]
    view = load_sample_view(index, rowid(index, "mc_epochs.eval", str(first.id), 2))
    assert [e.epoch for e in view.epochs] == list(range(1, epochs + 1))
    assert view.sample.epoch == 2
    for row in view.epochs:
        sample = next(s for s in log.samples if s.id == first.id and s.epoch == row.epoch)
        for name, score in sample.scores.items():
            assert row.scores[name].value == score.value


def test_neighbours_follow_the_ordering_including_a_filter(index):
    run_rows = [rowid(index, "tool_agent.eval", str(i)) for i in range(1, 7)]
    middle = load_sample_view(index, run_rows[2])
    assert (middle.previous_rowid, middle.next_rowid) == (run_rows[1], run_rows[3])
    assert load_sample_view(index, run_rows[0]).previous_rowid is None
    assert load_sample_view(index, run_rows[5]).next_rowid is None
    backwards = load_sample_view(index, run_rows[2], SampleOrdering(sort="id", descending=True))
    assert (backwards.previous_rowid, backwards.next_rowid) == (run_rows[3], run_rows[1])
    errors_only = load_sample_view(index, run_rows[3], SampleOrdering(filter="error"))
    assert (errors_only.previous_rowid, errors_only.next_rowid) == (None, run_rows[5])


def test_a_missing_run_file_falls_back_to_the_indexed_messages_and_says_so(index):
    sample = rowid(index, "tool_agent.eval", "1")
    (index.parent / "logs" / "tool_agent.eval").unlink()
    view = load_sample_view(index, sample)
    assert not view.transcript_from_file
    assert "missing" in view.transcript_note
    assert [m.role for m in view.messages] == ["user", "assistant", "tool", "assistant"]
    assert view.messages[1].tool_calls[0].function == "add"
    assert view.events == []


def test_an_unreadable_run_file_falls_back_and_names_the_problem(index):
    sample = rowid(index, "model_graded.eval", "2")
    (index.parent / "logs" / "model_graded.eval").write_bytes(b"PK\x03\x04 not really a zip")
    view = load_sample_view(index, sample)
    assert not view.transcript_from_file
    assert "could not read the run file" in view.transcript_note
    assert view.messages[-1].text == "Plants absorb oxygen."


def test_an_unknown_sample_is_a_lookup_error(index):
    with pytest.raises(LookupError):
        load_sample_view(index, 10_000)


def test_a_human_edit_counts_and_scores_keep_the_runs_scorer_order(index):
    from evtui.store.score_edits import add_human_edit

    sample = rowid(index, "qa_edited.eval", "8")
    before = load_sample_view(index, sample)
    assert [v.score.scorer for v in before.scores] == ["match", "includes"]
    includes = next(v for v in before.scores if v.score.scorer == "includes")
    db = connect(index)
    add_human_edit(db, includes.score.id, "P", reason="a city in Japan", author="gus")
    db.conn.close()
    after = load_sample_view(index, sample)
    assert [(v.score.scorer, v.origin, v.effective) for v in after.scores] == [
        ("match", "recorded", True),
        ("includes", "human", True),
        ("includes", "recorded", False),
    ]
    assert after.epochs[0].scores["includes"].value == "P"


def test_the_sample_view_facade_and_score_edits_import_without_textual():
    import subprocess
    import sys

    code = (
        "import sys, evtui.sample_view, evtui.store.score_edits\n"
        "print(','.join(sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""


def test_other_formats_show_the_readers_messages_and_the_files_record(tmp_path):
    logs = tmp_path / "logs"
    shutil.copytree(INSPECT.parent / "ag2", logs / "ag2")
    db_path = tmp_path / "index.db"
    ingest_paths(db_path, [logs])
    db = connect(db_path)
    rowid_ = db.execute("SELECT id FROM samples WHERE sample_id = 'paris' AND epoch = 1").fetchone()[0]
    db.conn.close()
    view = load_sample_view(db_path, rowid_)
    assert view.transcript_from_file and view.transcript_note is None
    assert [m.role for m in view.messages] == ["user", "assistant", "tool", "assistant"]
    assert view.messages[1].tool_calls[0].function == "get_weather"
    assert view.file_record["task_id"] == "paris#1"
    assert view.file_record["reference_outputs"] == {"city": "Paris", "answer": "sunny"}


def test_next_and_previous_work_for_ids_with_accents_quotes_and_backslashes(tmp_path):
    ids = ["café-1", 'say "hi"', "back\\slash", "東京"]
    lines = [json.dumps({"run": {"task": "names", "model": "m"}})]
    lines += [json.dumps({"id": sid, "input": "q", "output": "a", "scores": {"s": {"value": "C"}}}) for sid in ids]
    (tmp_path / "names.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    db_path = tmp_path / "index.db"
    assert ingest_paths(db_path, [tmp_path]).failures == []
    db = connect(db_path)
    rowids = [r for (r,) in db.execute("SELECT id FROM samples ORDER BY id")]
    db.conn.close()
    for position, rowid_ in enumerate(rowids):
        view = load_sample_view(db_path, rowid_, SampleOrdering(sort="index", filter='s == "C"', score_columns=("s",)))
        assert view.previous_rowid == (rowids[position - 1] if position else None), ids[position]
        assert view.next_rowid == (rowids[position + 1] if position + 1 < len(rowids) else None), ids[position]
