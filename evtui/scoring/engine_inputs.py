"""Sample rows from the index → the `SampleState` and `Target` a scorer sees.

The transcript (`messages`) is parsed only when a scorer reads it: text scorers such as `match`
never pay for decoding long tool transcripts.
"""

from __future__ import annotations

from typing import Any

import orjson

from evtui.scoring.state import ChatMessage, Choice, ModelOutput, SampleState
from evtui.scoring.values import Target


def _json(text: str | bytes | None, default: Any) -> Any:
    if text is None:
        return default
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        import json

        return json.loads(text)  # NaN/Infinity literals, which orjson refuses


def chat_message(raw: Any) -> ChatMessage:
    if not isinstance(raw, dict):
        return ChatMessage(role="user", content=str(raw))
    return ChatMessage(
        role=str(raw.get("role") or "user"),
        content=raw.get("content", ""),
        tool_calls=raw.get("tool_calls"),
        tool_call_id=raw.get("tool_call_id"),
        function=raw.get("function"),
        error=raw.get("error"),
    )


class IndexedSampleState(SampleState):
    """A SampleState whose `messages` are decoded from the index on first access."""

    def __init__(self, raw_messages: str | None, **fields: Any) -> None:
        self._raw_messages = raw_messages
        self._messages: list[ChatMessage] | None = None
        for name, value in fields.items():
            setattr(self, name, value)

    @property  # type: ignore[override]
    def messages(self) -> list[ChatMessage]:
        if self._messages is None:
            self._messages = [chat_message(m) for m in _json(self._raw_messages, [])]
        return self._messages

    @messages.setter
    def messages(self, value: list[ChatMessage]) -> None:
        self._messages = value


def state_from_row(row: tuple, run_config: dict[str, Any], model: str | None = None) -> tuple[SampleState, Target]:
    """Build (state, target) from a row in store.jobs.SAMPLE_COLUMNS order."""
    (
        _rowid, _run_id, sample_id, epoch, input_tokens, output_tokens, total_tokens, cost, total_time,
        working_time, limit_type, _completed, error, target, metadata, input_text, output_text, choices,
        raw_input, raw_messages,
    ) = row
    targets = _json(target, [])
    choice_values = _json(choices, None) or []
    state = IndexedSampleState(
        raw_messages,
        sample_id=sample_id,
        epoch=epoch,
        input=_json(raw_input, input_text) if raw_input is not None else input_text,
        input_text=input_text,
        output=ModelOutput(completion=output_text or "", model=model),
        choices=[Choice(value=str(value), original_position=i) for i, value in enumerate(choice_values)],
        metadata=_json(metadata, {}) or {},
        target=list(targets),
        run_config=run_config,
        trace={},
        error=error,
        usage={
            "input_tokens": input_tokens, "output_tokens": output_tokens, "total_tokens": total_tokens,
            "cost": cost, "total_time": total_time, "working_time": working_time, "limit": limit_type,
        },
    )
    return state, Target(targets)
