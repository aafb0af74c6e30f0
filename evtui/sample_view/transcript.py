"""The sample's transcript as the sample view shows it, built without Textual: the chat messages
(with tool calls and results), the run's events list, the events as a tree (Inspect's spans and
subtasks; a conversation's turns for formats that record no events) with search over it, and the
whole text `y` copies of an event or a message. The tree's durations come from the runs'
timestamps, read by the helpers here that the timeline (timeline.py) uses too."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from evtui.store.queries import ScoreDetail
from evtui.store.queries.effective_scores import effective_rank

__all__ = [
    "ToolCallView",
    "MessageView",
    "EventView",
    "content_text",
    "read_messages",
    "read_events",
    "EventNode",
    "event_tree",
    "search_tree",
    "message_tree",
    "as_number",
    "seconds_between",
    "parse_instant",
    "event_copy_text",
    "message_copy_text",
]

_RESULT_PREVIEW = 300  # characters of a tool result shown on the events list


@dataclass(frozen=True)
class ToolCallView:
    id: str | None
    function: str
    arguments: str  # JSON text, indented when long


@dataclass(frozen=True)
class MessageView:
    """One chat message; tool results carry the function, the call id and any error."""

    role: str
    text: str
    model: str | None = None
    tool_calls: tuple[ToolCallView, ...] = ()
    tool_call_id: str | None = None
    function: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class EventView:
    """One step of the run's event log: a model call, a tool call, an error, a score, a limit…"""

    kind: str
    title: str
    text: str = ""
    error: str | None = None
    timestamp: str | None = None


def content_text(content: Any) -> str:
    """Message content as plain text: strings as they are; content parts joined, non-text named."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict):
                kind = part.get("type")
                if kind == "text":
                    parts.append(str(part.get("text", "")))
                elif kind == "reasoning":
                    summary = part.get("summary") or part.get("reasoning") or ("(redacted)" if part.get("redacted") else "")
                    parts.append(f"[reasoning] {summary}")
                else:
                    parts.append(f"[{kind or 'content'}]")
        return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False, default=str)


def _json_text(value: Any) -> str:
    """Arguments as JSON: one line when short, indented when long."""
    if isinstance(value, str):
        return value
    compact = json.dumps(value, ensure_ascii=False, default=str)
    return compact if len(compact) <= 80 else json.dumps(value, ensure_ascii=False, default=str, indent=2)


def _error_text(error: Any) -> str | None:
    if not error:
        return None
    if isinstance(error, dict):
        message = error.get("message") or json.dumps(error, default=str)
        kind = error.get("type")
        return f"{kind}: {message}" if kind and kind != "unknown" else str(message)
    return str(error)


def _tool_calls(message: dict) -> tuple[ToolCallView, ...]:
    calls = []
    for call in message.get("tool_calls") or []:
        if isinstance(call, dict):
            function = call.get("function")
            if isinstance(function, dict):  # OpenAI shape: {"function": {"name", "arguments"}}
                name, arguments = function.get("name", "?"), function.get("arguments")
            else:
                name, arguments = function or call.get("name") or "?", call.get("arguments")
            calls.append(ToolCallView(call.get("id"), str(name), _json_text(arguments if arguments is not None else {})))
    return tuple(calls)


def read_messages(raw: list[dict], events: list[dict]) -> list[MessageView]:
    """Chat messages, plus a result line for tool calls whose result never became a message
    (a tool that crashed the sample): its event says the call failed."""
    answered = {m.get("tool_call_id") for m in raw if m.get("role") == "tool"}
    orphans = {
        e.get("id"): e for e in events
        if e.get("event") == "tool" and e.get("id") not in answered
    }  # fmt: skip
    out = []
    for message in raw:
        role = str(message.get("role", "?"))
        error = _error_text(message.get("error")) if role == "tool" else None
        out.append(MessageView(
            role, content_text(message.get("content")), message.get("model"), _tool_calls(message),
            message.get("tool_call_id"), message.get("function"), error,
        ))  # fmt: skip
        for call in out[-1].tool_calls:
            event = orphans.pop(call.id, None)
            if event is not None:
                error = _error_text(event.get("error")) or (
                    "the tool call failed; no result was recorded" if event.get("failed") else None
                )
                out.append(MessageView("tool", content_text(event.get("result")), None, (), call.id, call.function,
                                       error or "no result was recorded"))
    return out


def read_events(raw: list[dict]) -> list[EventView]:
    """The events worth reading in order: model calls, tool calls, errors, limits, scores, logs."""
    out = []
    for event in raw:
        kind = event.get("event")
        at = event.get("timestamp")
        if kind == "model":
            output = event.get("output") or {}
            usage = output.get("usage") or {}
            choices = output.get("choices") or [{}]
            stop = choices[0].get("stop_reason") if isinstance(choices[0], dict) else None
            seconds = event.get("working_time") or output.get("time")
            facts = [
                f"{usage.get('input_tokens', '?')} in / {usage.get('output_tokens', '?')} out tokens" if usage else "",
                f"{seconds:.2f}s" if isinstance(seconds, (int, float)) else "",
                f"stop: {stop}" if stop else "",
                "cached" if event.get("cache") else "",
            ]
            out.append(EventView("model", f"model call · {event.get('model', '?')}",
                                 " · ".join(f for f in facts if f), _error_text(event.get("error")), at))
        elif kind == "tool":
            arguments = json.dumps(event.get("arguments") or {}, ensure_ascii=False, default=str)
            result = content_text(event.get("result"))
            error = _error_text(event.get("error")) or ("failed" if event.get("failed") else None)
            out.append(EventView("tool", f"tool call · {event.get('function', '?')}({arguments})",
                                 result[:_RESULT_PREVIEW], error, at))
        elif kind == "error":
            error = event.get("error") or {}
            out.append(EventView("error", "error", str(error.get("message", "")), str(error.get("traceback") or "") or None, at))
        elif kind == "sample_limit":
            out.append(EventView("limit", f"limit · {event.get('type', '?')}", str(event.get("message", "")), None, at))
        elif kind == "score":
            score = event.get("score") or {}
            name = event.get("scorer") or "score"
            out.append(EventView("score", f"score · {name}" + (" (intermediate)" if event.get("intermediate") else ""),
                                 f"{_json_text(score.get('value'))} — {score.get('explanation') or ''}".strip(" —"), None, at))
        elif kind == "logger":
            message = event.get("message") or {}
            out.append(EventView("log", f"log · {message.get('level', '?')}", str(message.get("message", "")), None, at))
        elif kind in ("info", "input", "approval", "sandbox"):
            out.append(EventView(kind, kind, _json_text(event.get("data") or event.get("message") or ""), None, at))
    return out

# ----------------------------------------------------------------------------- the events tree


@dataclass
class EventNode:
    """One step of the transcript tree: a span (solvers, a solver, scorers, a scorer, a subtask, a
    tool's own events) holding its events, or one event (model call, tool call, sandbox, score,
    error, …). `seconds` is how long it took where the run says; `raw` the event as recorded (a
    model call's request and response); `started` when it began (the run's ISO timestamp), for
    the timeline."""

    kind: str
    title: str
    detail: str = ""
    error: str | None = None
    seconds: float | None = None
    raw: dict[str, Any] | None = None
    children: list[EventNode] = field(default_factory=list)
    started: str | None = None

    def text(self) -> str:
        """What search looks in: title, detail and error."""
        return "\n".join(part for part in (self.title, self.detail, self.error or "") if part)


_SPAN_TITLES = {"solvers": "solvers", "scorers": "scorers", "init": "init"}
# Events that only say the state changed: many of them, nothing to read in the tree.
_QUIET = {"state", "store", "span_begin", "span_end", "step", "sample_init"}


def event_tree(raw: list[dict[str, Any]]) -> list[EventNode]:
    """Inspect's events as a tree: span_begin/span_end (and older logs' step begin/end) open and
    close spans; every other event joins the span it names (`span_id`), else the open one; a
    subtask's own events nest under it. Durations come from the events' times."""
    roots: list[EventNode] = []
    spans: dict[str, tuple[EventNode, str | None]] = {}  # span id -> (node, begin timestamp)
    stack: list[EventNode] = []  # open spans of logs without span ids (step events)

    def place(node: EventNode, span_id: Any) -> None:
        parent = spans.get(span_id)[0] if span_id in spans else (stack[-1] if stack else None)
        (parent.children if parent is not None else roots).append(node)

    for event in raw:
        if not isinstance(event, dict):
            continue
        kind = event.get("event")
        if kind == "span_begin":
            span_type = str(event.get("type") or "")
            name = str(event.get("name") or span_type or "span")
            title = _SPAN_TITLES.get(name, f"{span_type} · {name}" if span_type and span_type != name else name)
            node = EventNode("span:" + (span_type or name), title, started=_timestamp(event))
            place(node, event.get("parent_id"))
            spans[str(event.get("id"))] = (node, event.get("timestamp"))
        elif kind == "span_end":
            opened = spans.get(str(event.get("id")))
            if opened is not None:
                opened[0].seconds = seconds_between(opened[1], event.get("timestamp"))
        elif kind == "step":
            if event.get("action") == "begin":
                node = EventNode("span:" + str(event.get("type") or "step"), f"{event.get('type') or 'step'} · {event.get('name', '?')}",
                                 started=_timestamp(event))
                place(node, event.get("span_id"))
                stack.append(node)
            elif stack:
                node = stack.pop()
                node.seconds = seconds_between(node.started, event.get("timestamp"))
        elif kind == "subtask":
            node = EventNode("subtask", f"subtask · {event.get('name', '?')}", _json_text(event.get("input") or {})[:300],
                             seconds=as_number(event.get("working_time")), started=_timestamp(event))
            node.children = event_tree(event.get("events") or [])
            place(node, event.get("span_id"))
        elif kind in _QUIET:
            continue
        else:
            node = _leaf(event)
            if node is not None:
                node.started = _timestamp(event)
                place(node, event.get("span_id"))
    return _pruned(roots)


def _pruned(nodes: list[EventNode]) -> list[EventNode]:
    """Spans that hold no event left out (a tool's span when the tool logged nothing, init)."""
    kept = []
    for node in nodes:
        node.children = _pruned(node.children)
        if node.children or not node.kind.startswith("span:"):
            kept.append(node)
    return kept


def _leaf(event: dict[str, Any]) -> EventNode | None:
    kind = event.get("event")
    seconds = as_number(event.get("working_time"))
    if seconds is None:
        seconds = seconds_between(event.get("timestamp"), event.get("completed"))
    if kind == "model":
        output = event.get("output") or {}
        usage = output.get("usage") or {}
        choices = output.get("choices") or [{}]
        first = choices[0] if isinstance(choices[0], dict) else {}
        stop = first.get("stop_reason")
        facts = [
            f"{usage.get('input_tokens', '?')} in / {usage.get('output_tokens', '?')} out tokens" if usage else "",
            f"stop: {stop}" if stop else "", "cached" if event.get("cache") else "",
        ]
        reply = content_text((first.get("message") or {}).get("content")) if isinstance(first.get("message"), dict) else ""
        detail = " · ".join(f for f in facts if f) + (f"\n{reply[:_RESULT_PREVIEW]}" if reply else "")
        return EventNode("model", f"model call · {event.get('model', '?')}", detail, _error_text(event.get("error")), seconds, event)
    if kind == "tool":
        arguments = json.dumps(event.get("arguments") or {}, ensure_ascii=False, default=str)
        error = _error_text(event.get("error")) or ("failed" if event.get("failed") else None)
        return EventNode("tool", f"tool call · {event.get('function', '?')}({arguments[:200]})",
                         content_text(event.get("result"))[:_RESULT_PREVIEW], error, seconds, event)
    if kind == "sandbox":
        command = event.get("cmd") or event.get("file") or ""
        detail = str(event.get("output") or event.get("result") or "")[:_RESULT_PREVIEW]
        return EventNode("sandbox", f"sandbox · {event.get('action', '?')} {str(command)[:200]}".rstrip(), detail, None, seconds, event)
    if kind == "score":
        score = event.get("score") or {}
        title = f"score · {event.get('scorer') or 'score'}" + (" (intermediate)" if event.get("intermediate") else "")
        text = f"{_json_text(score.get('value'))} — {score.get('explanation') or ''}".strip(" —")
        return EventNode("score", title, text, None, seconds, event)
    if kind == "error":
        error = event.get("error") or {}
        return EventNode("error", "error", str(error.get("message", "")), str(error.get("traceback") or "") or None, None, event)
    if kind == "sample_limit":
        return EventNode("limit", f"limit · {event.get('type', '?')}", str(event.get("message", "")), None, None, event)
    if kind == "logger":
        message = event.get("message") or {}
        return EventNode("log", f"log · {message.get('level', '?')}", str(message.get("message", "")), None, None, event)
    if kind in ("info", "input", "approval", "compaction"):
        return EventNode(str(kind), str(kind), _json_text(event.get("data") or event.get("message") or "")[:_RESULT_PREVIEW], None, None, event)
    return None


def _timestamp(event: dict[str, Any]) -> str | None:
    value = event.get("timestamp")
    return value if isinstance(value, str) else None


def as_number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def seconds_between(start: Any, end: Any) -> float | None:
    begun, ended = parse_instant(start), parse_instant(end)
    if begun is None or ended is None:
        return None
    return max(0.0, (ended - begun).total_seconds())


def parse_instant(text: Any) -> datetime | None:
    """An ISO timestamp as an aware datetime (one without a zone is UTC: Harbor's job times)."""
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def search_tree(nodes: list[EventNode], text: str) -> list[tuple[int, ...]]:
    """Paths (child indexes from the roots) of every node whose text holds `text` (any case), in
    tree order."""
    wanted = text.casefold().strip()
    hits: list[tuple[int, ...]] = []
    if not wanted:
        return hits
    todo: list[tuple[tuple[int, ...], EventNode]] = [((i,), node) for i, node in enumerate(nodes)][::-1]
    while todo:
        path, node = todo.pop()
        if wanted in node.text().casefold():
            hits.append(path)
        todo.extend(((*path, i), child) for i, child in reversed(list(enumerate(node.children))))
    return hits


def message_tree(messages: list[MessageView], scores: list[ScoreDetail] | None = None) -> list[EventNode]:
    """The events tree of a format that records a conversation, not events (Harbor's ATIF steps,
    verifiers traces, AG2, lm-eval, …, as their readers normalise them): the turns in a
    `transcript` span (the prompt, each model reply with its tool calls, each tool's result or
    error under its call), then a `scorers` span with each scorer's effective score. No times:
    these formats record none per step."""
    turns: list[EventNode] = []
    calls: dict[str, EventNode] = {}
    for message in messages:
        if message.role == "assistant":
            turns.append(EventNode(
                "model", f"model reply · {message.model or 'assistant'}", message.text[:_RESULT_PREVIEW] or "(no text)", None, None,
                {"role": "assistant", "model": message.model, "content": message.text,
                 "tool_calls": [{"id": c.id, "function": c.function, "arguments": c.arguments} for c in message.tool_calls]},
            ))  # fmt: skip
            for call in message.tool_calls:
                node = EventNode("tool", f"tool call · {call.function}({call.arguments[:200]})", "", None, None,
                                 {"function": call.function, "arguments": call.arguments, "id": call.id})
                turns.append(node)
                if call.id:
                    calls[call.id] = node
        elif message.role == "tool":
            node = calls.get(message.tool_call_id or "")
            if node is not None and not node.detail and node.error is None:
                node.detail, node.error = message.text[:_RESULT_PREVIEW], message.error
                if node.raw is not None:
                    node.raw["result"], node.raw["error"] = message.text, message.error
            else:  # a result whose call is not in the transcript
                turns.append(EventNode("tool", f"tool result · {message.function or '?'}", message.text[:_RESULT_PREVIEW], message.error))
        else:
            turns.append(EventNode("input", message.role, message.text[:_RESULT_PREVIEW], None, None,
                                   {"role": message.role, "content": message.text}))
    out = [EventNode("span:transcript", "transcript", children=turns)] if turns else []
    ranked = sorted(scores or [], key=lambda score: (score.scorer, *effective_rank(score.source, score.job_id, score.value, score.value_num)))
    seen: set[str] = set()
    scored: list[EventNode] = []
    for score in ranked:
        if score.scorer in seen:
            continue
        seen.add(score.scorer)
        text = f"{_json_text(score.value)} — {score.explanation or ''}".strip(" —")
        scored.append(EventNode("score", f"score · {score.scorer}", text))
    if scored:
        out.append(EventNode("span:scorers", "scorers", children=scored))
    return out


# ----------------------------------------------------------------------------- what `y` copies


def event_copy_text(node: EventNode) -> str:
    """What copying an event gives, whole (the tree shows the start of it): a model call's reply
    with its tool calls, a tool call with its result and error, a score's value and explanation;
    a span, the outline of its events. Unsanitised: the copier makes it safe."""
    raw = node.raw or {}
    if node.kind == "model" and isinstance(raw.get("output"), dict):  # Inspect's model event
        choices = raw["output"].get("choices") or [{}]
        message = choices[0].get("message") if isinstance(choices[0], dict) else None
        if isinstance(message, dict):
            return message_copy_text(read_messages([message], [])[0], heading=node.title)
    if node.kind == "model" and "content" in raw:  # a reply read from a conversation (message_tree)
        calls = "".join(f"\n→ call {c.get('function')} {c.get('arguments')}" for c in raw.get("tool_calls") or [])
        return f"{node.title}\n\n{raw.get('content') or ''}{calls}".rstrip()
    if node.kind == "tool" and raw:
        arguments = raw.get("arguments")
        arguments = arguments if isinstance(arguments, str) else json.dumps(arguments or {}, ensure_ascii=False, default=str)
        result = content_text(raw.get("result"))
        error = _error_text(raw.get("error")) or node.error
        parts = [f"tool call · {raw.get('function', '?')}({arguments})", f"result:\n{result}" if result else "(no result)"]
        return "\n\n".join(parts + ([f"error: {error}"] if error else []))
    if node.kind == "score":
        score = raw.get("score") if isinstance(raw.get("score"), dict) else None
        if score is not None:
            explanation = score.get("explanation")
            value = f"value: {_json_text(score.get('value'))}"
            return f"{node.title}\n{value}" + (f"\n\n{explanation}" if explanation else "")
        return f"{node.title}\n{node.detail}".rstrip()
    if node.children:
        lines = [node.title]
        todo = [(1, child) for child in reversed(node.children)]
        while todo:
            depth, child = todo.pop()
            lines.append("  " * depth + child.title)
            todo.extend((depth + 1, grandchild) for grandchild in reversed(child.children))
        return "\n".join(lines)
    if "content" in raw:
        return f"{node.title}\n\n{content_text(raw.get('content'))}".rstrip()
    return "\n\n".join(part for part in (node.title, node.detail, f"error: {node.error}" if node.error else "") if part)


def message_copy_text(message: MessageView, heading: str | None = None) -> str:
    """A chat message whole: who speaks, the text, its tool calls, a tool result's error."""
    who = heading or (f"{message.role} · {message.function or '?'}" if message.role == "tool"
                      else f"{message.role} · {message.model}" if message.model else message.role)  # fmt: skip
    parts = [who, message.text] if message.text else [who]
    calls = "\n".join(f"→ call {call.function} {call.arguments}" for call in message.tool_calls)
    if calls:
        parts.append(calls)
    if message.error:
        parts.append(f"error: {message.error}")
    return "\n\n".join(parts)
