"""Figures derived from a run's samples and scores (its integrity, each scorer's scale, its groups'
metrics) are kept in the index under the run's content stamp (issue 27), so the run screen,
`evtui report` and `evtui compare` read them instead of counting a big run again: the same
figures as computed, and computed again when the run is read again (its file changed), when a
person reviews a score (scales read reviews), and never kept for a job's or reviewed groups."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evtui.commands.report import build_report, grouping_for
from evtui.scoring.results import groups as group_metrics
from evtui.scoring.results.groups import group_table
from evtui.scoring.results.integrity import run_integrity
from evtui.store.ingest.files import ingest_paths
from evtui.store.queries import integrity as integrity_queries
from evtui.store.queries.groups import Grouping
from evtui.store.queries.integrity import score_scales
from evtui.store.schema import connect
from evtui.store.score_edits import add_human_edit
from tests.jsonl_run_files import indexed_run, write_jsonl

REPO = Path(__file__).resolve().parents[1]


def _rows(first: int, count: int) -> list[dict]:
    """JSONL samples: a 0/1 `verdict` score (every 7th unscored: NaN), a category in three."""
    return [
        {"id": f"s{i}", "input": "q", "output": "a", "metadata": {"category": "abc"[i % 3]},
         "scores": {"verdict": {"value": float("nan") if i % 7 == 0 else i % 2}}}
        for i in range(first, first + count)
    ]  # fmt: skip


@pytest.fixture
def run(tmp_path: Path) -> tuple[Path, Path, int]:
    return indexed_run(tmp_path, _rows(0, 30))


def _kept(db_path: Path, run_id: int) -> list[str]:
    db = connect(db_path)
    try:
        return sorted(kind for (kind,) in db.execute("SELECT kind FROM derived_figures WHERE run_id = ?", (run_id,)))
    finally:
        db.conn.close()


def _read_again(log: Path, db_path: Path) -> None:
    write_jsonl(log, _rows(30, 12), append=True)
    assert not ingest_paths(db_path, [log.parent]).failures


def test_integrity_is_counted_once_and_again_when_the_file_changes(run, monkeypatch) -> None:
    db_path, log, run_id = run
    db = connect(db_path)
    try:
        first = run_integrity(db, run_id)
        assert first.held == 30 and first.scorers[0].scored == 25 and first.scorers[0].other == {"": 5}
        assert _kept(db_path, run_id) == ["integrity"]
        counted = integrity_queries._integrity_counts
        monkeypatch.setattr(integrity_queries, "_integrity_counts", lambda *args: pytest.fail("counted again"))
        assert run_integrity(db, run_id) == first  # read from the index, the same figures
        _read_again(log, db_path)
        monkeypatch.setattr(integrity_queries, "_integrity_counts", counted)
        again = run_integrity(db, run_id)
        assert again.held == 42 and again.scorers[0].scored == 36 and again.scorers[0].other == {"": 6}
    finally:
        db.conn.close()


def test_scales_follow_a_new_review_and_a_new_read(run) -> None:
    db_path, log, run_id = run
    db = connect(db_path)
    try:
        scale = score_scales(db, [run_id])[(run_id, "verdict")]
        assert scale.binary and (scale.low, scale.high, scale.count) == (0.0, 1.0, 25)
        assert score_scales(db, [run_id])[(run_id, "verdict")] == scale  # kept: read back the same
        # A person grades one sample 0.5: the scorer's scale is no longer 0/1 (intervals change).
        (score_id,) = db.execute("SELECT id FROM scores WHERE run_id = ? AND source = 'log' AND value = '1' LIMIT 1", (run_id,)).fetchone()
        add_human_edit(db, score_id, 0.5, reason="half right", author="tester")
        reviewed = score_scales(db, [run_id])[(run_id, "verdict")]
        assert not reviewed.binary and reviewed.count == 26  # the log's 25 and the human row
        # A second edit of the same human score (its row updated in place) is seen too.
        add_human_edit(db, score_id, 1, reason="right after all", author="tester")
        assert score_scales(db, [run_id])[(run_id, "verdict")].binary
        _read_again(log, db_path)
        assert score_scales(db, [run_id])[(run_id, "verdict")].count == 36 + 1
    finally:
        db.conn.close()


def _table(table) -> list:
    return [(g.value, g.label, g.samples, g.rows, g.error, g.is_all, [r.model_dump() for r in g.results]) for g in table.groups]


def test_groups_are_kept_the_same_and_recomputed_when_the_file_changes(run, monkeypatch) -> None:
    db_path, log, run_id = run
    category = Grouping("metadata", "category")
    first = group_table(db_path, run_id, category)
    assert [g.rows for g in first.groups] == [30, 10, 10, 10]
    assert any(kind.startswith("groups ") for kind in _kept(db_path, run_id))
    compute = group_metrics._iter_group_table
    monkeypatch.setattr(group_metrics, "_iter_group_table", lambda *args, **kwargs: pytest.fail("computed again"))
    kept = group_table(db_path, run_id, category)
    assert _table(kept) == _table(first)
    assert (kept.grouping, kept.groupings, kept.method, kept.hidden) == (first.grouping, first.groupings, first.method, first.hidden)
    _read_again(log, db_path)
    monkeypatch.setattr(group_metrics, "_iter_group_table", compute)
    assert [g.rows for g in group_table(db_path, run_id, category).groups] == [42, 14, 14, 14]


def test_reviewed_groups_are_never_kept(run) -> None:
    db_path, _, run_id = run
    group_table(db_path, run_id, Grouping("metadata", "category"), reviewed=True)
    assert not any(kind.startswith("groups ") for kind in _kept(db_path, run_id))


def test_report_json_is_the_same_cold_and_warm_and_follows_a_review(run) -> None:
    db_path, _, run_id = run
    groupings = [grouping_for("metadata.category")]

    def report() -> str:
        return json.dumps(build_report(db_path, [run_id], groupings), default=str, sort_keys=True)

    cold = report()
    assert report() == cold
    db = connect(db_path)
    try:
        (score_id,) = db.execute("SELECT id FROM scores WHERE run_id = ? AND source = 'log' AND value = '1' LIMIT 1", (run_id,)).fetchone()
        add_human_edit(db, score_id, 0.5, reason="half right", author="tester")
    finally:
        db.conn.close()
    after = report()
    assert report() == after
    before, reviewed = json.loads(cold)[0], json.loads(after)[0]
    # The reviewed row joins the results, and the scale (no longer 0/1) changes the interval method.
    assert any("review" in result["source"] for result in reviewed["results"])
    assert before["results"][0]["interval"]["method"] != reviewed["results"][0]["interval"]["method"]


def test_an_unknown_score_name_loads_no_grading_code_and_is_said_the_same(run) -> None:
    """A JSONL run's own score name is looked up by every re-score check (the run's notes): the
    table of built-in homes says no built-in has it, so no built-in is imported (the grading
    client's httpx above all); the unknown-name message still lists every built-in."""
    db_path, _, run_id = run
    code = (
        "import sys\n"
        "from evtui.store.schema import connect\n"
        "from evtui.scoring.results.reproduction import shown_reproduction_notes\n"
        "from evtui.scoring.specs import registry\n"
        f"notes = shown_reproduction_notes(connect({str(db_path)!r}), {run_id})\n"
        "print([note.text for note in notes])\n"
        "print('httpx' in sys.modules, 'evtui.scoring.inspect.scorers.match' in sys.modules)\n"
        "try:\n    registry.lookup('scorer', 'model_graded_q')\nexcept registry.UnknownNameError as error:\n    print(error)\n"
        "registry.load_builtins()\n"
        "try:\n    registry.lookup('scorer', 'model_graded_q')\nexcept registry.UnknownNameError as error:\n    print(error)\n"
    )  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, check=True)
    notes, loaded, before, after = done.stdout.splitlines()
    assert "'verdict' is jsonl's own score" in notes
    assert loaded == "False False"  # neither the grading client nor any built-in scorer was imported
    assert before == after and "Did you mean: model_graded_qa" in before


# The counts as one pass over the rows gave them before they were read from indexes: the reference.
_UNSCORED = "sc.value_num IS NULL AND (sc.value IS NULL OR sc.value IN ('NaN', 'null', '\"NaN\"'))"


def _reference_counts(conn, run_id: int) -> tuple:
    samples = conn.execute(
        "SELECT count(*), coalesce(sum(completed != 0 AND (error IS NULL OR error = '')), 0), "
        "coalesce(sum(error IS NOT NULL AND error != ''), 0), coalesce(sum(limit_type IS NOT NULL AND limit_type != ''), 0) "
        "FROM samples WHERE run_id = ?", (run_id,)).fetchone()  # fmt: skip
    scored = conn.execute(
        f"SELECT scorer, count(*) FROM scores sc WHERE run_id = ? AND source = 'log' AND job_id = 0 AND NOT ({_UNSCORED}) "
        "GROUP BY 1 ORDER BY min(id)", (run_id,)).fetchall()  # fmt: skip
    unscored = conn.execute(
        f"SELECT sc.scorer, count(*) FROM scores sc WHERE sc.run_id = ? AND sc.source = 'log' AND sc.job_id = 0 AND {_UNSCORED} "
        "GROUP BY 1 ORDER BY min(sc.id)", (run_id,)).fetchall()  # fmt: skip
    scales = conn.execute(
        "SELECT scorer, min(value_num), max(value_num), coalesce(sum(value_num NOT IN (0, 1)), 0) = 0 AND count(value_num) > 0, "
        "count(value_num) FROM scores WHERE run_id = ? AND job_id = 0 AND source IN ('log', 'human') GROUP BY 1", (run_id,)).fetchall()  # fmt: skip
    order = [name for name, _ in scored] + [name for name, _ in unscored if name not in dict(scored)]
    return tuple(samples), order, sorted(scored), sorted(unscored), [tuple(row) for row in scales]


def _counts(db, run_id: int) -> tuple:
    counts = integrity_queries._integrity_counts(db, run_id)
    scales = integrity_queries._score_scales(db, [run_id], 0)
    s = counts.samples
    scored = sorted((c.scorer, c.scored) for c in counts.scorers if c.scored)
    unscored = sorted((c.scorer, sum(c.unscored.values())) for c in counts.scorers if c.unscored)
    return ((s.rows, s.completed, s.errored, s.limited), [c.scorer for c in counts.scorers], scored, unscored,
            [(name, v.low, v.high, v.binary, v.count) for (_, name), v in scales.items()])  # fmt: skip


def test_counts_from_indexes_equal_one_pass_over_the_rows(tmp_path: Path) -> None:
    """Several scorers whose first rows are unscored, one never scored, errored, limited and
    incomplete samples, a person's review and a job's scores: every count as the row pass gives it."""
    from evtui.scoring.jobs.config import ScoringJobConfig
    from evtui.scoring.jobs.runner import run_job

    logs = tmp_path / "logs"
    logs.mkdir()
    rows = [
        {"id": f"s{i}", "input": "q", "target": "a", "output": "a" if i % 3 else "b",
         "scores": {"zeta": {"value": None if i < 2 else i % 2}, "alpha": {"value": "NaN" if i < 5 else [0.5, 1, 0][i % 3]},
                    "never": {"value": None}}}
        for i in range(40)
    ]  # fmt: skip
    write_jsonl(logs / "run.jsonl", rows)
    db_path = tmp_path / "index.db"
    assert not ingest_paths(db_path, [logs]).failures
    db = connect(db_path)
    try:
        (run_id,) = [row[0] for row in db.execute("SELECT id FROM runs")]
        db.execute("UPDATE samples SET error = 'boom' WHERE run_id = ? AND sample_id IN ('s3', 's7')", (run_id,))
        db.execute("UPDATE samples SET limit_type = 'tokens' WHERE run_id = ? AND sample_id = 's8'", (run_id,))
        db.execute("UPDATE samples SET completed = 0 WHERE run_id = ? AND sample_id IN ('s7', 's9', 's11')", (run_id,))
        expected = _reference_counts(db.conn, run_id)
        assert _counts(db, run_id) == expected
        # zeta's first rows are unscored (its first score row is before alpha's, its first scored one after)
        assert expected[0] == (40, 36, 2, 1) and expected[1] == ["alpha", "zeta", "never"]
        # A person's review joins the scales (the value index's ranges), a job's scores do not (scanned then).
        (score_id,) = db.execute("SELECT id FROM scores WHERE run_id = ? AND scorer = 'zeta' AND value = '1' LIMIT 1", (run_id,)).fetchone()
        add_human_edit(db, score_id, 7, reason="out of range", author="tester")
        assert _counts(db, run_id) == _reference_counts(db.conn, run_id)
    finally:
        db.conn.close()
    run_job(db_path, ScoringJobConfig(scorers=["match()"]), [run_id])
    db = connect(db_path)
    try:
        assert db.execute("SELECT count(*) FROM scores WHERE run_id = ? AND source = 'job'", (run_id,)).fetchone()[0] == 40
        assert _counts(db, run_id) == _reference_counts(db.conn, run_id)
    finally:
        db.conn.close()


@pytest.mark.parametrize("gaps", [False, True])
def test_groups_read_after_the_runs_results_reuse_its_columns_with_the_same_numbers(tmp_path: Path, gaps: bool) -> None:
    """`evtui report --group-by` computes the run's results, then its groups: the second reads the
    first's columns (kept for the run's content), with each score's sample from the run's one range
    of rowids when every sample has the score (else read): the same groups as read alone."""
    from evtui.scoring.results.computed import listed_results
    from evtui.store.queries import score_columns

    logs = tmp_path / "logs"
    logs.mkdir()
    rows = [{"id": f"s{i}", "input": "q", "output": "a", "metadata": {"category": "abcd"[i * 7 % 4]},
             "scores": {"grade": {"value": "CIP"[i % 3]}, **({} if gaps and i % 5 == 0 else {"reward": {"value": i % 4}})}}
            for i in range(60)]  # fmt: skip
    write_jsonl(logs / "run.jsonl", rows)
    db_path = tmp_path / "index.db"
    assert not ingest_paths(db_path, [logs]).failures
    category = Grouping("metadata", "category")

    def fresh_groups() -> list:
        score_columns._kept_columns.clear()
        score_columns._kept_metadata.clear()
        db = connect(db_path)
        db.execute("DELETE FROM derived_figures")
        db.conn.close()
        return _table(group_table(db_path, 1, category))

    alone = fresh_groups()
    fresh_groups()
    db = connect(db_path)
    try:
        listed_results(db, 1)
        assert {key[2] for key in score_columns._kept_columns} == {"grade", "reward"}  # kept by the results' read
        db.execute("DELETE FROM derived_figures")
    finally:
        db.conn.close()
    assert _table(group_table(db_path, 1, category)) == alone
    assert all(column.rowids is not None for column in score_columns._kept_columns.values())


def _plans_of(conn, call) -> list[str]:
    """The query plan of every statement `call` runs on `conn` (each as SQLite ran it, parameters in)."""
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        call()
    finally:
        conn.set_trace_callback(None)
    selects = [s for s in statements if s.lstrip().upper().startswith(("SELECT", "WITH"))]
    return [" | ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {s}")) for s in selects]


def test_integrity_scales_and_reviews_read_indexes_not_every_row(run) -> None:
    """On a run nobody reviewed and no job scored, counting its integrity and scales and looking for
    its reviews read no table row per sample or score: every pass over the run is over an index
    holding what it counts (a 1M-sample run: 0.75 s → 0.1 s)."""
    from evtui.store.score_edits import reviews_by_base

    db_path, _, run_id = run
    db = connect(db_path)
    try:
        plans = _plans_of(db.conn, lambda: (
            integrity_queries._integrity_counts(db, run_id), integrity_queries._score_scales(db, [run_id], 0),
            reviews_by_base(db, run_id)))  # fmt: skip
    finally:
        db.conn.close()
    assert len(plans) >= 10
    for plan in plans:
        # A non-covering search of the run's samples or scores reads a table row for each of them;
        # the scores' key searched by run alone walks every score of the run (any scorer, source).
        walks = [step for step in plan.split(" | ") if ("SEARCH" in step or "SCAN" in step) and "COVERING" not in step
                 and ("samples" in step or "scores" in step) and "rowid=?" not in step and not any(
                     index in step for index in ("samples_run_errored", "samples_run_limited", "samples_run_incomplete",
                                                 "scores_human", "value_num=?", "value_num<?", "value_num>?"))]  # fmt: skip
        assert not walks, plan
        assert "sqlite_autoindex_scores_1 (run_id=?)" not in plan, plan


def test_a_run_being_written_keeps_no_figures_and_counts_each_look(run) -> None:
    db_path, _, run_id = run
    db = connect(db_path)
    try:
        db.execute("UPDATE runs SET status = 'started' WHERE id = ?", (run_id,))
        assert run_integrity(db, run_id).held == 30
        assert score_scales(db, [run_id])[(run_id, "verdict")].count == 25
    finally:
        db.conn.close()
    assert [g.rows for g in group_table(db_path, run_id, Grouping("metadata", "category")).groups] == [30, 10, 10, 10]
    assert _kept(db_path, run_id) == []


def test_a_jobs_groups_and_scales_follow_its_rescored_samples(run) -> None:
    """A job's scores change as it runs and when it is resumed or re-scores a sample: its groups
    and scales are read each time, never kept (the recorded ones beside them are)."""
    from evtui.score_values import Score
    from evtui.scoring.jobs.config import ScoringJobConfig
    from evtui.scoring.jobs.runner import run_job
    from evtui.store.job_score_writes import write_scores

    db_path, _, run_id = run
    job_id = run_job(db_path, ScoringJobConfig(scorers=["match()"]), [run_id]).job_id
    category = Grouping("metadata", "category")

    def accuracy() -> dict[str, float]:
        table = group_table(db_path, run_id, category, job_id=job_id)
        return {g.label: next(r.value for r in g.results if r.metric == "accuracy") for g in table.groups}

    def scale():
        db = connect(db_path)
        try:
            return score_scales(db, [run_id], job_id)[(run_id, "match")]
        finally:
            db.conn.close()

    before, scale_before = accuracy(), scale()
    assert before["(all)"] == 0.0 and scale_before.binary  # no sample has a target to match
    db = connect(db_path)
    try:
        rowids = [row[0] for row in db.execute("SELECT id FROM samples WHERE run_id = ? ORDER BY id LIMIT 3", (run_id,))]
        write_scores(db, job_id, [(rowid, run_id, "match", Score(value=0.5)) for rowid in rowids])  # re-scored in place
    finally:
        db.conn.close()
    assert accuracy()["(all)"] == pytest.approx(1.5 / 30)
    assert not scale().binary
    assert not any(kind.startswith("groups ") and f'"{job_id}"' in kind for kind in _kept(db_path, run_id))


@pytest.mark.parametrize("damage", ["not json", '{"unexpected": 1}', "[[1, 2]]"])
def test_a_damaged_kept_row_is_computed_again(run, damage: str) -> None:
    db_path, _, run_id = run
    category = Grouping("metadata", "category")
    db = connect(db_path)
    try:
        integrity, scales = run_integrity(db, run_id), score_scales(db, [run_id])
    finally:
        db.conn.close()
    groups = _table(group_table(db_path, run_id, category))
    db = connect(db_path)
    try:
        db.execute("UPDATE derived_figures SET figures = ?", (damage,))
        assert run_integrity(db, run_id) == integrity and score_scales(db, [run_id]) == scales
    finally:
        db.conn.close()
    assert _table(group_table(db_path, run_id, category)) == groups


def test_an_unchanged_runs_recorded_score_count_is_kept_until_it_is_read_again(run, monkeypatch) -> None:
    """Every command indexes its PATHs first: a big unchanged run's recorded scores are counted
    once (a million index entries) and the count kept for its content, which a review does not change."""
    from evtui.store.ingest import kept as ingest_kept

    db_path, log, run_id = run
    monkeypatch.setattr(ingest_kept, "_KEEP_COUNT_FROM", 1)  # the test's run counts as big

    def unchanged_count() -> int:
        (found,) = ingest_paths(db_path, [log.parent]).files
        assert found.change == "unchanged"
        return found.scores

    assert unchanged_count() == 30  # a NaN score is a recorded score too
    assert "recorded scores" in _kept(db_path, run_id)
    db = connect(db_path)
    try:
        (score_id,) = db.execute("SELECT id FROM scores WHERE run_id = ? AND value = '1' LIMIT 1", (run_id,)).fetchone()
        add_human_edit(db, score_id, 0, reason="wrong", author="tester")  # a person's score is not a recorded one
        db.execute("UPDATE derived_figures SET figures = '12345' WHERE kind = 'recorded scores'")  # read, not counted
    finally:
        db.conn.close()
    assert unchanged_count() == 12345
    _read_again(log, db_path)
    assert unchanged_count() == 42
