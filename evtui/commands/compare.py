"""`evtui compare RUN_A RUN_B [RUN_C ...] [--baseline RUN] [--scorer NAME] [--cluster KEY] [--json]`:
each pair of runs (or each run against the baseline) per scorer: both values with 95% intervals,
the paired difference B − A with its stderr, interval and p-value, the counts and the MDE."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from evtui.commands.run_paths import as_location, index_path_for, index_runs, latest_attempts, missing_paths_message, usage_error
from evtui.number_text import fixed, p_value
from evtui.safe_text import safe_line


def plain(text: object) -> str:
    """Run text as the CLI prints it: through the one sanitiser."""
    return safe_line(text, None)


PROG = "evtui compare"
TEST_NAMES = {"mcnemar_exact": "exact McNemar", "paired_t": "paired t"}
ADJUSTMENT_NAMES = {"holm": "Holm", "bh": "Benjamini–Hochberg"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", nargs="+", metavar="RUN", help="run files (or directories: every run under them), two or more runs")
    parser.add_argument("--db", metavar="FILE", help="index file (default: RUN_DIR/.evtui/index.db)")
    parser.add_argument("--baseline", metavar="RUN", help="compare every other run against this one (default: every pair)")
    parser.add_argument("--scorer", metavar="NAME", help="only this scorer (default: every scorer all runs have)")
    parser.add_argument("--cluster", metavar="KEY", help="clustered standard errors by metadata.KEY (as Inspect's stderr(cluster=))")
    parser.add_argument("--adjust", choices=("holm", "bh"), default="holm", help="p-value adjustment over all comparisons (default: holm)")
    parser.add_argument("--detect", type=float, metavar="DELTA", help="also print the samples needed to detect a difference of DELTA")
    parser.add_argument("--target", type=float, metavar="VALUE",
                        help="also say, for each run, whether its mean is already separated from VALUE (anytime-valid)")
    parser.add_argument("--sources", nargs=2, metavar=("SOURCE", "SOURCE"),
                        help="one run: compare two score sources of its scorers (log, job:N, human, reviewer:NAME): judge drift")
    parser.add_argument("--json", action="store_true", help="print the comparisons as JSON")


def _fail(message: str, code: int = 2) -> int:
    return usage_error(PROG, message, code)


def run(args: argparse.Namespace) -> int:
    paths = [as_location(p) for p in args.runs] + ([as_location(args.baseline)] if args.baseline else [])
    problem = missing_paths_message(paths)
    if problem:
        return _fail(problem)
    db_path = index_path_for(paths, args.db)
    if not index_runs(PROG, db_path, paths):
        return _fail(f"no readable runs under {', '.join(map(str, paths))}", 1)
    if args.sources:
        return _run_sources(args, db_path)

    from evtui.scoring.compare import compare_runs
    from evtui.store import jobs
    from evtui.store.schema import connect

    db = connect(db_path)
    try:
        run_ids: list[int] = []
        for path in [as_location(p) for p in args.runs]:
            found = latest_attempts(db, jobs.run_ids_under(db, [path]), [path])
            if not found:
                return _fail(f"{path}: no readable run there", 1)
            run_ids += [run_id for run_id in found if run_id not in run_ids]
        baseline = None
        if args.baseline:
            found = latest_attempts(db, jobs.run_ids_under(db, [as_location(args.baseline)]), [as_location(args.baseline)])
            if len(found) != 1:
                return _fail(f"--baseline {args.baseline}: expected one run, found {len(found)}")
            baseline = found[0]
            if baseline not in run_ids:
                run_ids.insert(0, baseline)
    finally:
        db.conn.close()
    if len(run_ids) < 2 and args.target is None:
        return _fail("give two or more runs to compare (or one with --target VALUE)")
    from evtui.scoring.decisions import decisions_for

    report = compare_runs(db_path, run_ids, baseline=baseline, scorer=args.scorer, cluster=args.cluster, adjustment=args.adjust)
    decisions = decisions_for(db_path, report, args.target, args.scorer)
    if args.json:
        print(json.dumps(report_json(report, args.detect, decisions), indent=2, allow_nan=False))
    else:
        print_report(report, args.detect)
        print_decisions(decisions, report)
    # Exit 1 only when nothing at all was compared: a decision across tasks counts.
    return 0 if any(pair.result for pair in report.pairs) or decisions.stopping or decisions.across_tasks else 1


def _finite(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else value


def pair_json(pair: Any, paths: dict[int, str], adjustment: str, detect: float | None = None) -> dict[str, Any]:
    """One comparison with the fields the issue names, then what else there is to know."""
    from evtui.scoring.stats.power import samples_needed

    result = pair.result
    side_a, side_b = pair.side_a, pair.side_b
    out: dict[str, Any] = {
        "scorer": pair.scorer,
        "metric": pair.metric,
        "a": paths.get(pair.a),
        "b": paths.get(pair.b),
        "value_a": _finite(side_a.interval.value) if side_a and side_a.interval else None,
        "value_b": _finite(side_b.interval.value) if side_b and side_b.interval else None,
        "difference": _finite(result.difference) if result else None,
        "stderr": _finite(result.stderr) if result else None,
        "ci": [_finite(result.ci[0]), _finite(result.ci[1])] if result else None,
        "p_value": _finite(result.p_value) if result else None,
        "test": result.test if result else None,
        "n_paired": pair.n_paired,
        "only_a": pair.only_a,
        "only_b": pair.only_b,
        "mde": _finite(result.mde) if result else None,
        # beyond the list
        "p_adjusted": _finite(pair.p_adjusted),
        "adjustment": adjustment if _finite(pair.p_adjusted) is not None else None,
        "correlation": _finite(result.correlation) if result else None,
        "clusters": result.clusters if result and result.clusters else None,
        "discordant": {"a_right_b_wrong": result.a_only_right, "b_right_a_wrong": result.b_only_right}
        if result and result.test == "mcnemar_exact" else None,
        "ci_a": _interval_json(side_a), "ci_b": _interval_json(side_b),
        "unscored_a": side_a.unscored if side_a else None,
        "unscored_b": side_b.unscored if side_b else None,
        "reducer_a": side_a.reducer if side_a else None,
        "reducer_b": side_b.reducer if side_b else None,
        "run_a": pair.a, "run_b": pair.b,
        "message": pair.message or (result.note if result else "") or None,
        "warnings": list(pair.warnings),
        "comparable": not pair.not_comparable,
        "not_comparable": list(pair.not_comparable),
        "unscored_rates_p": _finite(pair.unscored_p),
        "if_unscored_failed": pair.if_unscored_failed, "if_unscored_passed": pair.if_unscored_passed,
        "unscored_range": list(pair.unscored_range) if pair.unscored_range else None,
    }  # fmt: skip
    if detect is not None:
        out["detect"] = detect
        out["samples_needed"] = samples_needed(result.design_sd, detect) if result else None
    return out


def _interval_json(side: Any) -> dict[str, Any] | None:
    if side is None or side.interval is None:
        return None
    return side.interval.as_json()


def report_json(report: Any, detect: float | None = None, decisions: Any = None) -> dict[str, Any]:
    paths = {run.id: run.path for run in report.runs if run is not None}
    comparisons = [pair_json(pair, paths, report.adjustment, detect) for pair in report.pairs]
    extra: dict[str, Any] = {}
    if decisions is not None:
        from evtui.scoring.decisions import decisions_json

        for pair, out in zip(report.pairs, comparisons):
            components = decisions.pair_variance.get((pair.scorer, pair.a, pair.b))
            out["variance"] = components.as_json() if components is not None else None
        extra = decisions_json(decisions)
    return {
        "runs": [{"id": run.id, "path": run.path, "task": run.task, "model": run.model, "status": run.status,
                  "integrity": report.integrity[run.id].as_json() if run.id in report.integrity else None}
                 for run in report.runs if run is not None],  # fmt: skip
        "baseline": paths.get(report.baseline) if report.baseline else None,
        "adjustment": report.adjustment,
        "comparisons": comparisons,
        "messages": list(report.messages),
        "notes": list(report.notes),
        **extra,
    }


def _run_label(run: Any, run_id: int) -> str:
    if run is None:
        return f"#{run_id} (gone)"
    return plain(f"#{run.id} {run.task or Path(run.path).stem} ({run.model or '?'})")


def print_report(report: Any, detect: float | None = None) -> None:
    from evtui.scoring.stats.power import samples_needed

    runs = {run_id: run for run_id, run in zip(report.run_ids, report.runs)}
    for message in report.messages:
        print(f"note: {plain(message)}")
    for run_id, integrity in report.integrity.items():  # what each arm's averages are over
        unscored = [plain(scorer.line()) for scorer in integrity.scorers if scorer.unscored]
        print(f"{_run_label(runs.get(run_id), run_id)}: {integrity.samples_line()}" + "".join(f"; {line}" for line in unscored))
    for pair in report.pairs:
        result = pair.result
        print()
        print(f"{plain(pair.scorer)} · {pair.metric}")
        for tag, run_id, side in (("A", pair.a, pair.side_a), ("B", pair.b, pair.side_b)):
            interval = side.interval if side else None
            shown = "no scored samples" if interval is None else (
                f"{fixed(interval.value)} [{fixed(interval.low)}, {fixed(interval.high)}] "
                f"({interval.method}, n={interval.n:,}{'<30' if interval.small_n else ''})")  # fmt: skip
            print(f"  {tag}      {_run_label(runs.get(run_id), run_id)}  {shown}")
        if result is None:
            print(f"  B − A  {plain(pair.message)}")
        else:
            adjusted = (f"; {ADJUSTMENT_NAMES[report.adjustment]} {p_value(pair.p_adjusted)}"
                        if not math.isnan(pair.p_adjusted) else "")  # fmt: skip
            clustered = f", clustered: {result.clusters} clusters" if result.clusters else ""
            print(f"  B − A  {fixed(result.difference, sign=True)} [{fixed(result.ci[0], sign=True)}, "
                  f"{fixed(result.ci[1], sign=True)}]  stderr {fixed(result.stderr)}{clustered}  "
                  f"p {p_value(result.p_value)} ({TEST_NAMES[result.test]}{adjusted})  r {fixed(result.correlation, 2)}")  # fmt: skip
            for flag in pair.not_comparable:  # next to the difference: it may not mean what it seems
                print(f"         ⚠ {plain(flag)}")
            if result.test == "mcnemar_exact":
                print(f"         discordant: A right B wrong {result.a_only_right:,}, B right A wrong {result.b_only_right:,}")
            if result.note:
                print(f"         {result.note}")
        unscored = f"unscored A {pair.side_a.unscored:,}, B {pair.side_b.unscored:,}" if pair.side_a and pair.side_b else ""
        print(f"  samples {pair.n_paired:,} in both, {pair.only_a:,} only in A, {pair.only_b:,} only in B; {unscored}")
        if result is not None:
            line = f"  MDE (80% power, α = 0.05): {fixed(result.mde)}"
            if detect is not None:
                needed = samples_needed(result.design_sd, detect)
                line += f"; samples needed to detect {detect:g}: {needed:,}" if needed else f"; cannot say for {detect:g}"
            print(line)
        for warning in pair.warnings:
            if result is None or warning not in pair.not_comparable:
                print(f"  ! {plain(warning)}")
    for note in report.notes:
        print(f"\nnote: {note}")



def print_decisions(decisions: Any, report: Any) -> None:
    """The pair variance split, the decision across tasks and the stopping signals, as text
    (the decisions screen draws the same lines)."""
    from evtui.scoring.decisions import decision_lines

    for line in decision_lines(decisions):
        print(plain(line) if line else "")


def _run_sources(args: argparse.Namespace, db_path: Path) -> int:
    """`--sources A B`: judge drift within one run (issue 32), per scorer both sources have."""
    from evtui.scoring.judges import SourceError, drift_between
    from evtui.store import jobs
    from evtui.store.queries.compare import scorer_names
    from evtui.store.schema import connect

    first, second = args.sources
    db = connect(db_path)
    out = []
    try:
        run_ids = jobs.run_ids_under(db, [Path(p) for p in args.runs])
        if len(run_ids) != 1:
            return _fail(f"--sources compares two sources of one run; {len(run_ids)} runs were given")
        run_id = run_ids[0]
        names = [args.scorer] if args.scorer else scorer_names(db, run_id)
        errors = []
        for name in names:
            try:
                out.append(drift_between(db, run_id, name, first, second))
            except SourceError as error:
                errors.append(f"{name}: {error}")
        run_path = db.execute("SELECT path FROM runs WHERE id = ?", [run_id]).fetchone()[0]
    finally:
        db.conn.close()
    if not out:
        return _fail("; ".join(errors) or "the run has no scorer", 1)
    if args.json:
        print(json.dumps({"run": run_path, "drift": [d.as_json() for d in out], "messages": errors}, indent=2, allow_nan=False))
        return 0
    for message in errors:
        print(f"note: {plain(message)}")
    for drift in out:
        print_drift(drift)
    return 0


def print_drift(drift: Any) -> None:
    first, second = drift.first.label, drift.second.label
    print(f"\n{plain(drift.scorer)} · {plain(second)} against {plain(first)} (n {drift.n:,} samples scored by both)")
    for label, provenance in ((first, drift.provenance[0]), (second, drift.provenance[1])):
        known = ", ".join(f"{key} {plain(value)}" for key, value in provenance.items() if value not in (None, "", {}) and key != "source")
        print(f"  {plain(label):<12} {fixed(drift.mean_first if label == first else drift.mean_second)}  {known}")
    result = drift.result
    if result is None:
        print(f"  {plain(drift.note or 'no paired difference')}")
        return
    print(f"  second − first {fixed(result.difference, sign=True)} [{fixed(result.ci[0], sign=True)}, "
          f"{fixed(result.ci[1], sign=True)}]  p {p_value(result.p_value)} ({TEST_NAMES[result.test]})")
    down, up = ("C → I", "I → C") if drift.binary else ("lower", "higher")
    print(f"  flips: {down} {len(drift.down):,}, {up} {len(drift.up):,}")
    for name, flips in ((down, drift.down), (up, drift.up)):
        for flip in flips[:5]:
            print(f"    {name}: {plain(flip.sample_id)} (epoch {flip.epoch}): {plain(first)} {plain(flip.first_explanation or flip.first)!s:.80} | "
                  f"{plain(second)} {plain(flip.second_explanation or flip.second)!s:.80}")
