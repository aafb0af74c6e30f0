"""Analysis queries: a run's samples and scores split into groups, and score value distributions
(several runs side by side: compare.py).

Groups are made in SQL (any metadata key via `json_extract`, group sizes by a top-level key from
the sample_metadata index; the sample id (task), the epoch, or how the sample ended: error,
limit, ok). Histogram bins and value counts are
computed in SQL too, so a run of a million scores returns a few dozen rows.

Scores are chosen by job: job 0 is what the run file recorded (source 'log'), job N the scores
evtui scoring job N made (source 'job').
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evtui.store.queries.filters import quote
from evtui.store.queries.runs import Db, conn_of, sample_rows

__all__ = [
    "Grouping",
    "GroupSize",
    "Bucket",
    "Distribution",
    "grouping_options",
    "group_sizes",
    "group_score_rows",
    "run_sample_counts",
    "value_distribution",
    "score_column_for_result",
]

# Metadata keys are discovered from at most this many samples (keys are nearly always uniform).
KEY_DISCOVERY_ROWS = 20_000
# At most this many distinct values read as categories; more numeric values make a histogram.
MAX_CATEGORIES = 12
DEFAULT_BINS = 20

# As the filter language reads them (`error`, `limit`): an empty text is no error, no limit.
_OUTCOME_SQL = (
    "CASE WHEN s.error != '' THEN 'error' "
    "WHEN s.limit_type != '' THEN 'limit: ' || s.limit_type ELSE 'ok' END"
)
# Filter-language field names (filters.py): keys outside this cannot be written as a filter.
_FILTER_NAME = re.compile(r"^[A-Za-z_][\w\-/@]*$")


@dataclass(frozen=True)
class Grouping:
    """How to split a run's samples: kind is `metadata` (with `key`), `task`, `epoch` or `outcome`."""

    kind: str
    key: str | None = None

    @property
    def label(self) -> str:
        if self.kind == "metadata":
            return f"metadata.{self.key}"
        return {"task": "sample id (task)", "epoch": "epoch", "outcome": "error / limit"}[self.kind]

    def sql(self) -> tuple[str, tuple[Any, ...]]:
        """The group value of sample `s` as SQL and its parameters."""
        if self.kind == "metadata":
            return "json_extract(s.metadata, ?)", (_json_path(self.key or ""),)
        if self.kind == "task":
            return "s.sample_id", ()
        if self.kind == "epoch":
            return "s.epoch", ()
        if self.kind == "outcome":
            return _OUTCOME_SQL, ()
        raise ValueError(f"unknown grouping {self.kind!r}")

    def filter_for(self, value: Any) -> str | None:
        """The samples-filter expression selecting the group with `value` (None if not expressible)."""
        if self.kind == "epoch":
            return f"epoch == {int(value)}"
        if self.kind == "task":
            return f"id == {quote(str(value))}"
        if self.kind == "outcome":
            if value == "error":
                return "error"
            if value == "ok":
                return "not error and not limit"
            return f"limit == {quote(str(value).removeprefix('limit: '))}"
        if self.kind == "metadata" and all(_FILTER_NAME.match(part) for part in (self.key or "").split(".")):
            field_name = f"metadata.{self.key}"
            if value is None:
                return f"{field_name} == null"
            if isinstance(value, int | float) and not isinstance(value, bool):
                return f"{field_name} == {value!r}"
            return f"{field_name} == {quote(str(value))}"
        return None


def _json_path(key: str) -> str:
    return "$" + "".join(f'."{part}"' for part in key.split("."))


def group_label(value: Any) -> str:
    """How a group value reads on screen: `(none)` for samples without the key."""
    return "(none)" if value is None else str(value)


def grouping_options(db: Db, run_id: int) -> list[Grouping]:
    """The groupings that make sense for a run: its metadata keys holding scalars or lists
    (first seen first), sample id when samples repeat over epochs, epoch when there are
    several, and error / limit always."""
    conn = conn_of(db)
    keys = [
        row[0]
        for row in conn.execute(
            "SELECT j.key FROM (SELECT metadata FROM samples WHERE run_id = ? ORDER BY id LIMIT ?) s, "
            "json_each(s.metadata) j WHERE json_valid(s.metadata) AND j.type != 'object' "
            "GROUP BY j.key ORDER BY min(j.id), j.key",
            (run_id, KEY_DISCOVERY_ROWS),
        )
    ]
    options = [Grouping("metadata", key) for key in keys]
    epochs = conn.execute("SELECT max(epoch) FROM samples WHERE run_id = ?", (run_id,)).fetchone()[0]
    # One epoch: (run, sample id, epoch) is unique, so ids repeat only over epochs (counting
    # distinct ids sorts every id of the run).
    if (epochs or 0) > 1:
        samples, ids = conn.execute("SELECT count(*), count(DISTINCT sample_id) FROM samples WHERE run_id = ?", (run_id,)).fetchone()
        if samples and ids < samples:
            options.append(Grouping("task"))
    if (epochs or 0) > 1:
        options.append(Grouping("epoch"))
    options.append(Grouping("outcome"))
    return options


@dataclass(frozen=True)
class GroupSize:
    """One group: its value, how many sample rows (sample × epoch) and distinct samples, errors."""

    value: Any
    rows: int
    samples: int
    errors: int

    @property
    def label(self) -> str:
        return group_label(self.value)


def _has_epochs(db: Db, run_id: int) -> bool:
    # Covered by the (run_id, id_sort, epoch, id) index: no table rows are read.
    row = conn_of(db).execute("SELECT max(epoch) FROM samples WHERE run_id = ?", (run_id,)).fetchone()
    return (row[0] or 0) > 1


def group_sizes(db: Db, run_id: int, grouping: Grouping) -> list[GroupSize]:
    """Every group of the run's samples under `grouping`, ordered by value (errors: samples with a
    non-empty error, as the `error` filter counts them)."""
    epochs = _has_epochs(db, run_id)
    if grouping.kind == "metadata" and "." not in (grouping.key or ".") and not epochs:
        return _metadata_group_sizes(db, run_id, grouping.key or "")
    if grouping.kind == "outcome" and not epochs:
        return _outcome_group_sizes(db, run_id)
    expr, params = grouping.sql()
    # Distinct sample ids cost a sort per group: only worth it when epochs repeat ids.
    samples = "count(DISTINCT s.sample_id)" if epochs else "count(*)"
    rows = conn_of(db).execute(
        f"SELECT {expr} AS grp, count(*), {samples}, count(CASE WHEN s.error != '' THEN 1 END) "
        "FROM samples s WHERE s.run_id = ? GROUP BY grp ORDER BY grp",
        (*params, run_id),
    ).fetchall()
    return [GroupSize(*row) for row in rows]


def _metadata_group_sizes(db: Db, run_id: int, key: str) -> list[GroupSize]:
    """group_sizes by a top-level metadata key, from the sample_metadata index (0.1 s for 910k
    samples, where parsing every sample's metadata takes 1.5-3.4 s): the values in SQL order,
    NULL (no such key, or JSON null) for the rest of the run; errors from the errored-samples index."""
    from evtui.store.queries.score_columns import metadata_groups

    conn = conn_of(db)
    # With each group's rows: the groups' metrics read them next (group_columns.py).
    counts = [(value, len(rowids)) for value, rowids in metadata_groups(db, run_id, key).items()]
    errors = dict(conn.execute(
        f"SELECT m.value, count(*) FROM {_ERRORED} LEFT JOIN sample_metadata m ON m.sample_rowid = s.id AND m.key = ? "
        "WHERE s.run_id = ? AND s.error != '' GROUP BY m.value",
        (key, run_id),
    ).fetchall())  # fmt: skip
    total = sample_rows(db, run_id)
    keyed = {value: count for value, count in counts if value is not None}
    missing = total - sum(keyed.values())
    sizes = [GroupSize(None, missing, missing, errors.get(None, 0))] if missing else []
    return sizes + [GroupSize(value, count, count, errors.get(value, 0)) for value, count in keyed.items()]


# error / limit / ok as _OUTCOME_SQL decides them, each as a condition the partial indexes
# samples_run_errored and samples_run_limited can serve (NULL text reads as empty there too).
_NO_ERROR = "coalesce(s.error, '') = ''"
# The errored samples of a run through their partial index: sampled statistics (analysis_limit)
# can make SQLite walk the whole run instead (0.2 s at 1M samples, against 0.01 s).
_ERRORED = "samples s INDEXED BY samples_run_errored"
_NO_LIMIT = "coalesce(s.limit_type, '') = ''"


def _outcome_where(value: Any) -> tuple[str, list[Any]]:
    if value == "error":
        return "s.error != ''", []
    if value == "ok":
        return f"{_NO_ERROR} AND {_NO_LIMIT}", []
    return f"{_NO_ERROR} AND s.limit_type != '' AND s.limit_type = ?", [str(value).removeprefix("limit: ")]


def _outcome_group_sizes(db: Db, run_id: int) -> list[GroupSize]:
    """group_sizes by error / limit for a 1-epoch run from the errored and limited samples'
    partial indexes and the run's count, not a GROUP BY over every sample."""
    conn = conn_of(db)
    total = conn.execute("SELECT count(*) FROM samples WHERE run_id = ?", (run_id,)).fetchone()[0]
    errors = conn.execute(f"SELECT count(*) FROM {_ERRORED} WHERE s.run_id = ? AND s.error != ''", (run_id,)).fetchone()[0]
    limits = conn.execute(
        f"SELECT 'limit: ' || s.limit_type, count(*) FROM samples s WHERE s.run_id = ? AND s.limit_type != '' AND {_NO_ERROR} "
        "GROUP BY s.limit_type",
        (run_id,),
    ).fetchall()
    ok = total - errors - sum(count for _, count in limits)
    sizes = [GroupSize("error", errors, errors, errors)] if errors else []
    sizes += [GroupSize(label, count, count, 0) for label, count in limits]
    if ok:
        sizes.append(GroupSize("ok", ok, ok, 0))
    return sorted(sizes, key=lambda size: size.value)


def run_sample_counts(db: Db, run_id: int) -> tuple[int, int]:
    """(distinct sample ids, sample × epoch rows) of a run."""
    if not _has_epochs(db, run_id):
        rows = sample_rows(db, run_id)
        return rows, rows
    distinct, rows = conn_of(db).execute("SELECT count(DISTINCT sample_id), count(*) FROM samples WHERE run_id = ?", (run_id,)).fetchone()
    return distinct, rows


# A score row `sc` with the sample's hand review of the same scorer (source 'human', which
# outranks every other) in its place where there is one. The human row is a whole score (copied
# from the one reviewed, then edited), so every column comes from it.
_HUMAN_JOIN = "LEFT JOIN scores h ON h.sample_rowid = sc.sample_rowid AND h.scorer = sc.scorer AND h.source = 'human' AND h.job_id = 0"


def _reviewed(column: str) -> str:
    return f"CASE WHEN h.id IS NULL THEN sc.{column} ELSE h.{column} END"


def _source_clause(job_id: int) -> tuple[str, tuple[Any, ...]]:
    if job_id == 0:
        return "sc.source = 'log' AND sc.job_id = 0", ()
    return "sc.source = 'job' AND sc.job_id = ?", (job_id,)


def group_score_rows(
    db: Db,
    run_id: int,
    grouping: Grouping | None,
    *,
    job_id: int = 0,
    scorers: Sequence[str] | None = None,
    sample_metadata: bool = True,
    reviewed: bool = False,
) -> list[dict[str, Any]]:
    """The run's scores of job `job_id` (0: recorded) with each sample's group value under `group`.

    Rows are shaped as store.jobs.job_scores returns them (scorer, sample_id, epoch, value, answer,
    explanation, reason, metadata, sample_metadata) plus `group` (None without a grouping), in
    sample order. `sample_metadata=False` leaves it None (only metrics like `grouped` read it;
    parsing a million metadata objects costs seconds). `reviewed` puts a sample's hand-reviewed
    score (source 'human', which outranks every other) in place of the job's where there is one."""
    from evtui.store.jobs import loads

    expr, group_params = grouping.sql() if grouping is not None else ("NULL", ())
    source, source_params = _source_clause(job_id)
    where = f"s.run_id = ? AND {source}"
    params: list[Any] = [*group_params, run_id, *source_params]
    if scorers is not None:
        if not scorers:
            return []
        where += f" AND sc.scorer IN ({','.join('?' * len(scorers))})"
        params.extend(scorers)
    metadata_sql = "s.metadata" if sample_metadata else "NULL"
    joins = "CROSS JOIN scores sc ON sc.sample_rowid = s.id" + (f" {_HUMAN_JOIN}" if reviewed else "")
    columns = ", ".join(
        _reviewed(name) if reviewed else f"sc.{name}" for name in ("value", "answer", "explanation", "reason", "metadata")
    )
    # Samples in id order, each joined to its scores (one per scorer for a source and job): the
    # rows come out in sample order with no sort of the whole result.
    rows = conn_of(db).execute(
        f"SELECT {expr}, sc.scorer, s.sample_id, s.epoch, {columns}, {metadata_sql} FROM samples s {joins} "
        f"WHERE {where} ORDER BY s.id",
        params,
    ).fetchall()
    parsed: dict[str, Any] = {}  # sample metadata repeats across scorers and epochs: parse once

    def parsed_metadata(text: str | None) -> Any:
        if text is None:
            return None
        if text not in parsed:
            parsed[text] = loads(text, {})
        return parsed[text]

    values: dict[str, Any] = {}  # score values repeat ("C", "I", 1.0): parse each text once

    def value(text: str | None) -> Any:
        if text is None or len(text) > 64 or text[:1] in "{[":  # containers: each row its own
            return loads(text)
        if text not in values:
            values[text] = loads(text)
        return values[text]

    return [
        {
            "group": row[0], "scorer": row[1], "sample_id": row[2], "epoch": row[3], "value": value(row[4]),
            "answer": row[5], "explanation": row[6], "reason": row[7],
            "metadata": loads(row[8], {}) or None if row[8] != "{}" else None,
            "sample_metadata": parsed_metadata(row[9]),
        }
        for row in rows
    ]


# ---------------------------------------------------------------------------- distributions


@dataclass(frozen=True)
class Bucket:
    """One bar: a category (`label`, with its numeric face `value` if any) or a bin [low, high)."""

    label: str
    count: int
    value: float | None = None
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Distribution:
    """The values of one scorer (or one key of a dict-valued scorer) in a run.

    kind: `categorical` (value counts), `numeric` (histogram bins) or `empty` (nothing scored).
    `scored` counts the values in the buckets; `unscored` NaN, missing and non-scalar values."""

    scorer: str
    key: str | None
    kind: str
    scored: int
    unscored: int
    buckets: tuple[Bucket, ...] = field(default_factory=tuple)
    minimum: float | None = None
    maximum: float | None = None


def _value_sql(key: str | None) -> tuple[str, str]:
    """(text, number) SQL over `sc` for the score value or one key of it (named parameter :path).

    Whole values use the stored columns: a JSON string starts with a quote, and value_num is the
    numeric face (C = 1, I = 0 for labels; NULL for NaN and non-scalars)."""
    if key is None:
        text = "CASE WHEN substr(sc.value, 1, 1) = '\"' THEN json_extract(sc.value, '$') END"
        return text, "sc.value_num"
    text = "CASE WHEN json_valid(sc.value) AND json_type(sc.value, :path) = 'text' THEN json_extract(sc.value, :path) END"
    number = (
        "CASE WHEN json_valid(sc.value) AND json_type(sc.value, :path) IN ('integer', 'real', 'true', 'false') "
        "THEN json_extract(sc.value, :path) END"
    )
    return text, number


# A scorer's scores with each sample's hand review in place of the score reviewed.
_REVIEWED_SCORES = (
    f"(SELECT sc.run_id, sc.scorer, sc.source, sc.job_id, {_reviewed('value')} AS value, "
    f"{_reviewed('value_num')} AS value_num FROM scores sc {_HUMAN_JOIN} WHERE sc.run_id = :run AND sc.scorer = :scorer)"
)


def value_distribution(
    db: Db, run_id: int, scorer: str, *, job_id: int = 0, key: str | None = None, bins: int = DEFAULT_BINS,
    reviewed: bool = False,
) -> Distribution:
    """Value counts (labels, or few distinct numbers) or a histogram of `bins` equal-width bins
    of one scorer's values in a run, every count made in SQL; `reviewed`: with hand reviews in place."""
    conn = conn_of(db)
    text_sql, num_sql = _value_sql(key)
    source = "sc.source = 'log' AND sc.job_id = 0" if job_id == 0 else "sc.source = 'job' AND sc.job_id = :job"
    named: dict[str, Any] = {"run": run_id, "scorer": scorer, "job": job_id, "path": _json_path(key) if key else None}
    scores = _REVIEWED_SCORES if reviewed else "scores"
    base = f"FROM {scores} sc WHERE sc.run_id = :run AND sc.scorer = :scorer AND {source}"
    is_text = "substr(sc.value, 1, 1) = '\"'" if key is None else f"({text_sql}) IS NOT NULL"
    total, texts, numbers, low, high = conn.execute(
        f"SELECT count(*), count(CASE WHEN {is_text} THEN 1 END), count({num_sql}), min({num_sql}), max({num_sql}) {base}",
        named,
    ).fetchone()
    if texts:
        # Labels (C/I/P/N, or any text): count each; numbers among them count under their own text.
        label = f"coalesce({text_sql}, CAST({num_sql} AS TEXT))"
        rows = conn.execute(
            f"SELECT {label} AS label, count(*), max({num_sql}) AS num {base} AND label IS NOT NULL "
            "GROUP BY label ORDER BY num IS NULL, num DESC, label",
            named,
        ).fetchall()
        buckets = tuple(Bucket(str(lab), count, num) for lab, count, num in rows)
        scored = sum(b.count for b in buckets)
        return Distribution(scorer, key, "categorical", scored, total - scored, buckets)
    if not numbers:
        return Distribution(scorer, key, "empty", 0, total)
    # Stop counting distinct values past the category limit: a million values need not all be seen.
    distinct = conn.execute(
        f"SELECT count(*) FROM (SELECT DISTINCT {num_sql} AS num {base} AND num IS NOT NULL LIMIT {MAX_CATEGORIES + 1})",
        named,
    ).fetchone()[0]
    if distinct <= MAX_CATEGORIES:
        rows = conn.execute(
            f"SELECT {num_sql} AS num, count(*) {base} AND num IS NOT NULL GROUP BY num ORDER BY num", named
        ).fetchall()
        buckets = tuple(Bucket(_number_label(num), count, float(num)) for num, count in rows)
        return Distribution(scorer, key, "categorical", numbers, total - numbers, buckets, float(low), float(high))
    bins = max(1, bins)
    width = (high - low) / bins
    named |= {"low": low, "high": high, "width": width, "last": bins - 1}
    counts = dict(
        conn.execute(
            f"SELECT CASE WHEN {num_sql} >= :high THEN :last ELSE CAST(({num_sql} - :low) / :width AS INTEGER) END AS bin, "
            f"count(*) {base} AND {num_sql} IS NOT NULL GROUP BY bin",
            named,
        ).fetchall()
    )
    buckets = tuple(
        Bucket(f"{_number_label(low + index * width)} – {_number_label(low + (index + 1) * width)}",
               counts.get(index, 0), None, low + index * width, low + (index + 1) * width)
        for index in range(bins)
    )  # fmt: skip
    return Distribution(scorer, key, "numeric", numbers, total - numbers, buckets, float(low), float(high))


def _number_label(value: float) -> str:
    number = float(value)
    if number.is_integer() and abs(number) < 1e15:
        return str(int(number))
    return f"{number:.4g}"


def score_column_for_result(db: Db, run_id: int, result_scorer: str, *, job_id: int = 0) -> tuple[str, str | None]:
    """The (scorer, dict key) whose values a result row named `result_scorer` summarises.

    A dict-valued Inspect scorer reports one result per key (`length` of scorer `shape`): the
    run's recorded `result_scores` say which scorer a key belongs to; else any dict-valued
    scorer holding that key."""
    conn = conn_of(db)
    source, params = _source_clause(job_id)
    if conn.execute(
        f"SELECT 1 FROM scores sc WHERE sc.run_id = ? AND sc.scorer = ? AND {source} LIMIT 1",
        (run_id, result_scorer, *params),
    ).fetchone():
        return result_scorer, None
    row = conn.execute("SELECT config FROM runs WHERE id = ?", (run_id,)).fetchone()
    config = json.loads(row[0] or "{}") if row else {}
    for entry in config.get("result_scores") or []:
        if isinstance(entry, dict) and entry.get("name") == result_scorer and entry.get("scorer"):
            return str(entry["scorer"]), result_scorer
    found = conn.execute(
        f"SELECT sc.scorer FROM scores sc WHERE sc.run_id = ? AND {source} AND json_valid(sc.value) "
        "AND json_type(sc.value, ?) IS NOT NULL LIMIT 1",
        (run_id, *params, _json_path(result_scorer)),
    ).fetchone()
    if found:
        return found[0], result_scorer
    return result_scorer, None
