"""UI benchmark: the Textual app on a synthetic index of 1M samples, headless (App.run_test).

    /work/venv/bin/python bench/ui_bench.py [--samples N]

The index is written with direct SQL into the real schema (bench/out/, gitignored, reused; it is
rebuilt when the schema changes): 10 runs, one holding 91 % of the samples, one `match` score per
sample, recorded results. Rows are about the size of a short Inspect QA sample (~2 KB: a prompt
of 200-800 characters, an answer, a two-message transcript, a metadata category; 1 % errors).

  * runs-screen first paint — app start → the runs table shows every run (target < 1 s)
  * samples table open      — Enter on the big run's result row → first page painted (< 0.5 s)
  * page-down at depth      — after a jump to the middle, one page-down → next rows painted (< 50 ms);
                              the page after the viewport is prefetched, as it is while a user reads
  * jump to the end         — `end` key → last rows painted (for reference)
  * filter                  — the samples screen opened with each filter of the issue's examples on
                              the big run → matching rows painted (< 1 s); the exact count, which
                              arrives later, is printed for reference

Key handling is driven by calling the widget actions directly: Pilot's `press` adds a fixed
~60 ms of its own, which would hide what the app costs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
OUT = BENCH / "out"
BUILD_VERSION = 2
RUNS = 10
# The examples, then filters that match nothing (a scan would read the whole run for them).
FILTERS = ('match == "I" and metadata.category == "math"', 'match == "I"', "tokens > 2000", "error", 'input ~ "paris"',
           'match == "X"', 'input ~ "zzzz"', "metadata.difficulty > 5")
SEARCH = "paris"
CATEGORIES = ("math", "history", "science", "geography", "code")
# Text the synthetic samples cut their prompts and transcripts from (varied, so rows differ).
_WORDS = ("the of and to in is was for on that with as by at from his an were are which this be or "
          "has had one first their its new after who they two her she been other when there all during "
          "into school time may years more most only over city some world would where later up such used "
          "many can state about national out known university united then made").split()


def _schema_tag() -> str:
    """A short digest of the schema script, so a bench index built for an older schema is rebuilt."""
    import hashlib

    from evtui.store import schema

    text = "".join(schema.migrations.MIGRATIONS[v] for v in sorted(schema.migrations.MIGRATIONS))
    return hashlib.blake2b(text.encode(), digest_size=4).hexdigest()


def build_index(samples: int) -> Path:
    """A 1M-sample index (by default) written with executemany into the evtui schema; cached."""
    from evtui.store.schema import connect, refresh_query_stats

    from cached_build import build_target  # bench/ is on sys.path: these run as scripts

    path, partial = build_target("ui", samples, f"v{BUILD_VERSION}-{_schema_tag()}")
    if partial is None:
        return path
    started = time.perf_counter()
    db = connect(partial)
    conn = db.conn
    rng = random.Random(1)
    text = " ".join(rng.choice(_WORDS) for _ in range(200_000))
    big = samples - (RUNS - 1) * (samples // 100)
    sizes = [big] + [samples // 100] * (RUNS - 1)
    conn.execute("BEGIN")
    rowid = 0
    for run_id, size in enumerate(sizes, 1):
        config = {"scorers": [{"name": "match", "metrics": ["accuracy", "stderr"]}], "epochs": 1}
        conn.execute(
            "INSERT INTO runs(id, path, format, task, model, status, created, duration, total_samples, "
            "completed_samples, total_tokens, sample_count, config) VALUES (?, ?, 'inspect_eval', ?, ?, 'success', ?, ?, ?, ?, ?, ?, ?)",
            (run_id, f"/bench/run-{run_id}.eval", f"task_{run_id}", "bench/model", f"2026-01-{run_id:02d}T00:00:00",
             size / 50, size, size, size * 300, size, json.dumps(config)),
        )  # fmt: skip
        rows, scores = [], []
        correct = 0
        for number in range(1, size + 1):
            rowid += 1
            tokens = rng.randint(50, 2500)
            start = rng.randrange(0, len(text) - 2000)
            prompt = f"question {number}: " + text[start : start + rng.randint(200, 800)]
            if rng.random() < 0.02:
                prompt += " What is the capital of France? Paris, Lyon or Nice?"
            answer = f"answer {number}: " + text[start + 900 : start + 900 + rng.randint(20, 300)]
            transcript = json.dumps([{"role": "user", "content": prompt}, {"role": "assistant", "content": answer}])
            error = f"RuntimeError: tool failed on sample {number}" if rng.random() < 0.01 else None
            metadata = json.dumps({"category": CATEGORIES[number % len(CATEGORIES)], "difficulty": rng.randint(1, 5)})
            rows.append((rowid, run_id, str(number), 1, str(number).zfill(20), tokens, rng.random() * 20, error,
                         metadata, prompt, answer, json.dumps(prompt), transcript))  # fmt: skip
            value = "C" if rng.random() < 0.7 else "I"
            correct += value == "C"
            scores.append((rowid, run_id, json.dumps(value), 1.0 if value == "C" else 0.0, f"answer {number}"))
            if len(rows) >= 20_000:
                _flush(conn, rows, scores)
        _flush(conn, rows, scores)
        accuracy = correct / size
        stderr = (accuracy * (1 - accuracy) / max(size - 1, 1)) ** 0.5
        for seq, (metric, value) in enumerate((("accuracy", accuracy), ("stderr", stderr))):
            conn.execute(
                "INSERT INTO run_results(run_id, scorer, metric, value, scored, seq) VALUES (?, 'match', ?, ?, ?, ?)",
                (run_id, metric, value, size, seq),
            )
    conn.execute("COMMIT")
    refresh_query_stats(conn)  # as ingest does
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    partial.rename(path)
    print(f"built {path.name}: {samples:,} samples, {path.stat().st_size / 1e9:.2f} GB in {time.perf_counter() - started:.1f}s")
    return path


def _flush(conn, rows: list, scores: list) -> None:
    from evtui.store.schema import index_sample_metadata

    if not rows:
        return
    conn.executemany(
        "INSERT INTO samples(id, run_id, sample_id, epoch, id_sort, total_tokens, total_time, error, metadata, "
        "input_text, output_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [row[:11] for row in rows],
    )
    conn.executemany(
        "INSERT INTO sample_bodies(sample_rowid, input, messages) VALUES (?, ?, ?)", [(row[0], *row[11:]) for row in rows]
    )
    conn.executemany(
        "INSERT INTO scores(sample_rowid, run_id, scorer, value, value_num, answer) VALUES (?, ?, 'match', ?, ?, ?)",
        scores,
    )
    index_sample_metadata(conn, rows[0][0], rows[-1][0])  # as ingest does per batch
    rows.clear()
    scores.clear()


async def wait_until(predicate, pilot, timeout: float = 30.0) -> None:
    """Poll until `predicate()`, then let the app compose the frame that shows it."""
    deadline = time.perf_counter() + timeout
    while not predicate():
        if time.perf_counter() > deadline:
            raise TimeoutError("the app did not get there in time")
        await asyncio.sleep(0.001)
    # Render the visible lines now, as the next frame would, so the time includes the app's drawing.
    for table in pilot.app.screen.query("SqlTable"):
        for y in range(table.size.height):
            table.render_line(y)


async def open_view(app, pilot, run_id: int, **view):
    """Push the samples screen of `run_id` with `view` (filter=, search=): (its table, seconds until
    the matching rows are painted, seconds until the exact count is in)."""
    from evtui.app.screens.samples import SamplesScreen
    from evtui.app.widgets.sql_table.table import SqlTable

    started = time.perf_counter()
    app.push_screen(SamplesScreen(run_id, scorer="match", title="big", **view))
    await wait_until(lambda: isinstance(app.screen, SamplesScreen) and bool(app.screen.query(SqlTable)), pilot)
    table = app.screen.query_one(SqlTable)
    await wait_until(lambda: table.visible_rows_ready, pilot, timeout=60)
    rows_s = time.perf_counter() - started
    await wait_until(lambda: not table.counting, pilot, timeout=60)
    return table, rows_s, time.perf_counter() - started


async def close_view(app, pilot) -> None:
    app.pop_screen()
    await pilot.pause()


async def measure(db_path: Path, repeats: int) -> dict[str, list[float]]:
    from evtui.app.app import EvtuiApp
    from evtui.app.screens.run import RunScreen
    from evtui.app.screens.samples import SamplesScreen
    from evtui.app.widgets.sql_table.table import SqlTable

    timings: dict[str, list[float]] = {"runs": [], "samples_open": [], "page_down": [], "jump_end": []}
    for text in FILTERS:
        timings[f"filter {text}"], timings[f"count {text}"] = [], []
    timings["search"], timings["search_count"], timings["sorted_page_down"] = [], [], []
    for _ in range(repeats):
        started = time.perf_counter()
        app = EvtuiApp(db_path=db_path)
        app.animation_level = "none"
        async with app.run_test(size=(140, 40)) as pilot:
            await wait_until(lambda: len(getattr(app.screen, "runs", [])) == RUNS, pilot)
            timings["runs"].append(time.perf_counter() - started)

            big_run = max(app.screen.runs, key=lambda run: run.samples_total)
            await app.push_screen(RunScreen(big_run.id))
            await wait_until(lambda: getattr(app.screen, "results", None), pilot)
            started = time.perf_counter()
            app.screen.action_open_samples()  # Enter on the run's `match accuracy` row
            await wait_until(lambda: isinstance(app.screen, SamplesScreen), pilot)
            await wait_until(lambda: bool(app.screen.query(SqlTable)) and app.screen.query_one(SqlTable).visible_rows_ready, pilot)
            timings["samples_open"].append(time.perf_counter() - started)

            table = app.screen.query_one(SqlTable)
            await wait_until(lambda: not table.counting, pilot)  # rows show before the count: jump within the real count
            table.cursor_row = table.row_count // 2  # a jump to the middle (walks to the position once)
            table.scroll_to(y=table.cursor_row, animate=False, immediate=True)
            await wait_until(lambda: not table.loading_rows, pilot)
            for _ in range(20):
                started = time.perf_counter()
                table.action_page_down()
                await wait_until(lambda: table.visible_rows_ready, pilot)
                timings["page_down"].append(time.perf_counter() - started)
                await wait_until(lambda: not table.loading_rows, pilot)  # let prefetches land between presses

            started = time.perf_counter()
            table.action_last()
            await wait_until(lambda: table.visible_rows_ready and table.row_at(table.row_count - 1) is not None, pilot)
            timings["jump_end"].append(time.perf_counter() - started)

            app.pop_screen()
            for text in FILTERS:
                table, rows_s, count_s = await open_view(app, pilot, big_run.id, filter=text)
                timings[f"filter {text}"].append(rows_s)
                timings[f"count {text}"].append(count_s)
                if len(timings[f"count {text}"]) == 1:
                    print(f"  {text}: {table.row_count:,} of {big_run.samples_total:,} samples match")
                await close_view(app, pilot)

            _, rows_s, count_s = await open_view(app, pilot, big_run.id, search=SEARCH)  # full-text search (FTS5)
            timings["search"].append(rows_s)
            timings["search_count"].append(count_s)
            await close_view(app, pilot)

            # Paging a filtered view in another order than the index's (by tokens, descending).
            table, _, _ = await open_view(app, pilot, big_run.id, filter=FILTERS[0])
            table.set_sort("tokens", descending=True)
            await wait_until(lambda: table.visible_rows_ready and not table.loading_rows and not table.counting, pilot, timeout=60)
            for _ in range(10):
                started = time.perf_counter()
                table.action_page_down()
                await wait_until(lambda: table.visible_rows_ready, pilot)
                timings["sorted_page_down"].append(time.perf_counter() - started)
                await wait_until(lambda: not table.loading_rows, pilot)
            await close_view(app, pilot)
    return timings


async def first_paint_only(db_path: Path) -> None:
    from evtui.app.app import EvtuiApp

    app = EvtuiApp(db_path=db_path)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(lambda: len(getattr(app.screen, "runs", [])) == RUNS, pilot)


def cold_start(db_path: Path, repeats: int) -> list[float]:
    """Wall time of fresh processes that open the app and exit once the runs are painted."""
    code = (
        f"import asyncio, sys; sys.path.insert(0, {str(BENCH)!r}); import ui_bench; "
        f"asyncio.run(ui_bench.first_paint_only(ui_bench.Path({str(db_path)!r})))"
    )
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        times.append(time.perf_counter() - started)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    sys.path.insert(0, str(BENCH.parent))
    db_path = build_index(args.samples)
    timings = asyncio.run(measure(db_path, args.repeats))
    timings["cold_start"] = cold_start(db_path, args.repeats)
    targets = {"runs": 1.0, "samples_open": 0.5, "page_down": 0.05, "jump_end": None, "cold_start": None,
               "search": 1.0, "search_count": None, "sorted_page_down": 0.05}
    labels = {
        "runs": "runs-screen first paint",
        "samples_open": "samples table open",
        "page_down": "page-down at depth",
        "jump_end": "jump to the end",
        "cold_start": "cold start (new process)",
        "search": f"search {SEARCH!r} (FTS), rows",
        "search_count": f"search {SEARCH!r} (FTS), count",
        "sorted_page_down": "page-down, filtered and sorted by tokens",
    }
    for text in FILTERS:
        targets[f"filter {text}"], targets[f"count {text}"] = 1.0, None
        labels[f"filter {text}"], labels[f"count {text}"] = f"filter, rows: {text}", f"filter, count: {text}"
    print(f"ui_bench on {args.samples:,} samples ({RUNS} runs, biggest {args.samples - (RUNS - 1) * (args.samples // 100):,})")
    failed = False
    for key, values in timings.items():
        median, worst = statistics.median(values), max(values)
        target = targets[key]
        verdict = "" if target is None else ("  ok" if median < target else "  OVER TARGET")
        failed |= target is not None and median >= target
        target_text = "" if target is None else f" (target < {target * 1000:.0f} ms)"
        print(f"  {labels[key]:<58} median {median * 1000:7.1f} ms  max {worst * 1000:7.1f} ms  n={len(values)}{target_text}{verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
