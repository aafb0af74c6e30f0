"""Reading Inspect's sample buffer: found where Inspect puts it, read-only, live counts and metrics.

Buffers come from Inspect itself: its SampleBufferDatabase class (the code a running eval
uses) for precise states, and a real eval in a child process for the end-to-end story.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai._display.core.display import TaskDisplayMetric
from inspect_ai._util.file import filesystem
from inspect_ai.log import EvalSampleSummary
from inspect_ai.log._recorders.buffer.database import SampleBufferDatabase, log_dir_hash

from evtui.watch import sample_buffer as sb
from tests.live_eval import release, start_gated_eval, stop, wait_until


def inspect_buffer(root: Path, log_path: Path) -> SampleBufferDatabase:
    """A buffer written by Inspect's own code, in `root` (the samplebuffer folder)."""
    return SampleBufferDatabase(str(log_path), db_dir=root)


def summary(sample_id: int, completed: bool = False, error: str | None = None) -> EvalSampleSummary:
    return EvalSampleSummary(
        id=sample_id, epoch=1, input=f"Say {sample_id}", target=str(sample_id), completed=completed, error=error
    )


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.mark.parametrize("log_dir", ["/tmp/logs", "/tmp/logs/", "/tmp/a dir/ü%/logs"])
def test_log_dir_key_matches_inspect(log_dir):
    assert sb.log_dir_key(log_dir) == log_dir_hash(filesystem(log_dir).path_as_uri(log_dir))


def test_buffer_is_found_under_the_xdg_data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert sb.sample_buffer_root() == tmp_path / "data" / "inspect_ai" / "samplebuffer"


def test_in_flight_samples_and_metrics(tmp_path):
    root = tmp_path / "samplebuffer"
    log = tmp_path / "logs" / "2026-01-01T00-00-00_task_abc.eval"
    buffer = inspect_buffer(root, log)
    try:
        buffer.start_sample(summary(1))
        buffer.start_sample(summary(2))
        buffer.start_sample(summary(3))
        buffer.complete_sample(summary(2, completed=True), sample_metadata=None)
        buffer.update_metrics(
            [
                TaskDisplayMetric(scorer="match", name="accuracy", value=0.5, headline=True),
                TaskDisplayMetric(scorer="match", name="stderr", value=float("nan")),
            ]
        )
        snapshot = sb.read_buffer(log, root=root)
    finally:
        buffer.cleanup()
    assert snapshot is not None
    assert snapshot.db_path.parent.name == sb.log_dir_key(log.parent)
    assert snapshot.pid is not None and snapshot.process_alive
    assert [(s.id, s.completed) for s in snapshot.samples] == [("1", False), ("2", True), ("3", False)]
    assert (snapshot.running, snapshot.completed_unflushed) == (2, 1)
    accuracy, stderr = snapshot.metrics
    assert (accuracy.scorer, accuracy.name, accuracy.value, accuracy.headline) == ("match", "accuracy", 0.5, True)
    assert stderr.value is None  # NaN until there are scores


def test_version_changes_on_every_write_and_flushed_samples_leave(tmp_path):
    root = tmp_path / "samplebuffer"
    log = tmp_path / "logs" / "run.eval"
    buffer = inspect_buffer(root, log)
    try:
        buffer.start_sample(summary(1))
        db = sb.locate_buffer(log, root)
        first = sb.read_version(db)
        buffer.complete_sample(summary(1, completed=True), sample_metadata=None)
        second = sb.read_version(db)
        buffer.remove_samples([(1, 1)])  # flushed into the log file
        snapshot = sb.read_buffer(log, root=root)
    finally:
        buffer.cleanup()
    assert first is not None and second is not None and second != first
    assert snapshot is not None and snapshot.samples == ()
    assert sb.read_buffer(log, root=root) is None  # cleaned up when the task finished
    assert sb.read_version(db) is None


def test_a_buffer_left_by_a_dead_process_says_so(tmp_path):
    root = tmp_path / "samplebuffer"
    log = tmp_path / "logs" / "killed.eval"
    buffer = inspect_buffer(root, log)
    buffer.start_sample(summary(7))
    buffer.close()
    (db,) = sb.find_buffer_dbs(log, root)
    orphan = db.with_name(f"{log.name}.{dead_pid()}.db")
    db.rename(orphan)
    snapshot = sb.read_buffer(log, root=root)
    assert snapshot is not None and snapshot.db_path == orphan
    assert not snapshot.process_alive
    assert snapshot.running == 1


def test_found_when_the_writer_named_the_log_dir_differently(tmp_path):
    """Inspect hashes the log dir as it was given (e.g. through a symlink); the name still matches."""
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    root = tmp_path / "samplebuffer"
    buffer = inspect_buffer(root, link / "run.eval")
    try:
        buffer.start_sample(summary(1))
        snapshot = sb.read_buffer(real / "run.eval", root=root)
    finally:
        buffer.cleanup()
    assert snapshot is not None and snapshot.running == 1


def test_reading_never_creates_or_breaks_on_a_missing_or_foreign_file(tmp_path):
    root = tmp_path / "samplebuffer"
    log = tmp_path / "logs" / "run.eval"
    gone = root / sb.log_dir_key(log.parent) / f"{log.name}.123.db"
    assert sb.read_buffer(log, root=root, db_path=gone) is None
    assert sb.read_version(gone) is None
    assert not gone.exists()  # mode=ro: a vanished buffer is not re-created empty
    gone.parent.mkdir(parents=True)
    gone.write_bytes(b"not a database at all")
    assert sb.read_buffer(log, root=root) is None
    assert sb.read_version(gone) is None


def test_a_real_eval_shows_its_in_flight_samples_then_its_buffer_goes(tmp_path):
    logs, data, gates = tmp_path / "logs", tmp_path / "data", tmp_path / "gates"
    root = data / "inspect_ai" / "samplebuffer"
    proc = start_gated_eval(logs, data, gates, samples=4, max_samples=2)
    try:
        log = wait_until(lambda: next(iter(logs.glob("*.eval")), None), "the log file", proc=proc)

        def snapshot():
            return sb.read_buffer(log, root=root)

        running = wait_until(lambda: (s := snapshot()) and s.running == 2 and s, "two samples in flight", proc=proc)
        assert {s.id for s in running.samples} == {"1", "2"}
        assert running.process_alive and running.pid == proc.pid
        release(gates, 1)
        # Sample 1 completes and is flushed out of the buffer; sample 3 starts in its place.
        later = wait_until(
            lambda: (s := snapshot()) and {x.id for x in s.samples} == {"2", "3"} and s, "sample 3 started", proc=proc
        )
        assert later.version > running.version
        release(gates)
        assert proc.wait(timeout=60) == 0
        assert snapshot() is None  # Inspect deletes the buffer when the task finishes
    finally:
        stop(proc)
