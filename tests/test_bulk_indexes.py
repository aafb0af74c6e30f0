"""The first big file of an index is written with its secondary indexes built after the rows
(store/ingest/bulk_indexes.py): the index ends the same (every row, every index, search), a
failed file leaves the indexes as they were, readers meanwhile see the committed index with its
indexes, and a sample repeated in the file is handled as without.

The size threshold is lowered to 0 so the committed fixtures (real Inspect logs, a Harbor job, an
lm-eval run) take the bulk path; the comparison index takes the usual one."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from evtui.readers import detect
from evtui.readers.base import RunRead
from evtui.store.ingest import bulk_indexes
from evtui.store.ingest import files as ingest
from evtui.store.ingest.files import ingest_paths
from evtui.store.schema import connect, open_connection

from test_ingest_worker import _contents

DATA = Path(__file__).parent / "data"
PATHS = [DATA / "inspect", DATA / "harbor" / "jobs", DATA / "lm_eval"]


def _schema(db_path: Path) -> list[tuple]:
    """Every table, index and trigger with its SQL, and each table's indexes in the order SQLite
    lists them (the order its query planner weighs equal plans in)."""
    conn = sqlite3.connect(db_path)
    try:
        return [*conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_stat%' "
                              "ORDER BY name"),
                *conn.execute("SELECT tbl_name, name FROM sqlite_master WHERE type = 'index' ORDER BY tbl_name, rowid")]  # fmt: skip
    finally:
        conn.close()


def _summary(report) -> tuple:
    return ([(f.path, f.part, f.samples, f.scores, f.status, f.change, f.warnings) for f in report.files],
            sorted((f.path, f.error) for f in report.failures))  # fmt: skip


@pytest.fixture
def bulk(monkeypatch) -> list[int]:
    """How many indexes each write that took the bulk path dropped (MIN_BYTES set by each test)."""
    taken: list[int] = []
    drop = bulk_indexes.DeferredIndexes.drop.__func__

    def counted(cls, conn):
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 0
        deferred = drop(cls, conn)
        taken.append(len(deferred.dropped))
        return deferred

    monkeypatch.setattr(bulk_indexes.DeferredIndexes, "drop", classmethod(counted))
    return taken


def _references_hold(db_path: Path) -> bool:
    conn = sqlite3.connect(db_path)
    try:
        return conn.execute("PRAGMA foreign_key_check").fetchall() == []
    finally:
        conn.close()


def test_the_first_file_makes_the_same_index_row_for_row_and_index_for_index(tmp_path, monkeypatch, bulk):
    usual = _summary(ingest_paths(tmp_path / "usual.db", [DATA / "inspect" / "qa_match.eval", *PATHS]))
    assert bulk == []  # the fixtures are under the size threshold
    monkeypatch.setattr(bulk_indexes, "MIN_BYTES", 0)
    made = _summary(ingest_paths(tmp_path / "bulk.db", [DATA / "inspect" / "qa_match.eval", *PATHS]))
    assert made == usual and usual[0]
    # Only the first file found the tables empty; it dropped every secondary index of the three tables.
    made_by_create_index = [row for row in _schema(tmp_path / "usual.db")
                            if row[0] == "index" and row[2] in bulk_indexes.TABLES and row[3] is not None]  # fmt: skip
    assert len(bulk) == 1 and bulk[0] == len(made_by_create_index) >= 10
    assert _contents(tmp_path / "bulk.db") == _contents(tmp_path / "usual.db")
    assert _schema(tmp_path / "bulk.db") == _schema(tmp_path / "usual.db")
    assert _references_hold(tmp_path / "bulk.db")
    # The connection's checks are back on after the file: deleting a run still cascades.
    db = connect(tmp_path / "bulk.db")
    db.execute("DELETE FROM runs WHERE path = ?", (str(DATA / "inspect" / "qa_match.eval"),))
    assert _references_hold(tmp_path / "bulk.db")
    assert db.execute("SELECT count(*) FROM scores WHERE run_id NOT IN (SELECT id FROM runs)").fetchone()[0] == 0


def test_a_failed_first_file_leaves_the_index_as_it_was(tmp_path, monkeypatch, bulk):
    monkeypatch.setattr(bulk_indexes, "MIN_BYTES", 0)
    fresh = tmp_path / "fresh.db"
    open_connection(fresh).close()

    def failing(path: Path) -> RunRead:
        read = detect.read_run(path)

        def samples():
            for n, sample in enumerate(read.samples):
                if n == 7:
                    raise ValueError("boom")
                yield sample

        return RunRead(read.run, samples(), read.warnings)

    db_path = tmp_path / "index.db"
    report = ingest_paths(db_path, [DATA / "inspect" / "qa_match.eval"], reader=failing, finder=detect.find_run_files)
    assert report.files == [] and "boom" in report.failures[0].error and bulk
    assert _schema(db_path) == _schema(fresh)
    conn = sqlite3.connect(db_path)
    assert [conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("runs", "samples", "scores", "sample_metadata")] == [0, 0, 0, 0]
    conn.close()
    # The next file is written whole (the bulk path again: the tables are still empty).
    assert ingest_paths(db_path, [DATA / "inspect" / "mc_epochs.eval"]).failures == [] and len(bulk) == 2
    assert _schema(db_path) == _schema(fresh)


def test_a_reader_during_the_write_sees_the_committed_index_with_its_indexes(tmp_path, monkeypatch, bulk):
    db_path = tmp_path / "index.db"
    monkeypatch.setattr(bulk_indexes, "MIN_BYTES", 0)
    monkeypatch.setattr(ingest, "_BATCH_SAMPLES", 3)  # progress is reported inside the write transaction
    seen = []

    def look(progress) -> None:
        if progress.phase == "reading" and progress.samples:
            reader = sqlite3.connect(db_path)  # another connection, as the app's workers read
            try:
                seen.append((
                    reader.execute("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL").fetchone()[0],
                    reader.execute("SELECT count(*) FROM scores INDEXED BY scores_by_value WHERE run_id > 0").fetchone()[0],
                    reader.execute("SELECT count(*) FROM samples").fetchone()[0],
                ))
            finally:
                reader.close()

    report = ingest_paths(db_path, [DATA / "inspect" / "qa_match.eval"], on_progress=look)
    assert report.failures == [] and bulk and len(seen) >= 3
    indexes = len([row for row in _schema(db_path) if row[0] == "index" and row[3] is not None])
    assert seen == [(indexes, 0, 0)] * len(seen)  # nothing half-written, no index missing


def test_a_sample_repeated_in_the_first_file_is_written_as_without(tmp_path, monkeypatch, bulk):
    def twice(path: Path) -> RunRead:
        read = detect.read_run(path)
        samples = list(read.samples)
        again = [s.model_copy(update={"output_text": "AGAIN " + s.output_text}) for s in samples[:5]]
        return RunRead(read.run, iter([*samples, *again, *samples[5:7]]), read.warnings)

    log = [DATA / "inspect" / "qa_edited.eval"]  # scores with an edit history: their edits go with them
    monkeypatch.setattr(bulk_indexes, "MIN_BYTES", 1 << 62)
    usual = _summary(ingest_paths(tmp_path / "usual.db", log, reader=twice, finder=detect.find_run_files))
    monkeypatch.setattr(bulk_indexes, "MIN_BYTES", 0)
    made = _summary(ingest_paths(tmp_path / "bulk.db", log, reader=twice, finder=detect.find_run_files))
    assert bulk and made == usual and usual[1] == []
    assert _contents(tmp_path / "bulk.db") == _contents(tmp_path / "usual.db")
    assert _schema(tmp_path / "bulk.db") == _schema(tmp_path / "usual.db")
    assert _references_hold(tmp_path / "bulk.db")  # the replaced scores' edits went with them
    conn = sqlite3.connect(tmp_path / "bulk.db")
    assert conn.execute("SELECT count(*) FROM samples WHERE output_text LIKE 'AGAIN %'").fetchone()[0] == 5
    conn.close()


def test_a_file_that_stops_being_the_first_before_the_lock_is_written_the_usual_way(tmp_path, monkeypatch, bulk):
    """The bulk guess is made before BEGIN (foreign keys cannot be turned off inside a transaction);
    when another writer indexed rows meanwhile, the file is written with the checks on: here a
    re-read whose vanished samples need the cascade to take their scores along."""
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy2(DATA / "inspect" / "qa_match.eval", logs / "qa_match.eval")
    db_path = tmp_path / "index.db"
    ingest_paths(db_path, [logs])
    st = (logs / "qa_match.eval").stat()
    os.utime(logs / "qa_match.eval", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))

    def dropping(path: Path) -> RunRead:
        read = detect.read_run(path)
        return RunRead(read.run, (s for s in read.samples if s.sample_id not in ("3", "4")), read.warnings)

    guesses = []
    first_big_file = bulk_indexes.first_big_file
    monkeypatch.setattr(bulk_indexes, "MIN_BYTES", 0)
    monkeypatch.setattr(ingest, "first_big_file",
                        lambda conn, path, size: not guesses.append(1) if not guesses else first_big_file(conn, path, size))
    report = ingest_paths(db_path, [logs], reader=dropping, finder=detect.find_run_files)
    assert report.failures == [] and report.files[0].samples_deleted == 2 and guesses and not bulk
    assert _references_hold(db_path)
    db = connect(db_path)
    assert db.execute("SELECT count(*) FROM scores").fetchone()[0] == 20
    assert db.execute("SELECT count(*) FROM sample_bodies").fetchone()[0] == 10
