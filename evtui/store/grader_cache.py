"""SQL for the `grader_cache` table: grader replies keyed by a hash of the request.

The policy (what goes into the key, when to read and write) lives in evtui/grading/cache.py;
this module only stores and fetches rows. Rows never hold an API key.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any


@dataclass(frozen=True)
class GraderCacheRow:
    key: str
    base_url: str
    model: str
    request: str  # JSON request body
    response: str  # JSON response body as the server sent it
    input_tokens: int | None
    output_tokens: int | None
    seconds: float | None
    created: str | None


def _conn(db: Any) -> sqlite3.Connection:
    return getattr(db, "conn", db)


def fetch(db: Any, key: str) -> GraderCacheRow | None:
    """The cached reply for `key`, or None."""
    row = _conn(db).execute(
        "SELECT key, base_url, model, request, response, input_tokens, output_tokens, seconds, created"
        " FROM grader_cache WHERE key = ?",
        (key,),
    ).fetchone()
    return GraderCacheRow(*row) if row else None


def iter_keys(db: Any) -> Iterator[str]:
    """Every cached reply's key."""
    for (key,) in _conn(db).execute("SELECT key FROM grader_cache"):
        yield key


def fetch_many(db: Any, keys: list[str]) -> dict[str, GraderCacheRow]:
    """The cached replies for `keys` that exist, by key (one query per 500 keys)."""
    conn = _conn(db)
    found: dict[str, GraderCacheRow] = {}
    for start in range(0, len(keys), 500):
        chunk = keys[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(
            "SELECT key, base_url, model, request, response, input_tokens, output_tokens, seconds, created"
            f" FROM grader_cache WHERE key IN ({marks})",
            chunk,
        ):
            found[row[0]] = GraderCacheRow(*row)
    return found


def store_many(db: Any, rows: list[dict[str, Any]]) -> None:
    """Insert or replace many replies in one transaction; each dict holds `store`'s arguments."""
    if not rows:
        return
    conn = _conn(db)
    created = datetime.now(timezone.utc).isoformat(timespec="seconds")
    values = [
        (r["key"], r["base_url"], r["model"], r["request"], r["response"], r["input_tokens"], r["output_tokens"], r["seconds"], created)
        for r in rows
    ]
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.executemany(
            "INSERT OR REPLACE INTO grader_cache"
            " (key, base_url, model, request, response, input_tokens, output_tokens, seconds, created)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            values,
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def store(
    db: Any,
    *,
    key: str,
    base_url: str,
    model: str,
    request: str,
    response: str,
    input_tokens: int | None,
    output_tokens: int | None,
    seconds: float | None,
) -> None:
    """Insert or replace one reply (one short transaction)."""
    conn = _conn(db)
    conn.execute(
        "INSERT OR REPLACE INTO grader_cache"
        " (key, base_url, model, request, response, input_tokens, output_tokens, seconds, created)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            key,
            base_url,
            model,
            request,
            response,
            input_tokens,
            output_tokens,
            seconds,
            datetime.now(timezone.utc).isoformat(timespec="seconds"),
        ),
    )
    if conn.in_transaction:
        conn.commit()


def count(db: Any) -> int:
    """How many replies are cached."""
    return int(_conn(db).execute("SELECT count(*) FROM grader_cache").fetchone()[0])
