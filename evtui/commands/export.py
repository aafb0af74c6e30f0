"""`evtui export PATH... --format jsonl|csv [--scorer NAME] [--output FILE]`: one row per score;
`--format parquet --out DIR`: runs, samples and scores as Parquet (store/export/parquet.py)."""

from __future__ import annotations

import argparse
import csv
import difflib
import json
import math
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from evtui.commands.run_paths import add_path_arguments, index_path_for, index_runs, run_paths, usage_error
from evtui.safe_text import safe_line, spreadsheet_cell

COLUMNS = ("run_id", "path", "part", "sample_id", "epoch", "scorer", "value", "answer", "explanation", "reason", "source", "job_id")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_path_arguments(parser)
    parser.add_argument("--db", metavar="FILE", help="index file (default: RUN_DIR/.evtui/index.db)")
    parser.add_argument("--format", choices=("jsonl", "csv", "parquet"), default="jsonl", help="output format (default: jsonl)")
    parser.add_argument("--scorer", metavar="NAME", help="only this scorer's scores")
    parser.add_argument("--output", metavar="FILE", help="write here instead of standard output (never over an existing file without --force)")
    parser.add_argument("--force", action="store_true", help="replace the --output file if it exists")
    parser.add_argument("--out", metavar="DIR", help="--format parquet: the folder to write (runs/, samples/, scores/)")


def _fail(message: str, code: int = 2) -> int:
    return usage_error("evtui export", message, code)


def run(args: argparse.Namespace) -> int:
    paths = run_paths(args)
    if isinstance(paths, str):
        return _fail(paths)
    if args.output and Path(args.output).exists() and not args.force:
        return _fail(f"{args.output} exists; pass --force to replace it")
    if args.format == "parquet" and not args.out:
        return _fail("--format parquet writes a folder: give it with --out DIR")
    db_path = index_path_for(paths, args.db)
    run_ids = index_runs("evtui export", db_path, paths, samples=True)  # exports carry the outputs
    if not run_ids:
        return _fail(f"no readable runs under {', '.join(map(str, paths))}", 1)

    from evtui.store import jobs
    from evtui.store.export import scores as jobs_export
    from evtui.store.schema import connect

    if args.format == "parquet":
        return _export_parquet(db_path, run_ids, Path(args.out))
    db = connect(db_path)
    try:
        if args.scorer is not None:
            known = jobs.scorer_names(db, run_ids)
            if args.scorer not in known:
                close = difflib.get_close_matches(args.scorer, known, n=5, cutoff=0.5)
                hint = f" Did you mean: {', '.join(close)}?" if close else ""
                return _fail(f"no scores from scorer {args.scorer!r} in these runs.{hint} Scorers: {', '.join(known) or 'none'}")
        rows = jobs_export.iter_export_rows(db, run_ids, scorer=args.scorer)
        from evtui.writers.whole_file import whole_file

        # Whole or not at all; a file that appeared since the check above is not replaced either.
        target = whole_file(args.output, force=args.force, text=True, newline="") if args.output else nullcontext(sys.stdout)
        try:
            with target as out:
                count = write_jsonl(rows, out) if args.format == "jsonl" else write_csv(rows, out, terminal=_is_terminal(out))
        except FileExistsError:
            return _fail(f"{args.output} exists; pass --force to replace it")
        except BrokenPipeError:  # `evtui export … | head`: the reader has all it wants
            _silence_stdout()
            return 0
    finally:
        db.conn.close()
    if args.output:
        print(f"wrote {count} scores to {safe_line(args.output)}", file=sys.stderr)
    return 0


def _export_parquet(db_path: Path, run_ids: list[int], out: Path) -> int:
    from evtui.store.export.parquet import MissingExtra, export_parquet
    from evtui.store.schema import connect

    db = connect(db_path)
    try:
        report = export_parquet(db, run_ids, out)
    except MissingExtra as error:
        return _fail(str(error))
    finally:
        db.conn.close()
    print(f"wrote {report.runs} runs, {report.samples} samples, {report.scores} scores to {out}", file=sys.stderr)
    return 0


def _silence_stdout() -> None:
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def _strict(value: Any) -> Any:
    """NaN (an unscored value) becomes null: the output is strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _strict(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strict(v) for v in value]
    return value


def write_jsonl(rows, out) -> int:
    count = 0
    for row in rows:
        out.write(json.dumps({key: _strict(row[key]) for key in COLUMNS}, ensure_ascii=False) + "\n")
        count += 1
    return count


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, dict | list | bool):
        return json.dumps(_strict(value), ensure_ascii=False)
    return value


def _is_terminal(out: Any) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False


def write_csv(rows, out, *, terminal: bool = False) -> int:
    """Rows as CSV; a cell a spreadsheet would run as a formula is neutralised (spreadsheet_cell).
    On a terminal each cell also goes through the one sanitiser: run text never reaches it raw."""
    writer = csv.writer(out)
    writer.writerow(COLUMNS)
    count = 0
    for row in rows:
        cells = [spreadsheet_cell(_cell(row[key])) for key in COLUMNS]
        writer.writerow([safe_line(cell, None) if terminal and isinstance(cell, str) else cell for cell in cells])
        count += 1
    return count
