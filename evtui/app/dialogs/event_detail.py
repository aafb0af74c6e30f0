"""One event of a sample's transcript whole: what it says, its error, and the event as the run
recorded it (a model call's raw request and response), drawn row by row so megabytes page."""

from __future__ import annotations

import json

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from evtui.app.safe_content import plain
from evtui.app.widgets.line_view import Block, LineView, clipped
from evtui.safe_text import safe_block
from evtui.sample_view.transcript import EventNode
from evtui.app.widgets.key_footer import KeyFooter

RAW_LIMIT = 2_000_000  # characters of the recorded event shown (the run file has all of it)


class EventDetailDialog(ModalScreen[None]):
    """An event's text, error and raw record; Esc closes."""

    BINDINGS = [Binding("escape", "dismiss", "Close", id="event_detail.close")]
    DEFAULT_CSS = """
    EventDetailDialog { align: center middle; }
    EventDetailDialog #event-detail-box { width: 95%; height: 90%; border: round $primary; background: $surface; }
    EventDetailDialog #event-detail-title { height: auto; padding: 0 1; text-style: bold; }
    EventDetailDialog #event-detail-hint { height: 1; padding: 0 1; color: $text-muted; }
    """

    def __init__(self, node: EventNode) -> None:
        super().__init__()
        self.node = node

    def compose(self) -> ComposeResult:
        node = self.node
        blocks = [Block(safe_block(node.detail))] if node.detail else []
        if node.error:
            blocks.append(Block("error", "", blank_before=1))
            blocks.append(Block(safe_block(node.error)))
        raw = event_json(node)
        if raw:
            what = "request and response as recorded" if node.kind == "model" else "as recorded"
            blocks.append(Block(f"event {what}", "", blank_before=1))
            blocks.append(Block(safe_block(clipped(raw, RAW_LIMIT))))
        with Vertical(id="event-detail-box"):
            yield Static(plain(node.title, 300), id="event-detail-title")
            yield LineView(blocks, id="event-detail-text")
            yield Static("↑↓ PgUp PgDn scroll · Esc closes", id="event-detail-hint")
        yield KeyFooter()  # the dialog's own keys, not the dimmed screen's below it

    def on_mount(self) -> None:
        self.query_one("#event-detail-text", LineView).focus()


def event_json(node: EventNode) -> str:
    """The event as recorded, indented (a model call: its input messages, config and output)."""
    return json.dumps(node.raw, indent=2, ensure_ascii=False, default=str) if node.raw is not None else ""
