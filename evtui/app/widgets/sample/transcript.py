"""A sample's conversation: each message under its role, tool calls with arguments, tool results and errors."""

from __future__ import annotations

from collections.abc import Sequence

from textual import events
from textual.binding import Binding

from evtui.app.widgets.line_view import Block, LineView, Span
from evtui.sample_view.transcript import MessageView


class Transcript(LineView):
    """Messages top to bottom, drawn row by row so a long agent transcript opens at once.

    User text is only ever drawn as plain text (never parsed as markup): a transcript may contain `[b]`.
    One message is selected (shaded; what `y` copies): ↓ reads on through it and then selects the
    next, ↑ the same backwards; a click selects one; paging or scrolling it out of sight selects
    the one at the top.
    """

    BINDINGS = [
        Binding("down", "step(1)", "Next line or message", show=False),
        Binding("up", "step(-1)", "Previous line or message", show=False),
    ]

    COMPONENT_CLASSES = {
        "transcript--note",
        "transcript--muted",
        "transcript--system",
        "transcript--user",
        "transcript--assistant",
        "transcript--tool",
        "transcript--call",
        "transcript--error",
        "transcript--selected",
    }
    DEFAULT_CSS = """
    Transcript > .transcript--note { color: $warning; }
    Transcript > .transcript--muted { color: $text-muted; }
    Transcript > .transcript--system { color: $text-muted; text-style: bold; }
    Transcript > .transcript--user { color: $primary; text-style: bold; }
    Transcript > .transcript--assistant { color: $secondary; text-style: bold; }
    Transcript > .transcript--tool { color: $accent; text-style: bold; }
    Transcript > .transcript--call { background: $boost; }
    Transcript > .transcript--error { color: $error; text-style: bold; }
    Transcript > .transcript--selected { background: $panel; }  /* solid: a component style loses alpha */
    """

    def __init__(self, messages: Sequence[MessageView], note: str | None = None, *, id: str | None = None) -> None:
        self.messages = list(messages)
        self.note = note
        owned = owned_blocks(self.messages, note)
        self._block_messages = [owner for _, owner in owned]
        self._message_blocks: list[tuple[int, int]] = []  # message -> (first block, last block)
        for number, (_, owner) in enumerate(owned):
            if owner is None:
                continue
            if owner == len(self._message_blocks):
                self._message_blocks.append((number, number))
            else:
                self._message_blocks[owner] = (self._message_blocks[owner][0], number)
        self.selected: int | None = 0 if self.messages else None
        super().__init__([block for block, _ in owned], id=id)

    def message_rows(self, index: int) -> tuple[int, int]:
        """The rows [first, last] of message `index`, its blank line above left out."""
        first, last = self.block_rows(*self._message_blocks[index])
        return (first + 1 if index and first < last else first), last

    def message_at(self, row: int) -> int | None:
        block = self.block_at(row)
        owner = self._block_messages[block] if block is not None else None
        return 0 if owner is None and self.messages else owner  # the note above the first message

    def select(self, index: int) -> None:
        self.selected = index
        self.refresh()

    def row_class(self, row: int) -> str:
        if self.selected is None or not self._message_blocks:
            return ""
        first, last = self.message_rows(self.selected)
        return "transcript--selected" if first <= row <= last else ""

    def action_step(self, step: int) -> None:
        """Read on through the selected message a line at a time; at its end, select the next
        one (its start brought into view); ↑ the same backwards."""
        if self.selected is None:
            self.scroll_relative(y=step, animate=False)
            return
        top, height = self.scroll_offset.y, max(1, self.scrollable_content_region.height)
        first, last = self.message_rows(self.selected)
        if (step > 0 and last >= top + height) or (step < 0 and first < top):
            self.scroll_relative(y=step, animate=False)  # more of this message that way
            return
        following = self.selected + step
        if not 0 <= following < len(self.messages):
            self.scroll_relative(y=step, animate=False)
            return
        self.select(following)
        first, last = self.message_rows(following)
        if step > 0 and first >= top + height:
            self.scroll_to(y=min(first, max(0, last - height + 1)), animate=False)
        elif step < 0 and last < top:
            self.scroll_to(y=max(0, last - height + 1), animate=False)

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if self.selected is None or not self._row_blocks:
            return
        first, last = self.message_rows(self.selected)
        top, height = round(new), max(1, self.scrollable_content_region.height)
        if last < top or first >= top + height:  # paged or scrolled out of sight: the one on top
            at = self.message_at(top)
            if at is not None:
                self.selected = at

    def on_click(self, event: events.Click) -> None:
        at = self.message_at(self.scroll_offset.y + event.y)
        if at is not None:
            self.select(at)


def transcript_blocks(messages: Sequence[MessageView], note: str | None) -> list[Block]:
    return [block for block, _ in owned_blocks(messages, note)]


def owned_blocks(messages: Sequence[MessageView], note: str | None) -> list[tuple[Block, int | None]]:
    """The transcript's blocks, each with the index of the message it belongs to."""
    owned: list[tuple[Block, int | None]] = []
    if note:
        owned.append((Block(f"⚠ {note}", "transcript--note"), None))
    if not messages:
        owned.append((Block("No messages recorded for this sample.", "transcript--muted"), None))
    for index, message in enumerate(messages, 1):
        owned.extend((block, index - 1) for block in _message_blocks(index, message, blank_before=1 if owned else 0))
    return owned


def _message_blocks(index: int, message: MessageView, blank_before: int) -> list[Block]:
    blocks = [Block(spans=role_spans(index, message), blank_before=blank_before)]
    if message.text:
        blocks.append(Block(message.text, indent=2))
    elif message.role == "tool" and not message.error:
        blocks.append(Block("(empty result)", "transcript--muted", indent=2))
    elif not message.tool_calls and not message.error:  # said, so it never reads as text not drawn
        blocks.append(Block("(empty message)", "transcript--muted", indent=2))
    for call in message.tool_calls:
        suffix = f"   id {call.id}" if call.id else ""
        blocks.append(Block(f"→ call {call.function} {call.arguments}{suffix}", "transcript--call", indent=2))
    if message.error:
        blocks.append(Block(f"✗ error: {message.error}", "transcript--error", indent=2))
    return blocks


def role_spans(index: int, message: MessageView) -> tuple[Span, ...]:
    """`#3 tool · lookup ← call id…`: who speaks, and for tool results which call they answer."""
    role_class = f"transcript--{message.role}" if message.role in ("system", "user", "assistant", "tool") else ""
    spans: list[Span] = [(f"#{index} ", "transcript--muted"), (message.role, role_class)]
    if message.role == "tool":
        spans.append((f" · {message.function or '?'}", role_class))
        if message.tool_call_id:
            spans.append((f" ← {message.tool_call_id}", "transcript--muted"))
    elif message.model:
        spans.append((f" · {message.model}", "transcript--muted"))
    return tuple(spans)
