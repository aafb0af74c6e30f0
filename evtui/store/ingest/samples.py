"""Change-aware batch writing of one run's samples and recorded scores (used by ingest.py).

Rowids are assigned here, under the file's write transaction: new samples get consecutive ids
(so their FTS rows are added with one INSERT … SELECT per batch), changed samples keep theirs
(so scores made in evtui, which reference the rowid, stay attached).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

from evtui.store.ingest import rows as R
from evtui.store.ingest.bulk_indexes import DeferredIndexes
from evtui.store.schema import index_sample_metadata


_FIELDS = R.SAMPLE_FIELD_COUNT


class SampleWriter:
    """Buffers sample rows and writes them in batches, touching only what changed."""

    def __init__(self, conn: sqlite3.Connection, run_id: int, deferred: DeferredIndexes | None = None) -> None:
        self.conn = conn
        self.run_id = run_id
        self.deferred = deferred  # indexes dropped for a bulk write: made again before any update or delete
        # (sample_id, epoch) -> (rowid, content digest) of what the index holds for this run
        self.existing: dict[tuple[str, int], tuple[int, bytes | None]] = {
            (sid, epoch): (rowid, digest)
            for rowid, sid, epoch, digest in conn.execute(
                "SELECT id, sample_id, epoch, content_hash FROM samples WHERE run_id = ?", (run_id,)
            )
        }
        self.seen: set[tuple[str, int]] = set()
        self.next_sample = conn.execute("SELECT IFNULL(MAX(id), 0) + 1 FROM samples").fetchone()[0]
        self.next_score = conn.execute("SELECT IFNULL(MAX(id), 0) + 1 FROM scores").fetchone()[0]
        # A new sample's body is a plain INSERT: with foreign keys on, SQLite's REPLACE looks each
        # row up first (0.2 s of writing 100k samples). Only a body left behind by a sample deleted
        # without its cascade could stand in the way of a new rowid; then REPLACE, as before.
        self.new_bodies_verb = "INSERT" if conn.execute(
            "SELECT IFNULL(MAX(sample_rowid), 0) FROM sample_bodies").fetchone()[0] < self.next_sample else "INSERT OR REPLACE"
        self.inserts: list[tuple[Any, ...]] = []
        self.updates: list[tuple[Any, ...]] = []
        self.new_bodies: list[tuple[Any, ...]] = []  # sample_bodies rows of inserts
        self.changed_bodies: list[tuple[Any, ...]] = []  # and of updates
        self.new_scores: list[tuple[int, list[R.ScorePayload]]] = []
        self.replaced_scores: list[tuple[int, list[R.ScorePayload]]] = []
        self.pending = 0
        self.pending_bytes = 0
        self.read = self.scores = self.written = 0

    def add_row(self, row: list[Any], scores: list[R.ScorePayload]) -> None:
        """A sample as R.sample_row made it (here or in ingest_worker's process)."""
        key = (row[0], row[1])
        seen = self.seen
        if key in seen:  # a repeat of this file's sample may overwrite a pending row
            self.flush()
        self.read += 1
        self.scores += len(scores)
        seen.add(key)
        known = self.existing.get(key)
        digest = row[11]
        if known is not None and known[1] == digest:
            return
        # (Locals and one slice each: this runs for every sample of a big file.)
        n = _FIELDS
        if known is None:
            rowid = self.next_sample
            self.next_sample = rowid + 1
            self.inserts.append((rowid, self.run_id, *row[:n]))
            self.new_scores.append((rowid, scores))
            self.new_bodies.append((rowid, *row[n:]))
        else:
            rowid = known[0]
            self.updates.append((*row[2:n], rowid))
            self.replaced_scores.append((rowid, scores))
            self.changed_bodies.append((rowid, *row[n:]))
        # A sample repeated later in the same file (a re-run) replaces this one: last wins.
        self.existing[key] = (rowid, digest)
        self.pending += 1
        self.pending_bytes += len(row[16]) + len(row[17]) + len(row[20]) + len(row[19] or "")
        self.written += 1

    def flush(self) -> None:
        if not self.pending:
            return
        conn = self.conn
        if self.inserts:
            conn.executemany(
                f"INSERT INTO samples(id, run_id, {R.SAMPLE_COLUMNS}) VALUES ({', '.join('?' * (R.SAMPLE_FIELD_COUNT + 2))})",
                self.inserts,
            )
            # New rowids are consecutive within a batch (assigned here under the write lock).
            first, last = self.inserts[0][0], self.inserts[-1][0]
            conn.execute(
                "INSERT INTO samples_fts(rowid, input_text, output_text) "
                "SELECT id, input_text, output_text FROM samples WHERE id BETWEEN ? AND ?",
                (first, last),
            )
            index_sample_metadata(conn, first, last)
        if self.updates:
            if self.deferred is not None:
                self.deferred.restore()
            columns = R.SAMPLE_COLUMNS.split(", ")[2:]
            conn.executemany(
                f"UPDATE samples SET {', '.join(c + ' = ?' for c in columns)} WHERE id = ?", self.updates
            )
            self._drop_replaced_scores()
        if self.new_bodies:
            conn.executemany(f"{self.new_bodies_verb} INTO sample_bodies(sample_rowid, {R.BODY_COLUMNS}) "
                             "VALUES (?, ?, ?)", self.new_bodies)
        if self.changed_bodies:
            conn.executemany(f"INSERT OR REPLACE INTO sample_bodies(sample_rowid, {R.BODY_COLUMNS}) "
                             "VALUES (?, ?, ?)", self.changed_bodies)
        self._insert_scores(self.new_scores + self.replaced_scores)
        self.inserts.clear()
        self.updates.clear()
        self.new_bodies.clear()
        self.changed_bodies.clear()
        self.new_scores.clear()
        self.replaced_scores.clear()
        self.pending = self.pending_bytes = 0

    def _drop_replaced_scores(self) -> None:
        """Delete the recorded scores of updated samples, except those edited in evtui."""
        protected: set[tuple[int, str]] = set()
        rowids = [rowid for rowid, _ in self.replaced_scores]
        for chunk in _chunks(rowids, 500):
            marks = ", ".join("?" * len(chunk))
            protected |= set(
                self.conn.execute(
                    f"SELECT sc.sample_rowid, sc.scorer FROM scores sc WHERE sc.source = 'log' "
                    f"AND sc.sample_rowid IN ({marks}) AND EXISTS (SELECT 1 FROM score_edits e "
                    f"WHERE e.score_id = sc.id AND e.origin != 'log')",
                    chunk,
                ).fetchall()
            )
            unedited = (f"SELECT sc.id FROM scores sc WHERE sc.source = 'log' AND sc.sample_rowid IN ({marks}) AND NOT EXISTS "
                        f"(SELECT 1 FROM score_edits e WHERE e.score_id = sc.id AND e.origin != 'log')")  # fmt: skip
            # Their edits (the file's history) explicitly: a bulk write has no cascades (bulk_indexes.py).
            self.conn.execute(f"DELETE FROM score_edits WHERE score_id IN ({unedited})", chunk)
            self.conn.execute(f"DELETE FROM scores WHERE id IN ({unedited})", chunk)
        self.replaced_scores = [
            (rowid, [p for p in payloads if (rowid, p[0][0]) not in protected])
            for rowid, payloads in self.replaced_scores
        ]

    def _insert_scores(self, batch: list[tuple[int, list[R.ScorePayload]]]) -> None:
        run_id = self.run_id
        score_id = self.next_score
        score_rows: list[tuple[Any, ...]] = []
        edit_rows: list[tuple[Any, ...]] = []
        add = score_rows.append
        for rowid, payloads in batch:
            for row, edits in payloads:
                add((score_id, rowid, run_id, *row))
                if edits:  # few scores carry an edit history
                    edit_rows.extend((score_id, *edit) for edit in edits)
                score_id += 1
        self.next_score = score_id
        if score_rows:
            self.conn.executemany(
                f"INSERT INTO scores({R.SCORE_COLUMNS}) VALUES ({', '.join('?' * 12)})", score_rows
            )
        if edit_rows:
            self.conn.executemany(
                f"INSERT INTO score_edits({R.EDIT_COLUMNS}) VALUES ({', '.join('?' * 11)})", edit_rows
            )

    def delete_vanished(self) -> int:
        gone = [(rowid,) for key, (rowid, _) in self.existing.items() if key not in self.seen]
        if gone and self.deferred is not None:
            self.deferred.restore()
        self.conn.executemany("DELETE FROM samples WHERE id = ?", gone)
        return len(gone)


def _chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
