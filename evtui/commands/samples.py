"""`evtui samples RUN... [--filter EXPR] [--search WORDS] [--json|--csv]`: the samples of several
runs side by side, one row per sample id × epoch, each run's answer and scores as columns: the
rows and columns of the cross-run samples screen, from the same query (store/queries/across_runs).

`evtui samples RUN --sample ID [--epoch N] [--json]`: one sample of one run as the sample view
shows it (input, target, answer, every effective score) with its timeline: the transcript's
spans and events in time order, each with its start (seconds after the first), duration, kind
and label, the rows the sample view's timeline (`l`) draws (sample_view/timeline.py build_timeline)."""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from pathlib import Path
from typing import Any

from evtui.commands.run_paths import index_path_for, index_runs, missing_paths_message, usage_error
from evtui.safe_text import safe_line, spreadsheet_cell

PROG = "evtui samples"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", nargs="+", metavar="RUN", help="run files (or directories: every run under them), in column order")
    parser.add_argument("--db", metavar="FILE", help="index file (default: RUN_DIR/.evtui/index.db)")
    parser.add_argument("--filter", metavar="EXPR", help='keep a row when the filter matches its sample in any run (e.g. match == "I")')
    parser.add_argument("--search", metavar="WORDS", help="keep a row when its input or output holds every word, in any run")
    parser.add_argument("--descending", action="store_true", help="ids in reverse natural order")
    parser.add_argument("--sample", metavar="ID", help="one sample of one RUN in full, with its timeline (start, duration, kind, label)")
    parser.add_argument("--epoch", type=int, metavar="N", help="with --sample: which epoch (default: the first)")
    shape = parser.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true", help="print the runs, the columns and the rows as JSON")
    shape.add_argument("--csv", action="store_true", help="print the rows as CSV (header: the columns)")


def _fail(message: str, code: int = 2) -> int:
    return usage_error(PROG, message, code)


def run(args: argparse.Namespace) -> int:
    paths = [Path(p) for p in args.runs]
    problem = missing_paths_message(paths)
    if problem:
        return _fail(problem)
    db_path = index_path_for(paths, args.db)
    if not index_runs(PROG, db_path, paths):
        return _fail(f"no readable runs under {', '.join(map(str, paths))}", 1)

    from evtui.store import jobs
    from evtui.store.queries.across_runs import across_columns, across_rows, across_runs, table_header, table_values
    from evtui.store.queries.filters import FilterError
    from evtui.store.schema import connect

    db = connect(db_path)
    try:
        run_ids: list[int] = []
        for path in paths:
            found = jobs.run_ids_under(db, [path])
            if not found:
                return _fail(f"{path}: no readable run there", 1)
            run_ids += [run_id for run_id in found if run_id not in run_ids]
        if args.sample is not None or args.epoch is not None:
            return _one_sample(args, db, db_path, run_ids)
        runs = across_runs(db, run_ids)
        columns = across_columns(runs)
        header = table_header(columns)
        try:
            rows = [table_values(row, columns) for row in across_rows(
                db, runs, filter=args.filter, search=args.search, descending=args.descending)]  # fmt: skip
        except FilterError as error:
            return _fail(f"--filter: {error}")
    finally:
        db.conn.close()
    if args.json:
        print(json.dumps({
            "runs": [{"index": run.index, "run_id": run.run_id, "path": run.path, "part": run.part or None,
                      "task": run.task, "model": run.model, "scorers": list(run.scorers)} for run in runs],
            "columns": header,
            "rows": [[_json_value(value) for value in row] for row in rows],
        }, indent=2, allow_nan=False))  # fmt: skip
    elif args.csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(header)
        for row in rows:
            writer.writerow([spreadsheet_cell(_text(value)) for value in row])
    else:
        for run in runs:
            print(f"{run.index}: {safe_line(run.path)}{' · ' + safe_line(run.part) if run.part else ''}  "
                  f"({safe_line(run.task or '–')}, {safe_line(run.model or '–')})")
        print("\t".join(safe_line(label) for label in header))
        for row in rows:
            print("\t".join(safe_line(_text(value), 80) for value in row))
        print(f"{len(rows)} row{'s' if len(rows) != 1 else ''}")
    return 0


def _one_sample(args: argparse.Namespace, db: Any, db_path: Path, run_ids: list[int]) -> int:
    """--sample: the sample's heading and timeline, from the sample view's own loader."""
    from evtui.sample_view.view import load_sample_view
    from evtui.store.queries import sample_epochs

    if args.sample is None:
        return _fail("--epoch needs --sample ID")
    if args.csv or args.filter is not None or args.search is not None:
        return _fail("--sample shows one sample: --csv, --filter and --search list several")
    if len(run_ids) != 1:
        return _fail(f"--sample needs one run; the paths hold {len(run_ids)}")
    epochs = sample_epochs(db, run_ids[0], args.sample)
    chosen = [row for row in epochs if args.epoch is None or row.epoch == args.epoch][:1]
    if not chosen:
        where = f"epoch {args.epoch} of sample" if epochs else "sample"
        return _fail(f"{where} {safe_line(args.sample, 80)!r} is not in {safe_line(args.runs[0])}", 1)
    view = load_sample_view(db_path, chosen[0].rowid)
    timeline = view.timeline.as_json() if view.timeline is not None else {"total_seconds": None, "rows": []}
    effective = [score.score for score in view.scores if score.effective]
    answer = next((score.answer for score in effective if score.answer is not None), None)
    sample = view.sample
    if args.json:
        print(json.dumps({
            "run": {"run_id": sample.run_id, "path": view.run_path, "part": view.run_part or None, "format": view.run_format,
                    "task": view.task, "model": view.model},
            "sample": {"id": sample.sample_id, "epoch": sample.epoch, "input": sample.input_text, "target": sample.target,
                       "answer": answer, "error": sample.error,
                       "scores": {score.scorer: _json_value(score.value) for score in effective}},
            "transcript_note": view.transcript_note,
            "timeline_total_seconds": timeline["total_seconds"],
            "timeline": timeline["rows"],
        }, indent=2, allow_nan=False, default=str))  # fmt: skip
        return 0
    print(f"sample {safe_line(sample.sample_id)} epoch {sample.epoch} of {safe_line(view.run_path)}")
    print(f"input   {safe_line(' '.join(sample.input_text.split()), 200)}")
    print(f"target  {safe_line(' | '.join(sample.target) or '–', 200)}")
    print(f"answer  {safe_line(' '.join((answer or '–').split()), 200)}")
    for score in effective:
        print(f"score   {safe_line(score.scorer)} = {safe_line(_text(score.value), 80)}")
    if view.transcript_note:
        print(f"note    {safe_line(view.transcript_note)}")
    total = timeline["total_seconds"]
    print(f"timeline: {len(timeline['rows'])} steps" + (f" over {total:.3f} s" if total is not None else ", no start times recorded"))
    print("start_s\tduration_s\tkind\tlabel")
    for row in timeline["rows"]:
        start = "" if row["start"] is None else f"{row['start']:.3f}"
        duration = f"{row['duration']:.3f}" if row["duration"] is not None else "–" if row["start"] is not None else "no time"
        print(f"{start}\t{duration}\t{safe_line(row['kind'])}\t{'  ' * row['depth']}{safe_line(row['label'], 160)}")
    return 0


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None  # NaN (unscored) has no JSON form
    return value


def _text(value: Any) -> str:
    """A cell as text: a score value as written (C, 0.5), nothing for none."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, float) and math.isnan(value):
        return "unscored"
    return json.dumps(value, separators=(",", ":"), default=str) if isinstance(value, dict | list) else str(value)
