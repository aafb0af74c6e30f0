"""Samples across runs (issue 30, item 3): one row per sample id × epoch, each run's answer and
scores as columns, from real Inspect runs; `evtui samples` prints the same rows and columns."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from evtui.store.ingest.files import ingest_paths
from evtui.store.queries.across_runs import (
    across_columns, across_rows, across_runs, count_across, page_across, table_header, table_values, walk_keys,
)
from evtui.store.queries.filters import FilterError
from evtui.store.schema import connect

DATA = Path(__file__).resolve().parent / "data"
NAMES = ["rerun_a.eval", "rerun_c.eval", "rerun_d.json"]


@pytest.fixture
def logs(tmp_path) -> Path:
    directory = tmp_path / "logs"
    directory.mkdir()
    for name in NAMES:
        shutil.copy2(DATA / "inspect_reruns" / name, directory / name)
    return directory


@pytest.fixture
def table(logs, tmp_path):
    db_path = tmp_path / "index.db"
    ingest_paths(db_path, [logs])
    db = connect(db_path)
    ids = {Path(path).name: run_id for run_id, path in db.conn.execute("SELECT id, path FROM runs")}
    runs = across_runs(db, [ids[name] for name in NAMES])
    try:
        yield db, runs
    finally:
        db.conn.close()


def expected_cells() -> dict[tuple[str, int], dict[str, object]]:
    """What Inspect wrote: per sample id × epoch, each run's answer and match value (by run number)."""
    cells: dict[tuple[str, int], dict[str, object]] = {}
    for index, name in enumerate(NAMES, 1):
        for sample in read_eval_log(str(DATA / "inspect_reruns" / name)).samples:
            score = sample.scores["match"]
            cells.setdefault((str(sample.id), sample.epoch), {}).update({f"{index} answer": score.answer, f"{index} match": score.value})
    return cells


def test_one_row_per_sample_id_and_epoch_with_every_runs_answer_and_scores_in_natural_order(table):
    db, runs = table
    columns = across_columns(runs)
    header = table_header(columns)
    assert header == ["Id", "Ep", "Input", "Target", "1 answer", "1 match", "2 answer", "2 match", "3 answer", "3 match"]
    rows = [table_values(row, columns) for row in across_rows(db, runs)]
    assert [(row[0], row[1]) for row in rows] == [(i, e) for i in ("q1", "q2", "q10", "q11", "q100") for e in (1, 2)]
    expected = expected_cells()
    for row in rows:
        shown = dict(zip(header, row, strict=True))
        want = expected[(row[0], row[1])]
        for label in header[4:]:
            assert shown[label] == want.get(label), (row[0], row[1], label)  # run 1 and 3 have one epoch: None
    assert count_across(db, runs) == len(rows) == 10


def test_pages_join_up_forward_backward_and_from_a_position(table):
    db, runs = table
    every = [row.key for row in page_across(db, runs, limit=100)]
    first = page_across(db, runs, limit=3)
    second = page_across(db, runs, after=first[-1].key, limit=3)
    assert [row.key for row in first + second] == every[:6]
    backward = page_across(db, runs, after=second[0].key, limit=3, descending=True)[::-1]
    assert [row.key for row in backward] == every[:3]
    assert walk_keys(db, runs, 4) == every[3] and walk_keys(db, runs, 11) is None
    assert [row.key for row in page_across(db, runs, limit=100, descending=True)] == every[::-1]


def test_the_filter_and_search_keep_a_row_matching_in_any_run_and_show_every_run(table):
    db, runs = table
    rows = list(across_rows(db, runs, filter='match == "I"'))
    assert [(row.sample_id, row.epoch) for row in rows] == [("q11", 1), ("q11", 2)]
    assert rows[1].answers == {2: "eleven"}  # epoch 2 only in run 2 (rerun_c, 2 epochs)
    assert count_across(db, runs, filter='match == "I"') == 2
    found = list(across_rows(db, runs, search="number 100"))
    assert {row.sample_id for row in found} == {"q100"}
    with pytest.raises(FilterError):
        list(across_rows(db, runs, filter="match ==="))


@pytest.mark.parametrize("per_statement", [1, 2])
def test_runs_read_in_several_statements_give_the_same_pages(table, monkeypatch, per_statement):
    """Keys and rows are read a statement per RUNS_PER_STATEMENT runs (SQLite's compound SELECT
    holds at most 500 terms): any split gives the rows one statement gives."""
    from evtui.store.queries import across_runs as module

    db, runs = table
    views = [dict(), dict(descending=True), dict(filter='match == "I"'), dict(search="number")]
    whole = [[(row.key, row.rowids, row.answers, row.scores, row.input, row.target) for row in across_rows(db, runs, page=3, **view)]
             for view in views]  # fmt: skip
    monkeypatch.setattr(module, "RUNS_PER_STATEMENT", per_statement)
    split = [[(row.key, row.rowids, row.answers, row.scores, row.input, row.target) for row in across_rows(db, runs, page=3, **view)]
             for view in views]  # fmt: skip
    assert split == whole and all(whole)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evtui", "samples", *args], capture_output=True, text=True, timeout=300)


def test_evtui_samples_prints_the_same_rows_and_columns_as_json_and_csv(logs, table, tmp_path):
    db, runs = table
    columns = across_columns(runs)
    want = [table_values(row, columns) for row in across_rows(db, runs, filter='match == "C"')]
    paths = [str(logs / name) for name in NAMES]
    result = run_cli(*paths, "--db", str(tmp_path / "cli.db"), "--filter", 'match == "C"', "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["columns"] == table_header(columns)
    assert out["rows"] == want
    assert [run["path"] for run in out["runs"]] == [str((logs / name).resolve()) for name in NAMES]

    result = run_cli(*paths, "--db", str(tmp_path / "cli.db"), "--filter", 'match == "C"', "--csv")
    assert result.returncode == 0, result.stderr
    rows = list(csv.reader(io.StringIO(result.stdout)))
    assert rows[0] == table_header(columns)
    assert [row[:2] for row in rows[1:]] == [[str(r[0]), str(r[1])] for r in want]

    bad = run_cli(*paths, "--db", str(tmp_path / "cli.db"), "--filter", "match ===")
    assert bad.returncode == 2 and "--filter" in bad.stderr and not bad.stdout
