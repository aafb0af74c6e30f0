"""Computed results (runs that record scores but no metrics) come from columns with the
per-sample path's numbers to the last digit, on every fixture of every format and on runs made
to be awkward; what the columns do not cover is computed per sample with a note saying so, and a
scorer whose scores cannot be folded is named in a note while the other scorers keep theirs."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from evtui.scoring.results import computed
from evtui.scoring.results.computed import compute_run
from evtui.scoring.results.groups import results_for_rows
from evtui.store import jobs
from evtui.store.ingest.files import ingest_paths
from evtui.store.run_content import runs_without_metrics
from evtui.store.schema import connect

DATA = Path(__file__).parent / "data"


def _per_sample(db, run_id: int):
    run = jobs.run_info(db, run_id)
    return results_for_rows(jobs.recorded_scores(db, run_id, jobs.recorded_score_names(db, run_id)), run)


def _key(records):
    return [(r.scorer, r.reducer, r.metric, r.scored, r.unscored) for r in records]


def _same(got, expected) -> None:
    assert _key(got) == _key(expected)
    for mine, theirs in zip(got, expected, strict=True):
        assert (mine.value is None and theirs.value is None) or mine.value == theirs.value or (
            math.isnan(mine.value) and math.isnan(theirs.value)
        ), (mine, theirs)  # exact, not approx


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory) -> Path:
    logs = tmp_path_factory.mktemp("fixtures")
    for folder in ("jsonl", "inspect", "harbor", "verifiers", "lm_eval", "terminal_bench", "ag2", "evsys"):
        shutil.copytree(DATA / folder, logs / folder)
    db_path = logs / "index.db"
    ingest_paths(db_path, [logs])
    return db_path


def test_every_fixture_without_metrics_gets_the_per_sample_numbers(fixtures: Path) -> None:
    db = connect(fixtures)
    try:
        needed = runs_without_metrics(db)
        assert len(needed) >= 4, "the fixtures hold runs without recorded metrics of several formats"
        formats = set()
        for run_id in needed:
            formats.add(jobs.run_info(db, run_id)["format"])
            _same(compute_run(db, run_id).results, _per_sample(db, run_id))
        assert {"jsonl", "inspect_eval"} <= formats, formats
    finally:
        db.conn.close()


def _jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def _one_run(tmp_path: Path, rows: list[dict]) -> tuple[object, int]:
    logs = tmp_path / "logs"
    logs.mkdir()
    _jsonl(logs / "run.jsonl", rows)
    db_path = tmp_path / "index.db"
    assert not ingest_paths(db_path, [logs]).failures
    db = connect(db_path)
    (run_id,) = runs_without_metrics(db)
    return db, run_id


def test_epochs_of_numbers_fold_exactly_as_statistics_mean(tmp_path: Path) -> None:
    # Quarters and integer rewards over 3 epochs: a sum of them is exact, so arrays fold them.
    rows = [
        {"id": f"s{i}", "epoch": e, "input": "q", "output": "a",
         "scores": {"reward": {"value": [0.25, 3, 0.75, 0, 1.5][(i + e) % 5]}, "grade": {"value": "CIPN"[(i * e) % 4]}}}
        for i in range(40) for e in (1, 2, 3)
    ]  # fmt: skip
    db, run_id = _one_run(tmp_path, rows)
    try:
        got = compute_run(db, run_id)
        assert got.notes == []  # no per-sample fallback
        _same(got.results, _per_sample(db, run_id))
        assert {(r.scorer, r.metric) for r in got.results} == {("reward", "mean"), ("reward", "stderr"), ("grade", "accuracy"), ("grade", "stderr")}
    finally:
        db.conn.close()


def test_thirds_over_epochs_go_per_sample_with_a_note(tmp_path: Path) -> None:
    rows = [{"id": f"s{i}", "epoch": e, "input": "q", "output": "a", "scores": {"r": {"value": (i + e) / 3}}}
            for i in range(10) for e in (1, 2)]  # fmt: skip
    db, run_id = _one_run(tmp_path, rows)
    try:
        got = compute_run(db, run_id)
        _same(got.results, _per_sample(db, run_id))
        assert [note.text for note in got.notes] == ["computed per sample: scorer 'r': epochs whose mean needs exact fractions"]
    finally:
        db.conn.close()


def test_dict_values_go_per_sample_and_the_note_names_the_scorer(tmp_path: Path) -> None:
    rows = [{"id": f"s{i}", "input": "q", "output": "a",
             "scores": {"plain": {"value": i % 2}, "shape": {"value": {"length": i, "words": i % 3}}}} for i in range(12)]  # fmt: skip
    db, run_id = _one_run(tmp_path, rows)
    try:
        got = compute_run(db, run_id)
        _same(got.results, _per_sample(db, run_id))
        assert [note.text for note in got.notes] == ["computed per sample: scorer 'shape' has dict values"]
        assert not any(note.is_warning for note in got.notes)
    finally:
        db.conn.close()


def _killed(tmp_path: Path, name: str):
    """An Inspect run as if killed before its metrics were written: its scores, no results."""
    shutil.copy(DATA / "inspect" / name, tmp_path / name)
    db_path = tmp_path / "index.db"
    assert not ingest_paths(db_path, [tmp_path / name]).failures
    db = connect(db_path)
    db.execute("DELETE FROM run_results")
    (run_id,) = runs_without_metrics(db)
    return db, run_id


def test_a_scorer_that_cannot_be_folded_is_named_and_the_others_keep_their_numbers(tmp_path: Path) -> None:
    # `shape` declares metrics per dict key; one of its scores is a plain number: it cannot be folded.
    db, run_id = _killed(tmp_path, "dict_unscored.eval")
    try:
        first = db.execute("SELECT min(id) FROM scores WHERE scorer = 'shape'").fetchone()[0]
        db.execute("UPDATE scores SET value = '0.5', value_num = 0.5 WHERE id = ?", [first])
        with pytest.raises(TypeError):
            _per_sample(db, run_id)
        got = compute_run(db, run_id)
        assert {r.scorer for r in got.results} == {"strict_yes_no"}
        warnings = [note.text for note in got.notes if note.is_warning]
        assert len(warnings) == 1 and warnings[0].startswith("scorer 'shape': its scores could not be folded (TypeError"), got.notes
    finally:
        db.conn.close()


def test_a_recorded_reducer_the_columns_lack_is_said_in_the_notes(tmp_path: Path, monkeypatch) -> None:
    # A killed run whose task reduces epochs by pass_at_2 (besides mean).
    db, run_id = _killed(tmp_path, "mc_epochs.eval")
    try:
        got = compute_run(db, run_id)
        _same(got.results, _per_sample(db, run_id))
        assert any("computed per sample: reducer pass_at_2" in note.text for note in got.notes), got.notes
    finally:
        db.conn.close()


def test_computed_results_are_kept_in_the_index_and_read_by_another_process(tmp_path: Path, monkeypatch) -> None:
    rows = [{"id": f"s{i}", "input": "q", "output": "a", "scores": {"verdict": {"value": i % 3 == 0}}} for i in range(30)]
    db, run_id = _one_run(tmp_path, rows)
    try:
        first = computed.computed_results(db, run_id)
        stored = db.execute("SELECT stamp, claim, results FROM computed_results WHERE run_id = ?", [run_id]).fetchone()
        assert stored[0] is not None and stored[1] is None and json.loads(stored[2])[0]["metric"] == "accuracy"
        # A new process (no memory cache) reads the row and computes nothing.
        computed._cache.clear()
        monkeypatch.setattr(computed, "compute_run", lambda *args: pytest.fail("computed again"))
        assert computed.computed_results(db, run_id) == first
    finally:
        db.conn.close()


def _stamp_text(db, run_id: int) -> str:
    from evtui.store.computed_results import stamp_text

    return stamp_text(runs_without_metrics(db, [run_id])[run_id])


def test_a_second_process_waits_for_the_first_ones_row(tmp_path: Path, monkeypatch) -> None:
    import os
    import socket
    import threading

    from evtui.store import computed_results as persisted

    rows = [{"id": f"s{i}", "input": "q", "output": "a", "scores": {"verdict": {"value": "CI"[i % 2]}}} for i in range(20)]
    db, run_id = _one_run(tmp_path, rows)
    other = f"{socket.gethostname()}:{os.getppid()}"  # a live process: this test's parent
    try:
        stamp = _stamp_text(db, run_id)
        assert persisted.claim(db, run_id, stamp, owner=other) == "claimed"
        expected = compute_run(db, run_id).results

        def other_process_finishes() -> None:
            second = connect(tmp_path / "index.db")
            persisted.store(second, run_id, stamp, expected, [], 0.3, owner=other)
            second.conn.close()

        computed._cache.clear()
        monkeypatch.setattr(computed, "compute_run", lambda *args: pytest.fail("computed beside the other process"))
        timer = threading.Timer(0.3, other_process_finishes)
        timer.start()
        assert computed.computed_results(db, run_id) == expected
        timer.join()
    finally:
        db.conn.close()


def test_a_claim_left_by_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    import socket
    import subprocess
    import sys

    from evtui.store import computed_results as persisted

    rows = [{"id": f"s{i}", "input": "q", "output": "a", "scores": {"verdict": {"value": i % 4 / 4}}} for i in range(20)]
    db, run_id = _one_run(tmp_path, rows)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True).stdout.strip()
    try:
        assert persisted.claim(db, run_id, _stamp_text(db, run_id), owner=f"{socket.gethostname()}:{gone}") == "claimed"
        computed._cache.clear()
        assert [r.metric for r in computed.computed_results(db, run_id)] == ["mean", "stderr"]
        assert db.execute("SELECT claim FROM computed_results").fetchone()[0] is None
    finally:
        db.conn.close()


def test_an_older_index_gains_the_table_and_keeps_computing(tmp_path: Path) -> None:
    from tests.old_index import write_old_index

    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(DATA / "jsonl" / "capitals.jsonl", logs / "capitals.jsonl")
    db_path = tmp_path / "old.db"
    write_old_index(db_path, 8, [logs])  # version 9 migrates with a function of its own
    computed._cache.clear()
    db = connect(db_path)  # migrates to 9, 10 (stored computed results), then 11
    try:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 12
        (run_id,) = runs_without_metrics(db)
        assert computed.computed_results(db, run_id) == compute_run(db, run_id).results != []
        assert db.execute("SELECT count(*) FROM computed_results WHERE stamp IS NOT NULL").fetchone()[0] == 1
    finally:
        db.conn.close()


def test_evtui_report_json_carries_the_computed_notes(tmp_path: Path) -> None:
    import subprocess
    import sys

    rows = [{"id": f"s{i}", "input": "q", "output": "a",
             "scores": {"plain": {"value": i % 2}, "shape": {"value": {"length": i}}}} for i in range(6)]  # fmt: skip
    db, run_id = _one_run(tmp_path, rows)
    db.conn.close()
    done = subprocess.run([sys.executable, "-m", "evtui", "report", str(tmp_path / "logs"), "--db", str(tmp_path / "index.db"), "--json"],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (entry,) = json.loads(done.stdout)
    assert "computed per sample: scorer 'shape' has dict values" in entry["notes"]
    assert {r["scorer"] for r in entry["results"]} == {"plain", "length"}


def test_reviewed_results_of_a_run_without_metrics_come_from_columns_with_the_same_numbers(tmp_path: Path, monkeypatch) -> None:
    from evtui.scoring.results import reviewed
    from evtui.store.score_edits import add_human_edit

    rows = [{"id": f"s{i}", "input": "q", "output": "a", "scores": {"verdict": {"value": "CI"[i % 2]}, "reward": {"value": i % 4 / 4}}}
            for i in range(40)]  # fmt: skip
    db, run_id = _one_run(tmp_path, rows)
    try:
        first = db.execute("SELECT id FROM scores WHERE scorer = 'verdict' AND value = '\"I\"' LIMIT 1").fetchone()[0]
        add_human_edit(db, first, "C", reason="equivalent", author="rev")
    finally:
        db.conn.close()
    db_path = tmp_path / "index.db"
    columnar = reviewed.reviewed_results(db_path, run_id)
    monkeypatch.setattr(reviewed, "_from_columns", lambda *args: None)
    per_sample = reviewed.reviewed_results(db_path, run_id)
    assert [(r.scorer, r.metric, r.value, r.scored, r.reviews) for r in columnar] == [
        (r.scorer, r.metric, r.value, r.scored, r.reviews) for r in per_sample
    ]
    assert [(r.scorer, r.metric) for r in columnar] == [("verdict", "accuracy"), ("verdict", "stderr")]
    assert columnar[0].value == 21 / 40


def test_a_large_runs_whole_line_in_groups_is_its_kept_computed_results(tmp_path: Path, monkeypatch) -> None:
    from evtui.scoring.results import groups
    from evtui.store.queries.groups import Grouping

    rows = [{"id": f"s{i}", "input": "q", "output": "a", "metadata": {"level": "ab"[i % 2]},
             "scores": {"verdict": {"value": "CI"[i % 3 == 0]}}} for i in range(30)]  # fmt: skip
    db, run_id = _one_run(tmp_path, rows)
    try:
        kept = computed.computed_results(db, run_id)
    finally:
        db.conn.close()
    monkeypatch.setattr(groups, "STORED_WHOLE_RUN_ABOVE", 0)  # "large": the whole line is not recomputed
    table = groups.group_table(tmp_path / "index.db", run_id, Grouping("metadata", "level"))
    whole = next(group for group in table.groups if group.is_all)
    assert [(r.scorer, r.metric, r.value) for r in whole.results] == [(r.scorer, r.metric, r.value) for r in kept]
    assert {group.label for group in table.groups if not group.is_all} == {"a", "b"}


@pytest.mark.parametrize("epochs", [1, 3])
def test_metadata_groups_in_one_pass_equal_groups_from_sample_objects(tmp_path: Path, monkeypatch, epochs: int) -> None:
    """Groups of a metadata key (one missing it, one null, one with a number) from one read of
    each column, against the per-sample path: same labels, sizes and numbers to the last digit."""
    from evtui.scoring.results import groups
    from evtui.store.queries.groups import Grouping

    levels = ["easy", "hard", 3, None, "missing"]
    rows = []
    for i in range(60):
        level = levels[i % 5]
        metadata = {} if level == "missing" else {"level": level}
        for epoch in range(1, epochs + 1):
            rows.append({"id": f"s{i}", "epoch": epoch, "input": "q", "output": "a", "metadata": metadata,
                         "scores": {"verdict": {"value": "CIP"[(i + epoch) % 3]}, "reward": {"value": ((i * epoch) % 8) / 4}}})  # fmt: skip
    db, run_id = _one_run(tmp_path, rows)
    db.conn.close()
    db_path = tmp_path / "index.db"
    from evtui.scoring.results import group_columns

    passes = []
    one_pass = group_columns._metadata_groups
    monkeypatch.setattr(group_columns, "_metadata_groups", lambda *args, **kwargs: passes.append(1) or one_pass(*args, **kwargs))
    columnar = groups.group_table(db_path, run_id, Grouping("metadata", "level"))
    assert passes == [1]
    monkeypatch.setattr(groups, "plan_for", lambda *args, **kwargs: None)
    per_sample = groups.group_table(db_path, run_id, Grouping("metadata", "level"))
    assert [(g.label, g.samples, g.rows, g.results, g.error) for g in columnar.groups] == [
        (g.label, g.samples, g.rows, g.results, g.error) for g in per_sample.groups
    ]
    assert len(columnar.groups) == 5  # (all), easy, hard, 3, and the samples without a level


@pytest.mark.parametrize(
    ("name", "config"),
    [("qa_match.eval", {"scorers": ["match", "includes"], "metrics": ["accuracy", "mean", "std", "var", "stderr"]}),
     ("mc_epochs.eval", {"scorers": ["choice"], "reducers": ["mean"]}),
     ("mc_epochs.eval", {"scorers": ["choice"]})],
)  # fmt: skip
def test_a_resumed_job_reads_its_stored_scores_as_columns_with_the_same_results(tmp_path: Path, monkeypatch, name, config) -> None:
    from evtui.scoring.jobs import job_columns, runner
    from evtui.scoring.jobs.config import ScoringJobConfig

    shutil.copy(DATA / "inspect" / name, tmp_path / name)
    db_path = tmp_path / "index.db"
    assert not ingest_paths(db_path, [tmp_path / name]).failures
    first = runner.run_job(db_path, ScoringJobConfig.model_validate(config), [1])

    def stored() -> list:
        db = connect(db_path)
        try:
            return [(r.scorer, r.reducer, r.metric, r.value, r.scored, r.unscored, r.params) for r in jobs.results_for(db, 1, first.job_id)]
        finally:
            db.conn.close()

    from_scores = stored()
    read = []
    real = job_columns.ScoreCollector.results_from_index
    monkeypatch.setattr(job_columns.ScoreCollector, "results_from_index", lambda self, *a: read.append(real(self, *a)) or read[-1])
    runner.resume_job(db_path, first.job_id)  # nothing left to score: the results again, from the index
    assert len(read) == 1 and read[0] is not None, "the columns declined a job they cover"
    assert stored() == from_scores != []


def test_a_registered_scorers_metric_the_columns_lack_is_said_in_the_notes(tmp_path: Path, monkeypatch) -> None:
    # A JSONL score named like a scorer whose declared metrics include one only objects compute.
    from evtui.scoring.results import default_metrics

    monkeypatch.setattr(default_metrics, "_registered_metrics", lambda name: ["accuracy", "frequency"] if name == "verdict" else None)
    rows = [{"id": f"s{i}", "input": "q", "output": "a", "scores": {"verdict": {"value": "CI"[i % 2]}}} for i in range(10)]
    db, run_id = _one_run(tmp_path, rows)
    try:
        got = compute_run(db, run_id)
        _same(got.results, _per_sample(db, run_id))
        assert [note.text for note in got.notes] == [
            "computed per sample: scorer 'verdict': metric frequency needs each sample's score object"
        ]
    finally:
        db.conn.close()


def test_a_run_being_written_reads_only_its_appended_samples(tmp_path: Path, monkeypatch) -> None:
    from evtui.store.queries import score_columns

    rows = [{"id": f"s{i}", "input": "q", "output": "a", "scores": {"verdict": {"value": "CIP"[i % 3]}, "reward": {"value": i % 5}}}
            for i in range(30)]  # fmt: skip
    db, run_id = _one_run(tmp_path, rows)
    reads = []
    real = score_columns.coded_column
    monkeypatch.setattr(score_columns, "coded_column", lambda *a, **k: reads.append(k.get("after")) or real(*a, **k))
    try:
        db.execute("UPDATE runs SET status = 'started' WHERE id = ?", [run_id])
        compute_run(db, run_id)
        assert reads == [None, None]  # the first look reads each column whole

        def append(first: int, count: int) -> None:
            # As ingest appends a live run's new samples: rows with higher rowids, their scores.
            top = db.execute("SELECT max(id) FROM samples").fetchone()[0]
            for offset in range(count):
                rowid = top + 1 + offset
                db.execute("INSERT INTO samples(id, run_id, sample_id, epoch, id_sort) VALUES (?, ?, ?, 1, ?)",
                           [rowid, run_id, f"t{first + offset}", f"t{first + offset}"])  # fmt: skip
                db.execute("INSERT INTO scores(sample_rowid, run_id, scorer, value, value_num) VALUES (?, ?, 'verdict', ?, ?)",
                           [rowid, run_id, json.dumps("CI"[offset % 2]), 1.0 - offset % 2])  # fmt: skip
                db.execute("INSERT INTO scores(sample_rowid, run_id, scorer, value, value_num) VALUES (?, ?, 'reward', ?, ?)",
                           [rowid, run_id, str(offset * 0.25), offset * 0.25])  # fmt: skip

        append(0, 7)
        reads.clear()
        got = compute_run(db, run_id)
        last = db.execute("SELECT max(id) FROM samples WHERE id < (SELECT max(id) - 6 FROM samples)").fetchone()[0]
        assert reads == [last, last]  # only what was appended
        _same(got.results, _per_sample(db, run_id))
        assert got.results[0].scored == 37

        # A score already read is rewritten (ingest replaces it by a new row): read whole again.
        first = db.execute("SELECT min(id) FROM scores WHERE scorer = 'verdict'").fetchone()[0]
        sample, value = db.execute("SELECT sample_rowid, value FROM scores WHERE id = ?", [first]).fetchone()
        db.execute("DELETE FROM scores WHERE id = ?", [first])
        flipped = '"I"' if value == '"C"' else '"C"'
        db.execute("INSERT INTO scores(sample_rowid, run_id, scorer, value, value_num) VALUES (?, ?, 'verdict', ?, ?)",
                   [sample, run_id, flipped, 0.0 if flipped == '"I"' else 1.0])  # fmt: skip
        reads.clear()
        got = compute_run(db, run_id)
        assert sorted(reads, key=str) == [37, None]  # verdict read whole, reward's appended rows only (none)
        _same(got.results, _per_sample(db, run_id))
    finally:
        db.conn.close()
