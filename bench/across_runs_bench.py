"""Samples across runs (issue 30): the cross-run table over 200 runs × 5,000 samples.

  * open  — what the screen does before its first rows show: the runs and their scorers
            (across_runs) and the first page (page_across, 40 rows)   target ≤ 0.5 s
  * page  — the next page by key (the table scrolling)                target ≤ 50 ms
  * count — the distinct rows (the table's count thread, not waited for on open)
  * filter page — the first page of `match == "I"` (a row matching in any run)

And the screen (`--screen`: the app headless at 160×45, AcrossRunsScreen over the same runs), as a
user sees it, each until the rows under the viewport are drawn:

  * screen open       — the screen pushed → its first rows drawn                 target ≤ 0.5 s
  * screen page       — page-down onto a page not fetched yet: the request, the
                        fetch thread's query, its message to the UI, the drawing  target ≤ 50 ms
  * screen page, read — page-down with the next page prefetched (as while a user reads it)
  * draw              — drawing the viewport's rows alone (the rows cached, no strips)

The index (1,000,000 samples, a `match` score each, ids `q1`…`q5000`) is written with direct SQL
into bench/out/ on first use. Times are wall and CPU medians of 5 runs in this process.

    /work/venv/bin/python bench/across_runs_bench.py [--runs 200] [--samples 5000] [--screen]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))

BUILD_VERSION = 1


def build(runs: int, samples: int) -> Path:
    from cached_build import build_target
    from ui_bench import _schema_tag

    from evtui.store.ingest.rows import id_sort_key
    from evtui.store.schema import connect, rebuild_search_index

    path, partial = build_target(f"across{runs}", samples, f"v{BUILD_VERSION}-{_schema_tag()}")
    if partial is None:
        return path
    started = time.perf_counter()
    rng = random.Random(30)
    db = connect(partial)
    conn = db.conn
    conn.execute("BEGIN")
    rowid = 0
    for run_id in range(1, runs + 1):
        conn.execute(
            "INSERT INTO runs(id, path, format, task, model, status, created, sample_count) "
            "VALUES (?, ?, 'inspect_eval', 'bench_task', ?, 'success', ?, ?)",
            (run_id, f"/bench/run{run_id}.eval", f"model/{run_id % 7}", f"2026-01-01T00:{run_id % 60:02d}:00", samples),
        )
        sample_rows, score_rows = [], []
        for number in range(1, samples + 1):
            rowid += 1
            sample_id = f"q{number}"
            correct = rng.random() < 0.6
            sample_rows.append((rowid, run_id, sample_id, 1, id_sort_key(sample_id), f"What is item {number}?",
                                f"The answer is {number if correct else number + 1}", '["%d"]' % number))
            score_rows.append((rowid, run_id, "match", '"C"' if correct else '"I"', 1.0 if correct else 0.0,
                               str(number if correct else number + 1)))
        conn.executemany(
            "INSERT INTO samples(id, run_id, sample_id, epoch, id_sort, input_text, output_text, target) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            sample_rows,
        )
        conn.executemany(
            "INSERT INTO scores(sample_rowid, run_id, scorer, value, value_num, answer) VALUES (?, ?, ?, ?, ?, ?)", score_rows
        )
        conn.execute(
            "INSERT INTO run_results(run_id, job_id, scorer, metric, value, seq) VALUES (?, 0, 'match', 'accuracy', 0.6, 0)", (run_id,)
        )
    conn.execute("COMMIT")
    rebuild_search_index(conn)
    conn.execute("ANALYZE")
    conn.close()
    partial.rename(path)
    print(f"built {path.name}: {runs} runs × {samples:,} samples in {time.perf_counter() - started:.0f} s")
    return path


def measure(fn, repeat: int = 5) -> tuple[float, float, object]:
    walls, cpus, result = [], [], None
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), result


async def _until(predicate, timeout: float = 30.0) -> None:
    import asyncio

    deadline = time.perf_counter() + timeout
    while not predicate():
        if time.perf_counter() > deadline:
            raise TimeoutError("the screen did not get there in time")
        await asyncio.sleep(0.0005)


def _draw(table) -> None:
    """Draw the viewport's lines, as the next frame would (so a time includes the drawing)."""
    for y in range(table.size.height):
        table.render_line(y)


async def screen_timings(path: Path, run_ids: list[int], repeat: int = 30) -> dict[str, list[tuple[float, float]]]:
    """The cross-run screen in the real app (headless, 160×45): open, page-down onto a page not
    fetched yet, page-down onto a prefetched page, and the drawing alone; (wall, CPU of the whole
    process: the UI thread and the table's fetch thread) each."""
    from evtui.app.app import EvtuiApp
    from evtui.app.screens.across.table import AcrossRunsScreen
    from evtui.app.widgets.sql_table.table import SqlTable

    timings: dict[str, list[tuple[float, float]]] = {"screen open": [], "screen page": [], "screen page, read": [], "draw": []}

    def clock() -> tuple[float, float]:
        return time.perf_counter(), time.process_time()

    def since(start: tuple[float, float]) -> tuple[float, float]:
        return time.perf_counter() - start[0], time.process_time() - start[1]

    from evtui.gc_pause import settle_for_interactive_use

    app = EvtuiApp(db_path=path)
    app.animation_level = "none"
    settle_for_interactive_use()  # as `evtui` does before the app runs (commands/open.py)
    async with app.run_test(size=(160, 45)):
        started = clock()
        app.push_screen(AcrossRunsScreen(run_ids, title="bench"))
        await _until(lambda: isinstance(app.screen, AcrossRunsScreen) and bool(app.screen.query(SqlTable)))
        table = app.screen.query_one(SqlTable)
        await _until(lambda: table.visible_rows_ready)
        _draw(table)
        timings["screen open"].append(since(started))
        await _until(lambda: not table.loading_rows and not table.counting)
        for _ in range(repeat):
            # the next page not fetched yet (paging faster than the prefetch): drop the pages after
            # the one holding the screen's last row, and the drawn rows; timed when the page-down
            # needs one of them (else its rows were in the pages on screen already)
            bottom = int(table.scroll_offset.y) + table.size.height - 2
            for page in range(bottom // table.page_size + 1, bottom // table.page_size + 4):
                table._cache._pages.pop(page, None)
            table._strips.clear()
            started = clock()
            table.action_page_down()
            fetched = not table.visible_rows_ready
            await _until(lambda: table.visible_rows_ready)
            _draw(table)
            if fetched:
                timings["screen page"].append(since(started))
            await _until(lambda: not table.loading_rows)  # the prefetches land, as while a user reads
            started = clock()
            table.action_page_down()
            await _until(lambda: table.visible_rows_ready)
            _draw(table)
            timings["screen page, read"].append(since(started))
            await _until(lambda: not table.loading_rows)
            table._strips.clear()
            started = clock()
            _draw(table)
            timings["draw"].append(since(started))
    return timings


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--samples", type=int, default=5000)
    parser.add_argument("--quick", action="store_true", help="20 runs × 5,000 samples")
    parser.add_argument("--screen", action="store_true", help="also the screen in the app, headless (open, page, draw)")
    args = parser.parse_args()
    if args.quick:
        args.runs = 20
    path = build(args.runs, args.samples)

    from evtui.store.queries.across_runs import across_runs, count_across, page_across
    from evtui.store.schema import connect

    db = connect(path)
    run_ids = list(range(1, args.runs + 1))

    def open_table():
        runs = across_runs(db, run_ids)
        return runs, page_across(db, runs, limit=40)

    wall, cpu, (runs, first) = measure(open_table)
    results = [("open", wall, cpu, 0.5)]
    after = first[-1].key

    def next_page():
        return page_across(db, runs, after=after, limit=40)

    wall, cpu, _ = measure(next_page)
    results.append(("page", wall, cpu, 0.05))
    deep = page_across(db, runs, after=("q" + "2500".zfill(20), 1), limit=40)
    wall, cpu, _ = measure(lambda: page_across(db, runs, after=deep[-1].key, limit=40))
    results.append(("page, mid-table", wall, cpu, 0.05))
    wall, cpu, _ = measure(lambda: page_across(db, runs, limit=40, filter='match == "I"'))
    results.append(("filter page", wall, cpu, None))
    wall, cpu, count = measure(lambda: count_across(db, runs), repeat=1)
    results.append(("count", wall, cpu, None))
    print(f"{args.runs} runs × {args.samples:,} samples: {count:,} rows, {len(runs[0].scorers)} scorer per run")
    for name, wall, cpu, target in results:
        verdict = "" if target is None else (
            f"  target ≤ {target} s: wall {wall / target:.2f}× ({'ok' if wall <= target else 'MISSED'}), "
            f"CPU {cpu / target:.2f}× ({'ok' if cpu <= target else 'MISSED'})")  # fmt: skip
        print(f"{name:<16} wall median {wall:.4f} s  CPU median {cpu:.4f} s{verdict}")
    if args.screen:
        import asyncio

        db.conn.close()
        for name, pairs in asyncio.run(screen_timings(path, run_ids)).items():
            walls, cpus = sorted(w for w, _ in pairs), sorted(c for _, c in pairs)
            wall, cpu, p90 = statistics.median(walls), statistics.median(cpus), walls[int(0.9 * (len(walls) - 1))]
            target = {"screen open": 0.5, "screen page": 0.05}.get(name)
            verdict = "" if target is None else (
                f"  target ≤ {target} s: wall {wall / target:.2f}× ({'ok' if wall <= target else 'MISSED'}), "
                f"CPU {cpu / target:.2f}× ({'ok' if cpu <= target else 'MISSED'})")  # fmt: skip
            print(f"{name:<18} wall median {wall:.4f} s  p90 {p90:.4f} s  CPU median {cpu:.4f} s  (n={len(pairs)}){verdict}")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
