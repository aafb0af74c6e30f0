"""`evtui ingest` run as a user runs it: a real subprocess over real log files."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).parent / "data"


def evtui(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evtui", "ingest", *args], capture_output=True, text=True, cwd=cwd)


def test_json_summary_and_default_index_location(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy2(DATA / "inspect" / "qa_match.eval", logs)
    shutil.copy2(DATA / "inspect" / "mc_epochs.json", logs)

    result = evtui(str(logs), "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    runs = {Path(r["path"]).name: r for r in out["runs"]}
    assert out["failed"] == []
    assert {k: runs["qa_match.eval"][k] for k in ("format", "task", "model", "status", "samples", "scores")} == {
        "format": "inspect_eval", "task": "qa_match", "model": "mockllm/model", "status": "success",
        "samples": 12, "scores": 24,
    }
    assert runs["mc_epochs.json"]["samples"] == 18
    index = logs / ".evtui" / "index.db"
    assert sqlite3.connect(index).execute("SELECT count(*) FROM runs").fetchone()[0] == 2

    again = json.loads(evtui(str(logs), "--json").stdout)
    assert [r["change"] for r in again["runs"]] == ["unchanged", "unchanged"]


def test_bad_file_exits_1_and_the_others_are_indexed(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy2(DATA / "inspect" / "qa_match.eval", logs)
    (logs / "2026-01-01T00-00-00_truncated.json").write_text('{"version": 2, "status": "success", "eval": {')
    db = tmp_path / "elsewhere.db"

    result = evtui(str(logs), "--db", str(db))
    assert result.returncode == 1
    assert "truncated.json" in result.stdout and "FAILED" in result.stdout
    assert "qa_match" in result.stdout
    assert sqlite3.connect(db).execute("SELECT task FROM runs").fetchall() == [("qa_match",)]

    as_json = json.loads(evtui(str(logs), "--db", str(db), "--json").stdout)
    assert [Path(f["path"]).name for f in as_json["failed"]] == ["2026-01-01T00-00-00_truncated.json"]
    assert as_json["failed"][0]["error"]


def test_nonexistent_path_is_a_usage_error(tmp_path):
    result = evtui(str(tmp_path / "no-such-dir"), "--db", str(tmp_path / "i.db"))
    assert result.returncode == 2
    assert "no-such-dir" in result.stderr and "no such file" in result.stderr
    assert not (tmp_path / "i.db").exists()


def test_several_paths_use_the_first_directory_for_the_index(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir(), second.mkdir()
    shutil.copy2(DATA / "inspect" / "qa_match.json", second)
    shutil.copy2(DATA / "inspect" / "model_graded.eval", tmp_path)

    result = evtui(str(tmp_path / "model_graded.eval"), str(second), str(first), "--json")
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)["runs"]) == 2
    assert (second / ".evtui" / "index.db").exists() and not (first / ".evtui").exists()
