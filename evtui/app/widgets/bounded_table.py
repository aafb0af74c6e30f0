"""The stock DataTable for small, bounded tables (runs, results), filled in one call."""

from __future__ import annotations

from collections.abc import Sequence

from textual.actions import SkipAction
from textual.binding import Binding
from textual.content import Content
from textual.coordinate import Coordinate
from textual.strip import Strip
from textual.widgets import DataTable

from evtui.app.safe_content import plain, sanitised
from evtui.app.widgets.sql_table.draw import mark_cut_columns

MAX_COLUMN_WIDTH = 60
# Columns of names (a run's task, model) that must not push the figures off the screen: at most a
# fifth of the terminal, 16 to 40 cells; the full name is on the run's own screen.
NAME_COLUMN_CAP = (16, 40)


def edge_marked_line(table: DataTable, y: int, strip: Strip) -> Strip:
    """Line `y` of `table` as drawn (`strip`), a column cut by the window's edge (the table
    scrolls sideways at 80 columns) ending in an ellipsis, header and cells
    (sql_table/draw.py mark_cut_columns)."""
    if y >= (table.header_height if table.show_header else 0) + table.row_count - int(table.scroll_offset.y):
        return strip  # below the last row
    spans, left = [], table._row_label_column_width if table.show_row_labels else 0
    for column in table.ordered_columns:
        width = column.get_render_width(table)
        spans.append((left, left + width))
        left += width
    return mark_cut_columns(strip, spans, int(table.scroll_offset.x), table.scrollable_content_region.width)


class FittingCell(Content):
    """A cell with shorter forms, longest first: the table shows the longest form that fits the
    width left on screen after the columns before it (a headline drops its interval, then its
    second metric, rather than be cut inside a number at 80 columns)."""

    __slots__ = ("forms",)

    def __init__(self, forms: Sequence[Content]) -> None:
        first = forms[0]
        super().__init__(first.plain, list(first.spans), first.cell_length)
        self.forms = tuple(forms)

    def fitted(self, room: int) -> Content:
        """The longest form at most `room` cells wide, else the shortest."""
        return next((form for form in self.forms if form.cell_length <= room), self.forms[-1])


class BoundedTable(DataTable[Content]):
    """A DataTable whose cells are Content (theme-aware colours, never markup-parsed).

    DataTable cannot measure Content, so column widths are computed here from the text.
    """

    def __init__(self, column_labels: Sequence[str], *, enter_label: str = "", id: str | None = None,
                 name_columns: Sequence[str] = ()) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, id=id)
        self.column_labels = list(column_labels)
        self.name_columns = set(name_columns)
        self._shown: tuple[Sequence[Sequence[str | Content]], Sequence[str] | None] = ([], None)
        self._full_rows: list[list[Content]] = []
        self.sort_mark: tuple[int, bool] | None = None
        """(column index, descending): that column's header shows ▲ or ▼."""
        if enter_label:
            # Say in the footer and help what Enter does here (DataTable's own binding is hidden).
            self._bindings.key_to_bindings["enter"] = [Binding("enter", "select_cursor", enter_label)]

    def on_mount(self) -> None:
        self.show_rows([])

    def action_select_cursor(self) -> None:
        """Enter on an empty table falls through to the screen's own Enter binding."""
        if not self.row_count:
            raise SkipAction()
        super().action_select_cursor()

    def name_cap(self) -> int:
        """The width of a column of names: a fifth of the terminal, 16 to 40 cells."""
        low, high = NAME_COLUMN_CAP
        return max(low, min(high, self.app.size.width // 5))

    def show_rows(self, rows: Sequence[Sequence[str | Content]], keys: Sequence[str] | None = None) -> None:
        """Replace every row, keeping the cursor on the same row index where possible."""
        self._shown = (rows, keys)
        cursor = self.cursor_row
        cells = [[self._safe(cell) for cell in row] for row in rows]
        labels = list(self.column_labels)
        if self.sort_mark is not None and 0 <= self.sort_mark[0] < len(labels):
            index, descending = self.sort_mark
            labels[index] = f"{labels[index]} {'▼' if descending else '▲'}"
        self._full_rows = [[cell.forms[0] if isinstance(cell, FittingCell) else cell for cell in row] for row in cells]
        name_cap = self.name_cap()
        room = self._room(len(cells))
        widths: list[int] = []
        for index, (name, label) in enumerate(zip(self.column_labels, labels, strict=True)):
            left = room - sum(width + 2 * self.cell_padding for width in widths) - 2 * self.cell_padding
            for row in cells:
                if index < len(row) and isinstance(row[index], FittingCell):
                    row[index] = row[index].fitted(max(left, len(label)))
            width = max([len(label)] + [row[index].cell_length for row in cells if index < len(row)])
            named = isinstance(name, str) and name in self.name_columns
            widths.append(min(width, max(name_cap, len(label)) if named else MAX_COLUMN_WIDTH))
        self.clear(columns=True)
        for label, width in zip(labels, widths, strict=True):
            self.add_column(plain(label), width=width)
        for index, row in enumerate(cells):
            self.add_row(*row, key=keys[index] if keys else None)
        if cells:
            self.move_cursor(row=min(max(cursor, 0), len(cells) - 1), animate=False)

    def render_line(self, y: int) -> Strip:
        return edge_marked_line(self, y, super().render_line(y))

    def full_row_at(self, index: int) -> list[Content]:
        """Row `index` with each fitting cell whole (an export writes the whole headline, however
        narrow the terminal that showed it)."""
        if 0 <= index < len(self._full_rows):
            return list(self._full_rows[index])
        return list(self.get_row_at(index))

    @staticmethod
    def _safe(cell: str | Content) -> Content:
        if isinstance(cell, FittingCell):
            return FittingCell([sanitised(form) for form in cell.forms])
        return sanitised(cell) if isinstance(cell, Content) else plain(cell)

    def _room(self, row_count: int) -> int:
        """The cells the columns have across: the table's width less a vertical scrollbar when
        the rows will not fit its height."""
        width = self.size.width or self.app.size.width
        height = self.size.height or self.app.size.height
        if row_count + self.header_height > height:
            width -= self.styles.scrollbar_size_vertical
        return width

    def on_resize(self) -> None:
        """Fitting cells pick their form again for the new width."""
        rows, keys = self._shown
        if any(isinstance(cell, FittingCell) for row in rows for cell in row):
            self.show_rows(rows, keys)

    def set_cell(self, coordinate: Coordinate, value: str | Content) -> None:
        """Replace one cell, widening its column when the new text is longer (up to the cap):
        a count that grows (`27/200` → `153/200`) is never cut."""
        cell = sanitised(value) if isinstance(value, Content) else plain(value)
        column = self.ordered_columns[coordinate.column]
        if not column.auto_width and cell.cell_length > column.width:
            column.width = min(cell.cell_length, MAX_COLUMN_WIDTH)
            self._require_update_dimensions = True  # DataTable re-measures its size on the next refresh
        self.update_cell_at(coordinate, cell)

    def action_scroll_home(self) -> None:
        """Home moves a row cursor to the first row, as help says (DataTable's only scrolls left),
        and back to the first columns: the top-left corner, where the table first showed."""
        if self.cursor_type == "row":
            self.action_scroll_top()
            self.scroll_to(x=0, animate=False)
        else:
            super().action_scroll_home()

    def action_scroll_end(self) -> None:
        """End moves a row cursor to the last row."""
        if self.cursor_type == "row":
            self.action_scroll_bottom()
        else:
            super().action_scroll_end()
