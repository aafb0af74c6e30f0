"""Which of a sample's scores for one scorer counts (its effective score), as SQL and in code.

The filter language, the samples table, comparisons and exports all read a score column through
this one order, so a sample shows, filters, sorts and compares by the same score.
"""

from __future__ import annotations

from typing import Any

# Which score counts when a sample has several for one scorer: a human's, then the latest evtui
# job's, then the log's; but a job's score without a value (a failed grader) never counts over
# any score with one. The scores_effective index (schema version 4) holds the same expression
# after (sample_rowid, scorer), then source (whose names sort in precedence order) and
# job_id DESC, so it hands over the effective row in one seek.
UNSCORED_JOB = "(sc.source = 'job' AND sc.value_num IS NULL AND (sc.value IS NULL OR sc.value IN ('NaN', 'null')))"
EFFECTIVE_ORDER = f"{UNSCORED_JOB}, sc.source, sc.job_id DESC"
SOURCE_PRECEDENCE = ("human", "job", "log")  # the same order, for code ranking scores already read


def effective_rank(source: str, job_id: int, value: Any, value_num: float | None) -> tuple[int, int, int]:
    """EFFECTIVE_ORDER for a score already read (lowest ranks first); `value` as decoded."""
    no_value = value is None or (isinstance(value, float) and value != value)
    unscored_job = source == "job" and value_num is None and no_value
    rank = SOURCE_PRECEDENCE.index(source) if source in SOURCE_PRECEDENCE else len(SOURCE_PRECEDENCE)
    return (int(unscored_job), rank, -job_id)


def split_score_column(column: str) -> tuple[str, str]:
    """(scorer, qualifier) of a score column: `scorer`, `scorer@log`, `scorer@human`,
    `scorer@job` or `scorer@<job_id>`. Any other text after an `@` is part of the scorer's name
    (any text a run gives it): the one reading every query of score columns uses."""
    scorer, at, qualifier = column.rpartition("@")
    if at and (qualifier in ("log", "human", "job") or qualifier.isdigit()):
        return scorer, qualifier
    return column, ""


def score_column_sql(column: str, what: str = "value") -> tuple[str, tuple[Any, ...]]:
    """A correlated subquery for one score column of sample `s` (split_score_column); `what` is a scores column."""
    scorer, qualifier = split_score_column(column)
    params: list[Any] = [scorer]
    where = "sc.sample_rowid = s.id AND sc.scorer = ?"
    if qualifier in ("log", "human", "job"):
        where += " AND sc.source = ?"
        params.append(qualifier)
    elif qualifier:
        where += " AND sc.job_id = ?"
        params.append(int(qualifier))
    sql = f"(SELECT sc.{what} FROM scores sc WHERE {where} ORDER BY {EFFECTIVE_ORDER} LIMIT 1)"
    return sql, tuple(params)
