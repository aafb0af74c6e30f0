"""A sample's timeline (issue 30): the transcript's spans and events in time order, each a bar
placed and sized on the sample's whole time, with its start offset and duration; steps the run
recorded no time for say so. The rows come from core code (build_timeline in
sample_view/timeline.py, also printed by `evtui samples RUN --sample ID --json`); this only
draws the rows on screen (Line API), so a 10,000-event transcript opens as fast as a short one. Enter asks for the event in
the events tree."""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from evtui.app import formatting as fmt
from evtui.safe_text import safe_line
from evtui.sample_view.timeline import Timeline, TimelineRow

_PARTIAL = " ▏▎▍▌▋▊▉"  # eighths of a cell: a bar's end drawn finer than a whole cell
_TIME_WIDTH = 9  # "+1m 05s" / "840 ms" / "no time"
_KIND_CLASS = {"model": "timeline--model", "tool": "timeline--tool", "sandbox": "timeline--sandbox",
               "score": "timeline--score", "phase": "timeline--phase", "error": "timeline--error",
               "limit": "timeline--error"}  # fmt: skip


def timeline_row_text(row: TimelineRow) -> str:
    """A row as one line of text (what `y` copies of a phase): label, start, duration."""
    start = "no start time" if row.start is None else f"starts at +{fmt.format_span(row.start)}"
    return f"{row.label}: {start}, takes {_duration_cell(row)}"


def _duration_cell(row: TimelineRow) -> str:
    """The duration; `–` for a step with a start and no duration, `no time` for one with neither."""
    return fmt.format_span(row.seconds) if row.seconds is not None or row.start is None else "–"


def bar_text(row: TimelineRow, total: float | None, width: int) -> str:
    """The row's bar in `width` cells: spaces up to its start, then its length in whole and
    eighth cells (at least a sliver, so a 1 ms call is seen); a start without a duration is a
    tick; a row without a time is blank."""
    if width <= 0:
        return ""
    if row.start is None or not total:
        return " " * width
    begin = min(width - 1, int(row.start / total * width))
    if row.seconds is None:
        return (" " * begin + "│").ljust(width)
    eighths = max(1, round(row.seconds / total * width * 8))
    whole, part = divmod(eighths, 8)
    bar = "█" * whole + (_PARTIAL[part] if part else "")
    return (" " * begin + bar)[:width].ljust(width)


@dataclass(frozen=True)
class TimelineColumns:
    label: int
    bar: int


def columns_for(width: int) -> TimelineColumns:
    """The label gets about two fifths of the width (16 to 60 cells), the bar what the two time
    columns leave."""
    label = max(16, min(60, width * 2 // 5))
    return TimelineColumns(label, max(0, width - label - 2 * _TIME_WIDTH - 3))


class TimelineView(ScrollView, can_focus=True):
    """The rows, one per line, with a cursor; Enter posts Picked with the row under it. Its top
    border says what the bars cover."""

    BINDINGS = [
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "jump(0)", "First", show=False),
        Binding("end", "jump(-1)", "Last", show=False),
        Binding("enter", "pick", "Show in tree", id="timeline.pick"),
    ]
    COMPONENT_CLASSES = {"timeline--muted", "timeline--span", "timeline--cursor", *_KIND_CLASS.values()}
    DEFAULT_CSS = """
    TimelineView {
        height: 1fr;
        scrollbar-gutter: stable;
        border-top: solid $panel;
        border-title-align: left;
        border-title-color: $text-muted;
    }
    TimelineView > .timeline--muted { color: $text-muted; }
    TimelineView > .timeline--span { text-style: bold; }
    TimelineView > .timeline--model { color: $secondary; }
    TimelineView > .timeline--tool { color: $accent; }
    TimelineView > .timeline--sandbox { color: $success; }
    TimelineView > .timeline--score { color: $primary; }
    TimelineView > .timeline--phase { color: $warning; text-style: bold; }
    TimelineView > .timeline--error { color: $error; }
    TimelineView > .timeline--cursor { background: $panel; }  /* solid: a component style loses alpha */
    TimelineView:focus > .timeline--cursor { background: $block-cursor-background; color: $block-cursor-foreground; }
    """

    cursor: reactive[int] = reactive(0, always_update=True)

    @dataclass
    class Picked(Message):
        row: TimelineRow

    def __init__(self, timeline: Timeline, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.timeline = timeline

    def on_mount(self) -> None:
        self.border_title = summary_text(self.timeline)
        self.virtual_size = Size(self.size.width, len(self.timeline.rows))

    def on_resize(self) -> None:
        self.virtual_size = Size(self.scrollable_content_region.width, len(self.timeline.rows))

    @property
    def current(self) -> TimelineRow | None:
        rows = self.timeline.rows
        return rows[self.cursor] if 0 <= self.cursor < len(rows) else None

    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh()
        height = self.scrollable_content_region.height or 1
        top = self.scroll_offset.y
        if new < top:
            self.scroll_to(y=new, animate=False)
        elif new >= top + height:
            self.scroll_to(y=new - height + 1, animate=False)

    def _set_cursor(self, index: int) -> None:
        count = len(self.timeline.rows)
        if count:
            self.cursor = max(0, min(count - 1, index))

    def action_move(self, step: int) -> None:
        self._set_cursor(self.cursor + step)

    def action_page(self, step: int) -> None:
        self._set_cursor(self.cursor + step * max(1, self.scrollable_content_region.height - 1))

    def action_jump(self, index: int) -> None:
        self._set_cursor(index if index >= 0 else len(self.timeline.rows) - 1)

    def action_pick(self) -> None:
        row = self.current
        if row is not None:
            self.post_message(self.Picked(row))

    def on_click(self, event: events.Click) -> None:
        self._set_cursor(self.scroll_offset.y + event.y)

    def render_line(self, y: int) -> Strip:
        index = self.scroll_offset.y + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        rows = self.timeline.rows
        if not 0 <= index < len(rows):
            return Strip.blank(width, base)
        row = rows[index]
        if index == self.cursor:
            base = base + self.get_component_rich_style("timeline--cursor", partial=True)
        columns = columns_for(width)
        label = "  " * min(row.depth, 4) + safe_line(row.label, 400)
        # cut by cells, not characters: a wide (CJK) label keeps the columns after it in place
        label = set_cell_size(label, columns.label - 1) + "…" if cell_len(label) > columns.label else set_cell_size(label, columns.label)
        start = "" if row.start is None else f"+{fmt.format_span(row.start)}" if row.start else "0"
        kind_class = "timeline--span" if row.kind.startswith("span:") else _KIND_CLASS.get(row.kind, "")
        segments = [
            Segment(label, self._style(kind_class, base)),
            Segment(" " + start.rjust(_TIME_WIDTH), self._style("timeline--muted", base)),
            Segment(" " + _duration_cell(row).rjust(_TIME_WIDTH) + " ",
                    self._style("timeline--muted" if row.seconds is None else "", base)),  # fmt: skip
            Segment(bar_text(row, self.timeline.total, columns.bar), self._style(kind_class or "timeline--muted", base)),
        ]
        return Strip(segments).crop_extend(0, width, base)

    def _style(self, name: str, base: Style) -> Style:
        return base + self.get_component_rich_style(name, partial=True) if name else base


def summary_text(timeline: Timeline) -> str:
    """`Timeline: 8 steps on 71 ms · 2 untimed · ⏎ tree · l back` (fits 80 columns)."""
    count = len(timeline.rows)
    if not count:
        return "Timeline: no spans or events · l back"
    untimed = sum(1 for row in timeline.rows if row.start is None)
    timed = f"on {fmt.format_span(timeline.total)}" if timeline.total is not None else "with no start times"
    missing = f" · {untimed:,} untimed" if untimed and timeline.total is not None else ""
    return f"Timeline: {count:,} steps {timed}{missing} · ⏎ tree · l back"
