"""Ingest: real Inspect logs into a SQLite index on disk; skip, re-read, roll back, mark missing."""

from __future__ import annotations

import json
import math
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from evtui.readers import detect
from evtui.readers.base import ReaderError, RunRead
from evtui.store.ingest.files import IngestProgress, ingest_paths
from evtui.store.schema import connect

DATA = Path(__file__).parent / "data" / "inspect"


def copy(names: list[str], dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy2(DATA / name, dest / name)
    return dest


def snapshot(db_path: Path, path: Path) -> dict:
    """Everything the index holds for the run at `path`, for before/after comparisons."""
    conn = sqlite3.connect(db_path)
    run = conn.execute("SELECT id, task, status, sample_count FROM runs WHERE path = ?", (str(path),)).fetchone()
    samples = conn.execute(
        "SELECT id, sample_id, epoch, output_text, content_hash FROM samples WHERE run_id = ? ORDER BY id", (run[0],)
    ).fetchall()
    scores = conn.execute(
        "SELECT sample_rowid, scorer, source, job_id, value FROM scores WHERE run_id = ? ORDER BY id", (run[0],)
    ).fetchall()
    results = conn.execute("SELECT scorer, metric, value FROM run_results WHERE run_id = ? ORDER BY id", (run[0],)).fetchall()
    fts = conn.execute(
        "SELECT f.rowid FROM samples_fts f JOIN samples s ON s.id = f.rowid "
        "WHERE samples_fts MATCH 'answer' AND s.run_id = ? ORDER BY f.rowid", (run[0],)
    ).fetchall()
    conn.close()
    return {"run": run, "samples": samples, "scores": scores, "results": results, "fts": fts}


def bump_mtime(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_real_logs_are_indexed_with_scores_results_and_history(tmp_path):
    logs = copy(["qa_match.eval", "qa_match.json", "qa_edited.eval", "dict_unscored.eval"], tmp_path / "logs")
    db_path = tmp_path / "index.db"
    report = ingest_paths(db_path, [logs])

    assert report.failures == []
    by_name = {Path(f.path).name: f for f in report.files}
    assert set(by_name) == {"qa_match.eval", "qa_match.json", "qa_edited.eval", "dict_unscored.eval"}
    qa = by_name["qa_match.eval"]
    assert (qa.format, qa.task, qa.model, qa.status, qa.samples, qa.scores, qa.change) == (
        "inspect_eval", "qa_match", "mockllm/model", "success", 12, 24, "new",
    )
    assert by_name["qa_match.json"].format == "inspect_json"

    db = connect(db_path)
    # The recorded headline is what Inspect itself recorded in the log.
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(DATA / "qa_match.eval"), header_only=True)
    recorded = {(s.name, name): m.value for s in log.results.scores for name, m in s.metrics.items()}
    stored = {
        (scorer, metric): value
        for scorer, metric, value in db.execute(
            "SELECT scorer, metric, value FROM run_results r JOIN runs ON runs.id = r.run_id "
            "WHERE runs.path = ? AND job_id = 0", (str(logs / "qa_match.eval"),)
        )
    }
    assert stored == recorded

    # Score values keep their JSON form; value_num follows Inspect's value_to_float.
    values = dict(
        db.execute(
            "SELECT value, value_num FROM scores sc JOIN runs ON runs.id = sc.run_id "
            "WHERE runs.path = ? AND scorer = 'match'", (str(logs / "qa_match.eval"),)
        ).fetchall()
    )
    assert values == {'"C"': 1.0, '"I"': 0.0}

    # Dict-valued scores keep the dict; NaN survives as NaN, and value_num is NULL for both.
    dict_values = [
        (json.loads(v), n)
        for v, n in db.execute(
            "SELECT value, value_num FROM scores sc JOIN runs ON runs.id = sc.run_id WHERE runs.path = ?",
            (str(logs / "dict_unscored.eval"),),
        )
    ]
    assert any(isinstance(v, dict) and n is None for v, n in dict_values)
    assert any(isinstance(v, float) and math.isnan(v) and n is None for v, n in dict_values)

    # edit_score() history from the log: original first, then each edit with its author.
    edits = db.execute(
        "SELECT e.seq, e.value, e.author, e.origin FROM score_edits e JOIN scores sc ON sc.id = e.score_id "
        "JOIN runs ON runs.id = sc.run_id WHERE runs.path = ? ORDER BY e.score_id, e.seq",
        (str(logs / "qa_edited.eval"),),
    ).fetchall()
    assert ("alice" in {e[2] for e in edits}) and {e[3] for e in edits} == {"log"}
    assert [e[0] for e in edits][:2] == [0, 1]

    # Full-text rows exist for every sample.
    assert db.execute("SELECT count(*) FROM samples_fts").fetchone()[0] == db.execute(
        "SELECT count(*) FROM samples"
    ).fetchone()[0]


def test_unchanged_file_is_skipped_and_touched_file_reread_without_writes(tmp_path):
    logs = copy(["mc_epochs.eval"], tmp_path / "logs")
    db_path = tmp_path / "index.db"
    first = ingest_paths(db_path, [logs])
    assert first.files[0].change == "new" and first.files[0].samples_written == 18

    again = ingest_paths(db_path, [logs])
    assert [f.change for f in again.files] == ["unchanged"]
    assert again.files[0].samples == 18 and again.files[0].scores == first.files[0].scores

    bump_mtime(logs / "mc_epochs.eval")
    touched = ingest_paths(db_path, [logs])
    assert touched.files[0].change == "updated"
    assert touched.files[0].samples_written == 0 and touched.files[0].samples_deleted == 0


def test_ingest_leaves_statistics_for_the_query_planner(tmp_path):
    # Without them SQLite walked a million-sample run in random order for every filter (2.3 s, not 0.3 s).
    logs = copy(["mc_epochs.eval"], tmp_path / "logs")
    db_path = tmp_path / "index.db"
    ingest_paths(db_path, [logs])
    conn = sqlite3.connect(db_path)
    stats = dict(conn.execute("SELECT idx, stat FROM sqlite_stat1 WHERE tbl = 'samples'").fetchall())
    assert stats["samples_run"].split()[0] == "18"  # rows counted after this ingest, not before it


def test_rewritten_log_updates_only_changed_samples_and_keeps_evtui_scores(tmp_path):
    logs = copy(["qa_match.eval"], tmp_path / "logs")
    path = logs / "qa_match.eval"
    db_path = tmp_path / "index.db"
    ingest_paths(db_path, [logs])
    db = connect(db_path)
    before = dict(db.execute("SELECT sample_id, id FROM samples").fetchall())
    # An evtui job scored every sample, and a person scored one.
    db.conn.executemany(
        "INSERT INTO scores(sample_rowid, run_id, scorer, source, job_id, value, value_num) VALUES (?, 1, 'judge', 'job', 7, '1', 1.0)",
        [(rowid,) for rowid in before.values()],
    )
    db.conn.execute(
        "INSERT INTO scores(sample_rowid, run_id, scorer, source, job_id, value, value_num) VALUES (?, 1, 'match', 'human', 0, '\"C\"', 1.0)",
        (before["1"],),
    )

    # The same log after Inspect's edit_score() on two samples (same task, same samples).
    shutil.copy2(DATA / "qa_edited.eval", path)
    bump_mtime(path)
    report = ingest_paths(db_path, [logs])
    outcome = report.files[0]
    assert outcome.change == "updated"
    assert 0 < outcome.samples_written < 12  # only the edited samples were rewritten
    after = dict(db.execute("SELECT sample_id, id FROM samples").fetchall())
    assert after == before  # same rowids: nothing deleted and re-added
    assert db.execute("SELECT count(*) FROM scores WHERE source = 'job'").fetchone()[0] == 12
    assert db.execute("SELECT count(*) FROM scores WHERE source = 'human'").fetchone()[0] == 1
    assert db.execute("SELECT count(*) FROM score_edits WHERE author IS NOT NULL").fetchone()[0] > 0


def test_recorded_score_edited_in_evtui_keeps_its_value_when_the_sample_changes(tmp_path):
    logs = copy(["qa_match.eval"], tmp_path / "logs")
    db_path = tmp_path / "index.db"
    ingest_paths(db_path, [logs])
    db = connect(db_path)
    score_id, old = db.execute(
        "SELECT sc.id, sc.value FROM scores sc JOIN samples s ON s.id = sc.sample_rowid "
        "WHERE s.sample_id = '1' AND sc.scorer = 'match'"
    ).fetchone()
    new = '"I"' if old == '"C"' else '"C"'
    db.conn.execute("UPDATE scores SET value = ? WHERE id = ?", (new, score_id))
    db.conn.execute(
        "INSERT INTO score_edits(score_id, seq, value, author, edit_reason, origin) VALUES (?, 0, ?, 'carol', 'typo', 'evtui')",
        (score_id, new),
    )
    bump_mtime(logs / "qa_match.eval")
    report = ingest_paths(db_path, [logs], reader=FailingReader("qa_match.eval", 1000, ValueError()),
                          finder=detect.find_run_files)
    assert report.files[0].samples_written == 12  # every output changed
    assert db.execute("SELECT value FROM scores WHERE id = ?", (score_id,)).fetchone()[0] == new
    assert db.execute("SELECT count(*) FROM scores WHERE scorer = 'match'").fetchone()[0] == 12


class DroppingReader:
    """The real reader, minus the samples whose ids are in `drop` (a log that lost samples)."""

    def __init__(self, drop: set[str]) -> None:
        self.drop = drop

    def __call__(self, path: Path) -> RunRead:
        read = detect.read_run(path)
        return RunRead(read.run, (s for s in read.samples if s.sample_id not in self.drop), read.warnings)


def test_vanished_samples_are_deleted_with_their_scores(tmp_path):
    logs = copy(["qa_match.eval"], tmp_path / "logs")
    db_path = tmp_path / "index.db"
    ingest_paths(db_path, [logs])
    db = connect(db_path)
    rowid = db.execute("SELECT id FROM samples WHERE sample_id = '3'").fetchone()[0]
    db.conn.execute(
        "INSERT INTO scores(sample_rowid, run_id, scorer, source, job_id, value) VALUES (?, 1, 'judge', 'job', 1, '1')",
        (rowid,),
    )
    bump_mtime(logs / "qa_match.eval")
    report = ingest_paths(db_path, [logs], reader=DroppingReader({"3", "4"}), finder=detect.find_run_files)
    assert report.files[0].samples_deleted == 2 and report.files[0].samples == 10
    assert db.execute("SELECT count(*) FROM samples WHERE sample_id IN ('3', '4')").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM scores WHERE sample_rowid = ?", (rowid,)).fetchone()[0] == 0
    assert db.execute("SELECT sample_count FROM runs").fetchone()[0] == 10
    assert db.execute("SELECT count(*) FROM samples_fts").fetchone()[0] == 10
    assert db.execute("SELECT count(*) FROM sample_bodies").fetchone()[0] == 10  # transcripts went with them


class FailingReader:
    """The real reader, raising `error` after yielding `after` samples of `target`."""

    def __init__(self, target: str, after: int, error: BaseException) -> None:
        self.target, self.after, self.error = target, after, error

    def __call__(self, path: Path) -> RunRead:
        read = detect.read_run(path)
        if path.name != self.target:
            return read

        def samples():
            for n, sample in enumerate(read.samples):
                if n == self.after:
                    raise self.error
                yield sample.model_copy(update={"output_text": "CHANGED " + sample.output_text})

        return RunRead(read.run, samples(), read.warnings)


def test_reader_error_mid_file_leaves_previous_run_intact_and_others_indexed(tmp_path):
    logs = copy(["qa_match.eval", "mc_epochs.eval"], tmp_path / "logs")
    db_path = tmp_path / "index.db"
    ingest_paths(db_path, [logs / "qa_match.eval"])
    before = snapshot(db_path, logs / "qa_match.eval")

    bump_mtime(logs / "qa_match.eval")
    error = ReaderError(str(logs / "qa_match.eval"), "truncated zip member", where="samples/7_epoch_1.json")
    report = ingest_paths(db_path, [logs], reader=FailingReader("qa_match.eval", 5, error), finder=detect.find_run_files)

    assert snapshot(db_path, logs / "qa_match.eval") == before
    assert [Path(f.path).name for f in report.files] == ["mc_epochs.eval"]
    assert len(report.failures) == 1
    assert "qa_match.eval" in report.failures[0].error and "samples/7_epoch_1.json" in report.failures[0].error
    db = connect(db_path)
    assert db.execute("SELECT path, error FROM ingest_failures").fetchall() == [
        (str(logs / "qa_match.eval"), report.failures[0].error)
    ]
    # A later good read of the same file clears the failure.
    bump_mtime(logs / "qa_match.eval")
    ingest_paths(db_path, [logs])
    assert db.execute("SELECT count(*) FROM ingest_failures").fetchone()[0] == 0


def test_interrupt_mid_file_rolls_back_and_propagates(tmp_path):
    logs = copy(["qa_match.eval"], tmp_path / "logs")
    db_path = tmp_path / "index.db"
    ingest_paths(db_path, [logs])
    before = snapshot(db_path, logs / "qa_match.eval")
    bump_mtime(logs / "qa_match.eval")
    with pytest.raises(KeyboardInterrupt):
        ingest_paths(db_path, [logs], reader=FailingReader("qa_match.eval", 6, KeyboardInterrupt()),
                     finder=detect.find_run_files)
    assert snapshot(db_path, logs / "qa_match.eval") == before


def test_crash_on_first_ingest_leaves_no_half_written_run(tmp_path):
    logs = copy(["qa_match.eval"], tmp_path / "logs")
    db_path = tmp_path / "index.db"
    report = ingest_paths(db_path, [logs], reader=FailingReader("qa_match.eval", 4, ValueError("boom")),
                          finder=detect.find_run_files)
    assert report.files == [] and "ValueError: boom" in report.failures[0].error
    db = connect(db_path)
    assert [db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("runs", "samples", "scores", "samples_fts")] == [0, 0, 0, 0]


def test_unreadable_file_is_reported_and_not_reread_until_it_changes(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    bad = logs / "2026-01-01T00-00-00_broken.eval"
    bad.write_bytes(b"PK\x03\x04 this is not really a zip")
    copy(["qa_match.json"], logs)
    db_path = tmp_path / "index.db"
    report = ingest_paths(db_path, [logs])
    assert [Path(f.path).name for f in report.files] == ["qa_match.json"]
    assert len(report.failures) == 1 and str(bad) in report.failures[0].error

    calls: list[Path] = []

    def counting(path: Path) -> RunRead:
        calls.append(path)
        return detect.read_run(path)

    again = ingest_paths(db_path, [logs], reader=counting, finder=detect.find_run_files)
    assert calls == [] and again.failures[0].error == report.failures[0].error
    # The UI lists failures through the query layer.
    from evtui.store.queries import list_failures

    assert [(f.path, f.error) for f in list_failures(connect(db_path))] == [(str(bad), report.failures[0].error)]


def test_disappeared_file_is_marked_missing_and_its_data_kept(tmp_path):
    logs = copy(["qa_match.eval", "mc_epochs.eval"], tmp_path / "logs")
    db_path = tmp_path / "index.db"
    ingest_paths(db_path, [logs])
    moved = tmp_path / "away.eval"
    (logs / "qa_match.eval").rename(moved)

    report = ingest_paths(db_path, [logs])
    assert report.missing == [str(logs / "qa_match.eval")]
    db = connect(db_path)
    missing = dict(db.execute("SELECT path, missing FROM runs").fetchall())
    assert missing == {str(logs / "qa_match.eval"): 1, str(logs / "mc_epochs.eval"): 0}
    assert db.execute("SELECT sample_count FROM runs WHERE missing = 1").fetchone()[0] == 12

    moved.rename(logs / "qa_match.eval")
    ingest_paths(db_path, [logs])
    assert db.execute("SELECT sum(missing) FROM runs").fetchone()[0] == 0


def test_progress_reports_each_file_start_and_end(tmp_path):
    logs = copy(["qa_match.eval", "mc_epochs.json"], tmp_path / "logs")
    seen: list[IngestProgress] = []
    ingest_paths(tmp_path / "index.db", [logs], on_progress=seen.append)
    ends = [(p.path.name, p.file_index, p.file_count, p.samples) for p in seen if p.phase == "done"]
    assert sorted(ends) == [("mc_epochs.json", 1, 2, 18), ("qa_match.eval", 2, 2, 12)] or sorted(ends) == [
        ("mc_epochs.json", 2, 2, 18), ("qa_match.eval", 1, 2, 12)
    ]
    assert [p.phase for p in seen].count("reading") >= 2


def test_file_rewritten_during_a_failed_read_is_retried_next_time(tmp_path):
    logs = copy(["qa_match.eval"], tmp_path / "logs")
    path = logs / "qa_match.eval"
    db_path = tmp_path / "index.db"

    def rewritten_mid_read(p: Path) -> RunRead:
        shutil.copy2(DATA / "qa_edited.eval", p)  # a running eval's flush replaces the file
        bump_mtime(p)
        raise ReaderError(str(p), "the file was replaced while being read")

    failed = ingest_paths(db_path, [logs], reader=rewritten_mid_read, finder=detect.find_run_files)
    assert len(failed.failures) == 1
    retried = ingest_paths(db_path, [logs])  # same bytes as at the end of the failed attempt
    assert [f.change for f in retried.files] == ["new"] and retried.failures == []
    assert retried.files[0].path == str(path)


def test_transcript_left_behind_at_a_new_rowid_is_replaced_not_a_failure(tmp_path):
    """New samples' bodies are written with a plain INSERT (no per-row lookup); a body that a
    sample deleted without its cascade left at the rowid a new sample gets must still give way."""
    logs = copy(["qa_match.eval", "mc_epochs.eval"], tmp_path / "logs")
    db_path = tmp_path / "index.db"
    ingest_paths(db_path, [logs / "qa_match.eval"])
    conn = sqlite3.connect(db_path)  # foreign keys off: the delete leaves the bodies behind
    conn.execute("DELETE FROM samples")
    conn.execute("DELETE FROM runs")
    conn.commit()
    conn.close()

    report = ingest_paths(db_path, [logs / "mc_epochs.eval"])
    assert report.failures == [] and report.files[0].samples == 18
    db = connect(db_path)
    stored = db.execute("SELECT s.sample_id, s.epoch, b.messages FROM samples s JOIN sample_bodies b ON b.sample_rowid = s.id").fetchall()
    assert len(stored) == 18
    by_key = {(s.sample_id, s.epoch): s for s in detect.read_run(logs / "mc_epochs.eval").samples}
    assert all(json.loads(messages)[0]["content"] == by_key[(sid, epoch)].messages[0]["content"]
               for sid, epoch, messages in stored)
