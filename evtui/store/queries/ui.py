"""Queries the Textual app needs beyond evtui/store/queries.py.

Plain functions of a `sqlite_utils.Database` (or connection); no Textual here.
"""

from __future__ import annotations

from collections.abc import Sequence

from evtui.store.queries.effective_scores import EFFECTIVE_ORDER
from evtui.store.queries.runs import Db, conn_of


def run_scorers(db: Db, run_id: int) -> list[str]:
    """Scorer names with scores in a run: in the order of its recorded results, then any others."""
    conn = conn_of(db)
    ordered = [
        row[0]
        for row in conn.execute(
            "SELECT scorer FROM run_results WHERE run_id = ? GROUP BY scorer ORDER BY min(job_id), min(seq)",
            (run_id,),
        )
    ]
    # A loose index scan: one seek per distinct scorer on scores(run_id, scorer, ...), not one row
    # per score (DISTINCT would read every score of the run: 0.3 s at a million).
    scored = [
        row[0]
        for row in conn.execute(
            "WITH RECURSIVE names(name) AS ("
            " SELECT (SELECT min(scorer) FROM scores WHERE run_id = ?1)"
            " UNION ALL"
            " SELECT (SELECT min(scorer) FROM scores WHERE run_id = ?1 AND scorer > names.name)"
            " FROM names WHERE names.name IS NOT NULL"
            ") SELECT name FROM names WHERE name IS NOT NULL",
            (run_id,),
        )
    ]
    return [name for name in ordered if name in scored] + sorted(name for name in scored if name not in ordered)


def score_answers(db: Db, sample_rowids: Sequence[int], scorer: str) -> dict[int, str | None]:
    """The effective score's `answer` for each listed sample (absent when it has no score)."""
    if not sample_rowids:
        return {}
    marks = ",".join("?" * len(sample_rowids))
    answers: dict[int, str | None] = {}
    for rowid, answer in conn_of(db).execute(
        f"SELECT sc.sample_rowid, sc.answer FROM scores sc WHERE sc.sample_rowid IN ({marks}) AND sc.scorer = ? "
        f"ORDER BY sc.sample_rowid, {EFFECTIVE_ORDER}",
        [*sample_rowids, scorer],
    ):
        answers.setdefault(rowid, answer)
    return answers


def indexed_sample_count(db: Db, run_id: int) -> int | None:
    """The run's sample rows as kept by ingest (runs.sample_count): no scan, unlike count(*)."""
    row = conn_of(db).execute("SELECT sample_count FROM runs WHERE id = ?", (run_id,)).fetchone()
    return None if row is None else row[0]


def metadata_keys(db: Db, run_id: int) -> list[str]:
    """The run's top-level sample metadata keys, sorted: a loose index scan of sample_metadata
    (one seek per key, not one row per sample)."""
    return [
        row[0]
        for row in conn_of(db).execute(
            "WITH RECURSIVE names(name) AS ("
            " SELECT (SELECT min(key) FROM sample_metadata WHERE run_id = ?1)"
            " UNION ALL SELECT (SELECT min(key) FROM sample_metadata WHERE run_id = ?1 AND key > name)"
            " FROM names WHERE name IS NOT NULL"
            ") SELECT name FROM names WHERE name IS NOT NULL",
            (run_id,),
        )
    ]
