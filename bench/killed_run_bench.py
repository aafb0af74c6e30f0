"""A killed Inspect eval (issue 27's table): `evtui report LOG --json` on an `.eval` that has
samples but no header, summaries or reductions — what Inspect leaves when its process dies.

    PYTHONPATH=$PWD /work/venv/bin/python bench/killed_run_bench.py [--samples 100000]

The log: ingest_bench's cloned qa_match `.eval` (written with Inspect's zip settings) copied
without `header.json`, `summaries.json` and `reductions.json`, so only `_journal/start.json` and
the samples remain (bench/out/, built once). Each figure is its own child process (`os.wait4`:
CPU = user + sys, peak RSS):

* first `report`: a fresh index — the log is read and indexed, then its results computed;
* second `report`: the same index — nothing to read again, the computed results come from it.

The issue measured 4.9 s and 350 MB at 100k for the second run (it re-read the whole log twice);
target ≤ 1 s. The numbers both runs print must agree.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
import ingest_bench  # noqa: E402  (its logs and child measure)

PY = sys.executable


def killed_copy(samples: int) -> Path:
    """The cloned log without what Inspect writes only when an eval ends (cached)."""
    path = ingest_bench.OUT / f"killed-v{ingest_bench.BUILD_VERSION}-{samples}.eval"
    if path.exists():
        return path
    from inspect_ai._util.zipfile import zipfile_compress_kwargs  # zstd in zipfile, Inspect's settings

    source = ingest_bench.build_log(samples, "eval")
    partial = path.with_suffix(".tmp")
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(partial, "w", **zipfile_compress_kwargs) as dst:
        for info in src.infolist():
            if info.filename not in ("header.json", "summaries.json", "reductions.json"):
                dst.writestr(info.filename, src.read(info))
    partial.rename(path)
    return path


def measured(log: Path, db: Path) -> dict:
    """One `evtui report` in a child, with its CPU and peak RSS from the child's own rusage."""
    code = ("import os, subprocess, sys, time, json\n"
            f"t = time.perf_counter(); p = subprocess.Popen({[PY, '-m', 'evtui', 'report', str(log), '--db', str(db), '--json']!r}, stdout=subprocess.PIPE)\n"
            "out = p.stdout.read(); _, status, ru = os.wait4(p.pid, 0)\n"
            "print(json.dumps({'wall': time.perf_counter() - t, 'cpu': ru.ru_utime + ru.ru_stime, 'rss_mb': ru.ru_maxrss / 1024, "
            "'status': status, 'stdout': out.decode()}))\n")  # fmt: skip
    result = json.loads(subprocess.run([PY, "-c", code], check=True, capture_output=True, text=True).stdout)
    if result["status"] != 0:
        raise SystemExit(f"evtui report {log} exited with status {result['status']}")
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=100_000)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
    log = killed_copy(args.samples)
    with zipfile.ZipFile(log) as archive:
        names = archive.namelist()
    print(f"killed .eval: {args.samples:,} samples, {log.stat().st_size / 1e6:.0f} MB, "
          f"header.json {'present' if 'header.json' in names else 'absent'}", flush=True)  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "index.db"
        first, second = measured(log, db), measured(log, db)
    for label, figure in (("first report (reads and indexes the log)", first), ("second report (same index)", second)):
        print(f"  {label:42} {figure['cpu']:6.2f} s CPU ({figure['wall']:5.2f} wall) {figure['rss_mb']:6.0f} MB", flush=True)
    ok = second["cpu"] <= 1.0
    print(f"  second report: target <= 1 s: {'PASS' if ok else 'MISS'}")
    same = json.loads(first["stdout"]) == json.loads(second["stdout"])
    print(f"  the two reports' numbers: {'the same' if same else 'DIFFERENT'}")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
