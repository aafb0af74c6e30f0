"""A read-only text view that draws only the rows on screen (Line API), for transcripts and event logs.

One Static per message costs ~5 ms per widget here and Textual's word wrap ~5 s per MB, so a
1,000-message agent transcript took 30 s to open. This view wraps plain text itself (a greedy
word wrap with C-level `rfind` for ASCII lines, cell-aware for the rest) into a list of rows
once per width, and `render_line` turns only the visible rows into Strips.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import get_character_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from evtui.safe_text import safe_block, safe_line

Span = tuple[str, str]  # (text, component class name; "" = the widget's own style)


def printable(text: str) -> str:
    """`text` (several lines) through the one sanitiser: safe inside a Static or a Segment."""
    return safe_block(text)


def clipped(text: str, limit: int) -> str:
    """`text` made printable and cut to `limit` characters, saying how much was left out."""
    text = safe_block(text)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n… {len(text) - limit:,} more characters not shown here"


@dataclass(frozen=True)
class Block:
    """A paragraph: `spans` on one line (a heading, cropped if wide), or `text` word-wrapped."""

    text: str = ""
    style: str = ""
    indent: int = 0
    spans: tuple[Span, ...] = ()
    blank_before: int = 0


def wrap_text(text: str, width: int) -> list[str]:
    """`text` as rows of at most `width` cells, broken at spaces where possible."""
    width = max(width, 1)
    rows: list[str] = []
    for line in printable(text).expandtabs(4).split("\n"):
        rows.extend(_wrap_ascii(line, width) if line.isascii() else _wrap_cells(line, width))
    return rows


def _wrap_ascii(line: str, width: int) -> list[str]:
    rows, start, end = [], 0, len(line)
    while end - start > width:
        cut = line.rfind(" ", start, start + width + 1)
        if cut <= start:
            rows.append(line[start : start + width])
            start += width
        else:
            rows.append(line[start:cut])
            start = cut + 1
    rows.append(line[start:])
    return rows


def _wrap_cells(line: str, width: int) -> list[str]:
    rows, current, cells, last_space = [], [], 0, -1
    for char in line:
        size = get_character_cell_size(char)
        if cells + size > width and current:
            if last_space > 0:
                rows.append("".join(current[:last_space]))
                current = current[last_space + 1 :]
            else:
                rows.append("".join(current))
                current = []
            cells = sum(get_character_cell_size(c) for c in current)
            last_space = -1
        if char == " ":
            last_space = len(current)
        current.append(char)
        cells += size
    rows.append("".join(current))
    return rows


class LineView(ScrollView, can_focus=True):
    """Rows of styled text; subclasses name their styles in COMPONENT_CLASSES."""

    BINDINGS = [
        Binding("up", "scroll_up", "Up", show=False),
        Binding("down", "scroll_down", "Down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home", "scroll_home", "Top", show=False),
        Binding("end", "scroll_end", "Bottom", show=False),
    ]
    DEFAULT_CSS = """
    LineView {
        height: 1fr;
        padding: 0 1;
        scrollbar-gutter: stable;  /* the wrap width does not change when the scrollbar appears */
    }
    """

    def __init__(self, blocks: Sequence[Block], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.blocks = list(blocks)
        self._rows: list[tuple[int, tuple[Span, ...]]] = []  # (indent, spans)
        self._row_blocks: list[int] = []  # the block each row belongs to (a blank before it: that block)
        self._wrapped_width = -1

    def plain_text(self) -> str:
        """Every block's text, unwrapped (what a reader would copy)."""
        return "\n".join("".join(text for text, _ in b.spans) if b.spans else b.text for b in self.blocks)

    @property
    def row_count(self) -> int:
        return len(self._rows)

    def block_at(self, row: int) -> int | None:
        """The index of the block drawn on `row` (None past the end)."""
        return self._row_blocks[row] if 0 <= row < len(self._row_blocks) else None

    def block_rows(self, first_block: int, last_block: int) -> tuple[int, int]:
        """The rows [first, last] that blocks first_block..last_block take (blank rows before included)."""
        from bisect import bisect_left, bisect_right

        return bisect_left(self._row_blocks, first_block), bisect_right(self._row_blocks, last_block) - 1

    def row_class(self, row: int) -> str:
        """A component class laid over a whole row (a subclass marks a selection); none here."""
        return ""

    def row_text(self, index: int) -> str:
        indent, spans = self._rows[index]
        return " " * indent + "".join(text for text, _ in spans)

    def on_resize(self) -> None:
        self._rewrap()

    def on_mount(self) -> None:
        self._rewrap()

    def _rewrap(self) -> None:
        width = self.scrollable_content_region.width or self.size.width
        if width <= 0 or width == self._wrapped_width:
            return
        self._wrapped_width = width
        rows: list[tuple[int, tuple[Span, ...]]] = []
        owners: list[int] = []
        for number, block in enumerate(self.blocks):
            owners.extend(number - 1 for _ in range(len(rows) - len(owners)))  # the block before this one
            rows.extend((0, ()) for _ in range(block.blank_before))
            if block.spans:
                # A heading is one line of names (a role, a tool, a model): each through the sanitiser.
                block = Block(block.text, block.style, block.indent, tuple((safe_line(t, None), st) for t, st in block.spans), block.blank_before)
                if sum(len(text) for text, _ in block.spans) + block.indent <= width:
                    rows.append((block.indent, block.spans))
                    continue
                # Too wide for one row: wrap it, in the style of its main (last) span.
                block = Block("".join(text for text, _ in block.spans), block.spans[-1][1], block.indent)
            for text in wrap_text(block.text, width - block.indent):
                rows.append((block.indent, ((text, block.style),)))
        owners.extend(len(self.blocks) - 1 for _ in range(len(rows) - len(owners)))
        self._rows, self._row_blocks = rows, owners
        self.virtual_size = Size(width, len(rows))
        self.refresh()

    def render_line(self, y: int) -> Strip:
        _, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        if not 0 <= index < len(self._rows):
            return Strip.blank(width, base)
        indent, spans = self._rows[index]
        over = self.row_class(index)
        if over:
            base = base + self.get_component_rich_style(over, partial=True)
        segments = [Segment(" " * indent, base)] if indent else []
        for text, style in spans:
            segments.append(Segment(text, self._style(style, base)))
        return Strip(segments).crop_extend(0, width, base)

    def _style(self, name: str, base: Style) -> Style:
        if not name:
            return base
        return base + self.get_component_rich_style(name, partial=True)
