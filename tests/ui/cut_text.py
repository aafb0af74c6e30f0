"""The checker behind tests/ui/test_every_label_80x24.py (issue 30, item 5): is every piece of text
the screen means to show drawn whole?

After a screen settles, every widget of the top screen that draws text of its own (a label,
a panel or border title, a tab, a footer key, a button, a headline, a notification, an empty
state, an input's placeholder, a column header of a table) is looked up in the terminal as drawn
(the compositor's lines, what a real terminal gets) inside the cells the widget occupies on
screen. The text must be there whole (wrapped onto more lines is fine: spaces and line breaks
are ignored) or visibly shortened with an ellipsis (`Created…`, `mod…eval`), never silently
cut (`Canc`, `instructionsNone`, `0.278 ± 0.`).

What is not checked, and why:
* a widget that lies partly or wholly outside a scrolling container's window, and the text of
  a panel that scrolls its own text: scrolling shows the rest (a container that cannot scroll
  and clips its child is a cut);
* the cells of tables, the transcript's lines, trees and charts' plotting area and ticks: run
  text and numbers drawn through their own fitting (`fit_cell`, FittingCell: an ellipsis or a
  shorter form), checked by their own tests; a table's column headers, its empty state and a
  chart's axis labels (its legend) are checked here;
* a column of a table wholly past the table's edge while the table scrolls sideways: the user
  scrolls to it, as in any spreadsheet (a column the edge cuts through must end in `…`).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console
from textual.content import Content
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import DataTable, Input
from textual.widgets._toast import Toast
from textual_plot import PlotWidget

from evtui.safe_text import safe_line

# Drawn lines and blocks (borders, rules, scrollbars, bars): not words, and drawn to the width
# the widget has, so they are left out of both sides of the comparison.
_LINE_CHARACTERS = range(0x2500, 0x25A0)


def squeeze(text: str) -> str:
    """`text` without whitespace and drawn lines: what must appear, whatever the wrapping."""
    return "".join(ch for ch in text if not ch.isspace() and ord(ch) not in _LINE_CHARACTERS)


@dataclass(frozen=True)
class Cut:
    widget: str
    text: str
    drawn: str
    region: Region

    def __str__(self) -> str:
        return f"{self.widget}: {self.text!r} drawn as {self.drawn!r} at {tuple(self.region)}"


def shown_whole(text: str, drawn: str) -> bool:
    """`text` appears in `drawn` whole, or shortened with an ellipsis where it was cut
    (`Crea…`, `…ed.eval`): never cut silently."""
    want, got = squeeze(text), squeeze(drawn)
    if not want or want in got:
        return True
    if "…" not in got:
        return False
    for keep in range(len(want) - 1, 0, -1):
        if want[:keep] + "…" in got or "…" + want[-keep:] in got:
            return True
    return False


def screen_lines(app) -> list:
    """The terminal as drawn: one Strip a row (cropping by cells, not characters)."""
    return app.screen._compositor.render_strips()


def drawn_in(lines, region: Region) -> str:
    """The text drawn in `region`, row by row."""
    rows = []
    for y in range(max(region.y, 0), min(region.bottom, len(lines))):
        rows.append(lines[y].crop(region.x, region.right).text)
    return "\n".join(rows)


def own_text(widget: Widget) -> str | None:
    """The text `widget` draws itself, as one string; None for widgets drawn line by line
    (tables, logs, charts) or holding other widgets."""
    if isinstance(widget, Input):
        return None if widget.value else str(widget.placeholder or "")
    if type(widget).render_line is not Widget.render_line or widget.children:
        return None
    try:
        visual = widget._render()
    except Exception:  # a widget that cannot render now has nothing drawn to compare
        return None
    if isinstance(visual, Content):
        return visual.plain
    renderable = getattr(visual, "_renderable", None)
    if renderable is None:
        return None
    console = Console(width=max(widget.content_region.width, 1), color_system=None, record=True, file=None)
    with console.capture() as capture:
        console.print(renderable)
    return capture.get()


def _scrolled_out(widget: Widget, region: Region, visible: Region) -> bool:
    """Part of `widget` is outside its window because an ancestor scrolls in that direction."""
    for ancestor in widget.ancestors:
        if not isinstance(ancestor, Widget):
            break
        if ancestor.is_scrollable or ancestor.allow_vertical_scroll or ancestor.allow_horizontal_scroll:
            window = ancestor.content_region if ancestor.region else ancestor.region
            taller = region.y < window.y or region.bottom > window.bottom
            wider = region.x < window.x or region.right > window.right
            if (taller and ancestor.allow_vertical_scroll) or (wider and ancestor.allow_horizontal_scroll):
                return True
    return False


def _name(widget: Widget) -> str:
    ident = f"#{widget.id}" if widget.id else ""
    classes = "".join(f".{name}" for name in sorted(widget.classes) if not name.startswith("-"))
    return f"{type(widget).__name__}{ident}{classes}"


def _table_headers(table: Widget, lines, visible: Region) -> list[Cut]:
    """Each column header of a DataTable or SqlTable in the table's window (one its edge cuts
    through too), drawn whole or shortened with an ellipsis; a SqlTable's empty state or error."""
    from evtui.app.widgets.sql_table.table import SqlTable

    columns: list[tuple[str, int, int]] = []  # label, virtual x, width
    if isinstance(table, DataTable):
        if not table.show_header:
            return []
        x = table._row_label_column_width if table.show_row_labels else 0
        for column in table.ordered_columns:
            width = column.get_render_width(table)
            columns.append((column.label.plain, x, width))
            x += width
    elif isinstance(table, SqlTable):
        layout = table._layout
        for index, column in enumerate(layout.columns):
            left, right = layout.span(index)
            columns.append((str(column.label), left, right - left))
    else:
        return []
    window = table.scrollable_content_region  # less a vertical scrollbar
    row = Region(window.x, window.y, window.width, 1).intersection(visible)
    cuts = []
    if isinstance(table, SqlTable) and (table.error or (table.row_count == 0 and not table.counting)):
        # The table's empty state or error, drawn on its first row.
        message = table.error or "no rows"
        first = Region(window.x, window.y + 1, window.width, 1).intersection(visible)
        drawn = drawn_in(lines, first)
        if not shown_whole(message, drawn):
            cuts.append(Cut(f"{_name(table)} empty state", message, drawn, first))
    scroll_x = int(table.scroll_offset.x)
    for label, left, width in columns:
        x = window.x + left - scroll_x
        whole = Region(x, window.y, width, 1)
        cell = whole.intersection(row)
        if not cell.width:
            continue  # wholly past the window's edge: scrolling sideways shows it
        drawn = drawn_in(lines, cell)  # a column the edge cuts through must say so (`Cre…`)
        edge_cut = cell.width < whole.width
        if edge_cut and squeeze(drawn) == "…":
            continue  # a cell or two of it in the window: the ellipsis alone says there is more
        if not shown_whole(label, drawn):
            cuts.append(Cut(f"{_name(table)} header", label, drawn, cell))
    return cuts


def cut_texts(app) -> list[Cut]:
    """Every piece of the top screen's own text that is drawn cut."""
    from evtui.app.widgets.sql_table.table import SqlTable

    screen = app.screen
    lines = screen_lines(app)
    full = Region(0, 0, *app.size)
    cuts: list[Cut] = []
    full_map = screen._compositor.full_map
    # A notification lies over the screen for a few seconds: what it covers is checked when it
    # has gone; the notification itself is checked like any label.
    covers = [geometry.visible_region for widget, geometry in full_map.items() if isinstance(widget, Toast)]
    for widget, geometry in full_map.items():
        if widget is screen or not widget.display or not widget.visible or widget.screen is not screen:
            continue
        region = geometry.region
        visible = geometry.visible_region.intersection(full)
        if region.area == 0:
            continue
        if not isinstance(widget, Toast) and any(visible.overlaps(toast) for toast in covers):
            continue
        clipped = visible != region
        if clipped and _scrolled_out(widget, region, visible):
            continue
        if isinstance(widget, DataTable | SqlTable):
            cuts.extend(_table_headers(widget, lines, visible))
        title_row = Region(region.x, region.y, region.width, 1)
        for attribute in ("border_title", "border_subtitle"):
            title = getattr(widget, attribute)
            if not title or not widget.styles.border_top[0]:
                continue
            row = title_row if attribute == "border_title" else Region(region.x, region.bottom - 1, region.width, 1)
            drawn = drawn_in(lines, row.intersection(visible))
            text = title.plain if isinstance(title, Content) else Content.from_markup(str(title)).plain
            if not shown_whole(text, drawn):
                cuts.append(Cut(f"{_name(widget)} {attribute}", text, drawn, row))
        if widget.allow_vertical_scroll or widget.allow_horizontal_scroll:
            continue  # a panel that scrolls its own text: scrolling shows the rest
        if isinstance(widget, PlotWidget):  # a chart's axis labels, drawn on its canvases
            drawn = drawn_in(lines, visible)
            for label in (widget._x_label, widget._y_label):
                if label and not shown_whole(safe_line(label, None), drawn):
                    cuts.append(Cut(f"{_name(widget)} axis label", label, drawn, region))
            continue
        text = own_text(widget)
        if not text or not squeeze(text):
            continue
        drawn = drawn_in(lines, visible)
        if not shown_whole(text, drawn):
            cuts.append(Cut(_name(widget), text, drawn, region))
    return cuts

