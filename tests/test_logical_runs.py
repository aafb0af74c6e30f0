"""One logical run per logical run on a local log directory (issue 33): Inspect's sharded runs,
their merged logs and companions, and an eval set's attempts at one task.

Fixtures: tests/data/inspect_logical/, written by the real inspect_ai with
scripts/make_logical_run_fixtures.py (see its docstring for what each holds).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evtui.readers import detect
from evtui.store.ingest.files import ingest_paths
from evtui.store.queries.runs import attempt_groups, get_run, list_runs, run_attempts
from evtui.store.schema import connect

DATA = Path(__file__).parent / "data" / "inspect_logical"
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    target = tmp_path / "logs"
    shutil.copytree(DATA, target)
    return target


def _runs(db_path: Path, **kwargs):
    db = connect(db_path)
    try:
        return list_runs(db, **kwargs)
    finally:
        db.conn.close()


def _shard_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*/*.eval"))


# --- sharded runs -----------------------------------------------------------------------------


def test_a_merged_log_replaces_its_shards_and_companions_are_not_runs(logs: Path, tmp_path: Path) -> None:
    report = ingest_paths(tmp_path / "index.db", [logs / "sharded"])
    assert report.failures == []  # scans/ and merged.checkpoints/ are neither runs nor failures
    paths = sorted(Path(f.path).relative_to(logs / "sharded").as_posix() for f in report.files)
    assert paths == ["merged.eval", "unmerged.shards"]
    merged = next(r for r in _runs(tmp_path / "index.db") if r.path.endswith("merged.eval"))
    assert (merged.status, merged.samples_indexed, merged.format) == ("success", 6, "inspect_eval")


def test_shards_without_a_merged_log_are_one_run_made_of_its_shards(logs: Path, tmp_path: Path) -> None:
    ingest_paths(tmp_path / "index.db", [logs / "sharded"])
    db = connect(tmp_path / "index.db")
    try:
        row = next(r for r in list_runs(db) if r.path.endswith("unmerged.shards"))
        detail = get_run(db, row.id)
        sample_ids = [r[0] for r in db.execute("SELECT sample_id FROM samples WHERE run_id = ? ORDER BY id", [row.id])]
    finally:
        db.conn.close()
    assert (row.format, row.task, row.status) == ("inspect_shards", "sharded_qa", "error")  # shard 2 failed
    shards = detail.metadata["shards"]
    assert [(s["shard"], s["status"]) for s in shards] == [("0", "success"), ("1", "success"), ("2", "error")]
    # shard 1's current attempt is its later one (the first failed), as Inspect orders attempts
    attempts_1 = sorted(p.name for p in (logs / "sharded" / "unmerged.shards" / "1").glob("*.eval"))
    assert shards[1]["log"] == attempts_1[-1]
    assert shards[2]["error"] and "worker lost its sandbox" in shards[2]["error"]
    assert "worker lost its sandbox" in row.error
    assert shards[2]["samples"] == 2  # the shard's slice, not the whole dataset
    assert sample_ids[:4] == ["1", "2", "3", "4"]  # shards 0 and 1, in shard order
    assert row.samples_total == 6
    assert row.duration == 3.0  # from the first shard's start to the last one's end (they run side by side)


def test_a_shard_samples_detail_opens_from_its_attempt(logs: Path, tmp_path: Path) -> None:
    ingest_paths(tmp_path / "index.db", [logs / "sharded"])
    db = connect(tmp_path / "index.db")
    try:
        run_path, fmt, ref = db.execute(
            "SELECT r.path, r.format, s.detail_ref FROM samples s JOIN runs r ON r.id = s.run_id "
            "WHERE r.format = 'inspect_shards' AND s.sample_id = '3'").fetchone()
    finally:
        db.conn.close()
    detail = detect.load_sample_detail(fmt, Path(run_path), ref)
    assert detail["id"] == 3 and detail["messages"]
    with pytest.raises(detect.ReaderError, match="not a shard sample reference"):
        detect.load_sample_detail(fmt, Path(run_path), "../../evalset/x.eval::samples/1_epoch_1.json")


def test_a_shard_retried_after_the_merge_shows_the_shards_again(logs: Path, tmp_path: Path) -> None:
    shards = logs / "sharded" / "merged.shards"
    merged = logs / "sharded" / "merged.eval"
    # A later attempt in shard 1 (Inspect names attempts by their start time): written after
    # the merge and not in its ledger, so the merged log no longer covers the shards.
    first = _shard_files(shards)[1]
    retry = first.parent / ("2099-01-01T00-00-00-00-00" + first.name[len("2026-11-28T03-56-20-00-00"):])
    shutil.copy(first, retry)
    stamp = merged.stat().st_mtime
    os.utime(retry, (stamp + 10, stamp + 10))
    report = ingest_paths(tmp_path / "index.db", [logs / "sharded"])
    paths = sorted(Path(f.path).name for f in report.files)
    assert paths == ["merged.eval", "merged.shards", "unmerged.shards"]


def test_without_a_ledger_entry_the_mtime_rule_decides_as_inspect_does(logs: Path, tmp_path: Path) -> None:
    """Inspect's own listing (without_merged_shards) and evtui agree on which shards a merged log
    hides when the ledger does not name the attempt: shards written before the merge are hidden,
    a tie or a later write keeps them."""
    from inspect_ai.log import list_eval_logs
    from inspect_ai.log._file import without_merged_shards

    shards = logs / "sharded" / "merged.shards"
    merged = logs / "sharded" / "merged.eval"
    for path in _shard_files(shards):  # renamed: the ledger no longer names them
        path.rename(path.with_name("x" + path.name))
    for stamp_offset, hidden in ((-5, True), (0, False), (5, False)):
        base = merged.stat().st_mtime
        for path in _shard_files(shards):
            os.utime(path, (base + stamp_offset, base + stamp_offset))
        inspect_visible = {Path(log.name.removeprefix("file://")).relative_to(logs / "sharded").parts[0]
                           for log in without_merged_shards(list_eval_logs(str(logs / "sharded")))}
        assert ("merged.shards" not in inspect_visible) is hidden
        found = {p.name for p in detect.find_run_files(logs / "sharded")}
        assert ("merged.shards" not in found) is hidden, stamp_offset


def test_the_watcher_signature_of_a_shard_set_follows_its_current_attempts(logs: Path) -> None:
    folder = logs / "sharded" / "unmerged.shards"
    size, _, _ = detect.run_file_signature(folder)
    current = [folder / s / sorted(p.name for p in (folder / s).glob("*.eval"))[-1] for s in ("0", "1", "2")]
    assert size == sum(p.stat().st_size for p in current)


# --- eval sets ---------------------------------------------------------------------------------


def test_an_eval_sets_retries_are_attempts_of_one_task_latest_success_first(logs: Path, tmp_path: Path) -> None:
    report = ingest_paths(tmp_path / "index.db", [logs / "evalset"])
    assert report.failures == []  # eval-set.json and logs.json are manifests, not runs
    shown = _runs(tmp_path / "index.db")
    assert sorted((r.task, r.attempts, r.attempt, r.status, r.samples_indexed) for r in shown) == [
        ("flaky", 3, 1, "success", 3), ("steady", 2, 1, "success", 3)]
    manifest = json.loads((logs / "evalset" / "eval-set.json").read_text())
    assert {r.eval_set for r in shown} == {manifest["eval_set_id"]}
    db = connect(tmp_path / "index.db")
    try:
        flaky = next(r for r in shown if r.task == "flaky")
        attempts = run_attempts(db, flaky.id)
        named = get_run(db, flaky.id).metadata["eval_set"]
    finally:
        db.conn.close()
    assert [(a.attempt, a.status, a.samples_indexed) for a in attempts] == [
        (1, "success", 3), (2, "success", 2), (3, "error", 2)]
    assert named == {"id": manifest["eval_set_id"], "manifest": str(logs / "evalset" / "eval-set.json"),
                     "tasks": 2, "task": "flaky"}
    assert len(_runs(tmp_path / "index.db", all_attempts=True)) == 5


def test_a_log_the_eval_set_topped_up_is_reindexed_as_the_tasks_latest_attempt(logs: Path, tmp_path: Path) -> None:
    steady = sorted((logs / "evalset").glob("*_steady_*.eval"))
    topped_up = tmp_path / steady[-1].name
    shutil.move(steady[-1], topped_up)  # the directory as the first eval_set() call left it
    ingest_paths(tmp_path / "index.db", [logs / "evalset"])
    before = next(r for r in _runs(tmp_path / "index.db") if r.task == "steady")
    assert (before.samples_indexed, before.attempts) == (2, 1)
    shutil.move(topped_up, steady[-1])  # the second call topped the task up to 3 samples
    report = ingest_paths(tmp_path / "index.db", [logs / "evalset"])
    assert [Path(f.path).name for f in report.files if f.change == "new"] == [steady[-1].name]
    after = next(r for r in _runs(tmp_path / "index.db") if r.task == "steady")
    assert (after.samples_indexed, after.attempts, after.path) == (3, 2, str(steady[-1]))
    # With retry_cleanup on (Inspect's default) the older log is removed: still an attempt, kept as missing.
    steady[0].unlink()
    ingest_paths(tmp_path / "index.db", [logs / "evalset"])
    db = connect(tmp_path / "index.db")
    try:
        group = attempt_groups(db)[after.id]
        assert [r.missing for r in run_attempts(db, after.id)] == [False, True]
    finally:
        db.conn.close()
    assert group.head == after.id


def test_report_covers_the_latest_attempt_of_each_task(logs: Path, tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "evtui", "report", str(logs / "evalset"), "--db", str(tmp_path / "i.db"), "--json"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120,
    )
    assert out.returncode == 0, out.stderr
    runs = json.loads(out.stdout)
    assert sorted((r["task"], Path(r["path"]).name) for r in runs) == sorted(
        (task, sorted((logs / "evalset").glob(f"*_{task}_*.eval"))[-1].name) for task in ("flaky", "steady"))


def test_the_runs_table_says_how_many_attempts_a_task_had(logs: Path, tmp_path: Path) -> None:
    from evtui.app.run_cells import run_cells

    ingest_paths(tmp_path / "index.db", [logs / "evalset"])
    cells = {r.task: run_cells(r) for r in _runs(tmp_path / "index.db")}
    status = 3  # Task, Model, Run, Status, …
    assert cells["flaky"][status].plain == "success (3 attempts)"
    assert cells["steady"][status].plain == "success (2 attempts)"


def test_the_watcher_reads_a_shard_set_again_when_a_shard_has_a_new_attempt(logs: Path, tmp_path: Path) -> None:
    from evtui.watch.poller import RunDirWatcher

    watcher = RunDirWatcher(logs / "sharded", tmp_path / "index.db", interval=0.01, max_wait_ticks=1)
    first = []
    for _ in range(3):  # a new file is read once it has settled (the same over two looks)
        first += watcher.poll_once().ingested
    assert sorted(Path(f.path).name for f in first) == ["merged.eval", "unmerged.shards"]
    shard_2 = logs / "sharded" / "unmerged.shards" / "2"
    failed = next(shard_2.glob("*.eval"))
    retry = shard_2 / ("2099-01-01T00-00-00-00-00" + failed.name[len("2026-11-28T03-56-25-00-00"):])
    shutil.copy(logs / "sharded" / "unmerged.shards" / "0" / next((logs / "sharded" / "unmerged.shards" / "0").glob("*.eval")).name, retry)
    changed = []
    for _ in range(5):
        changed += watcher.poll_once().ingested
    assert [(Path(f.path).name, f.status) for f in changed] == [("unmerged.shards", "success")]
    assert (logs / "sharded" / "unmerged.shards") in list(detect.find_run_files(logs / "sharded" / "unmerged.shards"))


def test_the_run_screen_and_report_list_each_shards_status_and_the_attempts(logs: Path, tmp_path: Path) -> None:
    from evtui.app.run_summary import logical_run_facts
    from evtui.commands.report import build_report

    ingest_paths(tmp_path / "index.db", [logs])
    db = connect(tmp_path / "index.db")
    try:
        runs = {r.path.rsplit("/", 1)[-1] if r.format == "inspect_shards" else r.task: r for r in list_runs(db)}
        sharded = get_run(db, runs["unmerged.shards"].id)
        flaky = get_run(db, runs["flaky"].id)
    finally:
        db.conn.close()
    facts = dict(logical_run_facts(sharded))
    assert facts["Shards"] == "0: success 2/2, 1: success 2/2, 2: error 0/2"
    assert dict(logical_run_facts(flaky))["Attempts"].startswith("3 logs of this eval-set task; this is attempt 1")
    report = build_report(tmp_path / "index.db", [runs["unmerged.shards"].id, runs["flaky"].id], [])
    by_id = {entry["run_id"]: entry for entry in report}
    assert [s["status"] for s in by_id[runs["unmerged.shards"].id]["shards"]] == ["success", "success", "error"]
    assert by_id[runs["flaky"].id]["attempts"] == 3
