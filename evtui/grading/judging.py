"""Asking a grader for a small JSON verdict, re-asking when the reply cannot be read.

Used by agent_judge and failure_attribution (AG2-style judges whose verdict is an object, not a
`GRADE:` letter). Plain chat completions, no server-side JSON mode, so any OpenAI-compatible
server works; a reply is read leniently (a fenced block, or the first `{...}` in the text).
A re-ask adds the unreadable reply and the problem to the conversation, so it is a different
request and never answered from the cache with the same unreadable reply.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evtui.grading.client import GraderError, GraderReply, GradingSession
from evtui.grading.settings import Endpoint
from evtui.grading.usage import reply_usage, sum_usage

_FENCED = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)


@dataclass
class JudgeOutcome:
    """The verdict (or None), the whole conversation, and what it cost."""

    verdict: dict[str, Any] | None
    messages: list[dict[str, Any]]
    replies: list[GraderReply] = field(default_factory=list)
    problem: str | None = None  # why there is no verdict
    error: GraderError | None = None

    @property
    def usage(self) -> dict[str, Any]:
        return sum_usage([reply_usage(r) for r in self.replies] + ([reply_usage(None)] if self.error else []))


def read_json_object(text: str) -> dict[str, Any] | None:
    """The JSON object in a reply: the whole text, a ```json block, or the outermost {...}."""
    candidates = [text.strip()]
    candidates += _FENCED.findall(text)
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


async def ask_for_verdict(
    session: GradingSession,
    endpoint: Endpoint,
    *,
    system: str,
    prompt: str,
    check: Callable[[dict[str, Any]], str | None],
    retries: int = 1,
    params: dict[str, Any] | None = None,
) -> JudgeOutcome:
    """Ask until `check(verdict)` returns None (valid) or `retries` re-asks are spent."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
    outcome = JudgeOutcome(None, messages)
    for attempt in range(retries + 1):
        try:
            reply = await session.chat(endpoint, list(messages), **(params or {}))
        except GraderError as error:
            outcome.error, outcome.problem = error, f"grader request failed: {error}"
            return outcome
        outcome.replies.append(reply)
        messages.append({"role": "assistant", "content": reply.text})
        verdict = read_json_object(reply.text)
        problem = "the reply holds no JSON object" if verdict is None else check(verdict)
        if problem is None:
            outcome.verdict, outcome.problem = verdict, None
            return outcome
        outcome.problem = problem
        if attempt < retries:
            messages.append(
                {"role": "user", "content": f"That reply could not be used: {problem}. Reply again with only the JSON object."}
            )
    return outcome


def event_text(event: Any, limit: int = 400) -> str:
    """A short text for an AG2-style trace event: its content, result text or error."""
    data = getattr(event, "data", event) if not isinstance(event, dict) else event
    if not isinstance(data, dict):
        return _clip(str(data), limit)
    for key in ("content", "error", "result", "message", "arguments"):
        value = data.get(key)
        if value in (None, "", [], {}):
            continue
        return _clip(_plain(value), limit)
    return ""


def _plain(value: Any) -> str:
    """Text inside AG2's tagged payloads ({"content"}, {"data": {"parts": [...]}}, {"message"})."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("content", "message", "text"):
            if isinstance(value.get(key), str):
                return value[key]
        inner = value.get("data")
        if isinstance(inner, dict) and isinstance(inner.get("parts"), list):
            return " ".join(_plain(part) for part in inner["parts"])
        if isinstance(value.get("parts"), list):
            return " ".join(_plain(part) for part in value["parts"])
    if isinstance(value, list):
        return " ".join(_plain(item) for item in value)
    return json.dumps(value, ensure_ascii=False, default=str)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
