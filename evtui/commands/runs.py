"""`evtui runs [PATH...|--demo] [--filter TEXT] [--sort COLUMN] [--reverse] [--group-by task|eval-set] [--json]`.

The runs screen's list, headless: the runs under PATHs with the screen's columns (name, status,
samples, headline, times, duration, epochs, tokens, cost, args, tags), narrowed by the screen's
filter (`task:X model:Y status:Z words`), ordered by its sort and grouped as `g` groups them (by
task, or by eval set: an Inspect eval set, a Harbor job, an EvSys experiment, an lm-eval
invocation). The rows, their order and the groups come from store/queries/run_list.py, the code
the screen calls, so both list the same runs in the same order.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from evtui.commands.run_paths import add_path_arguments, index_path_for, index_runs, run_paths, usage_error
from evtui.safe_text import safe_line

PROG = "evtui runs"
# Columns a sort starts descending on (numbers and times: biggest, newest first), as on the screen.
_TEXT_SORTS = ("task", "model", "run", "status", "args", "tags")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from evtui.store.queries.run_list import GROUP_BYS, RUN_SORTS

    add_path_arguments(parser)
    parser.add_argument("--db", metavar="FILE", help="index file (default: RUN_DIR/.evtui/index.db)")
    parser.add_argument("--filter", default="", metavar="TEXT",
                        help='the runs screen\'s filter: task:NAME model:NAME status:WORD and words (e.g. "task:arith nightly")')
    parser.add_argument("--sort", default="created", choices=list(RUN_SORTS), metavar="COLUMN",
                        help=f"order by a column ({', '.join(RUN_SORTS)}); text ascending, numbers and times "
                        "descending (default: created, newest first)")  # fmt: skip
    parser.add_argument("--reverse", action="store_true", help="the other direction")
    parser.add_argument("--group-by", choices=GROUP_BYS, metavar="KEY",
                        help="group the runs by task or by eval-set (an Inspect eval set, a Harbor job, an EvSys "
                        "experiment, an lm-eval invocation; runs made in none: '(no eval set)')")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print JSON")


def _fail(message: str, code: int = 2) -> int:
    return usage_error(PROG, message, code)


def run(args: argparse.Namespace) -> int:
    paths = run_paths(args)
    if isinstance(paths, str):
        return _fail(paths)
    db_path = index_path_for(paths, args.db)
    run_ids = index_runs(PROG, db_path, paths)
    if not run_ids:
        return _fail(f"no readable runs under {', '.join(map(str, paths))}", 1)
    listing = build_listing(db_path, set(run_ids), args.filter, args.sort, args.reverse, args.group_by)
    if args.json:
        print(json.dumps(listing, indent=2, allow_nan=False))
    else:
        print(format_listing(listing))
    return 0


def build_listing(db_path: Any, run_ids: set[int] | None, filter_text: str = "", sort: str = "created",
                  reverse: bool = False, group_by: str | None = None) -> dict[str, Any]:  # fmt: skip
    """The runs (of `run_ids`, else every one indexed) as the runs screen lists them: filtered,
    sorted, and grouped when `group_by` is given."""
    from evtui.scoring.results.computed import listed_runs
    from evtui.store.queries.run_list import filter_runs, group_runs, sort_runs
    from evtui.store.schema import connect

    db = connect(db_path)
    try:
        runs = [run for run in listed_runs(db) if run_ids is None or run.id in run_ids]
    finally:
        db.conn.close()
    descending = sort not in _TEXT_SORTS
    if reverse:
        descending = not descending
    shown = sort_runs(filter_runs(runs, filter_text), sort, descending)
    listing: dict[str, Any] = {"filter": filter_text, "sort": sort, "descending": descending, "group_by": group_by,
                               "total": len(runs), "shown": len(shown)}  # fmt: skip
    if group_by is None:
        listing["runs"] = [run_json(run) for run in shown]
    else:
        listing["groups"] = [
            {"key": group.key, "name": group.name, "count": len(group.runs), "newest": group.newest,
             "runs": [run_json(run) for run in group.runs]}
            for group in group_runs(shown, group_by)
        ]  # fmt: skip
    return listing


def run_json(run: Any) -> dict[str, Any]:
    """One run's row: every figure the runs screen shows, as numbers (None where unknown)."""
    from evtui.store.queries.run_list import run_name

    return {
        "id": run.id, "name": run_name(run.path, run.part), "path": run.path, "part": run.part, "format": run.format,
        "task": run.task, "model": run.model, "status": run.status, "attempts": run.attempts, "missing": run.missing,
        "samples_completed": run.samples_completed, "samples_total": run.samples_total, "samples_indexed": run.samples_indexed,
        "headline": [
            {"scorer": m.scorer, "reducer": m.reducer, "metric": m.metric, "value": _finite(m.value),
             "stderr": _finite(m.stderr), "scored": m.scored, "computed": m.computed}
            for m in run.headline
        ],
        "created": run.created, "completed_at": run.completed_at, "duration": _finite(run.duration), "epochs": run.epochs,
        "input_tokens": run.input_tokens, "output_tokens": run.output_tokens, "total_tokens": run.total_tokens,
        "cost": _finite(run.cost), "task_args": _decoded(run.task_args), "tags": _decoded(run.tags),
        "eval_set": {"key": run.eval_set_key, "name": run.eval_set_name} if run.eval_set_key else None,
    }  # fmt: skip


def _finite(value: Any) -> Any:
    import math

    return None if isinstance(value, float) and not math.isfinite(value) else value


def _decoded(text: str | None) -> Any:
    return json.loads(text) if text else None


# ------------------------------------------------------------------------------------------- text

_HEADINGS = ("Task", "Model", "Run", "Status", "Samples", "Headline", "Created", "Duration")


def format_listing(listing: dict[str, Any]) -> str:
    """The listing as aligned columns; with groups, each group's line (name, runs, newest) above its
    runs. Every piece of run text is sanitised (safe_line)."""
    if listing["group_by"] is None:
        sections = [(None, listing["runs"])]
    else:
        sections = [(group, group["runs"]) for group in listing["groups"]]
    rows = [_cells(run) for _, runs in sections for run in runs]
    widths = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(_HEADINGS)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(_HEADINGS, widths, strict=True)).rstrip()]
    position = 0
    for group, runs in sections:
        if group is not None:
            newest = f", newest {group['newest']}" if group["newest"] else ""
            lines.append(f"▼ {safe_line(group['name'], 120)} ({group['count']} run{'s' if group['count'] != 1 else ''}{newest})")
        for row in rows[position:position + len(runs)]:
            lines.append(("  " if group is not None else "") + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        position += len(runs)
    shown = f"{listing['shown']} of {listing['total']} runs" if listing["filter"].strip() else f"{listing['shown']} runs"
    lines.append(shown + (f" (filter: {safe_line(listing['filter'], 80)})" if listing["filter"].strip() else ""))
    return "\n".join(lines)


def _cells(run: dict[str, Any]) -> list[str]:
    headline = run["headline"]
    text = "–"
    if headline:
        first = headline[0]
        value = "–" if first["value"] is None else f"{first['value']:.3f}"
        stderr = "" if first["stderr"] is None else f" ± {first['stderr']:.3f}"
        text = safe_line(f"{first['scorer']} {first['metric']} {value}{stderr}", 60)
    samples = f"{run['samples_completed']}/{run['samples_total']}" if run["samples_total"] else str(run["samples_completed"])
    duration = "–" if run["duration"] is None else f"{run['duration']:.0f} s"
    return [safe_line(run["task"] or "–", 60), safe_line(run["model"] or "–", 60), safe_line(run["name"], 120),
            safe_line(run["status"], 20), samples, text, safe_line(run["created"] or "–", 32), duration]  # fmt: skip
