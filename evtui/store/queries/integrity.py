"""What a run's scores are like before any average (scoring/results/integrity.py and the interval
policy read these):

* `integrity_counts`: its samples (planned, held, completed, errored, hit a limit) and each
  recorded scorer's scores, unscored ones counted by why: the sample's error or limit, else the
  score's reason.
* `score_scales`: the range of each scorer's numbers (0/1, inside [0, 1], or other).

Tolerant of what a reader did not fill: a run without `total_samples` has no planned count, a
score without a reason counts under "" (no reason given)."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["SampleCounts", "ScorerCounts", "IntegrityCounts", "integrity_counts", "ScoreScale", "score_scales"]

# Unscored: no number and no other value (Inspect's NaN sentinel, or nothing); a dict or list
# value has no value_num but is a score.
_UNSCORED = "sc.value_num IS NULL AND (sc.value IS NULL OR sc.value IN ('NaN', 'null', '\"NaN\"'))"
# Why a sample has no score: its error first, then its limit (the root causes), else the reason.
_WHY = (
    "CASE WHEN s.error IS NOT NULL AND s.error != '' THEN 'sample_error' "
    "WHEN s.limit_type IS NOT NULL AND s.limit_type != '' THEN 'limit' ELSE coalesce(sc.reason, '') END"
)


@dataclass(frozen=True)
class SampleCounts:
    planned: int | None  # the run's own total (Inspect: dataset samples × epochs); None: not recorded
    completed_recorded: int | None  # the run's own completed count
    rows: int  # sample × epoch rows the log holds
    sample_ids: int  # distinct sample ids the log holds
    completed: int  # rows completed without an error (Inspect's completed_samples)
    errored: int
    limited: int
    status: str = ""
    format: str = ""


@dataclass(frozen=True)
class ScorerCounts:
    scorer: str
    scored: int  # sample rows with a value
    unscored: dict[str, int] = field(default_factory=dict)  # why -> rows (a score NaN, or no score at all)


@dataclass(frozen=True)
class IntegrityCounts:
    samples: SampleCounts
    scorers: tuple[ScorerCounts, ...]
    recorded_scored: dict[str, int]  # scorer -> the most samples its recorded results say were scored


    def as_json(self) -> dict[str, Any]:
        return {"samples": asdict(self.samples), "scorers": [[s.scorer, s.scored, s.unscored] for s in self.scorers],
                "recorded_scored": self.recorded_scored}  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> IntegrityCounts:
        scorers = tuple(ScorerCounts(scorer, scored, unscored) for scorer, scored, unscored in data["scorers"])
        return cls(SampleCounts(**data["samples"]), scorers, data["recorded_scored"])


def integrity_counts(db: Any, run_id: int) -> IntegrityCounts | None:
    """The run's counts, kept in the index under its content stamp (they read nothing else: its
    samples, its recorded scores and results), so the run screen, `evtui report` and `evtui
    compare` count a big run once (0.5 s at 1M samples) until it is read again."""
    from evtui.store import computed_results as kept

    stamp = kept.content_stamps(db, [run_id]).get(run_id)
    if stamp is None:
        return None
    found = kept.read_figures(db, "integrity", {run_id: (stamp, "")})
    if run_id in found:
        return IntegrityCounts.from_json(found[run_id])
    started = time.monotonic()
    conn = getattr(db, "conn", db)
    snapshot = not conn.in_transaction
    if snapshot:
        conn.execute("BEGIN")  # the counts and the stamp they are kept under from one state of the index
    try:
        stamp = kept.content_stamps(db, [run_id]).get(run_id)
        counts = _integrity_counts(db, run_id)
    finally:
        if snapshot:
            conn.execute("COMMIT")
    if counts is not None and stamp is not None:
        kept.store_figures(db, "integrity", {run_id: (stamp, "", counts.as_json())}, time.monotonic() - started)
    return counts


def _integrity_counts(db: Any, run_id: int) -> IntegrityCounts | None:
    conn = getattr(db, "conn", db)
    run = conn.execute("SELECT total_samples, completed_samples, status, format FROM runs WHERE id = ?", (run_id,)).fetchone()
    if run is None:
        return None
    rows, completed, errored, limited = conn.execute(
        "SELECT count(*), coalesce(sum(completed != 0 AND (error IS NULL OR error = '')), 0), "
        "coalesce(sum(error IS NOT NULL AND error != ''), 0), coalesce(sum(limit_type IS NOT NULL AND limit_type != ''), 0) "
        "FROM samples WHERE run_id = ?",
        (run_id,),
    ).fetchone()
    # Distinct ids cost a sort of every id (0.46 s at 1M): with one epoch (a seek on the epoch
    # index) each row is its own sample.
    top_epoch = conn.execute("SELECT max(epoch) FROM samples WHERE run_id = ?", (run_id,)).fetchone()[0]
    ids = rows if (top_epoch or 1) <= 1 else conn.execute(
        "SELECT count(DISTINCT sample_id) FROM samples WHERE run_id = ?", (run_id,)).fetchone()[0]
    samples = SampleCounts(run[0], run[1], rows, ids, completed, errored, limited, run[2] or "", run[3] or "")
    # Scored rows are counted on the scores' value index alone; only the unscored ones (few)
    # are joined to their samples to say why (0.78 → 0.23 s at 1M).
    scorers: dict[str, ScorerCounts] = {
        scorer: ScorerCounts(scorer, count) for scorer, count in conn.execute(
            f"SELECT scorer, count(*) FROM scores sc WHERE run_id = ? AND source = 'log' AND job_id = 0 "
            f"AND NOT ({_UNSCORED}) GROUP BY 1 ORDER BY min(id)", (run_id,))}  # fmt: skip
    for scorer, why, count in conn.execute(
        f"SELECT sc.scorer, {_WHY}, count(*) FROM scores sc JOIN samples s ON s.id = sc.sample_rowid "
        f"WHERE sc.run_id = ? AND sc.source = 'log' AND sc.job_id = 0 AND {_UNSCORED} GROUP BY 1, 2 ORDER BY min(sc.id)",
        (run_id,),
    ):
        entry = scorers.setdefault(scorer, ScorerCounts(scorer, 0))
        entry.unscored[why] = entry.unscored.get(why, 0) + count
    # Sample rows a scorer left without any score (an errored sample usually has none): looked
    # for only where a scorer has fewer scores than the run has rows (the common case skips it).
    names = [name for name, entry in scorers.items() if entry.scored + sum(entry.unscored.values()) < rows]
    if names:
        for scorer, why, count in conn.execute(
            f"WITH names(scorer) AS (VALUES {', '.join('(?)' for _ in names)}) "
            "SELECT n.scorer, CASE WHEN s.error IS NOT NULL AND s.error != '' THEN 'sample_error' "
            "WHEN s.limit_type IS NOT NULL AND s.limit_type != '' THEN 'limit' ELSE 'no_score' END, count(*) "
            "FROM names n JOIN samples s ON s.run_id = ? WHERE NOT EXISTS (SELECT 1 FROM scores sc "
            "WHERE sc.sample_rowid = s.id AND sc.scorer = n.scorer AND sc.source = 'log' AND sc.job_id = 0) GROUP BY 1, 2",
            (*names, run_id),
        ):
            unscored = scorers[scorer].unscored
            unscored[why] = unscored.get(why, 0) + count
    recorded: dict[str, int] = {}
    for scorer, scored in conn.execute(
        "SELECT scorer, max(scored) FROM run_results WHERE run_id = ? AND job_id = 0 AND scored IS NOT NULL GROUP BY scorer",
        (run_id,),
    ):
        recorded[scorer] = int(scored)
    return IntegrityCounts(samples, tuple(scorers.values()), recorded)


@dataclass(frozen=True)
class ScoreScale:
    """The range of one scorer's per-sample numbers in a run, which decides its interval
    (scoring/stats/intervals.py scale_policy): all 0/1 a proportion, all in [0, 1] a bounded mean."""

    low: float | None
    high: float | None
    binary: bool  # every number is 0 or 1
    count: int  # scores with a number (sample × epoch rows)
    sample_ids: int = 0  # distinct sample ids among them: fewer than `count` when epochs are folded

    @property
    def epochs_folded(self) -> bool:
        return 0 < self.sample_ids < self.count


def score_scales(db: Any, run_ids: list[int], job_id: int = 0) -> dict[tuple[int, str], ScoreScale]:
    """(run id, scorer) -> ScoreScale of the recorded scores (job 0, hand reviews included) or of
    evtui job `job_id`'s."""
    if not run_ids:
        return {}
    if job_id:  # a job's scores change while it runs and when it is resumed: read every time
        return _score_scales(db, list(run_ids), job_id)
    # The recorded scores' scales (hand reviews included) are kept under the run's content and
    # review stamps: the runs screen asks for every run's at each refresh.
    from evtui.store import computed_results as kept

    def stamps() -> dict[int, tuple[str, str]]:
        content = kept.content_stamps(db, run_ids)
        reviews = kept.review_stamps(db, list(content))
        return {run_id: (stamp, reviews[run_id]) for run_id, stamp in content.items()}

    wanted = stamps()
    found = kept.read_figures(db, "scales", wanted)
    missing = [run_id for run_id in wanted if run_id not in found]
    if missing:
        started = time.monotonic()
        conn = getattr(db, "conn", db)
        snapshot = not conn.in_transaction
        if snapshot:
            conn.execute("BEGIN")  # the scales and the stamps they are kept under from one state of the index
        try:
            wanted.update(stamps())
            computed = _score_scales(db, missing, 0)
        finally:
            if snapshot:
                conn.execute("COMMIT")
        by_run: dict[int, list[list[Any]]] = {run_id: [] for run_id in missing}
        for (run_id, scorer), scale in computed.items():
            by_run[run_id].append([scorer, scale.low, scale.high, scale.binary, scale.count, scale.sample_ids])
        kept.store_figures(db, "scales", {run_id: (*wanted[run_id], by_run[run_id]) for run_id in missing if run_id in wanted},
                           time.monotonic() - started)  # fmt: skip
        found.update(by_run)
    return {(run_id, scorer): ScoreScale(low, high, binary, count, ids)
            for run_id in sorted(set(run_ids)) for scorer, low, high, binary, count, ids in found.get(run_id, [])}  # fmt: skip


def _score_scales(db: Any, run_ids: list[int], job_id: int) -> dict[tuple[int, str], ScoreScale]:
    conn = getattr(db, "conn", db)
    sources = "('log', 'human')" if job_id == 0 else "('job')"
    # The range from the scores alone (their value index); the distinct sample ids behind them
    # (whether epochs were folded) only for runs that have epochs: with one epoch each score is
    # its own sample, and joining a million scores to their samples cost 0.9 s.
    with_epochs = {run_id for run_id in run_ids if (conn.execute(
        "SELECT max(epoch) FROM samples WHERE run_id = ?", (run_id,)).fetchone()[0] or 1) > 1}  # fmt: skip
    ids_of: dict[tuple[int, str], int] = {}
    if with_epochs:
        for run_id, scorer, ids in conn.execute(
            "SELECT sc.run_id, sc.scorer, count(DISTINCT s.sample_id) FROM scores sc JOIN samples s ON s.id = sc.sample_rowid "
            f"WHERE sc.run_id IN ({', '.join('?' * len(with_epochs))}) AND sc.job_id = ? AND sc.source IN {sources} "
            "AND sc.value_num IS NOT NULL GROUP BY 1, 2",
            (*with_epochs, job_id),
        ):
            ids_of[(run_id, scorer)] = ids
    out = {}
    for run_id, scorer, low, high, other, count in conn.execute(
        "SELECT run_id, scorer, min(value_num), max(value_num), coalesce(sum(value_num NOT IN (0, 1)), 0), count(value_num) "
        f"FROM scores WHERE run_id IN ({', '.join('?' * len(run_ids))}) AND job_id = ? AND source IN {sources} GROUP BY 1, 2",
        (*run_ids, job_id),
    ):
        ids = ids_of.get((run_id, scorer), count) if run_id in with_epochs else count
        out[(run_id, scorer)] = ScoreScale(low, high, count > 0 and other == 0, count, ids)
    return out
