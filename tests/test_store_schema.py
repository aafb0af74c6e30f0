"""Opening the index: migrations, and a brand-new index file opened by several threads at once (what the app
does at startup: ingest, the runs table, the job runner) must work for every one of them."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from evtui.store.schema import SCHEMA_VERSION, open_connection


def test_many_threads_opening_a_new_index_at_once_all_succeed(tmp_path):
    # SQLite answers the WAL switch with SQLITE_BUSY at once (no busy handler), and two
    # openers could both see user_version 0 and both run the migration; 40 rounds of 8
    # threads made the old code fail several times on a 2-core machine.
    for round_number in range(40):
        path = tmp_path / f"round{round_number}" / "index.db"
        start = threading.Barrier(8)
        errors: list[BaseException] = []

        def open_it() -> None:
            start.wait()
            try:
                open_connection(path).close()
            except BaseException as exc:  # collected and asserted on below
                errors.append(exc)

        threads = [threading.Thread(target=open_it) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == [], f"round {round_number}: {errors!r}"
        conn = open_connection(path)
        try:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        finally:
            conn.close()


def test_an_index_of_version_1_is_migrated_without_losing_a_sample_or_its_transcript(tmp_path):
    from evtui.store import schema

    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in schema.migrations.MIGRATIONS[1].split(";\n"):
        if statement.strip():
            conn.execute(statement)
    conn.execute("INSERT INTO runs(id, path, format, status) VALUES (1, '/r.eval', 'inspect_eval', 'success')")
    conn.execute(
        "INSERT INTO samples(id, run_id, sample_id, error, input, messages, metadata) VALUES "
        "(1, 1, 'a', 'boom', '\"hi\"', '[{\"role\": \"user\"}]', '{\"category\": \"math\", \"n\": 3, \"tags\": [1]}'), "
        "(2, 1, 'b', NULL, NULL, '[]', 'not json'), (3, 1, 'c', NULL, NULL, '[]', '[1, 2]')"
    )
    conn.execute("PRAGMA user_version=1")
    conn.close()

    conn = open_connection(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 12
    names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"scores_effective", "samples_run_errored", "samples_run_limited", "scores_by_value"} <= names
    assert conn.execute("SELECT sample_id FROM samples WHERE error != ''").fetchall() == [("a",)]
    # The transcript moved out of the samples row, to sample_bodies under the same rowid.
    assert {"input", "messages"}.isdisjoint(row[1] for row in conn.execute("PRAGMA table_info(samples)"))
    assert conn.execute("SELECT sample_rowid, input, messages FROM sample_bodies ORDER BY 1").fetchall() == [
        (1, '"hi"', '[{"role": "user"}]'), (2, None, "[]"), (3, None, "[]"),
    ]
    # Version 3: top-level metadata entries as json_extract reads them; metadata that is not a
    # JSON object adds none (and does not stop the migration).
    assert conn.execute("SELECT sample_rowid, key, run_id, value, typeof(value) FROM sample_metadata ORDER BY 1, 2").fetchall() == [
        (1, "category", 1, "math", "text"), (1, "n", 1, 3, "integer"), (1, "tags", 1, "[1]", "text"),
    ]


def test_the_effective_score_is_read_from_one_covering_index_seek(tmp_path):
    """EFFECTIVE_ORDER must match the scores_effective index word for word (issue 11.2)."""
    from evtui.store.queries.effective_scores import score_column_sql

    conn = open_connection(tmp_path / "index.db")
    for what in ("value", "value_num"):
        sql, params = score_column_sql("match", what)
        plan = " | ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN SELECT {sql} FROM samples s", params))
        assert "USING COVERING INDEX scores_effective (sample_rowid=? AND scorer=?)" in plan
        assert "TEMP B-TREE" not in plan


def test_an_index_made_by_version_3_opens_and_gains_the_epoch_index(tmp_path):
    """Version 6 (issue 14) only adds an index: a version-3 index keeps every row and is grouped alike."""
    from evtui.scoring.results.groups import group_table
    from evtui.store import schema
    from evtui.store.queries.groups import Grouping

    path = tmp_path / "v3.db"
    conn = sqlite3.connect(path, isolation_level=None)
    for version in (1, 2, 3):
        for statement in schema.migrations.MIGRATIONS[version].split(";\n"):
            if statement.strip():
                conn.execute(statement)
    config = '{"scorers": [{"name": "match", "metrics": ["accuracy", "stderr"]}]}'
    conn.execute("INSERT INTO runs(id, path, format, status, config) VALUES (1, '/r.eval', 'inspect_eval', 'success', ?)", (config,))
    for rowid, (sample_id, epoch, category, value) in enumerate(
        [("a", 1, "x", "C"), ("a", 2, "x", "I"), ("b", 1, "y", "C"), ("b", 2, "y", "C")], start=1
    ):
        conn.execute(
            "INSERT INTO samples(id, run_id, sample_id, epoch, metadata) VALUES (?, 1, ?, ?, ?)",
            (rowid, sample_id, epoch, f'{{"category": "{category}"}}'),
        )
        conn.execute(
            "INSERT INTO scores(sample_rowid, run_id, scorer, value, value_num) VALUES (?, 1, 'match', ?, ?)",
            (rowid, f'"{value}"', 1.0 if value == "C" else 0.0),
        )
    schema.index_sample_metadata(conn, 1, 4)
    conn.execute("PRAGMA user_version=3")
    conn.close()

    conn = open_connection(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 12
    assert conn.execute("SELECT count(*) FROM samples").fetchone()[0] == 4
    assert "samples_run_epoch" in {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    plan = " ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN SELECT max(epoch) FROM samples WHERE run_id = 1"))
    assert "samples_run_epoch" in plan
    conn.close()
    table = group_table(path, 1, Grouping("metadata", "category"))
    accuracy = {group.label: next(r.value for r in group.results if r.metric == "accuracy") for group in table.groups}
    assert accuracy == {"(all)": 0.75, "x": 0.5, "y": 1.0}  # epochs reduced by mean per sample


def _index_of_version_7(path):
    """An empty index as version 7 made it (its migrations run by hand), left at user_version 0."""
    from evtui.store import schema

    conn = sqlite3.connect(path, isolation_level=None)
    for version in range(1, 8):
        for statement in schema.migrations.MIGRATIONS[version].split(";\n"):
            if statement.strip():
                conn.execute(statement)
    return conn


def test_an_index_of_version_7_keeps_every_score_and_edit_and_seeks_a_job_in_the_new_unique_key(tmp_path):
    """Version 8 (issue 14) rebuilds scores with its UNIQUE key led by (run_id, scorer, source,
    job_id) and drops scores_run_scorer: every row, id and edit survives, and a job's scores
    are still one seek (and still upserted in place)."""
    from evtui.store import job_score_writes, schema

    path = tmp_path / "v7.db"
    conn = _index_of_version_7(path)
    conn.execute("INSERT INTO runs(id, path, format, status) VALUES (1, '/r.eval', 'inspect_eval', 'success')")
    conn.execute("INSERT INTO samples(id, run_id, sample_id) VALUES (1, 1, 'a'), (2, 1, 'b')")
    conn.execute(
        "INSERT INTO scores(id, sample_rowid, run_id, scorer, source, job_id, value, value_num, explanation) VALUES "
        "(10, 1, 1, 'match', 'log', 0, '\"C\"', 1.0, 'x'), (11, 2, 1, 'match', 'log', 0, '\"I\"', 0.0, NULL), "
        "(12, 1, 1, 'match', 'job', 3, '\"I\"', 0.0, 'y'), (13, 2, 1, 'match', 'human', 0, '\"C\"', 1.0, NULL)"
    )
    conn.execute("INSERT INTO score_edits(score_id, seq, value, author, origin) VALUES (13, 0, '\"C\"', 'ann', 'evtui')")
    schema.rebuild_search_index(conn)  # samples inserted by hand: their FTS rows, or deleting one fails
    conn.execute("PRAGMA user_version=7")
    before = conn.execute("SELECT * FROM scores ORDER BY id").fetchall()
    conn.close()

    db = schema.connect(path)
    conn = db.conn
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 12
    assert conn.execute("SELECT * FROM scores ORDER BY id").fetchall() == before
    assert conn.execute("SELECT s.value FROM score_edits e JOIN scores s ON s.id = e.score_id").fetchall() == [('"C"',)]
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'scores'")}
    assert "scores_run_scorer" not in names and {"scores_effective", "scores_by_value", "scores_human"} <= names
    plan = " ".join(row[3] for row in conn.execute(
        "EXPLAIN QUERY PLAN SELECT sample_rowid FROM scores WHERE run_id = 1 AND scorer = 'match' AND job_id = 3 AND source = 'job'"))  # fmt: skip
    assert "(run_id=? AND scorer=? AND source=? AND job_id=?)" in plan
    # The job's score is replaced in place, a new one added; a duplicate key is still refused.
    job_score_writes.write_score_rows(db, [(1, 1, "match", 3, '"C"', 1.0, "z", "z", None, "{}", "now"),
                               (2, 1, "match", 3, '"I"', 0.0, "w", "w", None, "{}", "now")])  # fmt: skip
    assert conn.execute("SELECT id, sample_rowid, value FROM scores WHERE source = 'job' ORDER BY id").fetchall() == [
        (12, 1, '"C"'), (14, 2, '"I"'),
    ]
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("INSERT INTO scores(sample_rowid, run_id, scorer, source, job_id) VALUES (1, 1, 'match', 'log', 0)")
    # Deleting a sample still cascades to its scores (found through scores_effective).
    conn.execute("DELETE FROM samples WHERE id = 2")
    assert conn.execute("SELECT id FROM scores ORDER BY id").fetchall() == [(10,), (12,)]


TEXT_VALUES = ["abc", "c", "Y", "maybe", "inf", "1.5e400", "0x10", "", "C", "P", "yes", "False", " 2 ", "1_000", "-0"]


def test_a_text_score_has_one_number_whoever_wrote_it_and_it_is_inspects(tmp_path):
    """Scoring jobs once stored NULL for text Inspect's value_to_float makes 0.0 ("abc", "c", "inf")
    while ingest stored 0.0, so a filter saw one value two ways; version 8 mends old rows."""
    from inspect_ai.scorer._metric import value_to_float

    from evtui.store import job_score_writes, schema
    from evtui.store.ingest import rows

    to_float = value_to_float()
    for text in TEXT_VALUES:
        assert rows.value_num(text) == to_float(text), text
    assert job_score_writes.value_num is rows.value_num  # the writers share the one function

    path = tmp_path / "v7.db"
    conn = _index_of_version_7(path)
    conn.execute("INSERT INTO runs(id, path, format, status) VALUES (1, '/r.eval', 'inspect_eval', 'success')")
    conn.execute("INSERT INTO samples(id, run_id, sample_id) VALUES (1, 1, 'a'), (2, 1, 'b'), (3, 1, 'c'), (4, 1, 'd')")
    conn.execute(  # what an older scoring job wrote: NULL for "abc"; unscored (NaN, null) and numbers stay as they are
        "INSERT INTO scores(sample_rowid, run_id, scorer, source, job_id, value, value_num) VALUES "
        "(1, 1, 's', 'job', 1, '\"abc\"', NULL), (2, 1, 's', 'job', 1, 'NaN', NULL), "
        "(3, 1, 's', 'job', 1, 'null', NULL), (4, 1, 's', 'job', 1, '0.5', 0.5)"
    )
    schema.rebuild_search_index(conn)
    conn.execute("PRAGMA user_version=7")
    conn.close()
    db = schema.connect(path)
    assert db.conn.execute("SELECT value, value_num FROM scores ORDER BY sample_rowid").fetchall() == [
        ('"abc"', 0.0), ("NaN", None), ("null", None), ("0.5", 0.5),
    ]


def test_an_index_of_version_8_seeks_a_text_score_by_its_one_number_even_where_an_old_writer_disagreed(tmp_path, monkeypatch):
    """Version 9 (issue 14) makes the two value indexes one, (run_id, scorer, value_num, value): a
    string filter seeks (value_num, value), so every text value's number is made Inspect's first."""
    from evtui.store import schema
    from evtui.store.queries import paging
    from evtui.store.queries.paging import count_samples

    monkeypatch.setattr(paging, "SEEK_MIN", 10**9)  # seek whatever the run's size
    path = tmp_path / "v8.db"
    conn = sqlite3.connect(path, isolation_level=None)
    for version in range(1, 9):
        for statement in schema.migrations.MIGRATIONS[version].split(";\n"):
            if statement.strip():
                conn.execute(statement)
    conn.execute("INSERT INTO runs(id, path, format, status, file_hash) VALUES (1, '/r.eval', 'inspect_eval', 'success', 'h1'), "
                 "(2, '/job/result.json', 'harbor', 'success', 'h2')")
    conn.execute("INSERT INTO samples(id, run_id, sample_id) VALUES (1, 1, 'a'), (2, 1, 'b'), (3, 1, 'c')")
    conn.execute(  # "Z" with 0.5: no evtui wrote that, but a row whose number disagrees must still be found
        "INSERT INTO scores(sample_rowid, run_id, scorer, source, job_id, value, value_num) VALUES "
        "(1, 1, 'match', 'log', 0, '\"Z\"', 0.5), (2, 1, 'match', 'log', 0, '\"C\"', 1.0), (3, 1, 'match', 'log', 0, '2.5', 2.5)"
    )
    schema.rebuild_search_index(conn)
    conn.execute("PRAGMA user_version=8")
    conn.close()

    db = schema.connect(path)
    conn = db.conn
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 12
    assert conn.execute("SELECT value, value_num FROM scores ORDER BY sample_rowid").fetchall() == [
        ('"Z"', 0.0), ('"C"', 1.0), ("2.5", 2.5),
    ]
    names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'scores'")}
    assert "scores_by_value" in names and not {"scores_value", "scores_value_num"} & names
    plan = " ".join(row[3] for row in conn.execute(
        "EXPLAIN QUERY PLAN SELECT sample_rowid FROM scores WHERE run_id = 1 AND scorer = 'match' AND value_num IS 0.0 AND value = '\"Z\"'"))  # fmt: skip
    assert "scores_by_value (run_id=? AND scorer=? AND value_num=? AND value=?)" in plan
    assert [count_samples(db, 1, text, score_columns=["match"]) for text in ('match == "Z"', 'match == "C"', "match > 2")] == [1, 1, 1]
    # Harbor jobs are read again at the next ingest (their trials' metadata changed shape); others are not.
    assert conn.execute("SELECT format, file_hash FROM runs ORDER BY id").fetchall() == [("inspect_eval", "h1"), ("harbor", None)]


def test_version_11_sorts_an_older_index_s_mixed_sample_ids_naturally(tmp_path):
    # Issue 30: ids sorted as text (q01 … q10, q100, q2); version 10 pads every run of digits.
    from evtui.store import schema

    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.create_function("evtui_value_num", 1, lambda value: None)
    for version in range(1, 10):
        for statement in schema.migrations.MIGRATIONS[version].split(";\n"):
            if statement.strip():
                conn.execute(statement)
    conn.execute("INSERT INTO runs(id, path, format, status) VALUES (1, '/r.eval', 'inspect_eval', 'success')")
    ids = ["q10", "q2", "q100", "q1", "7", "12", "alpha"]
    for rowid, sample_id in enumerate(ids, 1):  # id_sort as versions before 10 wrote it
        old_key = sample_id.zfill(20) if sample_id.isdigit() else sample_id
        conn.execute("INSERT INTO samples(id, run_id, sample_id, id_sort) VALUES (?, 1, ?, ?)", (rowid, sample_id, old_key))
    conn.execute("PRAGMA user_version=9")
    conn.close()

    conn = open_connection(path)
    ordered = [row[0] for row in conn.execute("SELECT sample_id FROM samples WHERE run_id = 1 ORDER BY id_sort, epoch")]
    assert ordered == ["7", "12", "alpha", "q1", "q2", "q10", "q100"]
