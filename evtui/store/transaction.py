"""Transactions on an index connection (autocommit: the caller says BEGIN and COMMIT): one write
transaction, or one state of the index for several reads."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class transaction:  # noqa: N801 - used as `with transaction(conn):`, like a function
    """BEGIN IMMEDIATE … COMMIT, rolling back on any exception (KeyboardInterrupt too). A COMMIT
    that fails (a full disk) is rolled back where SQLite left the transaction open, and its own
    error is the one raised."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            return
        try:
            self.conn.execute("COMMIT")
        except sqlite3.Error:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise


@contextmanager
def read_snapshot(db: Any) -> Iterator[sqlite3.Connection]:
    """Several reads from one state of the index, even while another process writes it (and a
    figure kept under the stamp read with them): BEGIN … COMMIT, unless the caller already holds
    a transaction, whose state they share."""
    conn = getattr(db, "conn", db)
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN")
    try:
        yield conn
    finally:
        if own and conn.in_transaction:
            conn.execute("COMMIT")
