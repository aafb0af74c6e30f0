"""Secondary indexes built once after the rows when a big file fills an empty index (issue 27).

Written entry by entry as the rows arrive, the secondary indexes of samples, scores and
sample_metadata cost about 0.75 s of writing a 100k-sample Inspect log (scores_by_value and
sample_metadata_value gain entries in the middle of the tree, so their pages split and fill
again); built by SQLite's CREATE INDEX from the finished tables (a sort, pages filled in order)
they cost 0.45 s. That pays only while the tables hold nothing else, since CREATE INDEX reads
the whole table: so only for the first big file of an index (a first launch, `evtui ingest` into
a new index), checked under the file's write lock.

The indexes are dropped and made again inside the file's transaction, from their own SQL in
sqlite_master, so the index ends with the same indexes, and readers (their own snapshot) never
see it without them; a failed file rolls the drop back with its rows. Before the writer updates
or deletes anything (a sample repeated in the file) the indexes are made again first, so those
statements seek as usual.
"""

from __future__ import annotations

import sqlite3

TABLES = ("samples", "scores", "sample_metadata")
MIN_BYTES = 32 << 20  # smaller files: the schema change would cost the app's readers more than it saves


class DeferredIndexes:
    """The secondary indexes dropped for a bulk write (`restore` makes them again; idempotent)."""

    def __init__(self, conn: sqlite3.Connection, dropped: list[tuple[str, str]]) -> None:
        self.conn = conn
        self.dropped = dropped

    @classmethod
    def for_file(cls, conn: sqlite3.Connection, size: int) -> DeferredIndexes | None:
        """Drop the indexes when a file of `size` bytes is written into empty tables, else None.
        Call inside the file's write transaction."""
        if size < MIN_BYTES or any(conn.execute(f"SELECT EXISTS (SELECT 1 FROM {table})").fetchone()[0] for table in TABLES):
            return None
        marks = ", ".join("?" * len(TABLES))
        dropped = conn.execute(
            f"SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN ({marks}) "
            "ORDER BY rowid", TABLES,
        ).fetchall()  # fmt: skip  (sql IS NULL: a UNIQUE or PRIMARY KEY constraint's own index, which stays)
        for name, _ in dropped:
            conn.execute(f'DROP INDEX "{name}"')
        return cls(conn, dropped)

    def restore(self) -> None:
        for _, sql in self.dropped:
            self.conn.execute(sql)
        self.dropped = []
