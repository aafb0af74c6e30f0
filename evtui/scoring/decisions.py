"""What a comparison adds for a decision (issue 34), from the same runs `compare_runs` read:

* per pair, the paired difference's variance split into items and replicates (epochs);
* across tasks, for each pair of models that ran two or more of the same tasks, the per-task
  differences adjusted across tasks and one overall decision (scoring/compare_tasks.py);
* a live stopping signal for each pair where a run is still being written (against the other
  run) and, when asked, for each run against a fixed target (scoring/stopping.py).

`evtui compare --json` prints `decisions_json`; the compare screen draws the same objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evtui.number_text import p_value, signed

__all__ = ["Decisions", "StoppingSignal", "decisions_for", "decisions_json", "decision_lines", "across_task_lines"]


@dataclass(frozen=True)
class StoppingSignal:
    scorer: str
    run: int  # the run being monitored
    against: str  # "run #3" or "target 0.8"
    state: Any  # stats.sequence.SequenceState

    def as_json(self) -> dict[str, Any]:
        return {"scorer": self.scorer, "run": self.run, "against": self.against, **self.state.as_json()}


@dataclass(frozen=True)
class Decisions:
    pair_variance: dict[tuple[str, int, int], Any]  # (scorer, a, b) -> VarianceComponents
    across_tasks: tuple[Any, ...]  # compare_tasks.ModelPair
    stopping: tuple[StoppingSignal, ...]
    # run id -> its model, so each pair's split says which model is B and which A
    run_models: dict[int, str] = field(default_factory=dict)


def decisions_for(db_path: Path, report: Any, target: float | None = None, scorer: str | None = None) -> Decisions:
    from evtui.scoring.compare_tasks import compare_models_across_tasks
    from evtui.scoring.results.replicates import paired_variance
    from evtui.scoring.stopping import stopping_against_baseline, stopping_against_target
    from evtui.store.schema import connect

    runs = {run.id: run for run in report.runs if run is not None}
    variance: dict[tuple[str, int, int], Any] = {}
    db = connect(db_path)
    try:
        for pair in report.pairs:
            if pair.result is not None:
                components = paired_variance(db, pair.a, pair.b, pair.scorer)
                if components is not None:
                    variance[(pair.scorer, pair.a, pair.b)] = components
    finally:
        db.conn.close()
    stopping: list[StoppingSignal] = []
    for pair in report.pairs:
        live = [run_id for run_id in (pair.b, pair.a) if run_id in runs and runs[run_id].status == "started"]
        if pair.result is None or not live:
            continue
        monitored = live[0]
        other = pair.a if monitored == pair.b else pair.b
        state = stopping_against_baseline(db_path, monitored, other, pair.scorer)
        if state is not None:
            stopping.append(StoppingSignal(pair.scorer, monitored, f"run #{other}", state))
    if target is not None:
        from evtui.store.queries.compare import scorer_names

        paired = {pair.scorer for pair in report.pairs}
        for run_id in runs:
            if scorer:
                names = [scorer]
            elif paired:
                names = sorted(paired)
            else:  # one run alone: every scorer it has
                db = connect(db_path)
                try:
                    names = scorer_names(db, run_id)
                finally:
                    db.conn.close()
            for name in names:
                state = stopping_against_target(db_path, run_id, name, target)
                if state is not None:
                    stopping.append(StoppingSignal(name, run_id, f"target {target:g}", state))
    across = tuple(compare_models_across_tasks(db_path, list(runs.values()), scorer, known=report.pairs)) if len(runs) >= 4 else ()
    models = {run_id: run.model or "?" for run_id, run in runs.items()}
    models = {run_id: model if len(model) <= 40 else model[:39] + "…" for run_id, model in models.items()}
    return Decisions(variance, across, tuple(stopping), models)


def decisions_json(decisions: Decisions) -> dict[str, Any]:
    return {
        "across_tasks": [pair.as_json() for pair in decisions.across_tasks],
        "stopping": [signal.as_json() for signal in decisions.stopping],
    }


def variance_lines(decisions: Decisions) -> list[str]:
    lines = []
    for (scorer, a, b), c in decisions.pair_variance.items():
        names = decisions.run_models
        runs = (f"#{b} {names[b]} − #{a} {names[a]}" if a in names and b in names else f"#{b} − #{a}")
        lines.append(f"{scorer} · B − A ({runs}) over {c.items} items × {c.replicates:g} epochs: "
                     f"item variance {c.var_item:.4f}, epoch variance {c.var_within:.4f}")
        for interval in (c.benchmark, c.generalized):
            if interval is not None:
                lines.append(f"  {interval.label}: [{signed(interval.low)}, {signed(interval.high)}] ({interval.method}, df {interval.df})")
    return lines


def across_task_lines(pair: Any) -> list[str]:
    result = pair.result
    lines = [f"across tasks · {pair.scorer} · {pair.model_b} (B) vs {pair.model_a} (A)"]
    for task, p_holm, p_bh in zip(result.tasks, result.p_holm, result.p_bh):
        lines.append(f"  {task.task:<20} {signed(task.difference)} ± {task.stderr:.3f}  p {p_value(task.p_value)}  "
                     f"Holm {p_value(p_holm)}  BH {p_value(p_bh)}")
    for pooled in (result.equal, result.inverse_variance):
        if pooled is not None:
            lines.append(f"  overall, {pooled.weights}: {signed(pooled.difference)} "
                         f"[{signed(pooled.low)}, {signed(pooled.high)}] p {p_value(pooled.p_value)}")
    if result.i_squared == result.i_squared:
        lines.append(f"  heterogeneity: Cochran's Q {result.q:.2f}, I² {result.i_squared:.0%}"
                     + (" (better on some tasks, worse on others)" if result.i_squared >= 0.5 else ""))
    lines.append(f"  decision: {result.decision}")
    lines += [f"  note: {note}" for note in pair.notes]
    return lines


def stopping_line(signal: StoppingSignal) -> str:
    s = signal.state
    mean = signed(s.mean) if signal.against.startswith("run") else f"{s.mean:.3f}"
    return (f"stopping · {signal.scorer} · run #{signal.run} against {signal.against}: {s.verdict} after "
            f"{s.n:,} of {s.planned:,} ({mean} [{s.low:.3f}, {s.high:.3f}], anytime-valid at α = {s.alpha:g})")


def decision_lines(decisions: Decisions) -> list[str]:
    """Everything of `decisions` as plain lines, blocks separated by an empty line."""
    blocks = [variance_lines(decisions)] + [across_task_lines(pair) for pair in decisions.across_tasks]
    blocks.append([stopping_line(signal) for signal in decisions.stopping])
    out: list[str] = []
    for block in blocks:
        if block:
            out += [""] + block
    return out


def across_tasks_decisions(db_path: Path, run_ids: list[int] | None = None) -> Decisions:
    """Only the decisions across tasks, for many runs (the tasks × models matrix): no pairwise
    comparison of every run with every other."""
    from evtui.scoring.compare_tasks import compare_models_across_tasks
    from evtui.store import queries
    from evtui.store.schema import connect

    db = connect(db_path)
    try:
        runs = queries.list_runs(db)
    finally:
        db.conn.close()
    if run_ids is not None:
        wanted = set(run_ids)
        runs = [run for run in runs if run.id in wanted]
    return Decisions({}, tuple(compare_models_across_tasks(db_path, runs)), ())
