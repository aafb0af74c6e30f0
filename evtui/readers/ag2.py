"""AG2 eval run files: `<store_dir>/<run_id>.json` saved by `run_agent(..., store_dir=...)`.

Both schema versions are read: "0.1" (`autogen.beta.eval`, ag2 0.14) and "0.2" (`ag2.eval`,
ag2 1.x). The file is one JSON document with `tasks` before `aggregates`, so it is read twice
with a streaming parser: once for the run header (skipping over the tasks), then lazily task by
task for the samples. A multi-GB run never sits in memory.

Mapping (docs/formats.md says the same for users):
* task `"<id>#<n>"` (repeats) -> sample_id `<id>`, epoch n, when every task id carries such a
  suffix; otherwise the id is kept whole with epoch 1. The original id is `metadata["ag2"]["task_id"]`.
* feedback -> one ScoreRecord per record: scorer = key; value = score (bool/int/float), else the
  str `value` label, else NaN (a scorer that raised); explanation = comment; metadata = detail.
  A label given next to a score goes to `answer`.
* aggregates -> ResultRecords: pass_rate[key] -> metric "pass_rate"; score_stats[key] ->
  "mean"/"p50"/"p95" (scored = n); value_counts[key][label] -> metric "count:<label>".
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ijson
from ijson.common import ObjectBuilder

from evtui.readers.base import ReaderError, RunRead
from evtui.records import ResultRecord, RunRecord, SampleRecord, ScoreRecord, Usage

FORMAT = "ag2"
SCHEMA_VERSIONS = ("0.1", "0.2")
_REPEAT_ID = re.compile(r"^(?P<base>.+)#(?P<n>[1-9][0-9]*)$")
_SNIFF_KEYS = (b'"schema_version"', b'"run_id"', b'"suite"', b'"tasks"')


def sniff(path: Path, head: bytes) -> bool:
    """An AG2 run starts as a JSON object with schema_version, run_id, suite and tasks keys."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return text.startswith(b"{") and all(key in head for key in _SNIFF_KEYS)


def read(path: Path) -> RunRead:
    header, task_ids, models, errors = _scan(path)
    split_repeats = bool(task_ids) and all(_REPEAT_ID.match(t) for t in task_ids)
    warnings: list[str] = []
    run = _run_record(path, header, task_ids, models, errors)
    if header.get("schema_version") not in SCHEMA_VERSIONS:
        warnings.append(
            f"{path}: unknown AG2 schema_version {header.get('schema_version')!r}; read as {SCHEMA_VERSIONS[-1]}"
        )
    return RunRead(run=run, samples=_samples(path, split_repeats, warnings), warnings=warnings)


def load_sample_detail(path: Path, detail_ref: str) -> dict:
    """The task record as saved (inputs, events, exception, tokens, feedback, trace_ref)."""
    for _, task in _iter_tasks(path):
        if isinstance(task, dict) and str(task.get("task_id")) == detail_ref:
            return task
    raise ReaderError(str(path), f"no task with id {detail_ref!r}")


# --- pass 1: the run header -------------------------------------------------------------------


def _scan(path: Path) -> tuple[dict[str, Any], list[str], Counter[str], int]:
    """Build every top-level field except `tasks`; from the tasks keep only ids, models, errors."""
    builder = ObjectBuilder()
    task_ids: list[str] = []
    models: Counter[str] = Counter()
    errors = 0
    saw_tasks = False
    try:
        with _open(path) as f:
            for prefix, event, value in ijson.parse(f, use_float=True):
                if prefix == "tasks" or prefix.startswith("tasks."):
                    if prefix == "tasks" and event == "start_array":
                        saw_tasks = True
                        builder.event("null", None)  # the key gets a placeholder; tasks stream later
                    elif prefix == "tasks":
                        if event != "end_array":
                            builder.event(event, value)  # `tasks` is not a list: keep it to complain
                    elif prefix == "tasks.item.task_id":
                        task_ids.append(str(value))
                    elif prefix == "tasks.item.exception" and event == "start_map":
                        errors += 1
                    elif prefix == "tasks.item.events.item.model" and event == "string":
                        models[value] += 1
                    continue
                builder.event(event, value)
    except ijson.common.IncompleteJSONError as exc:
        raise ReaderError(str(path), f"not valid JSON (truncated or damaged): {_short(exc)}") from None
    except ijson.common.JSONError as exc:
        raise ReaderError(str(path), f"not valid JSON: {_short(exc)}") from None
    header = builder.value
    if not isinstance(header, dict):
        raise ReaderError(str(path), "not an AG2 run file: the top level is not a JSON object")
    if not saw_tasks:
        raise ReaderError(str(path), "not an AG2 run file: no 'tasks' list")
    if not header.get("run_id"):
        raise ReaderError(str(path), "not an AG2 run file: no 'run_id'")
    return header, task_ids, models, errors


def _run_record(
    path: Path, header: dict[str, Any], task_ids: list[str], models: Counter[str], errors: int
) -> RunRecord:
    suite = header.get("suite") if isinstance(header.get("suite"), dict) else {}
    aggregates = header.get("aggregates") if isinstance(header.get("aggregates"), dict) else {}
    tokens = aggregates.get("tokens") if isinstance(aggregates.get("tokens"), dict) else {}
    label = header.get("label")
    all_failed = bool(task_ids) and errors == len(task_ids)
    duration_ms = header.get("duration_ms")
    return RunRecord(
        path=str(path),
        format=FORMAT,
        run_key=str(header.get("run_id")),
        task=label or suite.get("name"),
        # The run names no model; the model responses in the trace do.
        model=", ".join(name for name, _ in models.most_common()) or None,
        # A run file is written once the whole run has finished; only a run in which every
        # task raised is reported as failed.
        status="error" if all_failed else "success",
        error="every task raised an exception" if all_failed else None,
        created=header.get("created_at"),
        duration=duration_ms / 1000 if isinstance(duration_ms, (int, float)) else None,
        total_samples=len(task_ids),
        completed_samples=len(task_ids) - errors,
        usage=Usage(
            input_tokens=_int(tokens.get("input")),
            output_tokens=_int(tokens.get("output")),
            total_tokens=_int(tokens.get("total")),
        ),
        results=_results(aggregates),
        config={"scorers": _scorer_config(aggregates)},
        metadata={
            "schema_version": header.get("schema_version"),
            "label": label,
            "suite": suite,
            "target": header.get("target", header.get("target_factory")),
            "concurrency": header.get("concurrency"),
            "errors": aggregates.get("errors", errors),
            "budget_violations": aggregates.get("budget_violations"),
        },
    )


def _results(aggregates: dict[str, Any]) -> list[ResultRecord]:
    results: list[ResultRecord] = []
    for key, rate in _mapping(aggregates.get("pass_rate")).items():
        results.append(ResultRecord(scorer=key, metric="pass_rate", value=_float(rate)))
    for key, stats in _mapping(aggregates.get("score_stats")).items():
        stats = _mapping(stats)
        for metric in ("mean", "p50", "p95"):
            if metric in stats:
                results.append(
                    ResultRecord(scorer=key, metric=metric, value=_float(stats[metric]), scored=_int(stats.get("n")))
                )
    for key, counts in _mapping(aggregates.get("value_counts")).items():
        for label, count in _mapping(counts).items():
            results.append(
                ResultRecord(scorer=key, metric=f"count:{label}", value=_float(count), params={"label": label})
            )
    return results


def _scorer_config(aggregates: dict[str, Any]) -> list[dict[str, Any]]:
    """Which feedback keys the run aggregated, and how (AG2 routes by the scorer's return type)."""
    scorers: dict[str, list[str]] = {}
    for group, metrics in (("pass_rate", ["pass_rate"]), ("score_stats", ["mean", "p50", "p95"])):
        for key in _mapping(aggregates.get(group)):
            scorers.setdefault(key, []).extend(metrics)
    for key in _mapping(aggregates.get("value_counts")):
        scorers.setdefault(key, []).append("value_counts")
    return [{"name": name, "metrics": metrics} for name, metrics in scorers.items()]


# --- pass 2: the samples ----------------------------------------------------------------------


def _iter_tasks(path: Path) -> Iterator[tuple[int, Any]]:
    try:
        with _open(path) as f:
            yield from enumerate(ijson.items(f, "tasks.item", use_float=True))
    except ijson.common.JSONError as exc:
        raise ReaderError(str(path), f"not valid JSON (changed while reading?): {_short(exc)}") from None


def _samples(path: Path, split_repeats: bool, warnings: list[str]) -> Iterator[SampleRecord]:
    for index, task in _iter_tasks(path):
        if not isinstance(task, dict) or task.get("task_id") is None:
            warnings.append(f"{path} (tasks[{index}]): not a task record (no task_id); skipped")
            continue
        yield _sample(task, split_repeats)


def _sample(task: dict[str, Any], split_repeats: bool) -> SampleRecord:
    task_id = str(task["task_id"])
    sample_id, epoch = task_id, 1
    if split_repeats and (m := _REPEAT_ID.match(task_id)):
        sample_id, epoch = m["base"], int(m["n"])
    inputs = task.get("inputs")
    prompt = inputs.get("input") if isinstance(inputs, dict) else inputs
    events = [e for e in task.get("events") or [] if isinstance(e, dict)]
    tokens = _mapping(task.get("tokens"))
    exception = task.get("exception")
    duration_ms = task.get("duration_ms")
    metadata = dict(_mapping(task.get("metadata")))
    metadata.setdefault("tags", list(task.get("tags") or []))
    metadata["ag2"] = {
        "task_id": task_id,
        "inputs": inputs,
        "reference_outputs": task.get("reference_outputs"),
        "tags": list(task.get("tags") or []),
        "budget_violation": task.get("budget_violation"),
        "trace_ref": task.get("trace_ref"),
        # Cache tokens and the exact duration have no SampleRecord field; AG2 scorers read them.
        "tokens": tokens or None,
        "duration_ms": duration_ms,
    }
    return SampleRecord(
        sample_id=sample_id,
        epoch=epoch,
        input=prompt,
        input_text=_text(prompt),
        target=_target(task.get("reference_outputs")),
        output_text=_final_reply(events),
        messages=_messages(prompt, events),
        metadata=metadata,
        usage=Usage(
            input_tokens=_int(tokens.get("input")),
            output_tokens=_int(tokens.get("output")),
            total_tokens=_total(tokens),
            total_time=duration_ms / 1000 if isinstance(duration_ms, (int, float)) else None,
        ),
        error=_exception_text(exception),
        scores=[s for fb in task.get("feedback") or [] if (s := _score(fb)) is not None],
        detail_ref=task_id,
    )


def _score(feedback: Any) -> ScoreRecord | None:
    if not isinstance(feedback, dict) or not feedback.get("key"):
        return None
    score, label = feedback.get("score"), feedback.get("value")
    if score is not None:
        value: Any = score
    elif label is not None:
        value = label
    else:
        value = math.nan  # the scorer raised, or gave no signal
    detail = feedback.get("detail")
    return ScoreRecord(
        scorer=str(feedback["key"]),
        value=value,
        answer=str(label) if score is not None and label is not None else None,
        explanation=feedback.get("comment"),
        metadata=detail if isinstance(detail, dict) else ({} if detail is None else {"detail": detail}),
    )


_REFERENCE_KEYS = ("output", "answer", "expected", "target", "reference")


def _target(reference: Any) -> list[str]:
    """Inspect-style targets from `reference_outputs`: a conventional key, a lone value, or the JSON."""
    if reference is None:
        return []
    if isinstance(reference, dict):
        for key in _REFERENCE_KEYS:
            if key in reference:
                return _target(reference[key])
        if len(reference) == 1:
            return _target(next(iter(reference.values())))
        return [json.dumps(reference, ensure_ascii=False)]
    if isinstance(reference, list):
        return [_text(item) for item in reference]
    return [_text(reference)]


def _final_reply(events: list[dict[str, Any]]) -> str:
    """AG2's `outputs["body"]`: the content of the last ModelResponse (empty if it has none)."""
    for event in reversed(events):
        if event.get("type") == "ModelResponse":
            return _message_content(event) or ""
    return ""


def _messages(prompt: Any, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat transcript in Inspect's shape: the prompt, assistant turns with their tool calls, tool results.

    After span reconstruction AG2 leaves `ModelResponse.tool_calls.calls` empty and records each
    call as its own ToolCallEvent, so calls are attached to the assistant turn they follow.
    """
    messages: list[dict[str, Any]] = [{"role": "user", "content": _text(prompt)}]
    assistant: dict[str, Any] | None = None
    for event in events:
        kind = event.get("type")
        if kind == "ModelResponse":
            content = _message_content(event)
            assistant = {"role": "assistant", "content": content or "", "model": event.get("model")}
            calls = _mapping(_unwrap(event.get("tool_calls"))).get("calls") or []
            if content is not None or calls:
                messages.append(assistant)
            for call in calls:
                _add_call(messages, assistant, _unwrap(call))
        elif kind == "ToolCallEvent":
            if assistant is None:
                assistant = {"role": "assistant", "content": "", "model": None}
            if assistant not in messages:
                messages.append(assistant)
            _add_call(messages, assistant, event)
        elif kind in ("ToolResultEvent", "ToolErrorEvent"):
            message = {
                "role": "tool",
                "content": _result_text(event.get("result")),
                "tool_call_id": event.get("parent_id"),
                "function": event.get("name"),
            }
            if kind == "ToolErrorEvent":
                error = _mapping(event.get("error"))
                message["error"] = {
                    # Always "RuntimeError": AG2 rebuilds traces from spans and loses the real type.
                    "type": error.get("__exception__", "Exception"),
                    "message": str(error.get("message", "")),
                }
            messages.append(message)
    return messages


def _add_call(messages: list[dict[str, Any]], assistant: dict[str, Any], call: Any) -> None:
    call = _mapping(call)
    calls = assistant.setdefault("tool_calls", [])
    if call.get("id") is not None and any(c["id"] == call.get("id") for c in calls):
        return
    arguments = call.get("arguments") or "{}"
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        parsed = arguments  # the model's arguments were not JSON; keep them as sent
    calls.append({"id": call.get("id"), "function": call.get("name"), "arguments": parsed, "type": "function"})


def _message_content(event: dict[str, Any]) -> str | None:
    message = _mapping(_unwrap(event.get("message")))
    content = message.get("content")
    return content if isinstance(content, str) else (None if content is None else _text(content))


def _result_text(result: Any) -> str:
    parts = _mapping(_unwrap(result)).get("parts") or []
    texts = []
    for part in parts:
        part = _mapping(_unwrap(part))
        if "content" in part:
            texts.append(_text(part["content"]))
    return "".join(texts)


def _unwrap(value: Any) -> Any:
    """`{"__dataclass__": ..., "data": {...}}` -> the data; tagged events are already flat."""
    if isinstance(value, dict) and "__dataclass__" in value and isinstance(value.get("data"), dict):
        return value["data"]
    return value


def _exception_text(exception: Any) -> str | None:
    if not exception:
        return None
    if isinstance(exception, dict):
        kind, message = exception.get("type") or "Exception", exception.get("message") or ""
        return f"{kind}: {message}" if message else str(kind)
    return str(exception)


def _total(tokens: dict[str, Any]) -> int | None:
    """AG2's total is input + output (cache tokens excluded)."""
    if "total" in tokens:
        return _int(tokens["total"])
    inp, out = _int(tokens.get("input")), _int(tokens.get("output"))
    return None if inp is None and out is None else (inp or 0) + (out or 0)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) else None


def _short(exc: Exception) -> str:
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__


def _open(path: Path):
    try:
        return open(path, "rb")
    except OSError as exc:
        raise ReaderError(str(path), f"cannot open: {exc.strerror or exc}") from None
