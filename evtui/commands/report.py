"""`evtui report RUN_DIR [--group-by KEY ...] [--scorer NAME] [--json|--csv] [--db FILE]`.

The run screen's results table (the metrics each run recorded and those evtui jobs computed,
with hand reviews in place where there are any) and the groups view (`g`), headless, for CI and
notebooks: the numbers come from the code the screens call (store.queries.run_results,
scoring.results.reviewed, scoring.results.groups.group_table), so they are the same numbers. Each
grouping also gives each scorer's 95% interval per group from scoring.stats.intervals, the
code the groups chart draws from (the one interval policy, scoring/stats/intervals.py: Wilson for
a proportion, t for a mean, never outside [0, 1] for a 0..1 score; each names its method).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from pathlib import Path
from typing import Any

from evtui.commands.run_paths import add_path_arguments, index_path_for, index_runs, run_paths, usage_error
from evtui.commands.score import _json_safe, _number
from evtui.safe_text import safe_line, spreadsheet_cell

CSV_COLUMNS = ("run_id", "path", "task", "model", "grouping", "group", "samples", "rows", "scorer", "reducer", "metric",
               "value", "scored", "unscored", "source", "error", "stderr", "ci95_low", "ci95_high", "ci95_method")  # fmt: skip
# --group-by words for the groupings that are not metadata keys (store/queries/groups.py Grouping)
_KINDS = {"id": "task", "task": "task", "sample_id": "task", "epoch": "epoch", "outcome": "outcome", "error": "outcome"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_path_arguments(parser)
    parser.add_argument("--group-by", action="append", default=[], metavar="KEY",
                        help="also each run's metrics per group: a metadata key (category or metadata.category), "
                        "id (sample id), epoch or outcome (error / limit); repeat for more")  # fmt: skip
    parser.add_argument("--scorer", metavar="NAME", help="only this scorer's results")
    parser.add_argument("--job", type=int, default=0, metavar="ID", help="groups of evtui job ID's scores (default: the recorded scores)")
    parser.add_argument("--db", metavar="FILE", help="index file (default: RUN_DIR/.evtui/index.db)")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print JSON")
    output.add_argument("--csv", action="store_true", help="print CSV: one row per metric (of a run, or of a group)")


def _fail(message: str, code: int = 2) -> int:
    return usage_error("evtui report", message, code)


def grouping_for(key: str) -> Any:
    """The Grouping a --group-by word names."""
    from evtui.store.queries.groups import Grouping

    if key in _KINDS:
        return Grouping(_KINDS[key])
    return Grouping("metadata", key.removeprefix("metadata."))


def run(args: argparse.Namespace) -> int:
    paths = run_paths(args)
    if isinstance(paths, str):
        return _fail(paths)
    if any(not key.strip() for key in args.group_by):
        return _fail("--group-by needs a key")
    db_path = index_path_for(paths, args.db)
    run_ids = index_runs("evtui report", db_path, paths)
    if not run_ids:
        return _fail(f"no readable runs under {', '.join(map(str, paths))}", 1)
    try:
        report = build_report(db_path, run_ids, [grouping_for(key) for key in args.group_by], scorer=args.scorer, job_id=args.job)
    except LookupError as error:
        return _fail(str(error))
    try:
        if args.json:
            print(json.dumps(_json_safe([{k: v for k, v in entry.items() if k != "variance_text"} for entry in report]), indent=2))
        elif args.csv:
            write_csv(report, sys.stdout, terminal=_is_terminal(sys.stdout))
        else:
            print(format_report(report))
    except BrokenPipeError:  # `evtui report … | head`
        from evtui.commands.export import _silence_stdout

        _silence_stdout()
    return 0


def build_report(db_path: Path, run_ids: list[int], groupings: list[Any], *, scorer: str | None = None, job_id: int = 0) -> list[dict[str, Any]]:
    """Per run: its identity, its results (as the run screen lists them) and each grouping's groups."""
    from evtui.scoring.results.groups import group_table
    from evtui.scoring.results.reviewed import reviewed_results
    from evtui.scoring.results.computed import listed_results
    from evtui.scoring.results.run_notes import notes_json
    from evtui.scoring.results.reproduction import shown_reproduction_notes
    from evtui.scoring.results.integrity import run_integrity
    from evtui.scoring.stats.intervals import result_intervals
    from evtui.store.queries.integrity import score_scales
    from evtui.store.queries.runs import get_run
    from evtui.store.schema import connect

    report = []
    for run_id in run_ids:
        db = connect(db_path)
        try:
            detail = get_run(db, run_id)
            results = listed_results(db, run_id)  # computed ones too, when the run records none
            notes = shown_reproduction_notes(db, run_id) if detail is not None else []
            integrity = run_integrity(db, run_id) if detail is not None else None
            scales = {scorer: scale for (_, scorer), scale in score_scales(db, [run_id]).items()}
            group_scales = scales if not job_id else {s: v for (_, s), v in score_scales(db, [run_id], job_id).items()}
        finally:
            db.conn.close()
        if detail is None:
            continue
        reviewed = reviewed_results(db_path, run_id)
        if reviewed:  # as the run screen: a reviewed row replaces nothing, it is added beside
            results = [row for row in results if not row.reviews] + reviewed
        row = detail.row
        intervals = result_intervals(results, scales)
        entry: dict[str, Any] = {
            "run_id": run_id, "path": row.path, "part": row.part, "format": row.format, "task": row.task, "model": row.model,
            "status": row.status, "samples": row.samples_indexed,
            "read_warnings": list(detail.metadata.get("read_warnings") or []),
            "integrity": integrity.as_json() if integrity is not None else None,
            # one logical run: a sharded run's shards, an eval-set task's attempts (this is the first)
            "shards": detail.metadata.get("shards"), "attempts": row.attempts, "eval_set": row.eval_set,
            "results": [_result(result, intervals) for result in results if scorer is None or result.scorer == scorer],
            **notes_json(notes),
            "groups": [],
        }  # fmt: skip
        for grouping in groupings:
            table = group_table(db_path, run_id, grouping, job_id=job_id)
            entry["groups"].append({
                "grouping": grouping.label,
                "method": table.method,
                "hidden": table.hidden,
                "groups": [
                    {
                        "group": None if group.is_all else group.value, "label": group.label, "samples": group.samples,
                        "rows": group.rows, "error": group.error,
                        "results": [_record(record) for record in group.results if scorer is None or record.scorer == scorer],
                    }  # fmt: skip
                    for group in table.groups
                ],
                "intervals": group_interval_rows(table.groups, scorer, group_scales),
            })  # fmt: skip
        report.append(entry)
    _add_variance(db_path, report, scorer)
    return report


def _add_variance(db_path: Path, report: list[dict[str, Any]], scorer: str | None) -> None:
    """Each run's variance across its epochs (`variance`), and across runs of the same task and
    model (`replicates`, the same object on every run of the group): issue 34."""
    from types import SimpleNamespace

    from evtui.scoring.results.replicates import describe, replicate_groups, replicate_variance, run_variance
    from evtui.store.schema import connect

    db = connect(db_path)
    try:
        texts: dict[int, list[str]] = {}
        for entry in report:
            items = run_variance(db, entry["run_id"], scorer)
            entry["variance"] = [item.as_json() for item in items]
            texts[entry["run_id"]] = [line for item in items for line in describe(item)]
        by_id = {entry["run_id"]: entry for entry in report}
        # the entries already hold each run's task, model and status: no second read of the runs
        runs = [SimpleNamespace(id=e["run_id"], task=e["task"], model=e["model"], status=e["status"]) for e in report]
        for group in replicate_groups(runs):
            items = replicate_variance(db, group, scorer)
            shared = {"runs": list(group), "variance": [item.as_json() for item in items]}
            for run_id in group:
                by_id[run_id]["replicates"] = shared
                texts[run_id] += [line for item in items for line in describe(item)]
    finally:
        db.conn.close()
    for entry in report:  # for the text output only; --json has the numbers
        entry["variance_text"] = texts.get(entry["run_id"], [])


def group_interval_rows(groups: Any, scorer: str | None, scales: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Per scorer, the metric the groups chart plots for it and each group's 95% interval
    (the whole run flagged `all`), highest value first as the chart draws them; `scales`:
    scorer -> ScoreScale of its scores (0/1, inside [0, 1], …), which decides the interval."""
    from evtui.scoring.stats.intervals import SMALL_N, group_intervals, plotted_metric

    scorers = dict.fromkeys(r.scorer for group in groups for r in group.results if scorer is None or r.scorer == scorer)
    out = []
    for name in scorers:
        metric = plotted_metric(groups, name)
        if metric is None:
            continue
        for row in group_intervals(groups, metric, scale=(scales or {}).get(metric[0])):
            out.append({
                "scorer": metric[0], "reducer": metric[1], "metric": metric[2], "label": row.label, "all": row.is_all,
                "samples": row.samples, "value": row.value, "stderr": row.stderr, "low": row.low, "high": row.high,
                "method": row.method, "n": row.n, "small_n": row.n is not None and row.method is not None and row.n < SMALL_N,
            })  # fmt: skip
    return out


def _result(result: Any, intervals: dict[Any, Any] | None = None) -> dict[str, Any]:
    interval = (intervals or {}).get((result.scorer, result.reducer, result.metric))
    source = "recorded" if not result.job_id else f"evtui job {result.job_id}"
    if result.computed:
        source = "computed (run records none)"  # as the run screen says
    if result.reviews:
        source += f" + {result.reviews} review{'s' if result.reviews != 1 else ''}"
    out = {
        "scorer": result.scorer, "reducer": result.reducer, "metric": result.metric, "value": result.value,
        "scored": result.scored, "unscored": result.unscored, "source": source,
        "interval": interval.as_json() if interval is not None else None,
    }  # fmt: skip
    params = result.params if isinstance(result.params, dict) else {}
    if isinstance(params.get("warning"), str):  # a recorded number the run's own samples contradict
        out["warning"] = params["warning"]
        out["from_samples"] = params.get("from_samples")
    return out


def _record(record: Any) -> dict[str, Any]:
    return {
        "scorer": record.scorer, "reducer": record.reducer, "metric": record.metric, "value": record.value,
        "scored": record.scored, "unscored": record.unscored,
    }  # fmt: skip


def write_csv(report: list[dict[str, Any]], out: Any, *, terminal: bool = False) -> None:
    """One row per metric: the run's own (grouping and group empty), then each group's. On a
    terminal every text cell goes through the one sanitiser (run text never reaches it raw);
    into a file or a pipe the cells stay exact, as evtui export writes them."""
    plain = csv.writer(out, lineterminator="\n")
    writer = _SpreadsheetSafe(plain, terminal)
    writer.writerow(CSV_COLUMNS)
    for run in report:
        ident = (run["run_id"], run["path"], run["task"], run["model"])
        for result in run["results"]:
            writer.writerow((*ident, "", "", run["samples"], "", result["scorer"], result["reducer"] or "", result["metric"],
                             _csv_number(result["value"]), _blank(result["scored"]), _blank(result["unscored"]), result["source"], "",
                             "", *_csv_interval(result.get("interval"))))  # fmt: skip
        for grouping in run["groups"]:
            intervals = {(i["label"], i["scorer"], i["reducer"], i["metric"]): i for i in grouping["intervals"]}
            for group in grouping["groups"]:
                where = (*ident, grouping["grouping"], group["label"], group["samples"], group["rows"])
                if not group["results"]:
                    writer.writerow((*where, "", "", "", "", "", "", "", group["error"] or "", "", "", "", ""))
                for record in group["results"]:
                    interval = intervals.get((group["label"], record["scorer"], record["reducer"], record["metric"]), {})
                    writer.writerow((*where, record["scorer"], record["reducer"] or "", record["metric"], _csv_number(record["value"]),
                                     _blank(record["scored"]), _blank(record["unscored"]), "", group["error"] or "",
                                     *(_csv_number(interval.get(k)) for k in ("stderr", "low", "high")), interval.get("method") or ""))  # fmt: skip


def _csv_interval(interval: dict[str, Any] | None) -> tuple[str, str, str]:
    if not interval:
        return "", "", ""
    return _csv_number(interval["low"]), _csv_number(interval["high"]), interval["method"]


class _SpreadsheetSafe:
    """A csv writer whose text cells a spreadsheet shows rather than runs (evtui/safe_text.py)."""

    def __init__(self, writer: Any, terminal: bool = False) -> None:
        self.writer = writer
        self.terminal = terminal

    def writerow(self, row: Any) -> None:
        cells = [spreadsheet_cell(cell) for cell in row]
        self.writer.writerow([safe_line(cell, None) if self.terminal and isinstance(cell, str) else cell for cell in cells])


def _is_terminal(out: Any) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False


def _blank(value: Any) -> Any:
    return "" if value is None else value


def _csv_number(value: Any) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return repr(float(value))


def printable(text: Any) -> str:
    """Run text for a terminal: through the one sanitiser (evtui/safe_text.py)."""
    return safe_line(text, None)


def format_report(report: list[dict[str, Any]]) -> str:
    lines: list[str] = []
    for run in report:
        lines.append(f"{printable(run['path'])}  (run {run['run_id']}: {printable(run['task'] or '-')}, "
                     f"{printable(run['model'] or '-')}, {run['samples']} samples, {run['status']})")  # fmt: skip
        lines += _table(run["results"], with_source=True) or ["  no results"]
        if run.get("integrity"):
            lines += ["  " + line for line in _integrity_lines(run["integrity"])]
        lines += [f"  {'warning' if note['level'] == 'warning' else 'note'}: {printable(note['text'])}" for note in run["notes_with_levels"]]
        lines += [f"  variance {printable(line)}" for line in run.get("variance_text", [])]
        for grouping in run["groups"]:
            hidden = f", {grouping['hidden']} smaller groups not shown" if grouping["hidden"] else ""
            lines.append(f"  by {printable(grouping['grouping'])} ({grouping['method']}{hidden})")
            for group in grouping["groups"]:
                lines.append(f"    {printable(group['label'])}: {group['samples']} samples, {group['rows']} rows")
                if group["error"]:
                    lines.append(f"      could not compute: {printable(group['error'])}")
                lines += ["  " + line for line in _table(group["results"], with_source=False)]
            lines += _interval_lines(grouping["intervals"])
        lines.append("")
    return "\n".join(lines).rstrip("\n")


def _integrity_lines(integrity: dict[str, Any]) -> list[str]:
    """The run's integrity as the run screen's panel says it (scoring/results/integrity.py)."""
    from evtui.scoring.results.integrity import RunIntegrity

    return [printable(line) for line in RunIntegrity.from_json(integrity).lines()]


def _interval_lines(intervals: list[dict[str, Any]]) -> list[str]:
    lines: list[str] = []
    metric = None
    for row in intervals:
        key = (row["scorer"], row["reducer"], row["metric"])
        if key != metric:
            metric = key
            reducer = f" ({printable(row['reducer'])})" if row["reducer"] else ""
            lines.append(f"    95% intervals of {printable(row['scorer'])} {printable(row['metric'])}{reducer}:")
        ends = f"[{row['low']:.4f}, {row['high']:.4f}] {_tag(row)}" if row["low"] is not None else "(no interval: no stderr)"
        lines.append(f"      {printable(row['label'])}: {_number(row['value'])} {ends}")
    return lines


def _tag(row: dict[str, Any]) -> str:
    """The interval's method, and `n<30` where few samples are behind it (Interval.tag)."""
    from evtui.scoring.stats.intervals import SMALL_N

    return f"{row['method']}" + (f" n<{SMALL_N}" if row.get("small_n") else "")


def _interval_cell(interval: dict[str, Any] | None) -> str:
    if not interval or interval["low"] is None:
        return ""
    return f"[{interval['low']:.4f}, {interval['high']:.4f}] {_tag(interval)}"


def _table(results: list[dict[str, Any]], *, with_source: bool) -> list[str]:
    if not results:
        return []
    cells = [
        (printable(r["scorer"]), printable(r["reducer"] or "-"), printable(r["metric"]),
         _number(r["value"]) + (f" ⚠ samples: {_number(r['from_samples'])}" if r.get("warning") else ""),
         _interval_cell(r.get("interval")) if with_source else "",
         "" if r["scored"] is None else str(r["scored"]) + (f" (+{r['unscored']} unscored)" if r["unscored"] else ""),
         r.get("source", "") if with_source else "")
        for r in results
    ]  # fmt: skip
    header = ("scorer", "reducer", "metric", "value", "95% interval" if with_source else "", "scored", "source" if with_source else "")
    widths = [max(len(row[i]) for row in [header, *cells]) for i in range(len(header))]
    return ["  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in [header, *cells]]
