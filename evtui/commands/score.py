"""`evtui score PATH...`: index, re-score with scorers/reducers/metrics, store and print metrics."""

from __future__ import annotations

import argparse
import json
import math
import sys
import threading
from pathlib import Path
from typing import Any

from evtui.commands.run_paths import (
    usage_error,
    add_path_arguments,
    index_path_for,
    index_runs,
    is_remote,
    run_paths,
)
from evtui.safe_text import safe_block, safe_line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_path_arguments(parser)
    parser.add_argument("--scorer", action="append", default=[], metavar="SPEC",
                        help="scorer spec, e.g. 'match(numeric=True)'; repeat for more. Default: the scorers each run recorded")
    parser.add_argument("--reducer", action="append", default=None, metavar="SPEC", help="epoch reducer, e.g. pass_at_2; repeat for more")
    parser.add_argument("--metric", action="append", default=None, metavar="SPEC",
                        help="metric replacing every scorer's own, e.g. 'stderr(cluster=\"category\")'; repeat for more")
    parser.add_argument("--plugin", action="append", default=[], metavar="FILE", help="Python file defining scorers/metrics/reducers")
    parser.add_argument("--config", metavar="NAME", help="saved configuration RUN_DIR/.evtui/configs/NAME.toml (flags add to it)")
    parser.add_argument("--trust-config", action="store_true",
                        help="use a saved configuration's own grader URL, key variable and plugins without asking")
    parser.add_argument("--save-config", metavar="NAME", help="save the resulting configuration under NAME")
    parser.add_argument("--db", metavar="FILE", help="index file (default: RUN_DIR/.evtui/index.db)")
    parser.add_argument("--json", action="store_true", help="print results as JSON")
    parser.add_argument("--job", type=int, metavar="ID",
                        help="resume scoring job ID (skips samples it already scored); alone, with its saved configuration")
    parser.add_argument("--grader-url", action="append", default=None, metavar="URL[#N]",
                        help="OpenAI-compatible base URL for model-graded scorers; repeat for several servers of the "
                        "grader, #N = that server's concurrency (also EVTUI_GRADER_URLS, comma-separated)")
    parser.add_argument("--grader-model", metavar="NAME", help="grader model for model-graded scorers")
    parser.add_argument(
        "--model-role", action="append", default=[], metavar="ROLE=NAME", type=_model_role,
        help="bind a grader model to a role (Inspect's model_roles); scorers with model_role=ROLE use it; "
        "NAME may be a comma-separated panel (repeatable)",
    )
    parser.add_argument("--concurrency", type=int, metavar="N", help="scorer calls (and grader requests) in flight")
    parser.add_argument("--grader-deadline", type=_seconds, metavar="SECONDS",
                        help="the most one grader request may take in all, however steadily its reply trickles in; "
                        "past it the attempt is a timeout (default 300, also EVTUI_GRADER_DEADLINE)")
    parser.add_argument("--repeat", type=int, metavar="K",
                        help="ask each grading prompt K times (each draw cached on its own): the score is the majority, "
                        "the votes show how stable the judge is (evtui agreement --draws)")
    parser.add_argument("--swap-order", action="store_true",
                        help="with --repeat: every other draw shows a choice-style template's {choices} in reverse, "
                        "so the judge's position bias shows (evtui agreement --draws)")


def _fail(message: str, code: int = 2) -> int:
    return usage_error("evtui score", message, code)


def run(args: argparse.Namespace) -> int:
    from evtui.scoring.specs.config_files import ConfigFileError, load_config, save_config, trust_questions
    from evtui.scoring.jobs.config import ScoringJobConfig
    from evtui.scoring.specs.plugins import PluginError
    from evtui.scoring.specs.parsing import SpecError

    paths = run_paths(args)
    if isinstance(paths, str):
        return _fail(paths)
    db_path = index_path_for(paths, args.db)
    # Saved configurations live in the run directory's .evtui/; an object store's beside its index.
    run_dir = db_path.parent if is_remote(paths[0]) else paths[0].resolve()
    try:
        config = load_config(run_dir, args.config) if args.config else ScoringJobConfig()
        questions = trust_questions(config, args.grader_url) if args.config else []
        if questions and not args.trust_config:
            listed = "\n".join(f"  - {q}" for q in questions)
            return _fail(f"the saved configuration {args.config!r} asks for what you did not choose:\n{listed}\n"
                         "Check it, then pass --trust-config to use it (or score without --config).")
        config = _with_flags(config, args)
        config.validate_specs()
        if args.save_config:
            saved = save_config(run_dir, config, args.save_config)
            print(f"saved configuration {args.save_config!r} to {saved}", file=sys.stderr)
    except (SpecError, PluginError, ConfigFileError, ValueError) as error:
        return _fail(str(error))

    run_ids = index_runs("evtui score", db_path, paths, samples=True)  # scorers need the outputs
    if not run_ids:
        return _fail(f"no readable runs under {', '.join(map(str, paths))}", 1)

    from evtui.grading.settings import GraderConfigError
    from evtui.scoring.jobs.runner import run_job

    cancel = threading.Event()
    progress = _ProgressLine(show=sys.stderr.isatty() and not args.json)
    resume_only = args.job is not None and not (args.scorer or args.reducer or args.metric or args.config)
    if resume_only and not args.trust_config:
        # The job's settings come from the index, which may have come with someone else's run
        # directory (RUN_DIR/.evtui/index.db): the same trust rule as a saved configuration.
        questions = _stored_job_questions(db_path, args.job, args.grader_url)
        if questions:
            listed = "\n".join(f"  - {q}" for q in questions)
            return _fail(f"job {args.job} in {db_path} asks for what you did not choose here:\n{listed}\n"
                         "The index may have come with someone else's runs. Check it, then pass --trust-config "
                         "to resume it (or score again without --job).")
    try:
        if resume_only:  # `evtui score PATH --job 7`: the job's own configuration and runs
            from evtui.scoring.jobs.runner import resume_job

            result = resume_job(db_path, args.job, on_progress=progress, cancel=cancel)
        else:
            result = run_job(db_path, config, run_ids, on_progress=progress, cancel=cancel, job_id=args.job)
    except KeyboardInterrupt:
        job = f"--job {progress.job_id}" if progress.job_id is not None else "--job"
        print(f"\nevtui score: interrupted; scores made so far are kept (resume with {job})", file=sys.stderr)
        return 130
    except (SpecError, LookupError, GraderConfigError) as error:  # refused before a job exists
        return _fail(str(error))
    finally:
        if progress:
            progress.clear()
    _add_computed(db_path, result)
    try:
        if args.json:
            print(json.dumps(_json_safe(result.as_json()), indent=2))
        else:
            print(safe_block(format_results(result)))  # paths, scorer names, notes, errors: run text
    except BrokenPipeError:  # `evtui score … | head`
        from evtui.commands.export import _silence_stdout

        _silence_stdout()
    if result.status == "failed":
        return _fail(f"job {result.job_id} failed: {result.message or 'unknown error'}", 1)
    if result.total and not result.scored:
        return _fail(f"job {result.job_id} scored nothing: {result.message or 'every sample is unscored'}", 1)
    return 0 if result.status == "done" else 1


def _add_computed(db_path: Path, result) -> None:
    """Each run that records scores but no metrics: the metrics computed from its own scores; and
    the scales of the job's scores and the run's own, which decide each result's interval."""
    from evtui.scoring.results.computed import computed_for_runs
    from evtui.store.queries.integrity import score_scales
    from evtui.store.schema import connect

    db = connect(db_path)
    try:
        run_ids = [run.run_id for run in result.runs]
        computed = computed_for_runs(db, run_ids)
        scales = score_scales(db, run_ids, result.job_id) if result.job_id else {}
        recorded = score_scales(db, run_ids)
    finally:
        db.conn.close()
    for run in result.runs:
        run.computed = computed.get(run.run_id, [])
        run.scales = {scorer: scale for (run_id, scorer), scale in scales.items() if run_id == run.run_id}
        run.recorded_scales = {scorer: scale for (run_id, scorer), scale in recorded.items() if run_id == run.run_id}


def _stored_job_questions(db_path, job_id: int, grader_url: Any) -> list[str]:
    """The trust questions of a stored job (none when there is no such job: the resume says so)."""
    from evtui.scoring.specs.config_files import stored_job_questions
    from evtui.store import jobs
    from evtui.store.schema import connect

    db = connect(db_path)
    try:
        job = jobs.get_job(db, job_id)
    finally:
        db.conn.close()
    return [] if job is None else stored_job_questions(job["config"], grader_url, index_path=db_path)


def _with_flags(config, args: argparse.Namespace):
    urls = args.grader_url or []
    fleet = len(urls) > 1 or any("#" in url for url in urls)
    base_url = urls[0].partition("#")[0] if urls else None
    grader = config.grader.model_copy(
        update={k: v for k, v in {
            "base_url": base_url, "urls": list(urls) if fleet else ([] if urls else None), "model": args.grader_model,
            "concurrency": args.concurrency, "repeat": getattr(args, "repeat", None),
            "swap_order": True if getattr(args, "swap_order", False) else None,
            "deadline": getattr(args, "grader_deadline", None),
        }.items() if v is not None}  # fmt: skip
    )
    if args.model_role:
        grader = grader.model_copy(update={"model_roles": {**grader.model_roles, **dict(args.model_role)}})
    update: dict[str, Any] = {"grader": grader, "scorers": [*config.scorers, *args.scorer], "plugins": [*config.plugins, *args.plugin]}
    if args.reducer is not None:
        update["reducers"] = [*(config.reducers or []), *args.reducer]
    if args.metric is not None:
        update["metrics"] = [*(config.metrics or []), *args.metric]
    if args.concurrency is not None:
        update["concurrency"] = args.concurrency
    return config.model_validate({**config.model_dump(), **update, "grader": grader.model_dump()})


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def _model_role(text: str) -> tuple[str, str]:
    role, equals, model = text.partition("=")
    if not equals or not role.strip() or not model.strip():
        raise argparse.ArgumentTypeError(f"expected ROLE=MODEL (e.g. grader=qwen2.5-7b), got {text!r}")
    return role.strip(), model.strip()


def _json_safe(value: Any) -> Any:
    """NaN/inf become null so the output is strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value


def _number(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def _interval_text(interval: dict | None) -> str:
    """` [0.3200, 0.8070] Wilson n<30`: a result's 95% interval and its method ('' when none)."""
    if not interval or interval["low"] is None:
        return ""
    small = " n<30" if interval.get("small_n") else ""
    return f" [{interval['low']:.4f}, {interval['high']:.4f}] {interval['method']}{small}"


def format_results(result) -> str:
    """A readable table per run: scorer, reducer, scored/unscored and each metric."""
    from evtui.scoring.jobs.config import group_results

    lines: list[str] = []
    for run in result.runs:
        lines.append(f"{run.path}  (run {run.run_id})")
        groups = group_results(run.results, run.scales)
        if not groups:
            lines.append("  no results")
        width = max([len(g["scorer"]) for g in groups] + [6])
        rwidth = max([len(g["reducer"] or "-") for g in groups] + [7])
        if groups:
            lines.append(f"  {'scorer':<{width}}  {'reducer':<{rwidth}}  {'scored':>6}  metrics")
        for group in groups:
            metrics = "  ".join(f"{name} {_number(value)}{_interval_text(group['intervals'].get(name))}"
                                for name, value in group["metrics"].items())  # fmt: skip
            scored = "" if group["scored"] is None else str(group["scored"])
            if group["unscored"]:
                scored += f" (+{group['unscored']} unscored)"
            lines.append(f"  {group['scorer']:<{width}}  {group['reducer'] or '-':<{rwidth}}  {scored:>6}  {metrics}")
        for group in group_results(run.computed, run.recorded_scales):
            metrics = "  ".join(f"{name} {_number(value)}" for name, value in group["metrics"].items())
            reducer = f"[{group['reducer']}]" if group["reducer"] else ""
            lines.append(f"  computed from the run's own scores (it records no metrics): {group['scorer']}{reducer}  {metrics}")
        for note in run.notes:  # warnings say so; information is a note (a harness's own score kept as recorded)
            lines.append(f"  {'warning' if note.is_warning else 'note'}: {note.text}")
        lines.append("")
    from evtui.scoring.jobs.unscored import unscored_line

    unscored = f", {unscored_line(result.unscored)}" if result.unscored else ""
    lines.append(f"job {result.job_id}: {result.status}, {result.scored}/{result.total} scored{unscored}, {result.errors} scorer errors")
    for name, message in result.first_errors.items():
        lines.append(f"  {name}: {message}")
    if result.endpoints:
        from evtui.grading.fleet import endpoint_line

        lines.extend(f"  grader {endpoint_line(endpoint)}" for endpoint in result.endpoints)
    return "\n".join(lines)


class _ProgressLine:
    """One self-overwriting progress line on a terminal's stderr (when `show`), and one per grader
    server of a fleet; keeps the job id."""

    def __init__(self, show: bool) -> None:
        self.show = show
        self.job_id: int | None = None  # for the interrupt message: `resume with --job N`
        self.drawn = 0  # grader server lines below the progress line

    def __call__(self, progress) -> None:
        self.job_id = progress.job_id
        if not self.show:
            return
        where = f" {safe_line(Path(progress.run_path).name, 60)}" if progress.run_path else ""
        counts = f"scoring{where}: {progress.done}/{progress.total} ({progress.rate:.0f}/s, {progress.errors} errors)\x1b[K"
        if progress.endpoints:  # one line per grader server under the counts, redrawn in place
            from evtui.grading.fleet import endpoint_line

            lines = [f"  {endpoint_line(e)}\x1b[K" for e in progress.endpoints]
            up = f"\x1b[{self.drawn}F" if self.drawn else "\r"
            sys.stderr.write(f"{up}{counts}\n" + "\n".join(lines))
            self.drawn = len(lines)
        else:
            sys.stderr.write(f"\r{counts}")
        sys.stderr.flush()

    def clear(self) -> None:
        if not self.show:
            return
        sys.stderr.write(f"\x1b[{self.drawn}F\x1b[J" if self.drawn else "\r\x1b[K")
        self.drawn = 0
        sys.stderr.flush()
