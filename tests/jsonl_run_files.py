"""A JSONL run file written (or appended to) and indexed, for tests of what the index keeps for a
run: each write gives the file a new mtime, so ingest reads it again even within one clock tick."""

from __future__ import annotations

import json
import os
from pathlib import Path

from evtui.store.ingest.files import ingest_paths
from evtui.store.schema import connect


def write_jsonl(path: Path, rows: list[dict], *, append: bool = False) -> None:
    with path.open("a" if append else "w") as out:
        out.write("".join(json.dumps(row) + "\n" for row in rows))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


def indexed_run(tmp_path: Path, rows: list[dict]) -> tuple[Path, Path, int]:
    """(index, run file, run id) of `rows` written to logs/run.jsonl under `tmp_path` and indexed."""
    logs = tmp_path / "logs"
    logs.mkdir()
    log = logs / "run.jsonl"
    write_jsonl(log, rows)
    db_path = tmp_path / "index.db"
    assert not ingest_paths(db_path, [logs]).failures
    db = connect(db_path)
    (run_id,) = [row[0] for row in db.execute("SELECT id FROM runs")]
    db.conn.close()
    return db_path, log, run_id
