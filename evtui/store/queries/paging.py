"""Keyset-paged sample lists: counts, pages in any sort order, and jumps to a position.

Paging is keyset, never OFFSET: a page is "the `limit` rows after key `after`" in the chosen
order, where a key is the sort values plus the rowid of the last row shown. `sample_at` is the
one place that walks to a position (to jump), and it only reads index-sized columns.

`filter` is the filter language of filters.py; `search` is words matched with FTS5 over
input and output (each word as a prefix, all words required). Score columns name scores as in
the filter language: `match` (effective: human > latest job > log), `match@log`, `match@3`.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from evtui.store.queries.effective_scores import score_column_sql, split_score_column
from evtui.store.queries.filters import Seek, compile_filter_plan
from evtui.store.queries.runs import Db, conn_of
from evtui.store.queries.ui import indexed_sample_count

__all__ = ["SORTS", "ScoreCell", "SampleRow", "SamplePage", "count_samples", "page_samples", "sample_at", "fts_query"]

PREVIEW_CHARS = 300  # list rows carry only the start of long texts
# When a filter reads its candidates through an index instead of scanning the run (measured on
# 910k samples, bench/ui_bench.py). A query that reads every match (a count, groups) seeks when
# the candidates are under SEEK_SHARE of the run: one costs about 1.8 µs, against 0.3-0.65 µs
# to scan past a sample. A page seeks only up to PAGE_SEEK_MAX candidates, as each page fetch
# gathers (and for other sorts, sorts) them all again, while a scan for a page stops once it
# is full, and soon when matches are dense.
SEEK_MIN = 5_000
SEEK_SHARE = 1 / 4
PAGE_SEEK_MAX = 20_000
# A filtered page in another order than the run's may be read by walking that order's index:
# no sort, and it stops at a full page, so it is quick when matches are dense; but for a filter
# matching few samples it reads the whole run in random order (2.6 s for 910k). Past this budget
# the page is read by scanning the run in rowid order and sorting the matches (0.6 s there).
WALK_BUDGET_S = 0.2
# How long a probe's count of a seek's candidates is reused: paging a dense filter re-probed on
# every page, 8-11 ms of a 9-16 ms page fetch on 910k. A count past its time only costs a
# plan (seek or scan), never a wrong row, so a run that grows meanwhile is still read right.
PROBE_TTL_S = 10.0
_probes: dict[tuple[Any, ...], tuple[float, int]] = {}
WALK_CHECK_STEPS = 20_000  # SQLite VM steps between looks at the clock


def decode_json(text: str | None) -> Any:
    return None if text is None else json.loads(text)  # json (not orjson): values may hold NaN


@dataclass(frozen=True)
class ScoreCell:
    value: Any  # decoded JSON value; NaN = unscored; None = no score
    value_num: float | None


@dataclass(frozen=True)
class SampleRow:
    """One line of the samples list (texts truncated to PREVIEW_CHARS)."""

    rowid: int
    sample_id: str
    epoch: int
    input: str
    output: str
    target: list[str]
    input_tokens: int | None
    output_tokens: int | None
    total_tokens: int | None
    cost: float | None
    total_time: float | None
    error: str | None
    limit: str | None
    completed: bool
    scores: dict[str, ScoreCell]
    key: tuple[Any, ...]  # pass as `after` to continue after this row
    metadata: dict[str, Any] = field(default_factory=dict)  # the asked-for top-level keys, decoded (None: absent)


@dataclass(frozen=True)
class SamplePage:
    rows: list[SampleRow]
    has_more: bool

    @property
    def next_after(self) -> tuple[Any, ...] | None:
        return self.rows[-1].key if self.rows else None


# sort name -> (key expressions, whether the first may be NULL). s.id always breaks ties.
SORTS: dict[str, tuple[tuple[str, ...], bool]] = {
    "index": ((), False),
    "id": (("s.id_sort", "s.epoch"), False),
    "epoch": (("s.epoch", "s.id_sort"), False),
    "input": (("s.input_text",), False),
    "output": (("s.output_text",), False),
    "tokens": (("s.total_tokens",), True),
    "input_tokens": (("s.input_tokens",), True),
    "output_tokens": (("s.output_tokens",), True),
    "cost": (("s.cost",), True),
    "time": (("s.total_time",), True),
    "working_time": (("s.working_time",), True),
    "error": (("s.error",), True),
    "limit": (("s.limit_type",), True),
}


# One top-level metadata value of sample `s` as JSON text (decoded in Python, so objects, strings
# and booleans read back as they are), found by key with json_each: any key name works, where a
# JSON path would need its quotes and backslashes escaped. A repeated key gives its first value.
_METADATA_VALUE = (
    "(SELECT CASE j.type WHEN 'object' THEN j.value WHEN 'array' THEN j.value WHEN 'true' THEN 'true' "
    "WHEN 'false' THEN 'false' WHEN 'null' THEN 'null' ELSE json_quote(j.value) END "
    "FROM json_each(s.metadata) j WHERE j.key = ? LIMIT 1)"
)


def fts_query(search: str) -> str:
    """User words → an FTS5 query: every word required, each a quoted prefix (no FTS syntax)."""
    words = search.split()
    return " ".join('"' + w.replace('"', '""') + '"*' for w in words)


class SampleWhere:
    """The WHERE clause shared by count/page/at/groups: run, filter, search; and the samples table
    to read (`source`), which a selective filter restricts to the rowids an index seek found."""

    def __init__(self, run_id: int, filter: str | None, search: str | None, score_columns: Sequence[str],
                 db: Db | None = None, *, paging: bool = False) -> None:
        compiled = compile_filter_plan(filter or "", score_columns=score_columns)
        self.parts = ["s.run_id = ?", compiled.sql]
        self.params: list[Any] = [run_id, *compiled.params]
        self.source = "samples s"
        if search and search.split():
            self.parts.append("s.id IN (SELECT rowid FROM samples_fts WHERE samples_fts MATCH ?)")
            self.params.append(fts_query(search))
        if compiled.seeks and db is not None:
            self._seek(conn_of(db), run_id, compiled.seeks, paging)

    def _seek(self, conn: Any, run_id: int, seeks: Sequence[Seek], paging: bool) -> None:
        """Read the candidates from the narrowest seek when few enough samples satisfy it.

        A filter matching few samples otherwise scans the whole run to find them (about 1 s for
        a million). The probe counts at most `limit` index entries.
        """
        if paging:
            limit = PAGE_SEEK_MAX
        else:
            limit = max(SEEK_MIN, int((indexed_sample_count(conn, run_id) or 0) * SEEK_SHARE))
        best: tuple[int, Seek] | None = None
        for seek in seeks:
            found = _probe(conn, run_id, seek, limit)
            if found < limit and (best is None or found < best[0]):
                best = (found, seek)
        if best is None:
            return
        # NOT INDEXED: only rowid lookups of the candidates, never a walk of the run's indexes.
        self.source = "samples s NOT INDEXED"
        self.parts.append(f"s.id IN ({best[1].select()})")
        self.params += [run_id, *best[1].params]

    def add(self, sql: str, params: Sequence[Any]) -> None:
        self.parts.append(sql)
        self.params.extend(params)

    @property
    def sql(self) -> str:
        return " AND ".join(p for p in self.parts if p != "1")


def _sort_key(sort: str, score_columns: Sequence[str]) -> tuple[list[str], list[Any], bool]:
    """(key expressions, their params, first may be NULL) for a sort name or score column."""
    if sort in SORTS:
        exprs, nullable = SORTS[sort]
        return list(exprs), [], nullable
    if split_score_column(sort)[0] in {split_score_column(c)[0] for c in score_columns}:
        sql, params = score_column_sql(sort, "value_num")
        return [sql], list(params), True
    raise ValueError(f"unknown sort {sort!r}; expected one of {', '.join(SORTS)} or a score column")


def _keyset(exprs: list[str], params: list[Any], nullable: bool, after: tuple, descending: bool) -> tuple[str, list]:
    """The condition 'comes after `after`' for ORDER BY exprs, s.id (NULLs first ascending)."""
    values = list(after)
    if len(values) != len(exprs) + 1:
        raise ValueError(f"`after` must have {len(exprs) + 1} values for this sort, got {len(values)}")
    cmp = "<" if descending else ">"
    left = "(" + ", ".join([*exprs, "s.id"]) + ")"
    right = "(" + ", ".join("?" * len(values)) + ")"
    if not nullable or values[0] is not None:
        cond = f"{left} {cmp} {right}"
        cond_params = params + values
        if nullable and descending:  # NULLs sort last when descending
            cond = f"({cond} OR {exprs[0]} IS NULL)"
            cond_params += params
        return cond, cond_params
    # The last row shown had a NULL key.
    first = exprs[0]
    rest_left = "(" + ", ".join([*exprs[1:], "s.id"]) + ")"
    rest_right = "(" + ", ".join("?" * (len(values) - 1)) + ")"
    same = f"({first} IS NULL AND {rest_left} {cmp} {rest_right})"
    if descending:
        return same, params + values[1:]
    return f"({same} OR {first} IS NOT NULL)", params + values[1:] + params


def count_samples(db: Db, run_id: int, filter: str | None = None, search: str | None = None,
                  score_columns: Sequence[str] = ()) -> int:
    """How many samples of the run match `filter` and `search`."""
    where = SampleWhere(run_id, filter, search, score_columns, db)
    return conn_of(db).execute(f"SELECT count(*) FROM {where.source} WHERE {where.sql}", where.params).fetchone()[0]


def page_samples(
    db: Db,
    run_id: int,
    *,
    sort: str = "index",
    descending: bool = False,
    after: tuple | None = None,
    limit: int = 100,
    filter: str | None = None,
    search: str | None = None,
    score_columns: Sequence[str] = (),
    metadata_keys: Sequence[str] = (),
) -> SamplePage:
    """The `limit` samples after key `after` (None = from the start), in `sort` order.

    `sort` is a name from SORTS ("index" = file order) or a score column (by value_num).
    `metadata_keys`: top-level metadata keys each row carries in `metadata` (None when absent).
    Raises FilterError for a malformed filter, ValueError for an unknown sort.
    """
    exprs, key_params, nullable = _sort_key(sort, score_columns)
    where = SampleWhere(run_id, filter, search, score_columns, db, paging=True)
    if after is not None:
        where.add(*_keyset(exprs, key_params, nullable, after, descending))
    select_params: list[Any] = []
    score_sql = []
    for column in score_columns:
        value_sql, value_params = score_column_sql(column, "value")
        num_sql, num_params = score_column_sql(column, "value_num")
        score_sql.append(f"{value_sql}, {num_sql}")
        select_params += [*value_params, *num_params]
    metadata_sql = [_METADATA_VALUE] * len(metadata_keys)
    select_params += list(metadata_keys)
    key_sql = [f"{e} AS k{i}" for i, e in enumerate(exprs)]
    select_params += key_params
    direction = " DESC" if descending else ""
    order = ", ".join([f"k{i}{direction}" for i in range(len(exprs))] + [f"s.id{direction}"])
    sql = (
        f"SELECT s.id, s.sample_id, s.epoch, substr(s.input_text, 1, {PREVIEW_CHARS}), "
        f"substr(s.output_text, 1, {PREVIEW_CHARS}), s.target, s.input_tokens, s.output_tokens, "
        f"s.total_tokens, s.cost, s.total_time, substr(s.error, 1, {PREVIEW_CHARS}), s.limit_type, s.completed"
        + "".join(", " + x for x in score_sql + metadata_sql + key_sql)
        + f" FROM {where.source} WHERE {where.sql} ORDER BY {order} LIMIT ?"
    )
    params = [*select_params, *where.params, limit + 1]
    conn = conn_of(db)
    if sort == "index" or where.source != "samples s" or not (filter or "").strip() or (search or "").strip():
        rows = conn.execute(sql, params).fetchall()
    else:
        with _time_budget(conn, WALK_BUDGET_S) as budget:
            try:
                rows = conn.execute(sql, params).fetchall()
            except sqlite3.OperationalError:
                if not budget.expired:
                    raise
                rows = None
        if rows is None:
            scan = sql.replace(" FROM samples s WHERE ", " FROM samples s INDEXED BY samples_run WHERE ", 1)
            rows = conn.execute(scan, params).fetchall()
    after_scores = 14 + 2 * len(score_columns)
    after_metadata = after_scores + len(metadata_keys)
    out = []
    for row in rows[:limit]:
        cells = {
            column: ScoreCell(decode_json(row[14 + 2 * i]), row[15 + 2 * i]) for i, column in enumerate(score_columns)
        }
        metadata = {name: decode_json(row[after_scores + i]) for i, name in enumerate(metadata_keys)}
        key = tuple(row[after_metadata:]) + (row[0],)
        out.append(SampleRow(
            row[0], row[1], row[2], row[3], row[4], json.loads(row[5]), row[6], row[7], row[8],
            row[9], row[10], row[11], row[12], bool(row[13]), cells, key, metadata,
        ))
    return SamplePage(out, len(rows) > limit)


def _probe(conn: Any, run_id: int, seek: Seek, limit: int) -> int:
    """How many index entries `seek` finds in the run, counting at most `limit` (memoised for
    PROBE_TTL_S per index file, run and seek)."""
    database = conn.execute("PRAGMA database_list").fetchone()[2]
    key = (database, run_id, seek, limit)
    now = time.monotonic()
    held = _probes.get(key)
    if held is not None and now - held[0] < PROBE_TTL_S:
        return held[1]
    found = conn.execute(f"SELECT count(*) FROM ({seek.select()} LIMIT ?)", (run_id, *seek.params, limit)).fetchone()[0]
    if len(_probes) > 256:
        _probes.clear()
    _probes[key] = (now, found)
    return found


class _Budget:
    expired = False


@contextmanager
def _time_budget(conn: sqlite3.Connection, seconds: float) -> Iterator[_Budget]:
    """Interrupt the statement `conn` runs past `seconds` (it then raises OperationalError and
    `expired` is set, which tells it from an interruption made elsewhere)."""
    budget = _Budget()
    deadline = time.monotonic() + seconds

    def check() -> int:
        if time.monotonic() > deadline:
            budget.expired = True
            return 1
        return 0

    conn.set_progress_handler(check, WALK_CHECK_STEPS)
    try:
        yield budget
    finally:
        conn.set_progress_handler(None, 0)


def sample_at(
    db: Db,
    run_id: int,
    position: int,
    *,
    sort: str = "index",
    descending: bool = False,
    filter: str | None = None,
    search: str | None = None,
    score_columns: Sequence[str] = (),
) -> tuple | None:
    """The `after` key that makes page_samples start at row `position` (0-based) of this order;
    None for position 0. Walks the order reading only the key columns (for jumps, not paging)."""
    if position <= 0:
        return None
    exprs, key_params, _ = _sort_key(sort, score_columns)
    where = SampleWhere(run_id, filter, search, score_columns, db, paging=True)
    direction = " DESC" if descending else ""
    keys = [f"{e} AS k{i}" for i, e in enumerate(exprs)]
    order = ", ".join([f"k{i}{direction}" for i in range(len(exprs))] + [f"s.id{direction}"])
    row = conn_of(db).execute(
        f"SELECT {', '.join(keys + ['s.id'])} FROM {where.source} WHERE {where.sql} ORDER BY {order} LIMIT 1 OFFSET ?",
        [*key_params, *where.params, position - 1],
    ).fetchone()
    return None if row is None else tuple(row)
