"""The metrics computed for a run that records none, kept in the index (schema version 10).

scoring/results/computed.py computes them; this keeps them with the run's content stamp, so a
second screen or process reads them instead of computing them again, and lets one process
claim a computation: another that finds a fresh claim for the same stamp waits for its row
rather than computing the same numbers beside it. A claim older than CLAIM_STALE seconds, or
whose process is gone, is taken over (a killed process leaves its claim behind).

An index that cannot be written (read-only, locked for long) never stops the numbers: the
caller computes them in memory then.

Beside them (schema version 12), `derived_figures` keeps other figures derived from a run's
samples and scores that screens and commands read on every look — its integrity, each scorer's
scale, its groups' metrics — under the run's content stamp (`content_stamps`), and for figures
that read hand reviews also the run's review stamp (`review_stamps`): re-reading the run or a
new verdict makes them stale, and the next look computes them again. These need no claim: a
second process computing the same figures at the same time costs time, not correctness. A change
to what a kind holds or how it is computed renames the kind (or clears the table in a migration):
rows are trusted for as long as the stamps match.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from evtui.records import ResultRecord

__all__ = [
    "StoredComputed", "CLAIM_STALE", "OWNER", "claim", "read", "read_many", "release", "stamp_text", "store",
    "content_stamps", "review_stamps", "read_figures", "store_figures",
]

CLAIM_STALE = 120.0  # seconds after which another process no longer waits for a claim
OWNER = f"{socket.gethostname()}:{os.getpid()}"


@dataclass(frozen=True)
class StoredComputed:
    """A run's row: the last results (for `stamp`, None when none were stored yet) and a claim."""

    stamp: str | None
    results: list[ResultRecord]
    notes: list[dict[str, str]]
    computed_at: float | None
    cost: float | None
    claim: str | None
    claim_stamp: str | None
    claimed_at: float | None


_COLUMNS = "run_id, stamp, results, notes, computed_at, cost, claim, claim_stamp, claimed_at"


def stamp_text(stamp: Sequence[Any]) -> str:
    """A run's content stamp (run_content.runs_without_metrics) as the table keeps it."""
    return json.dumps(list(stamp), default=str)


def _conn(db: Any) -> sqlite3.Connection:
    return getattr(db, "conn", db)


def _row(row: tuple) -> StoredComputed:
    results = [ResultRecord.model_construct(**{"params": {}, **item}) for item in json.loads(row[2] or "[]")]
    return StoredComputed(row[1], results, json.loads(row[3] or "[]"), *row[4:])


def read(db: Any, run_id: int) -> StoredComputed | None:
    row = _conn(db).execute(f"SELECT {_COLUMNS} FROM computed_results WHERE run_id = ?", (run_id,)).fetchone()
    return None if row is None else _row(row)


def read_many(db: Any, run_ids: Sequence[int] | None = None) -> dict[int, StoredComputed]:
    """Every stored row (of `run_ids`), by run id: one query for the runs list."""
    sql, params = f"SELECT {_COLUMNS} FROM computed_results", ()
    if run_ids is not None:
        sql += " WHERE run_id IN (SELECT value FROM json_each(?))"
        params = (json.dumps(list(run_ids)),)
    return {row[0]: _row(row) for row in _conn(db).execute(sql, params)}


def _alive(owner: str | None) -> bool:
    """Whether the process holding a claim may still be computing (another host's: assumed so)."""
    host, _, pid = (owner or "").rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def claim(db: Any, run_id: int, stamp: str, *, owner: str = OWNER) -> Literal["claimed", "done", "busy"]:
    """Claim computing `run_id`'s results for `stamp`: "done" (stored for that stamp already),
    "busy" (another live process claimed it recently: wait and read again), else "claimed".
    Raises sqlite3.Error when the index cannot be written."""
    conn = _conn(db)
    conn.execute("BEGIN IMMEDIATE")
    try:
        row = conn.execute("SELECT stamp, claim, claim_stamp, claimed_at FROM computed_results WHERE run_id = ?", (run_id,)).fetchone()
        if row is not None and row[0] == stamp:
            conn.execute("COMMIT")
            return "done"
        now = time.time()
        if row is not None and row[1] not in (None, owner) and row[2] == stamp and now - (row[3] or 0) < CLAIM_STALE and _alive(row[1]):
            conn.execute("COMMIT")
            return "busy"
        # The run still exists (a claim for a run removed meanwhile would break its reference).
        conn.execute(
            "INSERT INTO computed_results(run_id, claim, claim_stamp, claimed_at) SELECT id, ?, ?, ? FROM runs WHERE id = ? "
            "ON CONFLICT(run_id) DO UPDATE SET claim = excluded.claim, claim_stamp = excluded.claim_stamp, claimed_at = excluded.claimed_at",
            (owner, stamp, now, run_id),
        )
        conn.execute("COMMIT")
        return "claimed"
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def store(
    db: Any, run_id: int, stamp: str, results: Sequence[ResultRecord], notes: Sequence[dict[str, str]], cost: float,
    *, owner: str = OWNER,
) -> None:
    """Keep `results` for `stamp` and drop this owner's claim (another's newer claim stays)."""
    payload = json.dumps([record.model_dump() for record in results], allow_nan=True)
    conn = _conn(db)
    conn.execute(
        "INSERT INTO computed_results(run_id, stamp, results, notes, computed_at, cost) SELECT id, ?, ?, ?, ?, ? FROM runs WHERE id = ? "
        "ON CONFLICT(run_id) DO UPDATE SET stamp = excluded.stamp, results = excluded.results, notes = excluded.notes, "
        "computed_at = excluded.computed_at, cost = excluded.cost, "
        "claim = CASE WHEN claim = ? THEN NULL ELSE claim END",
        (stamp, payload, json.dumps(list(notes)), time.time(), cost, run_id, owner),
    )


def release(db: Any, run_id: int, *, owner: str = OWNER) -> None:
    """Drop this owner's claim without results (the computation was interrupted)."""
    _conn(db).execute("UPDATE computed_results SET claim = NULL WHERE run_id = ? AND claim = ?", (run_id, owner))


def content_stamps(db: Any, run_ids: Sequence[int]) -> dict[int, str]:
    """Each run's content stamp as the tables keep it (run_content.content_stamps)."""
    from evtui.store.run_content import content_stamps as stamps

    return {run_id: stamp_text(stamp) for run_id, stamp in stamps(db, list(run_ids)).items()}


def review_stamps(db: Any, run_ids: Sequence[int]) -> dict[int, str]:
    """Each run's hand-review stamp: how many score edits its human scores have and the newest's
    id ("" without any). Every verdict or edit appends one (store/score_edits.py, review/writes.py)
    and none is ever removed but with its sample, so a new review always changes it. One range of
    the human scores' partial index per run; a run nobody reviewed costs one seek."""
    if not run_ids:
        return {}
    rows = _conn(db).execute(
        "SELECT sc.run_id, count(*), max(e.id) FROM scores sc INDEXED BY scores_human JOIN score_edits e ON e.score_id = sc.id "
        "WHERE sc.run_id IN (SELECT value FROM json_each(?)) AND sc.source = 'human' GROUP BY sc.run_id",
        (json.dumps(list(run_ids)),),
    )
    stamps = {run_id: f"{count}:{top}" for run_id, count, top in rows}
    return {run_id: stamps.get(run_id, "") for run_id in run_ids}


def read_figures(db: Any, kind: str, wanted: dict[int, tuple[str, str]]) -> dict[int, Any]:
    """The kept figures of `kind` (decoded JSON) for each run of `wanted` (run id -> (content
    stamp, review stamp)) whose row was computed for exactly those stamps; runs without one are
    left out. An index that cannot be read (an old schema opened read-only) gives none."""
    if not wanted:
        return {}
    try:
        rows = _conn(db).execute(
            "SELECT run_id, stamp, reviews, figures FROM derived_figures WHERE kind = ? AND run_id IN (SELECT value FROM json_each(?))",
            (kind, json.dumps(list(wanted))),
        ).fetchall()
    except sqlite3.Error:
        return {}
    out = {}
    for run_id, stamp, reviews, figures in rows:
        if wanted.get(run_id) == (stamp, reviews):
            try:
                out[run_id] = json.loads(figures)
            except ValueError:  # a damaged row: computed again (and written over)
                continue
    return out


_STORE_WAIT_MS = 200  # a busy index is not waited on long for figures kept to save time


def store_figures(db: Any, kind: str, figures: dict[int, tuple[str, str, Any]], cost: float) -> bool:
    """Keep `figures` (run id -> (content stamp, review stamp, JSON-able figures)) as `kind`, and
    drop the runs' rows kept for other content (stale whatever their kind); a run being written
    keeps none. False when the index
    could not be written (read-only, busy): the figures were computed all the same. Inside the
    caller's transaction if it holds one, else in its own."""
    if not figures:
        return True
    conn = _conn(db)
    # A run being written changes with every batch the watcher adds: its figures are computed
    # each time rather than written beside the watcher's own writes for one look.
    settled = {run_id for (run_id,) in conn.execute(
        "SELECT id FROM runs WHERE id IN (SELECT value FROM json_each(?)) AND status != 'started'", (json.dumps(list(figures)),))}  # fmt: skip
    rows = [(run_id, kind, stamp, reviews, json.dumps(value, allow_nan=True), cost)
            for run_id, (stamp, reviews, value) in figures.items() if run_id in settled]  # fmt: skip
    if not rows:
        return True
    own = not conn.in_transaction
    (waited,) = conn.execute("PRAGMA busy_timeout").fetchone()
    conn.execute(f"PRAGMA busy_timeout={min(int(waited), _STORE_WAIT_MS)}")
    try:
        if own:
            conn.execute("BEGIN IMMEDIATE")
        conn.executemany("DELETE FROM derived_figures WHERE run_id = ? AND stamp != ?", [(row[0], row[2]) for row in rows])
        # The run still exists (a row for a run removed meanwhile would break its reference).
        conn.executemany(
            "INSERT OR REPLACE INTO derived_figures(run_id, kind, stamp, reviews, figures, cost) "
            "SELECT id, ?, ?, ?, ?, ? FROM runs WHERE id = ?",
            [(kind, stamp, reviews, text, spent, run_id) for run_id, kind, stamp, reviews, text, spent in rows],
        )
        if own:
            conn.execute("COMMIT")
        return True
    except sqlite3.Error:
        if own and conn.in_transaction:
            conn.execute("ROLLBACK")
        return False
    finally:
        conn.execute(f"PRAGMA busy_timeout={int(waited)}")
