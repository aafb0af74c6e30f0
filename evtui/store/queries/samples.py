"""Sample-level read queries beyond paging: one sample in full, its epochs, value counts, groups.

The paged list itself lives in paging.py (re-exported here for existing imports).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evtui.store.queries.effective_scores import EFFECTIVE_ORDER, score_column_sql
from evtui.store.queries.filters import resolve_field
from evtui.store.queries.paging import (  # noqa: F401  (re-exported)
    SORTS,
    SamplePage,
    SampleRow,
    ScoreCell,
    decode_json,
    SampleWhere,
    count_samples,
    fts_query,
    page_samples,
    sample_at,
)
from evtui.store.queries.runs import Db, conn_of

__all__ = [
    "SORTS",
    "ScoreCell",
    "SampleRow",
    "SamplePage",
    "ScoreEditRow",
    "ScoreDetail",
    "SampleDetail",
    "EpochRow",
    "ValueCount",
    "GroupRow",
    "count_samples",
    "page_samples",
    "sample_at",
    "get_sample",
    "sample_epochs",
    "score_values",
    "group_values",
    "fts_query",
]


@dataclass(frozen=True)
class ScoreEditRow:
    seq: int
    value: Any
    answer: str | None
    explanation: str | None
    reason: str | None
    metadata: dict[str, Any] | None
    author: str | None
    edit_reason: str | None
    timestamp: str | None
    origin: str  # 'log' (history in the file) or 'evtui'


@dataclass(frozen=True)
class ScoreDetail:
    id: int
    scorer: str
    source: str  # log | job | human
    job_id: int
    value: Any
    value_num: float | None
    answer: str | None
    explanation: str | None
    reason: str | None
    metadata: dict[str, Any]
    created: str | None
    edits: list[ScoreEditRow] = field(default_factory=list)


@dataclass(frozen=True)
class SampleDetail:
    """One sample in full, with every score (all sources) and each score's edit history."""

    rowid: int
    run_id: int
    sample_id: str
    epoch: int
    input_text: str
    input: Any
    target: list[str]
    choices: list[str] | None
    output_text: str
    messages: list[dict[str, Any]]
    metadata: dict[str, Any]
    input_tokens: int | None
    output_tokens: int | None
    total_tokens: int | None
    cost: float | None
    total_time: float | None
    working_time: float | None
    error: str | None
    limit: str | None
    completed: bool
    detail_ref: str | None
    scores: list[ScoreDetail]


@dataclass(frozen=True)
class EpochRow:
    rowid: int
    epoch: int
    error: str | None
    scores: dict[str, ScoreCell]  # effective score per scorer


@dataclass(frozen=True)
class ValueCount:
    value: Any
    value_num: float | None
    count: int


@dataclass(frozen=True)
class GroupRow:
    """One group of samples sharing a key value, with per-score-column means."""

    value: Any
    samples: int
    errors: int
    mean_tokens: float | None
    score_means: dict[str, float | None]
    scored: dict[str, int]


def get_sample(db: Db, sample_rowid: int) -> SampleDetail | None:
    """One sample in full with all its scores (every source) and their edit histories."""
    conn = conn_of(db)
    row = conn.execute(
        "SELECT s.id, s.run_id, s.sample_id, s.epoch, s.input_text, b.input, s.target, s.choices, s.output_text, "
        "IFNULL(b.messages, '[]'), s.metadata, s.input_tokens, s.output_tokens, s.total_tokens, s.cost, "
        "s.total_time, s.working_time, s.error, s.limit_type, s.completed, s.detail_ref "
        "FROM samples s LEFT JOIN sample_bodies b ON b.sample_rowid = s.id WHERE s.id = ?",
        (sample_rowid,),
    ).fetchone()
    if row is None:
        return None
    edits: dict[int, list[ScoreEditRow]] = {}
    for e in conn.execute(
        "SELECT e.score_id, e.seq, e.value, e.answer, e.explanation, e.reason, e.metadata, e.author, "
        "e.edit_reason, e.timestamp, e.origin FROM score_edits e JOIN scores sc ON sc.id = e.score_id "
        "WHERE sc.sample_rowid = ? ORDER BY e.score_id, e.seq, e.id",
        (sample_rowid,),
    ):
        edits.setdefault(e[0], []).append(
            ScoreEditRow(e[1], decode_json(e[2]), e[3], e[4], e[5], decode_json(e[6]), e[7], e[8], e[9], e[10])
        )
    scores = [
        ScoreDetail(s[0], s[1], s[2], s[3], decode_json(s[4]), s[5], s[6], s[7], s[8], json.loads(s[9] or "{}"),
                    s[10], edits.get(s[0], []))
        for s in conn.execute(
            "SELECT id, scorer, source, job_id, value, value_num, answer, explanation, reason, metadata, created "
            "FROM scores WHERE sample_rowid = ? ORDER BY job_id, source, id",
            (sample_rowid,),
        )
    ]
    return SampleDetail(
        row[0], row[1], row[2], row[3], row[4], decode_json(row[5]), json.loads(row[6]), decode_json(row[7]),
        row[8], json.loads(row[9]), json.loads(row[10]), row[11], row[12], row[13], row[14], row[15],
        row[16], row[17], row[18], bool(row[19]), row[20], scores,
    )


def sample_epochs(db: Db, run_id: int, sample_id: str) -> list[EpochRow]:
    """Every epoch of one sample, with the effective score of each scorer."""
    conn = conn_of(db)
    epochs = conn.execute(
        "SELECT id, epoch, error FROM samples WHERE run_id = ? AND sample_id = ? ORDER BY epoch", (run_id, str(sample_id))
    ).fetchall()
    effective: dict[int, dict[str, ScoreCell]] = {rowid: {} for rowid, _, _ in epochs}
    if epochs:
        marks = ", ".join("?" * len(epochs))
        for rowid, scorer, value, value_num in conn.execute(
            f"SELECT sc.sample_rowid, sc.scorer, sc.value, sc.value_num FROM scores sc WHERE sc.sample_rowid IN ({marks}) "
            f"ORDER BY sc.sample_rowid, sc.scorer, {EFFECTIVE_ORDER}",
            [e[0] for e in epochs],
        ):
            if scorer not in effective[rowid]:  # the first row of each scorer is its effective score
                effective[rowid][scorer] = ScoreCell(decode_json(value), value_num)
    return [EpochRow(rowid, epoch, error, effective[rowid]) for rowid, epoch, error in epochs]


def score_values(db: Db, run_id: int, scorer: str, job_id: int = 0, *, source: str | None = None,
                 filter: str | None = None, score_columns: Sequence[str] = ()) -> list[ValueCount]:
    """Distinct values of one scorer's scores in a run with their counts, by value_num then value.

    job_id 0 reads recorded scores (source 'log', or `source` if given, e.g. 'human'); another
    job_id reads that evtui job's scores.
    """
    where = SampleWhere(run_id, filter, None, score_columns, db)
    conds = "sc.scorer = ? AND sc.job_id = ?"
    params: list[Any] = [scorer, job_id]
    if job_id == 0 or source is not None:
        conds += " AND sc.source = ?"
        params.append(source or "log")
    rows = conn_of(db).execute(
        f"SELECT sc.value, sc.value_num, count(*) FROM scores sc JOIN samples s ON s.id = sc.sample_rowid "
        f"WHERE {conds} AND {where.sql} GROUP BY sc.value ORDER BY sc.value_num IS NULL, sc.value_num, sc.value",
        [*params, *where.params],
    ).fetchall()
    return [ValueCount(decode_json(v), num, n) for v, num, n in rows]


def group_values(db: Db, run_id: int, key: str, *, score_columns: Sequence[str] = (),
                 filter: str | None = None, search: str | None = None) -> list[GroupRow]:
    """Samples grouped by `key` (a filter-language field: `metadata.category`, `epoch`, `target`,
    a score column …), largest groups first, with each score column's mean value_num."""
    field_sql = resolve_field(key, score_columns)
    key_sql, key_params = field_sql.sql, list(field_sql.params)
    select_params: list[Any] = list(key_params)
    aggregates = []
    for column in score_columns:
        num_sql, num_params = score_column_sql(column, "value_num")
        aggregates.append(f"avg({num_sql}), count({num_sql})")
        select_params += [*num_params, *num_params]
    where = SampleWhere(run_id, filter, search, score_columns, db)
    rows = conn_of(db).execute(
        f"SELECT {key_sql} AS g, count(*), sum(IFNULL(s.error, '') != ''), avg(s.total_tokens)"
        + "".join(", " + a for a in aggregates)
        + f" FROM {where.source} WHERE {where.sql} GROUP BY g ORDER BY count(*) DESC, g",
        [*select_params, *where.params],
    ).fetchall()
    decode = field_sql.kind in ("score", "target")
    out = []
    for row in rows:
        means = {c: row[4 + 2 * i] for i, c in enumerate(score_columns)}
        scored = {c: row[5 + 2 * i] for i, c in enumerate(score_columns)}
        out.append(GroupRow(decode_json(row[0]) if decode else row[0], row[1], row[2], row[3], means, scored))
    return out
