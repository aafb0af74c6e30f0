"""How a SqlTable lays out its columns and draws its header and a row of cells, as Strips.

No widget state here: the table passes its columns, sort, cursor and a way to look up its
component styles (`style_of("header")` is the style of `sqltable--header`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from evtui.app.widgets.sql_table.parts import Column, fit_cell

StyleOf = Callable[[str], Style]


class ColumnLayout:
    """Where each column starts on the virtual x axis (a one-cell gap follows every column);
    measured once per set of columns, not per frame."""

    def __init__(self, columns: Sequence[Column]) -> None:
        self.columns = list(columns)
        self.lefts: list[int] = []
        left = 0
        for column in self.columns:
            self.lefts.append(left)
            left += column.width + 1
        self.total_width = left
        self.spans = [(left, left + column.width) for left, column in zip(self.lefts, self.columns, strict=True)]

    def span(self, index: int) -> tuple[int, int]:
        """Virtual x of the column's first cell and just past its last."""
        left = self.lefts[index]
        return left, left + self.columns[index].width

    def column_at(self, x: int) -> int | None:
        """The column under virtual x (a column owns the gap after it), or None past the last."""
        for index, left in enumerate(self.lefts):
            if left <= x < left + self.columns[index].width + 1:
                return index
        return None

    def visible(self, left: int, right: int) -> tuple[int, range]:
        """The columns that show between virtual x `left` and `right`: (the cells before the first
        of them, their indexes). A table of hundreds of columns (a cross-run table: two per run)
        draws a screenful of them, not every one for every row."""
        lefts, columns = self.lefts, self.columns
        first = 0
        while first < len(columns) and lefts[first] + columns[first].width + 1 <= left:
            first += 1
        end = first
        while end < len(columns) and lefts[end] < right:
            end += 1
        return (lefts[first] if first < len(columns) else self.total_width), range(first, end)


def mark_cut_columns(strip: Strip, spans: Sequence[tuple[int, int]], scroll_x: int, width: int) -> Strip:
    """`strip`, one line of a table's window (`width` cells from virtual x `scroll_x`), with an
    ellipsis in the last visible cell of a column the window's right edge cuts through, and in
    the first of one its left edge cuts: at 80 columns a header reads `Cre…`, not `Crea`."""
    marks = []
    for left, right in spans:
        if left < scroll_x + width < right:
            marks.append(width - 1)
        if left < scroll_x < right:
            marks.append(0)
    for x in marks:
        if 0 <= x < strip.cell_length:
            before, cell, after = strip.divide([x, x + 1, strip.cell_length])
            style = next((segment.style for segment in cell if segment.text), None)
            strip = Strip.join([before, Strip([Segment("…", style)], 1), after])
    return strip


def header_strip(
    layout: ColumnLayout, sort: str | None, descending: bool, style_of: StyleOf, width: int, left: int = 0
) -> Strip:
    """The header line, the sorted column marked with its direction, padded to `width` cells
    (virtual x; only the columns from `left` on are drawn, the cells before them blank)."""
    header, sorted_style = style_of("header"), style_of("header-sorted")
    skipped, shown = layout.visible(left, width)
    segments: list[Segment] = [Segment(" " * skipped, header)] if skipped else []
    for index in shown:
        column = layout.columns[index]
        label, style = column.label, header
        if column.key == sort:
            # The arrow always shows: the label gives way when the column is narrow.
            label = f"{fit_cell(label, max(column.width - 2, 0), 'left').rstrip()} {'▼' if descending else '▲'}"
            style = sorted_style
        segments.append(Segment(fit_cell(label, column.width, column.align), style))
        segments.append(Segment(" ", header))
    return Strip(segments).extend_cell_length(width, header)


def cells_strip(
    layout: ColumnLayout, row: Any, base: Style, style_of: StyleOf, *, cursor_column: int | None, width: int,
    left: int = 0,
) -> Strip:  # fmt: skip
    """One row's cells up to virtual x `width`, those before `left` blank (off screen: not drawn);
    `cursor_column` None off the cursor row, else the cursor cell's index (the cursor row is
    highlighted across `width` cells)."""
    cursor_style = style_of("cursor") if cursor_column is not None else None
    skipped, shown = layout.visible(left, width)
    segments: list[Segment] = [Segment(" " * skipped, cursor_style or base)] if skipped else []
    for index in shown:
        column = layout.columns[index]
        try:
            cell = column.cell(row)
        except Exception as error:  # a bad value shows in its cell, not as a crash
            cell = (f"!{type(error).__name__}", "fail")
        text, role = (cell, "") if isinstance(cell, str) else cell
        if index == cursor_column:
            style = style_of("cursor-cell")
        else:
            style = style_of(role) if role else base
            if cursor_style is not None:
                style = style + cursor_style
        segments.append(Segment(fit_cell(text, column.width, column.align), style))
        segments.append(Segment(" ", cursor_style or base))
    strip = Strip(segments)
    return strip.extend_cell_length(width, cursor_style) if cursor_style is not None else strip
