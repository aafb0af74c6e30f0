"""A 10,000-event transcript opening as the sample view's events tree (issue 30, item 4).

The events are a real Inspect sample's (tests/data/inspect/tool_agent.eval, sample 1) repeated
with fresh span ids until there are 10,000: spans, model calls with their request and response,
tool calls, scores. Measured:

  * tree   — sample_view.event_tree over the raw events (what loading the sample adds)
  * open   — that, then the EventTree widget mounted and drawn in a headless app   target ≤ 0.5 s
  * search — search_tree for a word in every model call, and the jump to the last hit
  * timeline — sample_view.build_timeline over that tree (every span and event in time order:
    what loading the sample adds for `l`), then the timeline view (`l`) mounted and drawn in a
    headless app, its last row reached with End                                 target ≤ 0.5 s

    /work/venv/bin/python bench/event_tree_bench.py [--events 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import os
import statistics
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))


def events(count: int) -> list[dict]:
    from inspect_ai.log import read_eval_log

    sample = read_eval_log(str(BENCH.parent / "tests" / "data" / "inspect" / "tool_agent.eval")).samples[0]
    seed = [event.model_dump(mode="json") for event in sample.events]
    out: list[dict] = []
    copy_number = 0
    while len(out) < count:
        copy_number += 1
        for event in seed:
            clone = copy.deepcopy(event)
            for key in ("id", "parent_id", "span_id"):
                if isinstance(clone.get(key), str):
                    clone[key] = f"{clone[key]}-{copy_number}"
            out.append(clone)
    return out[:count]


async def open_tree(raw: list[dict]) -> tuple[float, float]:
    from textual.app import App, ComposeResult

    from evtui.app.widgets.sample.event_tree import EventTree
    from evtui.sample_view import event_tree

    class TreeApp(App[None]):
        def compose(self) -> ComposeResult:
            yield EventTree(event_tree(raw), "none")

    wall, cpu = time.perf_counter(), time.process_time()
    app = TreeApp()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        return time.perf_counter() - wall, time.process_time() - cpu


async def open_timeline(raw: list[dict]) -> tuple[float, float, int]:
    from textual.app import App, ComposeResult

    from evtui.app.widgets.sample.timeline import TimelineView
    from evtui.sample_view import build_timeline, event_tree

    wall, cpu = time.perf_counter(), time.process_time()
    timeline = build_timeline(event_tree(raw))

    class TimelineApp(App[None]):
        def compose(self) -> ComposeResult:
            yield TimelineView(timeline)

    app = TimelineApp()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        rows = app.query_one(TimelineView)
        rows.focus()
        await pilot.press("end")
        await pilot.pause()
        return time.perf_counter() - wall, time.process_time() - cpu, len(timeline.rows)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    raw = events(args.events)

    from evtui.sample_view import event_tree, search_tree

    walls, cpus = [], []
    for _ in range(5):
        wall, cpu = time.perf_counter(), time.process_time()
        tree = event_tree(raw)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    print(f"{len(raw):,} events → {len(tree):,} top-level nodes")
    print(f"tree    wall median {statistics.median(walls):.4f} s  CPU median {statistics.median(cpus):.4f} s")
    opened = [asyncio.run(open_tree(raw)) for _ in range(3)]
    wall, cpu = statistics.median(o[0] for o in opened), statistics.median(o[1] for o in opened)
    print(f"open    wall median {wall:.4f} s  CPU median {cpu:.4f} s  target ≤ 0.5 s: wall {wall / 0.5:.2f}× "
          f"({'ok' if wall <= 0.5 else 'MISSED'}), CPU {cpu / 0.5:.2f}× ({'ok' if cpu <= 0.5 else 'MISSED'})  "
          "(app start-up included)")  # fmt: skip
    started = time.process_time()
    hits = search_tree(event_tree(raw), "mockllm")
    print(f"search  {len(hits):,} hits, CPU {time.process_time() - started:.4f} s (tree rebuilt included)")
    from evtui.sample_view import build_timeline

    cpus = []
    for _ in range(5):
        cpu = time.process_time()
        timeline = build_timeline(tree)
        cpus.append(time.process_time() - cpu)
    print(f"timeline rows  {len(timeline.rows):,} rows over {timeline.total:.3f} s, CPU median {statistics.median(cpus):.4f} s")
    opened_timeline = [asyncio.run(open_timeline(raw)) for _ in range(3)]
    wall, cpu = statistics.median(o[0] for o in opened_timeline), statistics.median(o[1] for o in opened_timeline)
    print(f"timeline open  wall median {wall:.4f} s  CPU median {cpu:.4f} s  target ≤ 0.5 s: wall {wall / 0.5:.2f}× "
          f"({'ok' if wall <= 0.5 else 'MISSED'}), CPU {cpu / 0.5:.2f}× ({'ok' if cpu <= 0.5 else 'MISSED'})  "
          "(app start-up, tree and rows built, End pressed, included)")  # fmt: skip
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
