"""An index as an older evtui left it: its schema version's tables, holding what ingest reads.

Ingest writes only the current schema, so the old index is made by ingesting into a current one
and copying every row, column by column, into tables made by the old version's migrations. Run
ids and sample rowids are kept, as the old evtui would have assigned them alike.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any
from pathlib import Path

from evtui.store import schema
from evtui.store.ingest.files import ingest_paths

_TABLES = ("runs", "samples", "sample_bodies", "scores", "score_edits", "run_results", "sample_metadata")


def write_old_index(db_path: Path, version: int, paths: Sequence[Path], reader: Callable[[Path], Any] | None = None) -> None:
    """Write at `db_path` an index of schema `version` holding the runs under `paths` (read by
    `reader`, as the old evtui read them, when given)."""
    current = db_path.with_name(db_path.name + ".current")
    ingest_paths(current, list(paths), reader=reader)
    conn = sqlite3.connect(db_path, isolation_level=None)
    for step in range(1, version + 1):
        for statement in schema.migrations.MIGRATIONS[step].split(";\n"):
            if statement.strip():
                conn.execute(statement)
    conn.execute(f"PRAGMA user_version={version}")
    conn.execute("ATTACH DATABASE ? AS cur", (str(current),))
    for table in _TABLES:
        old = [row[1] for row in conn.execute(f"PRAGMA main.table_info({table})")]
        if not old:
            continue  # not in that version yet
        new = {row[1] for row in conn.execute(f"PRAGMA cur.table_info({table})")}
        columns = ", ".join(c for c in old if c in new)
        conn.execute(f"INSERT INTO main.{table}({columns}) SELECT {columns} FROM cur.{table}")
    conn.execute("DETACH DATABASE cur")
    schema.rebuild_search_index(conn)
    conn.close()
    for suffix in ("", "-wal", "-shm"):
        Path(str(current) + suffix).unlink(missing_ok=True)
