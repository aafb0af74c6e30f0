"""The first big file of an index: secondary indexes built after its rows, and no per-row
reference checks (issue 27).

Written entry by entry as the rows arrive, the secondary indexes of samples, scores and
sample_metadata cost about 0.75 s of writing a 100k-sample Inspect log (scores_by_value and
sample_metadata_value gain entries in the middle of the tree, so their pages split and fill
again); built by SQLite's CREATE INDEX from the finished tables (a sort, pages filled in order)
they cost 0.4 s. That pays only while the tables hold nothing else, since CREATE INDEX reads
the whole table: so only for the first big file of an index (a first launch, `evtui ingest` into
a new index), checked again under the file's write lock.

The indexes are dropped and made again inside the file's transaction, from their own SQL in
sqlite_master, so the index ends with the same indexes, and readers (their own snapshot) never
see it without them; a failed file rolls the drop back with its rows. Before the writer updates
or deletes anything (a sample repeated in the file) the indexes are made again first, so those
statements seek as usual.

Such a file is also written with SQLite's foreign-key checks off (set before BEGIN, as
store/job_score_writes.py does): every reference it writes is to a row the same transaction
made (its run, sample rowids assigned under the lock), so the checks (two lookups a score, one
a sample, body and metadata row: 0.15 s per 100k samples) cannot fail, and with empty tables
and no earlier run of the file nothing it deletes has rows of other files pointing at it (the
one cascade it relies on, a replaced recorded score's edits, samples.py deletes itself).
"""

from __future__ import annotations

import sqlite3

TABLES = ("samples", "scores", "sample_metadata")
MIN_BYTES = 32 << 20  # smaller files: the schema change would cost the app's readers more than it saves


def first_big_file(conn: sqlite3.Connection, path: str, size: int) -> bool:
    """Whether a file of `size` bytes at `path` is the first big file of the index: the sample
    tables are empty and no run of `path` is indexed."""
    if size < MIN_BYTES:
        return False
    if any(conn.execute(f"SELECT EXISTS (SELECT 1 FROM {table})").fetchone()[0] for table in TABLES):
        return False
    return conn.execute("SELECT 1 FROM runs WHERE path = ?", (path,)).fetchone() is None


class DeferredIndexes:
    """The secondary indexes dropped for a bulk write (`restore` makes them again; idempotent)."""

    def __init__(self, conn: sqlite3.Connection, dropped: list[tuple[str, str]]) -> None:
        self.conn = conn
        self.dropped = dropped

    @classmethod
    def drop(cls, conn: sqlite3.Connection) -> DeferredIndexes:
        """Drop the indexes of TABLES made by CREATE INDEX (a UNIQUE or PRIMARY KEY constraint's
        own index stays). Call inside the file's write transaction. They are made again in the
        order they were made, so each table lists its indexes as before (the query planner
        weighs equal plans in that order)."""
        marks = ", ".join("?" * len(TABLES))
        dropped = conn.execute(
            f"SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN ({marks}) "
            "ORDER BY rowid", TABLES,
        ).fetchall()  # fmt: skip
        for name, _ in dropped:
            conn.execute(f'DROP INDEX "{name}"')
        return cls(conn, dropped)

    def restore(self) -> None:
        for _, sql in self.dropped:
            self.conn.execute(sql)
        self.dropped = []
