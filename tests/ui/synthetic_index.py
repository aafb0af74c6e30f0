"""A small index written with direct SQL, for paging tests that need NULLs and ties on purpose."""

from __future__ import annotations

import random
from pathlib import Path

from evtui.store.schema import connect


def build_index(path: Path, samples: int = 250, epochs: int = 2, seed: int = 7) -> int:
    """One run with `samples` × `epochs` samples and a `match` score on each; returns the run id."""
    rng = random.Random(seed)
    db = connect(path)
    conn = db.conn
    conn.execute("BEGIN")
    conn.execute(
        "INSERT INTO runs(id, path, format, task, model, status, created, total_samples, completed_samples) "
        "VALUES (1, '/synthetic/run.eval', 'inspect_eval', 'synthetic', 'test/model', 'success', "
        "'2026-01-01T00:00:00', ?, ?)",
        (samples, samples),
    )
    rowid = 0
    for number in range(1, samples + 1):
        for epoch in range(1, epochs + 1):
            rowid += 1
            tokens = None if rng.random() < 0.1 else rng.randint(10, 60)  # NULLs and many ties
            conn.execute(
                "INSERT INTO samples(id, run_id, sample_id, epoch, id_sort, total_tokens, total_time) "
                "VALUES (?, 1, ?, ?, ?, ?, ?)",
                (rowid, str(number), epoch, str(number).zfill(20), tokens, rng.random() * 10),
            )
            if rng.random() < 0.95:
                value = rng.choice(["C", "I", "P"])
                conn.execute(
                    "INSERT INTO scores(sample_rowid, run_id, scorer, value, value_num, answer) "
                    "VALUES (?, 1, 'match', ?, ?, ?)",
                    (rowid, f'"{value}"', {"C": 1.0, "I": 0.0, "P": 0.5}[value], f"answer {number}"),
                )
    conn.execute("COMMIT")
    conn.close()
    return 1
