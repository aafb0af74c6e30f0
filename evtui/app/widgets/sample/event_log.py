"""A sample's event log: model calls (tokens, time, stop reason), tool calls, errors, limits, scores."""

from __future__ import annotations

from collections.abc import Sequence

from evtui.app.widgets.line_view import Block, LineView
from evtui.sample_view.transcript import EventView

KINDS = ("model", "tool", "error", "limit", "score", "log")


class EventLog(LineView):
    """One entry per event, in the order the run recorded them, drawn row by row."""

    COMPONENT_CLASSES = {"events--muted", "events--error", *(f"events--{kind}" for kind in KINDS)}
    DEFAULT_CSS = """
    EventLog > .events--muted { color: $text-muted; }
    EventLog > .events--error { color: $error; }
    EventLog > .events--model { color: $secondary; text-style: bold; }
    EventLog > .events--tool { color: $accent; text-style: bold; }
    EventLog > .events--error { color: $error; }
    EventLog > .events--limit { color: $warning; text-style: bold; }
    EventLog > .events--score { color: $primary; text-style: bold; }
    EventLog > .events--log { color: $text-muted; text-style: bold; }
    """

    def __init__(self, events: Sequence[EventView], empty_text: str, *, id: str | None = None) -> None:
        self.events = list(events)
        super().__init__(event_blocks(self.events, empty_text), id=id)


def event_blocks(events: Sequence[EventView], empty_text: str) -> list[Block]:
    """Title line (time, kind), then the text and any error, indented."""
    if not events:
        return [Block(empty_text, "events--muted")]
    blocks: list[Block] = []
    for event in events:
        clock = event.timestamp[11:19] if event.timestamp and len(event.timestamp) >= 19 else ""
        kind_class = f"events--{event.kind}" if event.kind in KINDS else ""
        blocks.append(Block(spans=((f"{clock} ", "events--muted"), (event.title, kind_class)), blank_before=1 if blocks else 0))
        if event.text:
            blocks.append(Block(event.text, indent=2))
        if event.error:
            blocks.append(Block(f"✗ {event.error}", "events--error", indent=2))
    return blocks
