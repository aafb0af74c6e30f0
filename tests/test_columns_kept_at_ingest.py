"""A big run that records no metrics has its score columns and its metadata groups kept in the
index by ingest (issue 27), so its first look decodes one row instead of reading every score and
every metadata entry: the same values as read from the tables, ignored once the run is read
again or the row is damaged, and nothing kept for a run that records its metrics."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from evtui.commands.report import build_report, grouping_for
from evtui.store.ingest.files import ingest_paths
from evtui.store.queries import score_columns
from evtui.store.schema import connect
from tests.jsonl_run_files import indexed_run, write_jsonl

QA_MATCH = Path(__file__).parent / "data" / "inspect" / "qa_match.eval"


def _rows(first: int, count: int) -> list[dict]:
    """JSONL samples: a `verdict` of C/I with every 7th unscored (NaN) and every 5th a partial
    number, a category in four (mixed types, missing on every 9th), a tier in three."""

    def verdict(i: int) -> object:
        return float("nan") if i % 7 == 0 else 0.25 * (i % 4) if i % 5 == 0 else "CI"[i % 2]

    categories = ["b", "a", 3, 1.5]
    return [
        {"id": f"s{i}", "input": "q", "output": "a", "scores": {"verdict": {"value": verdict(i)}},
         "metadata": {**({} if i % 9 == 0 else {"category": categories[i % 4]}), "tier": i % 3}}
        for i in range(first, first + count)
    ]  # fmt: skip


@pytest.fixture
def big(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs of 40 samples count as big here (20k for real)."""
    monkeypatch.setattr(score_columns, "KEEP_FROM", 10)


@pytest.fixture
def run(tmp_path: Path, big: None) -> tuple[Path, Path, int]:
    return indexed_run(tmp_path, _rows(0, 40))


def _forget_reads() -> None:
    score_columns._kept_columns.clear()
    score_columns._kept_metadata.clear()


def _kinds(db_path: Path) -> list[str]:
    db = connect(db_path)
    try:
        return sorted(kind for (kind,) in db.execute("SELECT kind FROM derived_figures"))
    finally:
        db.conn.close()


def _same_column(one: score_columns.CodedColumn, other: score_columns.CodedColumn) -> None:
    assert one.codes.tobytes() == other.codes.tobytes()
    assert np.array_equal(one.floats, other.floats, equal_nan=True)
    assert (one.rowids is None) == (other.rowids is None)
    if one.rowids is not None:
        assert one.rowids.tolist() == other.rowids.tolist()


def _from_tables(db, run_id: int, scorer: str) -> score_columns.CodedColumn:
    """The column read from the scores table (sample ids asked: never a kept read)."""
    column = score_columns.coded_column(db, run_id, scorer, sample_ids=True, rowids=True)
    return score_columns.CodedColumn(column.codes, column.floats, None, column.rowids)


def test_ingest_keeps_the_columns_and_groups_of_a_big_computed_run(run) -> None:
    db_path, _, run_id = run
    assert _kinds(db_path) == ["column verdict", "metadata groups category", "metadata groups tier"]
    db = connect(db_path)
    try:
        _forget_reads()
        kept = score_columns.coded_column(db, run_id, "verdict", rowids=True)
        _same_column(kept, _from_tables(db, run_id, "verdict"))
        assert set(kept.codes.tobytes()) >= {ord("C"), ord("I"), ord("n"), ord("x")}  # every kind of value went through
        assert math.isclose(float(np.nansum(kept.floats)), sum(
            0.25 * (i % 4) if i % 5 == 0 else i % 2 for i in range(40) if i % 7))  # fmt: skip
        for key in ("category", "tier"):
            _forget_reads()
            groups = score_columns.metadata_groups(db, run_id, key)
            db.execute("DELETE FROM derived_figures WHERE kind = ?", (f"metadata groups {key}",))
            _forget_reads()
            read = score_columns.metadata_groups(db, run_id, key)
            assert list(groups) == list(read)  # the values, in SQL's order, with their types
            assert [type(value) for value in groups] == [type(value) for value in read]
            assert all(groups[value].tolist() == read[value].tolist() for value in read)
    finally:
        db.conn.close()


def test_the_kept_rows_are_what_a_look_reads(run) -> None:
    """Changing a score behind ingest's back (the run's stamp unchanged) shows which is read."""
    db_path, _, run_id = run
    db = connect(db_path)
    try:
        db.execute("UPDATE scores SET value = '\"C\"', value_num = 1 WHERE run_id = ? AND value = '\"I\"'", (run_id,))
        db.conn.commit()
        _forget_reads()
        assert ord("I") in set(score_columns.coded_column(db, run_id, "verdict").codes.tobytes())
        db.execute("DELETE FROM derived_figures WHERE kind = 'column verdict'")
        db.conn.commit()
        _forget_reads()
        assert ord("I") not in set(score_columns.coded_column(db, run_id, "verdict").codes.tobytes())
    finally:
        db.conn.close()


def test_reading_the_run_again_keeps_its_new_content(run) -> None:
    db_path, log, run_id = run
    write_jsonl(log, _rows(40, 15), append=True)
    assert not ingest_paths(db_path, [log.parent]).failures
    db = connect(db_path)
    try:
        (stamps,) = db.execute("SELECT count(DISTINCT stamp) FROM derived_figures").fetchone()
        assert stamps == 1  # the first read's rows went with its stamp
        _forget_reads()
        kept = score_columns.coded_column(db, run_id, "verdict", rowids=True)
        assert len(kept.codes) == 55
        _same_column(kept, _from_tables(db, run_id, "verdict"))
        _forget_reads()
        assert sum(len(rowids) for rowids in score_columns.metadata_groups(db, run_id, "tier").values()) == 55
    finally:
        db.conn.close()


@pytest.mark.parametrize("damage", ["not json", '{"codes": "CC", "numbers": "", "rowids": null}', '{"values": [1], "low": 1, "codes": "!!", "width": 1}'])
def test_a_damaged_kept_row_is_read_from_the_tables(run, damage: str) -> None:
    db_path, _, run_id = run
    db = connect(db_path)
    try:
        _forget_reads()
        column = _from_tables(db, run_id, "verdict")
        groups = {value: rowids.tolist() for value, rowids in score_columns.metadata_groups(db, run_id, "category").items()}
        db.execute("UPDATE derived_figures SET figures = ? WHERE kind IN ('column verdict', 'metadata groups category')", (damage,))
        db.conn.commit()
        _forget_reads()
        _same_column(score_columns.coded_column(db, run_id, "verdict", rowids=True), column)
        _forget_reads()
        assert {value: rowids.tolist() for value, rowids in score_columns.metadata_groups(db, run_id, "category").items()} == groups
    finally:
        db.conn.close()


def test_a_grouping_not_kept_at_ingest_is_kept_by_its_first_look(run) -> None:
    db_path, _, run_id = run
    db = connect(db_path)
    try:
        db.execute("DELETE FROM derived_figures WHERE kind = 'metadata groups tier'")
        db.conn.commit()
        _forget_reads()
        first = score_columns.metadata_groups(db, run_id, "tier")
        db.conn.commit()
    finally:
        db.conn.close()
    assert "metadata groups tier" in _kinds(db_path)
    db = connect(db_path)
    try:
        _forget_reads()
        assert {k: v.tolist() for k, v in score_columns.metadata_groups(db, run_id, "tier").items()} == {
            k: v.tolist() for k, v in first.items()}  # fmt: skip
    finally:
        db.conn.close()


def test_the_report_is_the_same_with_the_kept_rows_and_without(run) -> None:
    db_path, log, run_id = run
    grouping = grouping_for("metadata.category")

    def report() -> str:
        _forget_reads()
        db = connect(db_path)
        try:
            db.execute("DELETE FROM computed_results")
            db.execute("DELETE FROM derived_figures WHERE kind NOT LIKE 'column %' AND kind NOT LIKE 'metadata groups %'")
            db.conn.commit()
        finally:
            db.conn.close()
        return json.dumps(build_report(db_path, [run_id], [grouping]), sort_keys=True, default=str)

    kept = report()
    db = connect(db_path)
    try:
        db.execute("DELETE FROM derived_figures")
        db.conn.commit()
    finally:
        db.conn.close()
    assert report() == kept
    assert json.loads(kept)[0]["groups"][0]["groups"]  # the groups are there to compare


def test_a_run_that_records_its_metrics_keeps_no_columns(tmp_path: Path, big: None) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / QA_MATCH.name).write_bytes(QA_MATCH.read_bytes())
    db_path = tmp_path / "index.db"
    assert not ingest_paths(db_path, [logs]).failures
    db = connect(db_path)
    try:
        assert db.execute("SELECT count(*) FROM run_results").fetchone()[0] > 0
        assert db.execute("SELECT count(*) FROM samples").fetchone()[0] >= score_columns.KEEP_FROM  # big, for this test
    finally:
        db.conn.close()
    assert _kinds(db_path) == []
