"""Grading throughput: 2,000 model-graded samples against a loopback grader answering after 50 ms.

Pass: concurrency 32 takes at most 1.25 × the ideal (2000 × 0.05 / 32 s), and the same job
again, answered from the index's grader cache, takes under 2 s. The server runs in its own
process so its threads do not compete with the client for the GIL.

    python bench/grading_bench.py [--samples 2000] [--delay 0.05] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evtui.grading.cache import IndexCache  # noqa: E402
from evtui.grading.client import grading_session  # noqa: E402
from evtui.grading.settings import GraderSettings  # noqa: E402
from evtui.scoring.scorers.model_graded import model_graded_qa  # noqa: E402
from evtui.scoring.state import ModelOutput, SampleState  # noqa: E402
from evtui.scoring.values import Target, is_unscored  # noqa: E402


def start_server(delay: float) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "grader_server.py"), "--delay", str(delay)],
        stdout=subprocess.PIPE, text=True,
    )
    assert process.stdout is not None
    base_url = process.stdout.readline().strip()
    if not base_url.startswith("http"):
        process.kill()
        raise RuntimeError(f"grader server did not start (said {base_url!r})")
    return process, base_url


async def grade_all(base_url: str, index: Path, samples: int, concurrency: int) -> tuple[float, int, int, int]:
    scorer = model_graded_qa(temperature=0)
    states = [
        SampleState(sample_id=str(i), input_text=f"Question {i}: what is {i} + {i}?", output=ModelOutput(completion=str(2 * i)))
        for i in range(samples)
    ]
    settings = GraderSettings(base_url=base_url, model="bench-judge", concurrency=concurrency)
    started, cpu_started = time.perf_counter(), time.process_time()
    async with grading_session(settings, cache=IndexCache(index)) as session:
        scores = await asyncio.gather(*(scorer(state, Target(str(2 * int(state.sample_id)))) for state in states))
        stats = session.stats
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    graded = sum(1 for s in scores if not is_unscored(s.value))
    return elapsed, cpu, graded, stats.requests_sent, stats.cache_hits


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args(argv)
    ideal = args.samples * args.delay / args.concurrency
    limit, cached_limit = 1.25 * ideal, 2.0
    process, base_url = start_server(args.delay)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            index = Path(tmp) / "index.db"
            load = os.getloadavg()[0]
            cold, cold_cpu, graded, sent, _ = asyncio.run(grade_all(base_url, index, args.samples, args.concurrency))
            warm, warm_cpu, graded_again, sent_again, hits = asyncio.run(grade_all(base_url, index, args.samples, args.concurrency))
    finally:
        process.terminate()
        process.wait(timeout=10)
    print(f"grading {args.samples} samples, grader delay {args.delay * 1000:.0f} ms, concurrency {args.concurrency}"
          f"  (load average {load:.1f} on {os.cpu_count()} CPUs)")
    ratio = cold / ideal if ideal else float("inf")
    print(f"  cold: {cold:.3f} s  ({args.samples / cold:.0f} samples/s; ideal {ideal:.3f} s; ratio {ratio:.3f}; "
          f"limit {limit:.3f} s)  graded {graded}, requests {sent}, client CPU {cold_cpu / args.samples * 1000:.2f} ms/sample")
    print(f"  warm (cache): {warm:.3f} s  (limit {cached_limit:.1f} s; ratio {warm / cached_limit:.3f})  "
          f"graded {graded_again}, requests {sent_again}, cache hits {hits}, client CPU {warm_cpu / args.samples * 1000:.2f} ms/sample")
    ok = cold <= limit and warm < cached_limit and graded == graded_again == args.samples and sent_again == 0
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
