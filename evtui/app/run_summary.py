"""What the run screen says about a run above its results: its facts (status, model, samples,
tokens, cost, file…), a logical run's shards and attempts, and its recorded scoring configuration.
Text from the run reaches the screen through safe_line / plain here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.content import Content

from evtui.app import formatting as fmt
from evtui.app.safe_content import plain
from evtui.safe_text import run_file_label, safe_line


def run_summary(detail: Any, display_path: Callable[[str], str] = str, *, completed: int | None = None) -> Content:
    """The facts about a run (a `queries.RunDetail`), one per line, then its scoring configuration.

    `completed`: a live run's count as its live view shows it (flushed to the file, plus completed
    in Inspect's buffer), so the screen says one number, not the file's older one beside it."""
    run = detail.row
    lines: list[Content] = [
        _fact("Status", fmt.status_content(run.status)),
        _fact("Model", run.model or "–"),
        _fact("Samples", f"{fmt.format_samples(run.samples_completed if completed is None else completed, run.samples_total)} completed"),
        _fact(
            "Tokens",
            f"{fmt.format_tokens(run.total_tokens)} (in {fmt.format_tokens(run.input_tokens)}, "
            f"out {fmt.format_tokens(run.output_tokens)})",
        ),
        _fact("Cost", fmt.format_cost(run.cost)),
        _fact("Duration", fmt.format_duration(run.duration)),
        _fact("Created", run.created or "–"),
        _fact("File", f"{run_file_label(display_path(run.path), run.part)}  [{run.format}]" + ("  (file missing: showing what was indexed)" if run.missing else "")),
    ]
    if run.error:
        lines.append(_fact("Error", Content.styled(safe_line(run.error.splitlines()[0], 200), "$score-fail")))
    for label, text in logical_run_facts(detail):
        lines.append(_fact(label, text))
    missing = detail.metadata.get("missing") if isinstance(detail.metadata, dict) else None
    if isinstance(missing, str) and missing:  # trimmed output: what the reader found missing
        lines.append(_fact("Missing", Content.styled(safe_line(missing, 300), "$warning")))
    for label, text in config_summary(detail.config):
        lines.append(_fact(label, text))
    return Content("\n").join(lines)


def logical_run_facts(detail: Any) -> list[tuple[str, str]]:
    """A sharded run's shards (each one's status and samples) and an eval-set task's attempts."""
    lines: list[tuple[str, str]] = []
    metadata = detail.metadata if isinstance(detail.metadata, dict) else {}
    shards = metadata.get("shards")
    if isinstance(shards, list) and shards and all(isinstance(s, dict) for s in shards):
        lines.append(("Shards", safe_line(", ".join(
            f"{s.get('shard')}: {s.get('status')} {s.get('completed') if s.get('completed') is not None else '–'}"
            f"/{s.get('samples') if s.get('samples') is not None else '–'}" for s in shards), 300)))
    row = detail.row
    if getattr(row, "attempts", 1) > 1:
        lines.append(("Attempts", f"{row.attempts} logs of this eval-set task; this is attempt {row.attempt} "
                      "(the latest successful first)"))
    eval_set = metadata.get("eval_set")
    if isinstance(eval_set, dict) and eval_set.get("manifest"):
        lines.append(("Eval set", safe_line(f"{eval_set.get('id')} ({eval_set.get('manifest')})", 300)))
    return lines


def config_summary(config: dict[str, Any]) -> list[tuple[str, str]]:
    """Readable lines for the recorded scoring configuration (scorers, reducers, params)."""
    lines: list[tuple[str, str]] = []
    scorers = config.get("scorers") or []
    if scorers:
        names = []
        for scorer in scorers:
            if isinstance(scorer, dict):
                name = scorer.get("name", "?")
                metrics = scorer.get("metrics")
                names.append(f"{name} ({_metric_names(metrics)})" if metrics else str(name))
            else:
                names.append(str(scorer))
        lines.append(("Scorers", ", ".join(names)))
    epochs = config.get("epochs")
    if epochs:
        lines.append(("Epochs", str(epochs)))
    reducers = config.get("reducers") or config.get("epochs_reducer")
    if reducers:
        lines.append(("Reducers", ", ".join(_name(reducer) for reducer in _as_list(reducers))))
    steps = config.get("plan_steps")
    if isinstance(steps, list) and steps:
        lines.append(("Solver", " → ".join(_step(step) for step in steps)))
    for key in ("solver", "solvers"):
        if config.get(key):
            lines.append(("Solver", _short(config[key])))
    task_args = config.get("task_args")
    if task_args:
        lines.append(("Task args", _short(task_args)))
    return lines


def _fact(label: str, value: str | Content) -> Content:
    return Content.assemble(Content.styled(f"{label:<10}", "$foreground-muted"), plain(value) if isinstance(value, str) else value)


def _metric_names(metrics: Any) -> str:
    if isinstance(metrics, dict):
        return ", ".join(f"{key}: {_metric_names(value)}" for key, value in metrics.items())
    return ", ".join(_name(metric) for metric in _as_list(metrics))


def _name(item: Any) -> str:
    name = str(item.get("name", item)) if isinstance(item, dict) else str(item)
    return name.removeprefix("inspect_ai/")


def _step(step: Any) -> str:
    """`multiple_choice(cot=False)`: a solver step with the parameters that are set."""
    if not isinstance(step, dict):
        return _short(step, 60)
    params = step.get("params") or {}
    shown = ", ".join(f"{key}={value!r}" for key, value in params.items() if value is not None)
    return _short(f"{step.get('solver', '?')}({shown})", 120)


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
