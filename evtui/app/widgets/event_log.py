"""A sample's event log: model calls (tokens, time, stop reason), tool calls, errors, limits, scores."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from evtui.sample_view import EventView

KIND_STYLES = {
    "model": "$secondary",
    "tool": "$accent",
    "error": "$error",
    "limit": "$warning",
    "score": "$primary",
    "log": "$text-muted",
}


class EventLog(VerticalScroll):
    """One entry per event, in the order the run recorded them."""

    DEFAULT_CSS = """
    EventLog {
        height: 1fr;
        padding: 0 1;
    }
    EventLog > .events--entry {
        margin-bottom: 1;
    }
    EventLog > .events--empty {
        color: $text-muted;
    }
    """

    def __init__(self, events: Sequence[EventView], empty_text: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.events = list(events)
        self.empty_text = empty_text

    def compose(self) -> ComposeResult:
        if not self.events:
            yield Static(Content(self.empty_text), classes="events--empty")
        for event in self.events:
            yield Static(event_content(event), classes="events--entry")


def event_content(event: EventView) -> Content:
    """Title line (time, kind), then the text and any error, indented."""
    clock = event.timestamp[11:19] if event.timestamp and len(event.timestamp) >= 19 else ""
    parts: list[str | tuple[str, str]] = [(f"{clock} ", "$text-muted"), (event.title, KIND_STYLES.get(event.kind, "$text"))]
    if event.text:
        parts.append("\n  " + event.text.replace("\n", "\n  "))
    if event.error:
        parts.append(("\n  ✗ " + event.error.replace("\n", "\n    "), "$error"))
    return Content.assemble(*parts)
