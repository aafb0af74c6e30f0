"""What a run's scores are like before any average (scoring/results/integrity.py and the interval
policy read these):

* `integrity_counts`: its samples (planned, held, completed, errored, hit a limit) and each
  recorded scorer's scores, unscored ones counted by why: the sample's error or limit, else the
  score's reason.
* `score_scales`: the range of each scorer's numbers (0/1, inside [0, 1], or other).

Tolerant of what a reader did not fill: a run without `total_samples` has no planned count, a
score without a reason counts under "" (no reason given)."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from evtui.store.queries.runs import sample_rows
from evtui.store.transaction import read_snapshot

__all__ = ["SampleCounts", "ScorerCounts", "IntegrityCounts", "integrity_counts", "ScoreScale", "score_scales"]

# Unscored: no number and no other value (Inspect's NaN sentinel, or nothing); a dict or list
# value has no value_num but is a score.
_UNSCORED = "sc.value_num IS NULL AND (sc.value IS NULL OR sc.value IN ('NaN', 'null', '\"NaN\"'))"
# Why a sample has no score: its error first, then its limit (the root causes), else the reason.
# The partial indexes of the few errored, limited and incomplete samples (store/schema/migrations.py).
_ERRORED = "samples s INDEXED BY samples_run_errored"
_LIMITED = "samples s INDEXED BY samples_run_limited"
_INCOMPLETE = "samples s INDEXED BY samples_run_incomplete"
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
        try:
            return IntegrityCounts.from_json(found[run_id])
        except (KeyError, TypeError, ValueError):  # a row in a shape this evtui does not write: counted again
            pass
    started = time.monotonic()
    with read_snapshot(db):  # the counts and the stamp they are kept under from one state of the index
        stamp = kept.content_stamps(db, [run_id]).get(run_id)
        counts = _integrity_counts(db, run_id)
    if counts is not None and stamp is not None:
        kept.store_figures(db, "integrity", {run_id: (stamp, "", counts.as_json())}, time.monotonic() - started)
    return counts


def _integrity_counts(db: Any, run_id: int) -> IntegrityCounts | None:
    conn = getattr(db, "conn", db)
    run = conn.execute("SELECT total_samples, completed_samples, status, format FROM runs WHERE id = ?", (run_id,)).fetchone()
    if run is None:
        return None
    # Every count from an index: the rows from the epoch index, the errored, limited and
    # incomplete ones (few) from their partial indexes (a pass over every sample row: 0.21 s at 1M).
    rows = sample_rows(db, run_id)
    (errored,) = conn.execute(f"SELECT count(*) FROM {_ERRORED} WHERE s.run_id = ? AND s.error != ''", (run_id,)).fetchone()
    (limited,) = conn.execute(f"SELECT count(*) FROM {_LIMITED} WHERE s.run_id = ? AND s.limit_type != ''", (run_id,)).fetchone()
    (incomplete,) = conn.execute(
        f"SELECT count(*) FROM {_INCOMPLETE} WHERE s.run_id = ? AND s.completed = 0 AND (s.error IS NULL OR s.error = '')", (run_id,)
    ).fetchone()
    completed = rows - errored - incomplete
    # Distinct ids cost a sort of every id (0.46 s at 1M): with one epoch (a seek on the epoch
    # index) each row is its own sample.
    top_epoch = conn.execute("SELECT max(epoch) FROM samples WHERE run_id = ?", (run_id,)).fetchone()[0]
    ids = rows if (top_epoch or 1) <= 1 else conn.execute(
        "SELECT count(DISTINCT sample_id) FROM samples WHERE run_id = ?", (run_id,)).fetchone()[0]
    samples = SampleCounts(run[0], run[1], rows, ids, completed, errored, limited, run[2] or "", run[3] or "")
    # Scored rows: each scorer's recorded rows counted on the scores' key (covering), less the
    # unscored ones (few), which are joined to their samples to say why (0.78 → 0.23 → 0.05 s at 1M).
    names = run_scorers(conn, run_id)
    unscored_rows = conn.execute(
        # (the value index seeks value_num IS NULL for each scorer; the scores' key would read every row)
        f"SELECT sc.scorer, {_WHY}, count(*), min(sc.id) FROM scores sc INDEXED BY scores_by_value JOIN samples s ON s.id = sc.sample_rowid "
        f"WHERE sc.run_id = ? AND sc.scorer IN (SELECT value FROM json_each(?)) AND sc.source = 'log' AND sc.job_id = 0 "
        f"AND {_UNSCORED} GROUP BY 1, 2 ORDER BY min(sc.id)",
        (run_id, json.dumps(names)),
    ).fetchall()
    unscored_count: dict[str, int] = {}
    for scorer, _, count, _ in unscored_rows:
        unscored_count[scorer] = unscored_count.get(scorer, 0) + count
    several = len(names) > 1
    scored: list[tuple[int, str, int]] = []  # (the scorer's first scored row's id: the order, scorer, count)
    from evtui.store.queries.score_columns import kept_row_count  # (numpy: not for every importer)

    for name in names:
        total = None if several else kept_row_count(db, run_id, name)  # a kept column's length (no order needed)
        first = 0
        if total is None:
            total, first = conn.execute(
                f"SELECT count(*), {'min(id)' if several else '0'} FROM scores WHERE run_id = ? AND scorer = ? AND source = 'log' AND job_id = 0",
                (run_id, name),
            ).fetchone()
        count = total - unscored_count.get(name, 0)
        if count <= 0:
            continue
        if several and conn.execute(f"SELECT 1 FROM scores sc WHERE sc.id = ? AND {_UNSCORED}", (first,)).fetchone():
            (first,) = conn.execute(
                f"SELECT min(id) FROM scores sc WHERE run_id = ? AND scorer = ? AND source = 'log' AND job_id = 0 AND NOT ({_UNSCORED})",
                (run_id, name),
            ).fetchone()
        scored.append((first, name, count))
    scorers: dict[str, ScorerCounts] = {name: ScorerCounts(name, count) for _, name, count in sorted(scored)}
    for scorer, why, count, _ in unscored_rows:
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
    found = {}
    for run_id, rows in kept.read_figures(db, "scales", wanted).items():
        try:
            found[run_id] = [(scorer, ScoreScale(low, high, binary, count, ids)) for scorer, low, high, binary, count, ids in rows]
        except (TypeError, ValueError):  # a row in a shape this evtui does not write: read again
            pass
    missing = [run_id for run_id in wanted if run_id not in found]
    if missing:
        started = time.monotonic()
        with read_snapshot(db):  # the scales and the stamps they are kept under from one state of the index
            wanted.update(stamps())
            computed = _score_scales(db, missing, 0)
        by_run: dict[int, list[tuple[str, ScoreScale]]] = {run_id: [] for run_id in missing}
        for (run_id, scorer), scale in computed.items():
            by_run[run_id].append((scorer, scale))
        figures = {run_id: (*wanted[run_id], [[name, s.low, s.high, s.binary, s.count, s.sample_ids] for name, s in by_run[run_id]])
                   for run_id in missing if run_id in wanted}  # fmt: skip
        kept.store_figures(db, "scales", figures, time.monotonic() - started)
        found.update(by_run)
    return {(run_id, scorer): scale for run_id in sorted(set(run_ids)) for scorer, scale in found.get(run_id, [])}


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
    ranged = _ranges_on_value_index(conn, run_ids) if job_id == 0 else {}
    for (run_id, scorer), (low, high, other, count) in ranged.items():
        ids = ids_of.get((run_id, scorer), count) if run_id in with_epochs else count
        out[(run_id, scorer)] = ScoreScale(low, high, count > 0 and other == 0, count, ids)
    scanned = [run_id for run_id in run_ids if run_id not in {key[0] for key in ranged}]
    if not scanned:
        return out
    for run_id, scorer, low, high, other, count in conn.execute(
        "SELECT run_id, scorer, min(value_num), max(value_num), coalesce(sum(value_num NOT IN (0, 1)), 0), count(value_num) "
        f"FROM scores WHERE run_id IN ({', '.join('?' * len(scanned))}) AND job_id = ? AND source IN {sources} GROUP BY 1, 2",
        (*scanned, job_id),
    ):
        ids = ids_of.get((run_id, scorer), count) if run_id in with_epochs else count
        out[(run_id, scorer)] = ScoreScale(low, high, count > 0 and other == 0, count, ids)
    return dict(sorted(out.items()))


def _ranges_on_value_index(conn: Any, run_ids: list[int]) -> dict[tuple[int, str], tuple[Any, Any, int, int]]:
    """(low, high, numbers other than 0/1, numbers) of each scorer of the runs whose scores are all
    job 0 (recorded or a person's: job_id 0 is theirs alone), read by seeks on the scores' value
    index (run_id, scorer, value_num, …) where that index holds nothing else: the ends are its
    first and last number, the others three ranges, the count one range (0.27 → 0.03 s at 1M).
    Runs with a job's scores are left out (the caller scans those)."""
    out: dict[tuple[int, str], tuple[Any, Any, int, int]] = {}
    for run_id in run_ids:
        found = {}
        for name in run_scorers(conn, run_id):
            if not _job_zero_alone(conn, run_id, name):
                found = None
                break
            where = "FROM scores INDEXED BY scores_by_value WHERE run_id = ?1 AND scorer = ?2"
            found[(run_id, name)] = conn.execute(
                f"SELECT (SELECT min(value_num) {where}), (SELECT max(value_num) {where}), "
                f"(SELECT count(*) {where} AND (value_num < 0 OR (value_num > 0 AND value_num < 1) OR value_num > 1)), "
                f"(SELECT count(*) {where} AND value_num IS NOT NULL)",
                (run_id, name),
            ).fetchone()
        if found is not None:
            out.update(found)
    return out


def run_scorers(db: Any, run_id: int) -> list[str]:
    """The names of every scorer with a score in the run (any source), in name order: one seek on
    the scores' value index per name, not a pass over every score."""
    rows = getattr(db, "conn", db).execute(
        "WITH RECURSIVE names(name) AS (SELECT min(scorer) FROM scores WHERE run_id = ?1 UNION ALL "
        "SELECT (SELECT min(scorer) FROM scores WHERE run_id = ?1 AND scorer > names.name) FROM names WHERE names.name IS NOT NULL) "
        "SELECT name FROM names WHERE name IS NOT NULL",
        (run_id,),
    )
    return [name for (name,) in rows]


def _job_zero_alone(conn: Any, run_id: int, scorer: str) -> bool:
    """Whether every score of `scorer` in the run is a recorded or a person's one with job_id 0:
    seeks on the scores' key (run_id, scorer, source, job_id, …), whose sources sort
    'human' < 'job' < 'log'."""
    where = "FROM scores WHERE run_id = ?1 AND scorer = ?2"
    first, last, jobs, *job_ids = conn.execute(
        f"SELECT (SELECT min(source) {where}), (SELECT max(source) {where}), EXISTS (SELECT 1 {where} AND source = 'job'), "
        + ", ".join(f"(SELECT {end}(job_id) {where} AND source = '{source}')" for source in ("log", "human") for end in ("min", "max")),
        (run_id, scorer),
    ).fetchone()
    return first is not None and first >= "human" and last <= "log" and not jobs and all(j in (None, 0) for j in job_ids)
