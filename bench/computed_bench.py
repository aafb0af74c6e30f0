"""Computed results (issue 27): runs that record per-sample scores but no metrics, at 100k, 500k
and 1M samples, each figure beside its floor and the issue's target.

    PYTHONPATH=$PWD /work/venv/bin/python bench/computed_bench.py [--sizes 100000,500000,1000000]
        [--before /work/main] [--quick] [--rounds N] [--reports-only]

Inputs, built once into bench/out/ (gitignored): a JSONL run file of N samples (evtui's JSONL
format: id, input, target, output, metadata.category, one `verdict` score "C"/"I" a sample, no
results line) and an index of it written with direct SQL into the real schema, as
bench/scale_bench.py builds its own (the rows evtui's JSONL reader stores: checked on 1k
samples against `evtui ingest`), then finished as ingest finishes a big run that records no
metrics (store/ingest/kept.py `keep_for_first_look`: its score column, metadata groups and
recorded score count kept in the index; a checkout without it builds the index without). With
`--before REPO`, the same figures are taken with that checkout's code on a copy of the index
(made with its schema) for a before/after table.

Rows (each in its own child process: os.wait4 gives CPU = user + sys and peak RSS):

* `evtui report RUN --json`: cold (nothing computed yet) and warm (the index holds the computed
  results, as after any screen or command asked once); target ≤ 1 s CPU, ≤ 400 MB at 1M.
* `evtui report RUN --group-by metadata.category --json`, cold and warm (the index keeps the
  groups, the integrity and the scales under the run's content stamp); floor: one pass of
  orjson + numpy over the JSONL file (per category mean); the issue's target: ≤ 0.5× that floor.
  Also cold on an index holding nothing ingest keeps (as an index made before that, or a
  grouping by a key with more than 255 values): every score and metadata entry read.
* `evtui score RUN --scorer match --json` (100k only unless --score-all): samples/s; target
  ≥ 100k/s, ≤ 400 MB.
* runs screen headline: app/store_calls.fetch_runs (what the runs screen's worker calls) in a
  fresh process on a fresh index, the first call (cold) and in a second process (warm); then
  the app itself, headless (App.run_test), from its start until the run's row holds its
  headline: target ≤ 2 s wall, TUI ≤ 500 MB (wall time: on a loaded machine it is inflated).

The machine is shared: CPU time is the figure, wall time is printed beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
OUT = BENCH / "out"
PY = sys.executable
CATEGORIES = ("math", "history", "science", "geography", "code")
BUILD = 1
INDEX_BUILD = 2  # 2: finished as ingest finishes the run (keep_for_first_look)


def jsonl_file(samples: int) -> Path:
    """The run file: one header line, then `samples` sample lines (cached)."""
    import orjson

    path = OUT / f"computed-v{BUILD}-{samples}.jsonl"
    if path.exists():
        return path
    OUT.mkdir(exist_ok=True)
    rng = random.Random(samples)
    partial = path.with_suffix(".tmp")
    with partial.open("wb") as out:
        out.write(orjson.dumps({"run": {"task": "computed_bench", "model": "bench/model", "run_id": f"bench-{samples}"}}) + b"\n")
        for number in range(1, samples + 1):
            truth = str(number % 997)
            answer = truth if rng.random() < 0.7 else str((number + 1) % 997)
            out.write(orjson.dumps({
                "id": str(number), "input": f"question {number}", "target": truth, "output": answer,
                "metadata": {"category": CATEGORIES[number % len(CATEGORIES)]},
                "scores": {"verdict": {"value": "C" if answer == truth else "I"}},
            }) + b"\n")  # fmt: skip
    partial.rename(path)
    return path


BUILD_CODE = """
import json, sys, orjson
from pathlib import Path
from evtui.store.schema import connect, index_sample_metadata, rebuild_search_index, refresh_query_stats
from evtui.store.ingest.files import fingerprint
log, target = Path({log!r}), Path({target!r})
db = connect(target)
conn = db.conn
conn.execute("BEGIN")
conn.execute("INSERT INTO runs(id, path, format, run_key, task, model, status, sample_count, config, indexed_at, file_size, "
             "file_mtime_ns, file_hash) VALUES (1, ?, 'jsonl', 'bench', 'computed_bench', 'bench/model', 'success', ?, '{{}}', "
             "'2026-11-28T00:00:00+00:00', ?, ?, ?)", (str(log), {samples}, *fingerprint(log)))
rows, scores, rowid = [], [], 0
def flush():
    conn.executemany("INSERT INTO samples(id, run_id, sample_id, epoch, id_sort, metadata, target, input_text, output_text) "
                     "VALUES (?, 1, ?, 1, ?, ?, ?, ?, ?)", rows)
    conn.executemany("INSERT INTO sample_bodies(sample_rowid, input, messages) VALUES (?, ?, '[]')", [(r[0], json.dumps(r[5])) for r in rows])
    conn.executemany("INSERT INTO scores(sample_rowid, run_id, scorer, value, value_num) VALUES (?, 1, 'verdict', ?, ?)", scores)
    index_sample_metadata(conn, rows[0][0], rows[-1][0])
    rows.clear(); scores.clear()
with log.open("rb") as lines:
    next(lines)
    for line in lines:
        sample = orjson.loads(line)
        rowid += 1
        rows.append((rowid, sample["id"], sample["id"].zfill(20), json.dumps(sample["metadata"]), json.dumps([sample["target"]]),
                     sample["input"], sample["output"]))
        value = sample["scores"]["verdict"]["value"]
        scores.append((rowid, json.dumps(value), 1.0 if value == "C" else 0.0))
        if len(rows) >= 20000:
            flush()
if rows:
    flush()
conn.execute("COMMIT")
try:
    from evtui.store.ingest.kept import keep_for_first_look
except ImportError:  # a checkout from before it
    keep_for_first_look = None
if keep_for_first_look is not None:
    conn.execute("BEGIN")
    keep_for_first_look(conn, 1, {samples})
    conn.execute("COMMIT")
rebuild_search_index(conn)
refresh_query_stats(conn)
conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
conn.close()
"""


def child(code: str, repo: Path = REPO) -> dict:
    """Run `code` in a fresh interpreter with `repo`'s evtui; its wall, CPU, peak RSS and the JSON
    object it prints last."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([PY, "-c", code], stdout=out, stderr=err, env={**os.environ, "PYTHONPATH": str(repo)}, cwd=str(repo))
        _, status, usage = os.wait4(proc.pid, 0)
        out.seek(0), err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"child failed:\n{stderr[-3000:]}")
    lines = [line for line in stdout.splitlines() if line.strip()]
    inner = json.loads(lines[-1]) if lines and lines[-1].startswith("{") else {}
    return {"wall": time.perf_counter() - started, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024, **inner}


def command(args: list[str], repo: Path = REPO) -> dict:
    """`python -m evtui ARGS` with `repo`'s evtui: wall, CPU, peak RSS and its stdout."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([PY, "-m", "evtui", *args], stdout=out, stderr=err, env={**os.environ, "PYTHONPATH": str(repo)}, cwd=str(repo))
        _, status, usage = os.wait4(proc.pid, 0)
        out.seek(0), err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise RuntimeError(f"evtui {' '.join(args)} failed ({code}):\n{stderr[-3000:]}")
    return {"wall": time.perf_counter() - started, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024, "stdout": stdout}


def index_for(log: Path, samples: int, repo: Path, tag: str) -> Path:
    """The index of `log` in `repo`'s schema (cached per tag)."""
    path = OUT / f"computed-v{BUILD}.{INDEX_BUILD}-{tag}-{samples}.db"
    if not path.exists():
        partial = path.with_suffix(".tmp")
        for leftover in OUT.glob(partial.name + "*"):
            leftover.unlink()
        child(BUILD_CODE.format(log=str(log), target=str(partial), samples=samples), repo)
        partial.rename(path)
    return path


def fresh_copy(index: Path, *, nothing_kept: bool = False) -> Path:
    """A copy of the index with nothing computed yet (each cold figure starts from one);
    `nothing_kept`: nor anything ingest keeps for the first look."""
    copy = index.with_name(index.stem + "-work.db")
    for suffix in ("", "-wal", "-shm"):
        Path(str(copy) + suffix).unlink(missing_ok=True)
    shutil.copyfile(index, copy)
    if nothing_kept:
        import sqlite3

        conn = sqlite3.connect(copy)
        with conn:
            conn.execute("DELETE FROM derived_figures")
        conn.close()
    return copy


def least(rounds: int, measure_once) -> dict:
    """The least-CPU figure of `rounds` runs (the machine is shared)."""
    return min((measure_once() for _ in range(rounds)), key=lambda figure: figure["cpu"])


FLOOR_CODE = """
import json, time, orjson, numpy as np
cpu = time.process_time()
values, groups, codes = [], [], {{}}
with open({log!r}, "rb") as lines:
    next(lines)
    for line in lines:
        sample = orjson.loads(line)
        values.append(sample["scores"]["verdict"]["value"] == "C")
        groups.append(codes.setdefault(sample["metadata"]["category"], len(codes)))
values, groups = np.array(values, dtype=float), np.array(groups)
means = np.bincount(groups, weights=values) / np.bincount(groups)
print(json.dumps({{"inner_cpu": time.process_time() - cpu, "whole": float(values.mean()), "groups": len(means)}}))
"""

HEADLINE_CODE = """
import json, time
from pathlib import Path
from evtui.app.store_calls import fetch_runs
started = time.perf_counter()
runs = fetch_runs(Path({db!r}))
print(json.dumps({{"inner_wall": time.perf_counter() - started, "headline": [h.value for h in runs[0].headline][:1]}}))
"""


# The runs screen itself: the app started headless on the index, until the run's row holds its
# headline (the computed one: nothing recorded). Time from the app's construction; the process's
# peak RSS is the TUI's.
TUI_CODE = """
import asyncio, json, time
from pathlib import Path
from evtui.app.app import EvtuiApp

async def main():
    started = time.perf_counter()
    app = EvtuiApp(db_path=Path({db!r}))
    app.animation_level = "none"
    async with app.run_test(size=(140, 40)) as pilot:
        deadline = started + 600
        while not any(run.headline for run in getattr(app.screen, "runs", []) or []):
            if time.perf_counter() > deadline:
                raise TimeoutError("no headline")
            await asyncio.sleep(0.005)
        await pilot.pause()
        return time.perf_counter() - started

print(json.dumps({{"inner_wall": asyncio.run(main())}}))
"""


def fmt(figure: dict) -> str:
    return f"{figure['cpu']:6.2f} s CPU ({figure['wall']:5.2f} wall) {figure['rss_mb']:6.0f} MB"


def measure(samples: int, repo: Path, tag: str, log: Path, floor: dict, score: bool, rounds: int = 1,
            reports_only: bool = False) -> list[tuple[str, dict]]:
    index = index_for(log, samples, repo, tag)
    rows: list[tuple[str, dict]] = []

    def cold(args: list[str], **copy: bool) -> dict:
        work = fresh_copy(index, **copy)
        return command([*args[:3], str(work), *args[4:]], repo)

    plain = ["report", str(log), "--db", "", "--json"]
    rows.append(("report --json, cold", least(rounds, lambda: cold(plain))))
    work = fresh_copy(index)
    warm = [*plain[:3], str(work), *plain[4:]]
    command(warm, repo)
    rows.append(("report --json, warm", least(rounds, lambda: command(warm, repo))))
    grouped = ["report", str(log), "--db", "", "--group-by", "metadata.category", "--json"]
    rows.append(("report --group-by category --json, cold", least(rounds, lambda: cold(grouped))))
    rows.append(("report --group-by category --json, cold, nothing kept", least(rounds, lambda: cold(grouped, nothing_kept=True))))
    work = fresh_copy(index)
    warm = [*grouped[:3], str(work), *grouped[4:]]
    command(warm, repo)
    rows.append(("report --group-by category --json, warm", least(rounds, lambda: command(warm, repo))))
    if reports_only:
        return rows
    work = fresh_copy(index)
    headline = child(HEADLINE_CODE.format(db=str(work)), repo)
    rows.append(("runs screen headline (fetch_runs), cold", headline))
    rows.append(("runs screen headline (fetch_runs), warm", child(HEADLINE_CODE.format(db=str(work)), repo)))
    work = fresh_copy(index)
    rows.append(("TUI: app start to the run's headline, cold", child(TUI_CODE.format(db=str(work)), repo)))
    rows.append(("TUI: app start to the run's headline, warm", child(TUI_CODE.format(db=str(work)), repo)))
    if score:
        work = fresh_copy(index)
        done = command(["score", str(log), "--db", str(work), "--scorer", "match", "--json"], repo)
        done["rate"] = samples / done["cpu"]
        rows.append(("score --scorer match", done))
    return rows


def _results(stdout: str) -> list:
    """What a report says about a run: its results and groups' results (not its notes)."""
    return [(run["results"], [[g["results"] for g in grouping["groups"]] for grouping in run["groups"]]) for run in json.loads(stdout)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000,500000,1000000")
    parser.add_argument("--before", type=Path, help="another checkout (e.g. /work/main) for a before column")
    parser.add_argument("--quick", action="store_true", help="100k only")
    parser.add_argument("--score-all", action="store_true", help="the re-score at every size, not only 100k")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each report figure (the least CPU kept)")
    parser.add_argument("--reports-only", action="store_true", help="the report rows only (no screens, no re-score)")
    args = parser.parse_args()
    sizes = [100_000] if args.quick else [int(size) for size in args.sizes.split(",")]
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
    for samples in sizes:
        log = jsonl_file(samples)
        floor = child(FLOOR_CODE.format(log=str(log)))
        print(f"\n== {samples:,} samples ({log.stat().st_size / 1e6:.0f} MB JSONL); floor (orjson + numpy, one pass): "
              f"{floor['inner_cpu']:.2f} s CPU in-process, {fmt(floor)} with start-up", flush=True)  # fmt: skip
        score = samples <= 100_000 or args.score_all
        columns = [("after", REPO, "after")] + ([("before", args.before, "before")] if args.before else [])
        measured = {name: dict(measure(samples, repo, tag, log, floor, score and not args.reports_only, args.rounds,
                                       args.reports_only)) for name, repo, tag in columns}
        if "before" in measured:
            same = all(
                _results(measured["after"][label]["stdout"]) == _results(measured["before"][label]["stdout"])
                for label in measured["after"] if label.startswith("report")
            )  # fmt: skip
            print(f"  the reports' numbers before and after: {'the same' if same else 'DIFFERENT'}")
        for label, figure in measured["after"].items():
            line = f"  {label:42} after {fmt(figure)}"
            if "before" in measured:
                line += f" | before {fmt(measured['before'][label])}"
            if label.startswith("report --group-by"):
                line += f" | {figure['cpu'] / floor['cpu']:.2f}x the floor (target <= 0.5x)"
            elif label.startswith("report --json"):
                ok = figure["cpu"] <= 1.0 and figure["rss_mb"] <= 400
                line += f" | target <= 1 s, <= 400 MB: {'PASS' if ok else 'MISS'}" if samples == 1_000_000 else ""
            elif label.startswith("runs screen"):
                line += f" | {figure['inner_wall']:.2f} s wall in the call"
            elif label.startswith("TUI"):
                ok = figure["inner_wall"] <= 2 and figure["rss_mb"] <= 500
                line += f" | {figure['inner_wall']:.2f} s wall to the headline; target <= 2 s, TUI <= 500 MB: {'PASS' if ok else 'MISS'}"
            elif label.startswith("score"):
                line += f" | {figure['rate'] / 1000:.0f}k samples/s CPU; target >= 100k/s: {'PASS' if figure['rate'] >= 100_000 else 'MISS'}"
                if "before" in measured:
                    line += f" (before {measured['before'][label]['rate'] / 1000:.0f}k/s)"
            print(line, flush=True)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
