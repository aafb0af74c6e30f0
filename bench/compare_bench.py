"""Compare benchmark: two runs of 1M samples compared (paired difference, McNemar, clustered),
and the model × task matrix over 200 runs.

    /work/venv/bin/python bench/compare_bench.py [--samples N] [--repeats R]

The index is written with direct SQL into the real schema (bench/out/, gitignored, reused;
rebuilt when the schema changes), as bench/ui_bench.py does, without transcripts (the
comparison never reads them): runs A and B of the same task share every sample id; each sample
has a recorded `match` score (C/I), B's correct 72% against A's 70%, correlated; a metadata
`category` (5 values) to cluster on. 200 small runs (20 tasks × 10 models, 50 samples each,
recorded accuracy + stderr) make the matrix.

  * compare two runs  — evtui.scoring.compare.compare_runs over A and B (target ≤ 1 s): cold (each
                        run's integrity counted, as the first compare after a run is read) and
                        warm (the index keeps it under the run's content stamp)
  * clustered         — the same with --cluster category (for reference)
  * matrix            — evtui.store.queries.compare.matrix over the 200 runs (target ≤ 0.5 s)
  * matrix screen     — the app's matrix screen pushed → every row painted (202 runs, 21 tasks; ≤ 0.5 s)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
OUT = BENCH / "out"
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))
BUILD_VERSION = 1
CATEGORIES = ("math", "history", "science", "geography", "code")
MATRIX_TASKS, MATRIX_MODELS, MATRIX_SAMPLES = 20, 10, 50


def build_index(samples: int) -> Path:
    from ui_bench import _schema_tag  # the same rebuild-on-schema-change rule as the UI bench

    from evtui.store.schema import connect, index_sample_metadata, refresh_query_stats

    from cached_build import build_target  # bench/ is on sys.path: these run as scripts

    path, partial = build_target("compare", samples, f"v{BUILD_VERSION}-{_schema_tag()}")
    if partial is None:
        return path
    started = time.perf_counter()
    db = connect(partial)
    conn = db.conn
    rng = random.Random(16)
    conn.execute("BEGIN")
    rowid = 0
    config = json.dumps({"scorers": [{"name": "match", "metrics": ["accuracy", "stderr"]}], "epochs": 1})

    def add_run(run_id: int, task: str, model: str, values: list[int]) -> None:
        nonlocal rowid
        size = len(values)
        conn.execute(
            "INSERT INTO runs(id, path, format, task, model, status, created, total_samples, completed_samples, "
            "sample_count, config) VALUES (?, ?, 'inspect_eval', ?, ?, 'success', ?, ?, ?, ?, ?)",
            (run_id, f"/bench/compare-{run_id}.eval", task, model, f"2026-01-01T00:{run_id // 60:02d}:{run_id % 60:02d}",
             size, size, size, config),
        )  # fmt: skip
        first = rowid + 1
        for start in range(0, size, 50_000):
            chunk = values[start : start + 50_000]
            rows = []
            for offset, value in enumerate(chunk):
                number = start + offset + 1
                rows.append((first + number - 1, run_id, str(number), 1, str(number).zfill(20),
                             json.dumps({"category": CATEGORIES[number % 5]})))  # fmt: skip
            conn.executemany(
                "INSERT INTO samples(id, run_id, sample_id, epoch, id_sort, metadata) VALUES (?, ?, ?, ?, ?, ?)", rows
            )
            conn.executemany(
                "INSERT INTO scores(sample_rowid, run_id, scorer, value, value_num) VALUES (?, ?, 'match', ?, ?)",
                [(row[0], run_id, '"C"' if v else '"I"', float(v)) for row, v in zip(rows, chunk)],
            )
            index_sample_metadata(conn, rows[0][0], rows[-1][0])
        rowid = first + size - 1
        accuracy = sum(values) / size
        stderr = (accuracy * (1 - accuracy) / max(size - 1, 1)) ** 0.5
        for seq, (metric, value) in enumerate((("accuracy", accuracy), ("stderr", stderr))):
            conn.execute(
                "INSERT INTO run_results(run_id, scorer, metric, value, scored, seq) VALUES (?, 'match', ?, ?, ?, ?)",
                (run_id, metric, value, size, seq),
            )

    a = [1 if rng.random() < 0.70 else 0 for _ in range(samples)]
    # B agrees with A on most samples, and is right a little more often.
    b = [x if rng.random() < 0.8 else (1 if rng.random() < 0.78 else 0) for x in a]
    add_run(1, "big_task", "model/a", a)
    add_run(2, "big_task", "model/b", b)
    run_id = 2
    for task in range(MATRIX_TASKS):
        for model in range(MATRIX_MODELS):
            run_id += 1
            skill = 0.3 + 0.05 * model + 0.01 * task
            add_run(run_id, f"task_{task:02d}", f"provider/model-{model}",
                    [1 if rng.random() < skill else 0 for _ in range(MATRIX_SAMPLES)])  # fmt: skip
    conn.execute("COMMIT")
    refresh_query_stats(conn)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    partial.rename(path)
    print(f"built {path.name}: 2 × {samples:,} + 200 × {MATRIX_SAMPLES} samples, "
          f"{path.stat().st_size / 1e9:.2f} GB in {time.perf_counter() - started:.1f}s")  # fmt: skip
    return path


def matrix_screen_seconds(path: Path, repeats: int) -> list[float]:
    """Push the matrix screen in a headless app until its table holds every task (Pilot)."""
    import asyncio

    from evtui.app.app import EvtuiApp
    from evtui.app.screens.compare.matrix import MatrixScreen

    async def measure() -> list[float]:
        out = []
        app = EvtuiApp(db_path=path)
        app.animation_level = "none"
        async with app.run_test(size=(160, 45)) as pilot:
            await pilot.pause()
            for _ in range(repeats):
                started = time.perf_counter()
                screen = MatrixScreen()
                app.push_screen(screen)
                while screen.matrix is None or screen.query_one("#matrix-table").row_count < MATRIX_TASKS:
                    await asyncio.sleep(0.001)
                table = screen.query_one("#matrix-table")
                for y in range(table.size.height):  # draw the visible lines, as the next frame would
                    table.render_line(y)
                out.append(time.perf_counter() - started)
                app.pop_screen()
                await pilot.pause()
        return out

    return asyncio.run(measure())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--build-only", action="store_true")
    args = parser.parse_args()
    path = build_index(args.samples)
    if args.build_only:
        return
    from evtui.scoring.compare import compare_runs
    from evtui.store.queries.compare import matrix
    from evtui.store.schema import connect

    timings: dict[str, list[float]] = {
        "compare cold": [], "compare": [], "clustered": [], "matrix": [], "read run 1": [], "read run 2": [], "pair": [],
    }
    cpu: dict[str, list[float]] = {name: [] for name in timings}

    def timed(name, call):
        started, started_cpu = time.perf_counter(), time.process_time()
        out = call()
        timings[name].append(time.perf_counter() - started)
        cpu[name].append(time.process_time() - started_cpu)
        return out

    def forget_derived_figures() -> None:
        """Cold: the runs' integrity not counted yet (the index keeps it under each run's content stamp)."""
        db = connect(path)
        db.conn.execute("DELETE FROM derived_figures")
        db.conn.close()

    compare_runs(path, [1, 2])  # warm the page cache and the imports
    for _ in range(args.repeats):
        forget_derived_figures()
        timed("compare cold", lambda: compare_runs(path, [1, 2]))
        report = timed("compare", lambda: compare_runs(path, [1, 2]))
        timed("clustered", lambda: compare_runs(path, [1, 2], cluster="category"))
        db = connect(path)
        cells = timed("matrix", lambda: matrix(db, list(range(3, 203))))
        db.conn.close()
    # The comparison's steps one after the other on one connection (compare_runs reads B on a second thread):
    # each run's read, then the pairing (lining the runs up, the statistics, the discordant ids).
    # CPU time is what the other helpers' load cannot inflate.
    from evtui.scoring.compare import _pair, _side
    from evtui.store import queries

    db = connect(path)
    results = {run_id: queries.run_results(db, run_id) for run_id in (1, 2)}
    sides = {}
    for run_id in (1, 2):
        for _ in range(args.repeats):
            sides[run_id] = timed(f"read run {run_id}", lambda: _side(db, run_id, "match", results[run_id], None))  # noqa: B023
    for _ in range(args.repeats):
        timed("pair", lambda: _pair(db, "match", sides[1], sides[2], None))
    db.conn.close()
    timings["matrix screen"] = matrix_screen_seconds(path, args.repeats)
    cpu["matrix screen"] = [math.nan]
    pair = report.pairs[0]
    print(f"{args.samples:,} samples per run: n_paired {pair.result.n:,}, difference {pair.result.difference:+.4f}, "
          f"p {pair.result.p_value:.3g} ({pair.result.test}); matrix {len(cells.rows)} tasks × {len(cells.models)} models")  # fmt: skip
    targets = {"compare cold": 1.0, "compare": 1.0, "matrix": 0.5, "matrix screen": 0.5}
    for name, values in timings.items():
        target = targets.get(name)
        median = statistics.median(values)
        cpu_median = statistics.median(cpu[name])
        verdict = "" if target is None else (
            f"  target ≤ {target} s: wall {median / target:.2f}× ({'ok' if median <= target else 'MISSED'})"
            + ("" if math.isnan(cpu_median) else f", CPU {cpu_median / target:.2f}× ({'ok' if cpu_median <= target else 'MISSED'})"))  # fmt: skip
        print(f"{name:<13} wall median {median:.3f} s  min {min(values):.3f} s  CPU median {statistics.median(cpu[name]):.3f} s"
              f"  (n={len(values)}){verdict}")  # fmt: skip
    steps = sum(statistics.median(cpu[name]) for name in ("read run 1", "read run 2", "pair"))
    print(f"the steps in CPU seconds (read A + read B + pairing; compare_runs reads B on a second thread): {steps:.3f} s"
          f"  target ≤ 1.0 s: {steps:.2f}×; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")  # fmt: skip

if __name__ == "__main__":
    main()
