"""Opening the index: a connection in WAL mode, the schema brought to SCHEMA_VERSION one version
per transaction (migrations.py holds each version's text; the version is tracked in SQLite's
`user_version` pragma), and the statements that keep the search and metadata indexes and the
planner's statistics up to date.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evtui.store.index_faults import note_opened
from evtui.store.schema.migrations import (
    MIGRATIONS,
    REINDEXED_SCORES,
    SCHEMA_VERSION,
    WITHOUT_FOREIGN_KEYS,
    add_migration_functions,
    metadata_entries,
)

if TYPE_CHECKING:
    import sqlite_utils



def open_connection(path: str | Path) -> sqlite3.Connection:
    """A plain sqlite3 connection to the index at `path` (created and migrated), in WAL mode,
    autocommit (`isolation_level=None`: callers BEGIN/COMMIT explicitly).

    One connection per thread: SQLite objects must not cross threads.
    """
    path = Path(path)
    note_opened(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), timeout=30, isolation_level=None)
    _use_wal(conn)
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=30000")
    _migrate(conn)
    return conn


def _use_wal(conn: sqlite3.Connection, wait_s: float = 30.0) -> None:
    """Switch a fresh index to WAL (a no-op once it is: the mode is stored in the file).

    The switch needs an exclusive lock and SQLite returns SQLITE_BUSY for it at once, without
    calling the busy handler, so the app's threads opening a brand-new index together (ingest,
    runs table, job runner) would fail; retry until `wait_s` instead.
    """
    deadline = time.monotonic() + wait_s
    delay = 0.005
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


class IndexDatabase:
    """The part of sqlite_utils.Database that evtui uses (`.conn`, `.execute`), without its import:
    sqlite_utils (and what it imports) cost 0.08-0.12 s of CPU at the start of every command,
    a tenth of re-scoring 100k samples. Set up as sqlite_utils.Database sets up a connection
    it is given (recursive triggers on); the connection stays in autocommit mode."""

    __slots__ = ("conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        conn.execute("PRAGMA recursive_triggers=on")

    def execute(self, sql: str, parameters: Any = None) -> sqlite3.Cursor:
        return self.conn.execute(sql) if parameters is None else self.conn.execute(sql, parameters)


def connect(path: str | Path) -> sqlite_utils.Database:
    """Open (creating and migrating if needed) the index at `path`, in WAL mode.

    One connection per thread: SQLite objects must not cross threads. The result has
    sqlite_utils.Database's `.conn` and `.execute` (IndexDatabase), which is all evtui uses.
    """
    return IndexDatabase(open_connection(path))  # type: ignore[return-value]


def migrate(db: sqlite_utils.Database | sqlite3.Connection) -> None:
    """Bring the schema to SCHEMA_VERSION, one version per transaction."""
    _migrate(getattr(db, "conn", db))


def _migrate(conn: sqlite3.Connection) -> None:
    current = conn.execute("PRAGMA user_version").fetchone()[0]
    if current > SCHEMA_VERSION:
        raise RuntimeError(
            f"index schema version {current} is newer than this evtui ({SCHEMA_VERSION}); upgrade evtui"
        )
    # A new index is made in one transaction (its WAL then holds each schema page once, not once
    # per version: 280 kB less to write); an existing one moves one version per transaction.
    steps = [range(1, SCHEMA_VERSION + 1)] if current == 0 else [range(v, v + 1) for v in range(current + 1, SCHEMA_VERSION + 1)]
    add_migration_functions(conn, current)
    reindexed = False  # scores rebuilt or re-indexed: the planner's statistics went with the old indexes
    for step in steps:
        without_keys = any(version in WITHOUT_FOREIGN_KEYS for version in step)
        if without_keys:  # a no-op inside a transaction: set before BEGIN
            conn.execute("PRAGMA foreign_keys=OFF")
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Another connection may have migrated while this one waited for the lock.
            done = conn.execute("PRAGMA user_version").fetchone()[0]
            for version in (v for v in step if v > done):
                for statement in MIGRATIONS[version].split(";\n"):
                    if statement.strip():
                        conn.execute(statement)
                reindexed = reindexed or version in REINDEXED_SCORES
                if version in WITHOUT_FOREIGN_KEYS and conn.execute("PRAGMA foreign_key_check").fetchone():
                    raise RuntimeError(f"index migration to version {version} broke a reference; nothing was changed")
                conn.execute(f"PRAGMA user_version={version}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:  # a failed COMMIT (disk full) has rolled back already
                conn.execute("ROLLBACK")
            raise
        finally:
            if without_keys:
                conn.execute("PRAGMA foreign_keys=ON")
    if reindexed and current and has_query_stats(conn):  # once, after every version (a new index has none)
        refresh_query_stats(conn)


def rebuild_search_index(db: sqlite_utils.Database | sqlite3.Connection) -> None:
    """Rebuild samples_fts from the samples table.

    Sample inserts have no FTS trigger (ingest adds FTS rows in bulk); code that inserts samples
    with its own SQL (synthetic indexes in tests and benchmarks) calls this afterwards, or
    search finds nothing and later deletes of those rows upset the FTS index.
    """
    getattr(db, "conn", db).execute("INSERT INTO samples_fts(samples_fts) VALUES ('rebuild')")


def index_sample_metadata(db: sqlite_utils.Database | sqlite3.Connection, first_rowid: int, last_rowid: int) -> None:
    """Add the sample_metadata rows of the samples newly inserted with rowids first..last.

    Sample inserts have no trigger for this (one costs 7x as much as this statement per batch);
    code that inserts samples calls it afterwards, or metadata filters and groups miss them.
    """
    getattr(db, "conn", db).execute(
        "INSERT OR IGNORE INTO sample_metadata(sample_rowid, key, run_id, value) SELECT s.id, j.key, s.run_id, j.value "
        f"FROM samples s, {metadata_entries('s.metadata')} j WHERE s.id BETWEEN ? AND ?",
        (first_rowid, last_rowid),
    )


def refresh_query_stats(db: sqlite_utils.Database | sqlite3.Connection) -> None:
    """Let SQLite's planner know how big each run is (ANALYZE of the tables filters read, sampled).

    Without statistics it guesses that `run_id = ?` picks few rows and walks a run through
    whichever index comes first, reading the samples in random order: a filter over a
    million samples took 2.3 s that way, and 0.3 s scanning them in rowid order.
    Only the tables filters read: a plain ANALYZE also counts every row of sample_bodies, which
    has no index to sample (0.37 s on a 2.7 GB index, against 2 ms for samples and scores). Ingest calls
    this after every change, a live run's too.
    """
    conn = getattr(db, "conn", db)
    conn.execute("PRAGMA analysis_limit=400")
    conn.execute("ANALYZE samples")
    conn.execute("ANALYZE scores")
    conn.execute("ANALYZE sample_metadata")


def has_query_stats(db: sqlite_utils.Database | sqlite3.Connection) -> bool:
    conn = getattr(db, "conn", db)
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'").fetchone() is not None

