"""Which scorers a run file recorded, in the order the file first shows them."""

from __future__ import annotations

from evtui.store import jobs, schema


def test_recorded_scorers_come_in_the_order_the_file_first_scores_them(tmp_path):
    db = schema.connect(tmp_path / "i.db")
    conn = db.conn
    conn.execute("INSERT INTO runs(id, path, format, status) VALUES (1, '/r.jsonl', 'jsonl', 'success')")
    conn.execute("INSERT INTO samples(id, run_id, sample_id) VALUES (1, 1, 'a'), (2, 1, 'b'), (3, 1, 'c')")
    schema.index_sample_metadata(db, 1, 3)
    rows = [  # (id, sample, scorer, source, job): 'zeta' first on sample 1, before 'alpha' there; 'mid' from sample 2 on
        (10, 1, "zeta", "log", 0), (11, 1, "alpha", "log", 0), (12, 2, "mid", "log", 0),
        (13, 2, "zeta", "log", 0), (14, 3, "mid", "log", 0),
        (15, 1, "judged", "job", 4), (16, 1, "human_only", "human", 0),  # not recorded in the file
    ]
    conn.executemany("INSERT INTO scores(id, sample_rowid, run_id, scorer, source, job_id, value) VALUES (?, ?, 1, ?, ?, ?, '1')", rows)
    assert jobs.recorded_score_names(db, 1) == ["zeta", "alpha", "mid"]
