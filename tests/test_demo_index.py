"""One index per run directory, whichever command opens it: the demo runs (issue 11.7).

`evtui --demo` indexes the bundled demo in the user cache; `evtui score demo/…` used to write
demo/.evtui/index.db beside it, so jobs scored from the command line never showed in the app.
Commands run as real subprocesses with their own cache directory (XDG_CACHE_HOME).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from evtui.commands import open as open_command
from evtui.store import jobs
from evtui.store.location import default_index_path, demo_dir, demo_index_path
from evtui.store.schema import connect

CHECKOUT_DEMO = Path(__file__).resolve().parents[1] / "demo"


def evtui(cache: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    return subprocess.run([sys.executable, "-m", "evtui", *args], capture_output=True, text=True, timeout=300, env=env)


def test_score_export_and_the_app_share_the_demo_index(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    had_local = (CHECKOUT_DEMO / ".evtui").exists()
    try:
        by_path = evtui(cache, "score", str(CHECKOUT_DEMO / "qa_match.eval"), "--scorer", "includes", "--json")
        by_flag = evtui(cache, "score", "--demo", "qa_match.eval", "--scorer", "match", "--json")
        exported = evtui(cache, "export", "--demo", "--scorer", "includes")
        reported = evtui(cache, "report", "--demo", "qa_match.eval", "--json")
        made_local = (CHECKOUT_DEMO / ".evtui").exists() and not had_local
    finally:
        if not had_local:
            shutil.rmtree(CHECKOUT_DEMO / ".evtui", ignore_errors=True)
    assert by_path.returncode == 0, by_path.stderr
    assert by_flag.returncode == 0, by_flag.stderr
    assert not made_local  # the checkout stays clean
    # One index: the second job follows the first, and export sees the first job's scores.
    assert (json.loads(by_path.stdout)["job_id"], json.loads(by_flag.stdout)["job_id"]) == (1, 2)
    assert exported.returncode == 0, exported.stderr
    assert sum(1 for line in exported.stdout.splitlines() if json.loads(line)["scorer"] == "includes") >= 12
    # The report reads the same index: the run's recorded metrics and both jobs' computed ones.
    assert reported.returncode == 0, reported.stderr
    [run] = json.loads(reported.stdout)
    assert run["task"] == "qa_match" and {r["source"] for r in run["results"]} >= {"recorded", "evtui job 1", "evtui job 2"}

    parser = argparse.ArgumentParser()
    open_command.add_arguments(parser)
    app_index, _, _ = open_command.resolve_paths(parser.parse_args(["--demo"]))
    assert app_index == demo_index_path() == default_index_path(demo_dir()) == default_index_path(CHECKOUT_DEMO / "qa_match.eval")
    db = connect(app_index)
    try:
        assert [job["id"] for job in jobs.list_jobs(db)] == [1, 2]
    finally:
        db.conn.close()


def test_score_without_paths_or_demo_is_a_usage_error(tmp_path):
    done = evtui(tmp_path, "score", "--scorer", "match")
    assert done.returncode == 2 and "give PATH... or --demo" in done.stderr
    done = evtui(tmp_path, "report")
    assert done.returncode == 2 and "give PATH... or --demo" in done.stderr
