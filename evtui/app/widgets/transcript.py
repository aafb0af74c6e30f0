"""A sample's conversation: each message under its role, tool calls with arguments, tool results and errors."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from evtui.sample_view import MessageView

ROLE_STYLES = {
    "system": "$text-muted",
    "user": "$primary",
    "assistant": "$secondary",
    "tool": "$accent",
}


class Transcript(VerticalScroll):
    """Messages top to bottom; the pane scrolls, so long content is never cut.

    User text is shown as Content (never parsed as markup): a transcript may contain `[b]`.
    """

    DEFAULT_CSS = """
    Transcript {
        height: 1fr;
        padding: 0 1;
    }
    Transcript > .transcript--note {
        color: $warning;
        padding-bottom: 1;
    }
    Transcript > .transcript--role {
        text-style: bold;
        margin-top: 1;
    }
    Transcript > .transcript--body {
        padding-left: 2;
    }
    Transcript > .transcript--call {
        padding-left: 2;
        color: $text;
        background: $boost;
    }
    Transcript > .transcript--error {
        padding-left: 2;
        color: $error;
        text-style: bold;
    }
    Transcript > .transcript--empty {
        color: $text-muted;
    }
    """

    def __init__(self, messages: Sequence[MessageView], note: str | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.messages = list(messages)
        self.note = note

    def compose(self) -> ComposeResult:
        if self.note:
            yield Static(Content(f"⚠ {self.note}"), classes="transcript--note")
        if not self.messages:
            yield Static("No messages recorded for this sample.", classes="transcript--empty")
        for index, message in enumerate(self.messages, 1):
            yield Static(role_line(index, message), classes="transcript--role")
            if message.text:
                yield Static(Content(message.text), classes="transcript--body")
            elif message.role == "tool" and not message.error:
                yield Static(Content.styled("(empty result)", "$text-muted"), classes="transcript--body")
            for call in message.tool_calls:
                yield Static(
                    Content.assemble(("→ call ", "bold"), (call.function, "bold"), " ", call.arguments,
                                     (f"   id {call.id}" if call.id else "", "$text-muted")),
                    classes="transcript--call",
                )  # fmt: skip
            if message.error:
                yield Static(Content(f"✗ error: {message.error}"), classes="transcript--error")


def role_line(index: int, message: MessageView) -> Content:
    """`#3 tool · lookup ← call id…`: who speaks, and for tool results which call they answer."""
    style = ROLE_STYLES.get(message.role, "$text")
    parts: list[str | tuple[str, str]] = [(f"#{index} ", "$text-muted"), (message.role, style)]
    if message.role == "tool":
        parts.append((f" · {message.function or '?'}", style))
        if message.tool_call_id:
            parts.append((f" ← {message.tool_call_id}", "$text-muted"))
    elif message.model:
        parts.append((f" · {message.model}", "$text-muted"))
    return Content.assemble(*parts)
