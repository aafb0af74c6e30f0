"""The store calls the screens make from their thread workers, each on its own connection.

SQLite connections must not cross threads, so every call opens the index, queries, closes.
"""

from __future__ import annotations

from pathlib import Path

from evtui.store import queries_ui
from evtui.store.schema import connect


def fetch_runs(db_path: Path) -> list[queries_ui.RunSummary]:
    """Every run for the runs screen."""
    db = connect(db_path)
    try:
        return queries_ui.list_run_summaries(db)
    finally:
        db.conn.close()


def fetch_run(db_path: Path, run_id: int) -> tuple[queries_ui.RunSummary | None, list[queries_ui.ResultLine]]:
    """One run and all its result lines (recorded and computed)."""
    db = connect(db_path)
    try:
        return queries_ui.get_run_summary(db, run_id), queries_ui.list_result_lines(db, run_id)
    finally:
        db.conn.close()


def failed_files(db_path: Path) -> list[tuple[str, str]]:
    """(path, error) for files the index could not read."""
    if not Path(db_path).exists():
        return []
    db = connect(db_path)
    try:
        return queries_ui.list_failed_files(db)
    finally:
        db.conn.close()


