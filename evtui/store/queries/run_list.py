"""The runs list as a user narrows and orders it: a name for each run, a filter and a sort.

Pure functions over `RunRow`s (the list is small and bounded: one row per run file), so the runs
screen and a command give the same rows in the same order.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import PurePath
from typing import Any

from evtui.store.ingest.rows import id_sort_key
from evtui.store.queries.runs import RunRow

__all__ = ["GROUP_BYS", "NO_EVAL_SET", "RUN_SORTS", "RunFilter", "RunGroup", "filter_runs", "group_runs", "parse_run_filter",
           "run_args_text", "run_name", "run_tags_text", "sort_runs", "timestamp"]

# File names that say nothing about the run (every Terminal-Bench, verifiers, Harbor or older
# lm-eval run has one): the run is named by its folders instead.
_GENERIC_NAMES = frozenset({
    "results.json", "results.jsonl", "result.json", "metadata.json", "run_metadata.json", "traces.jsonl",
    "summary.json", "output.json", "outputs.jsonl", "log.json", "eval.json", "config.json",
    "rollouts.jsonl",  # EvSys: <experiment>/<run>/logs/<split>/rollouts.jsonl
})
# Folders every run of a format has on its path (EvSys's `logs/`): passed over when naming.
_GENERIC_FOLDERS = frozenset({"logs", "log", "outputs", "output", "evals"})


def run_name(path: str, part: str = "") -> str:
    """What tells a run apart in a list: its file name, or for a file every run of its format
    names alike (`results.json`) the job and run folders holding it (`runs/2026-11-25__09-00-00`,
    an EvSys run's `baseline__s0/test`: folders every run has, such as `logs`, passed over),
    with the part when the file holds several runs. Raw run text: sanitise before drawing."""
    pure = PurePath(path)
    name = pure.name
    if name.lower() in _GENERIC_NAMES:
        folders = [p for p in pure.parent.parts if p not in ("/", "") and p.lower() not in _GENERIC_FOLDERS][-2:]
        name = "/".join(folders) or name
    return f"{name} · {part}" if part else name


def run_args_text(run: RunRow) -> str:
    """`n=3, shuffle=true`: the task arguments as recorded, one line; '' when there are none."""
    args = _decoded(run.task_args)
    if not isinstance(args, dict):
        return ""
    return ", ".join(f"{key}={_compact(value)}" for key, value in args.items())


def run_tags_text(run: RunRow) -> str:
    """`nightly, gpu`: the run's tags; '' when it has none."""
    tags = _decoded(run.tags)
    return ", ".join(_compact(tag) for tag in tags) if isinstance(tags, list) else ""


def _decoded(text: str | None) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _compact(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), default=str)


def timestamp(text: str | None) -> datetime | None:
    """A run's ISO-8601 time as an aware datetime (UTC when the file gave no zone), or None."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


# ----------------------------------------------------------------------------------------- filter


@dataclass(frozen=True)
class RunFilter:
    """`task:X model:Y status:Z words…`: each field and word a case-insensitive substring; every
    one must match (a word anywhere in the run's task, model, status, name, format, args, tags)."""

    task: tuple[str, ...] = ()
    model: tuple[str, ...] = ()
    status: tuple[str, ...] = ()
    words: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.task or self.model or self.status or self.words)

    def matches(self, run: RunRow) -> bool:
        task, model, status = (run.task or "").lower(), (run.model or "").lower(), run.status.lower()
        if not all(part in task for part in self.task) or not all(part in model for part in self.model):
            return False
        if not all(part in status for part in self.status):
            return False
        if self.words:
            haystack = " ".join(
                (task, model, status, run_name(run.path, run.part).lower(), run.format.lower(),
                 run_args_text(run).lower(), run_tags_text(run).lower())
            )  # fmt: skip
            return all(word in haystack for word in self.words)
        return True


_FIELDS = ("task", "model", "status")


def parse_run_filter(text: str) -> RunFilter:
    """The filter a user typed: `task:arith model:"gpt 4" status:error timeout` (quotes group)."""
    try:
        tokens = shlex.split(text)
    except ValueError:  # an unclosed quote: take the words as typed
        tokens = text.split()
    fields: dict[str, list[str]] = {field: [] for field in _FIELDS}
    words: list[str] = []
    for token in tokens:
        field, colon, value = token.partition(":")
        if colon and field.lower() in fields:
            if value:
                fields[field.lower()].append(value.lower())
        elif token:
            words.append(token.lower())
    return RunFilter(tuple(fields["task"]), tuple(fields["model"]), tuple(fields["status"]), tuple(words))


def filter_runs(runs: Iterable[RunRow], text: str) -> list[RunRow]:
    """The runs the filter text keeps, in the order given."""
    run_filter = parse_run_filter(text)
    return [run for run in runs if run_filter.matches(run)] if run_filter else list(runs)


# ------------------------------------------------------------------------------------------- sort


def _headline_value(run: RunRow) -> float | None:
    return run.headline[0].value if run.headline else None


def _text(value: str | None) -> str | None:
    return value.lower() if value else None


# Each sortable column's key; None (unknown) sorts last in either direction.
RUN_SORTS: dict[str, Callable[[RunRow], Any]] = {
    "task": lambda run: _text(run.task),
    "model": lambda run: _text(run.model),
    "run": lambda run: id_sort_key(run_name(run.path, run.part).lower()),
    "status": lambda run: run.status,
    "samples": lambda run: run.samples_completed,
    "headline": _headline_value,
    "created": lambda run: timestamp(run.created),
    "completed": lambda run: timestamp(run.completed_at),
    "duration": lambda run: run.duration,
    "epochs": lambda run: run.epochs,
    "args": lambda run: run_args_text(run).lower() or None,
    "tags": lambda run: run_tags_text(run).lower() or None,
    "tokens": lambda run: run.total_tokens,
    "cost": lambda run: run.cost,
}


def sort_runs(runs: Iterable[RunRow], column: str, descending: bool = False) -> list[RunRow]:
    """The runs ordered by `column` (a RUN_SORTS key), ties in the order given; unknown values last."""
    key = RUN_SORTS[column]
    keyed = [(key(run), run) for run in runs]
    known = [(value, run) for value, run in keyed if value is not None]
    unknown = [run for value, run in keyed if value is None]
    known.sort(key=lambda pair: pair[0], reverse=descending)  # stable either way
    return [run for _, run in known] + unknown


# ------------------------------------------------------------------------------------------ group

GROUP_BYS = ("task", "eval-set")
NO_EVAL_SET = "(no eval set)"
NO_TASK = "(no task)"


@dataclass(frozen=True)
class RunGroup:
    """Runs of one task, or of one eval set (RunRow.eval_set_name: an Inspect eval set, a Harbor
    job, an EvSys experiment, an lm-eval invocation), in the order the list shows them.
    `name` is raw run text: sanitise before drawing."""

    key: str  # tells groups apart: the task, or the eval set's identity ('' for runs in none)
    name: str
    runs: tuple[RunRow, ...]

    @property
    def newest(self) -> str | None:
        """The latest `created` of its runs (ISO text as recorded), None when none has one."""
        known = [(moment, run.created) for run in self.runs if (moment := timestamp(run.created)) is not None]
        return max(known, key=lambda pair: pair[0])[1] if known else None


def group_runs(runs: Iterable[RunRow], by: str) -> list[RunGroup]:
    """The runs (filtered and sorted already) grouped by `by` (a GROUP_BYS word). Each group keeps
    its runs in the order given, and the groups come in the order of their first run, so a sort
    orders the groups (by their best-placed run) and the runs within each. Runs without a task,
    or made outside any eval set, form one group of their own, last."""
    if by not in GROUP_BYS:
        raise ValueError(f"group by {by!r}: one of {', '.join(GROUP_BYS)}")
    members: dict[str, list[RunRow]] = {}
    names: dict[str, str] = {}
    for run in runs:
        if by == "task":
            key, name = (run.task, run.task) if run.task else ("", NO_TASK)
        else:
            key, name = (run.eval_set_key, run.eval_set_name or run.eval_set_key) if run.eval_set_key else ("", NO_EVAL_SET)
        members.setdefault(key, []).append(run)
        names.setdefault(key, name)
    shown = [name for name in names.values()]
    groups = []
    for key, grouped in sorted(members.items(), key=lambda item: not item[0]):  # the runs in none last
        name = names[key]
        if key and shown.count(name) > 1:  # two sets of one name: say which is which
            name = f"{name} ({_where(key)})"
        groups.append(RunGroup(key, name, tuple(grouped)))
    return groups


def _where(key: str) -> str:
    """A short form of an eval set's identity: the last folders of its path, or its id."""
    identity = key.split(":", 1)[-1]
    return "/".join(PurePath(identity).parts[-3:]) if "/" in identity or "\\" in identity else identity
