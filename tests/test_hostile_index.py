"""A fault of the index itself — a damaged file, a full disk — is one line in every command,
naming the index and what to do, never a traceback (the one catch is in evtui/cli.py, the message
in store/index_faults.index_fault_message). Each command runs as a child process, as the user runs it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data" / "inspect"


def evtui(*args: str, cwd: Path, fsize: int | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """`evtui ARGS` in a child; with `fsize`, files it writes may not grow past that many bytes
    (RLIMIT_FSIZE, SIGXFSZ ignored: a write past it fails with EFBIG, as on a full disk)."""
    code = "import sys, runpy\n"
    if fsize is not None:
        code += ("import resource, signal\nsignal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
                 f"resource.setrlimit(resource.RLIMIT_FSIZE, ({fsize}, {fsize}))\n")
    code += f"sys.argv = ['evtui', *{list(args)!r}]\nrunpy.run_module('evtui', run_name='__main__')\n"
    env = {**os.environ, "PYTHONPATH": str(REPO), "OPENBLAS_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd,
                          stdin=subprocess.DEVNULL)


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy2(DATA / "qa_match.eval", logs / "qa_match.eval")
    return logs


def damage(logs: Path) -> Path:
    index = logs / ".evtui" / "index.db"
    index.parent.mkdir(exist_ok=True)
    index.write_bytes(b"not an index: " + bytes(range(256)) * 64)
    return index


COMMANDS = {
    "open": ["logs"],
    "ingest": ["ingest", "logs"],
    "score": ["score", "logs", "--scorer", "match"],
    "export": ["export", "logs", "--format", "csv"],
    "compare": ["compare", "logs/qa_match.eval", "logs/qa_match.eval"],
    "report": ["report", "logs"],
    "agreement": ["agreement", "logs", "--scorer", "match"],
    "watch": ["watch", "logs"],
    "review queues": ["review", "queues", "logs"],
    "review export": ["review", "export", "logs"],
    "review import": ["review", "import", "verdicts.jsonl", "logs"],
    "review queue": ["review", "queue", "logs/qa_match.eval", "--scorer", "match", "--name", "q", "--random", "3"],
    "grade export-batch": ["grade", "export-batch", "logs", "--scorer", "match", "--out", "requests.jsonl"],
    "grade import-batch": ["grade", "import-batch", "results.jsonl", "logs"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_damaged_index_is_one_line_in_every_command(logs, command):
    """RUN_DIR/.evtui/index.db is not a database: exit 2 and one line — `evtui CMD: the index
    PATH is damaged (…): move it aside and run the command again …` — no traceback."""
    index = damage(logs)
    (logs.parent / "verdicts.jsonl").write_text("{}\n")
    reply = {"choices": [{"message": {"role": "assistant", "content": "GRADE: C"}}]}
    (logs.parent / "results.jsonl").write_text(json.dumps({"custom_id": "0" * 64, "response": {"status_code": 200, "body": reply}}) + "\n")
    done = evtui(*COMMANDS[command], cwd=logs.parent)
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.returncode == 2, (done.returncode, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"the index {index} is damaged" in lines[0] and "move it aside" in lines[0], done.stderr


@pytest.mark.parametrize("command", ["score", "review queue", "review import", "grade import-batch"])
def test_a_full_disk_is_one_line_in_every_command_that_writes(logs, command):
    """The index's disk full (RLIMIT_FSIZE) while a command writes to it: exit 2 and one line
    naming the index — `cannot write the index PATH (…): is its disk full or read-only? …`."""
    index = logs / ".evtui" / "index.db"
    assert evtui("ingest", "logs", cwd=logs.parent).returncode == 0
    line = {"run": "qa_match.eval", "sample_id": "1", "epoch": 1, "scorer": "match", "reviewer": "alice", "value": "C",
            "time": "2026-01-01T00:00:00Z"}
    (logs.parent / "verdicts.jsonl").write_text(
        "".join(json.dumps({**line, "sample_id": str(i), "note": "n" * 2000}) + "\n" for i in range(1, 13)))
    reply = {"choices": [{"message": {"role": "assistant", "content": "GRADE: C " + "x" * 4000}}]}
    (logs.parent / "results.jsonl").write_text("".join(
        json.dumps({"custom_id": f"{i:064x}", "response": {"status_code": 200, "body": reply}}) + "\n" for i in range(40)))
    done = evtui(*COMMANDS[command], cwd=logs.parent, fsize=index.stat().st_size // 8)
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert f"cannot write the index {index}" in done.stderr and "disk full" in done.stderr, done.stderr
