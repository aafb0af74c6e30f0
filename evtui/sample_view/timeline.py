"""The sample's timeline, built without Textual: every span and event of the events tree and the
phases the sample's record times (a Harbor trial's setup, agent and verifier; a verifiers
rollout's phases and its model and environment spans) in time order, each with its start offset
and duration. The sample view's `l` draws it; `evtui samples RUN --sample ID --json` prints it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from evtui.sample_view.transcript import EventNode, as_number, parse_instant, seconds_between

__all__ = ["TimelineRow", "Timeline", "build_timeline", "stamp_atif_steps"]


@dataclass(frozen=True)
class TimelineRow:
    """One span or event on the timeline: `start` is seconds after the sample's first timed step
    and `seconds` how long it took (None: the run did not record it); `path` finds it in the
    events tree (child indexes from the roots; None for a row the tree has not, a Harbor phase)."""

    kind: str
    label: str
    depth: int
    start: float | None
    seconds: float | None
    path: tuple[int, ...] | None

    def as_json(self) -> dict[str, Any]:
        return {"start": self.start, "duration": self.seconds, "kind": self.kind, "label": self.label,
                "depth": self.depth, "path": list(self.path) if self.path is not None else None}  # fmt: skip


@dataclass(frozen=True)
class Timeline:
    """The transcript's spans and events in time order, and the time they cover (`total`, from
    the first start to the last end; None when no step has a time)."""

    rows: list[TimelineRow]
    total: float | None

    def as_json(self) -> dict[str, Any]:
        return {"total_seconds": self.total, "rows": [row.as_json() for row in self.rows]}


# Harbor's trial phases, as its result.json names them (readers/harbor/trials.py _PHASES).
_HARBOR_PHASES = {"environment_setup": "environment setup", "agent_setup": "agent setup",
                  "agent_execution": "agent execution", "verifier": "verifier"}  # fmt: skip
# A verifiers rollout's `timing` (results.jsonl): phases, then the model's and the environment's spans.
_VERIFIERS_PHASES = ("setup", "generation", "scoring")
_VERIFIERS_SPANS = {"model": ("model", "model call"), "env": ("tool", "environment step")}

_Found = tuple[str, str, int, "datetime | None", "float | None", "tuple[int, ...] | None"]


def build_timeline(roots: list[EventNode], record: dict[str, Any] | None = None) -> Timeline:
    """Every node of the events tree, and the phases the sample's record times (a Harbor trial's
    setup, agent and verifier; a verifiers rollout's setup, generation, scoring and its model and
    environment spans), ordered by when they started. A step without a time stays after the step
    before it in the tree and is listed with no time: Harbor's ATIF steps and verifiers' turns
    carry none on the tree (what they time is in the phases)."""
    found: list[_Found] = _recorded_phases(record)
    todo: list[tuple[tuple[int, ...], EventNode]] = [((i,), node) for i, node in enumerate(roots)][::-1]
    while todo:  # tree order (depth first), as the tree shows them
        path, node = todo.pop()
        found.append((node.kind, node.title, len(path) - 1, parse_instant(node.started), node.seconds, path))
        todo.extend(((*path, i), child) for i, child in reversed(list(enumerate(node.children))))
    starts = [begun for _, _, _, begun, _, _ in found if begun is not None]
    if not starts:
        rows = [TimelineRow(kind, label, depth, None, seconds, path) for kind, label, depth, _, seconds, path in found]
        return Timeline(rows, None)
    origin = min(starts)
    keyed = []
    last, in_tree = math.inf, False  # an untimed step before any timed one of its part: at the end
    for order, (kind, label, depth, begun, seconds, path) in enumerate(found):
        if path is not None and not in_tree:  # the tree's part begins: its own last time
            last, in_tree = math.inf, True
        start = (begun - origin).total_seconds() if begun is not None else None
        last = start if start is not None else last
        keyed.append(((last, order), TimelineRow(kind, label, depth, start, seconds, path)))
    keyed.sort(key=lambda item: item[0])
    rows = [row for _, row in keyed]
    total = max(row.start + (row.seconds or 0.0) for row in rows if row.start is not None)
    return Timeline(rows, total)


def stamp_atif_steps(tree: list[EventNode], record: dict[str, Any] | None) -> None:
    """A Harbor trial's turns get their ATIF steps' timestamps (a tool call its turn's), when the
    trajectory's steps and the transcript's turns pair one to one (a subagent's turns, which the
    reader splices in, make them differ: then they stay without a time)."""
    trajectory = record.get("trajectory") if isinstance(record, dict) else None
    steps = trajectory.get("steps") if isinstance(trajectory, dict) else None
    if not isinstance(steps, list) or not tree or tree[0].kind != "span:transcript":
        return
    turns = [node for node in tree[0].children if node.kind != "tool"]
    if len(turns) != len(steps) or trajectory.get("subagent_trajectories"):
        return
    stamps = iter(step.get("timestamp") if isinstance(step, dict) and isinstance(step.get("timestamp"), str) else None
                  for step in steps)  # fmt: skip
    current: str | None = None
    for node in tree[0].children:
        if node.kind != "tool":
            current = next(stamps)
        node.started = current
    tree[0].started = tree[0].children[0].started if tree[0].children else None


def _recorded_phases(record: dict[str, Any] | None) -> list[_Found]:
    if not isinstance(record, dict):
        return []
    found: list[_Found] = []
    result = record.get("result")
    if isinstance(result, dict):  # a Harbor trial: ISO times per phase
        for name, label in _HARBOR_PHASES.items():
            phase = result.get(name)
            if isinstance(phase, dict):
                seconds = seconds_between(phase.get("started_at"), phase.get("finished_at"))
                found.append(("phase", label, 0, parse_instant(phase.get("started_at")), seconds, None))
    timing = record.get("timing")
    if isinstance(timing, dict):  # a verifiers rollout: epoch seconds
        for name in _VERIFIERS_PHASES:
            begun, seconds = _epoch_span(timing.get(name))
            if begun is not None or seconds is not None:
                found.append(("phase", name, 0, begun, seconds, None))
        for name, (kind, label) in _VERIFIERS_SPANS.items():
            spans = timing.get(name).get("spans") if isinstance(timing.get(name), dict) else None
            for number, span in enumerate(spans if isinstance(spans, list) else [], 1):
                begun, seconds = _epoch_span(span)
                found.append((kind, f"{label} {number}", 1, begun, seconds, None))
    for name in _VERIFIERS_PHASES[1:]:  # older verifiers: generation_ms, scoring_ms (no start)
        milliseconds = as_number(record.get(f"{name}_ms"))
        if milliseconds is not None and not isinstance(timing, dict):
            found.append(("phase", name, 0, None, milliseconds / 1000, None))
    return found


def _epoch_span(span: Any) -> tuple[datetime | None, float | None]:
    """(start, seconds) of a verifiers `{start, end, duration}` (Unix seconds)."""
    if not isinstance(span, dict):
        return None, None
    start, end, duration = as_number(span.get("start")), as_number(span.get("end")), as_number(span.get("duration"))
    try:
        begun = datetime.fromtimestamp(start, timezone.utc) if start is not None else None
    except (OverflowError, OSError, ValueError):
        begun = None
    if duration is None and start is not None and end is not None:
        duration = max(0.0, end - start)
    return begun, duration
