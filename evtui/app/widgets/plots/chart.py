"""The base of evtui's charts: textual-plot's PlotWidget, keyboard-quiet, redrawn from its numbers
when the theme changes. Subclasses keep the numbers they were given and draw them in `draw`."""

from __future__ import annotations

from rich.cells import cell_len, set_cell_size
from rich.markup import escape as escape_markup
from textual.app import ComposeResult
from textual.containers import Grid
from textual.strip import Strip
from textual_hires_canvas import Canvas, TextAlign
from textual_plot import PlotWidget
from textual_plot.axis_formatter import NumericAxisFormatter
from textual_plot.plot_widget import Legend

from evtui.safe_text import safe_line


class _FilterSafeCanvas(Canvas):
    """textual-hires-canvas 0.14 draws a not-yet-sized line as Strip.blank(0), a segment with no
    style, and Textual's NO_COLOR filter then fails on it (the app would crash under NO_COLOR).
    An empty line has no segments here.

    Every text a chart writes (tick labels, axis labels: group names, scorer names, from a run)
    comes through `write_text`, which the canvas reads as Rich markup: `[@click=…]` in a label
    would crash the app and an ESC would reach the terminal. textual-plot only ever prefixes one
    `[style]` of its own, so that prefix is read as the style and the rest drawn as plain text,
    through the one sanitiser."""

    def render_line(self, y: int) -> Strip:
        if self._canvas_size is not None and self._canvas_size != self.size:
            # Drawn for the size before a re-layout (a margin that grew on the first draw): it
            # would spill past the chart's border; blank until the chart draws at this size.
            return Strip([], 0)
        strip = super().render_line(y)
        return strip if strip.cell_length else Strip([], 0)

    def write_text(self, x: int, y: int, text: str, align: TextAlign = TextAlign.LEFT) -> None:
        style, label = "", text
        if text.startswith("["):
            end = text.find("]")
            if end > 0:
                style, label = text[1:end], text[end + 1 :]
        plain = escape_markup(safe_line(label, None))
        super().write_text(x, y, f"[{style}]{plain}" if style else plain, align)


class _NumbersFormatter(NumericAxisFormatter):
    """textual-plot's numeric ticks, without '-0.0': a tick a rounding error below zero."""

    def get_labels_for_ticks(self, ticks):  # type: ignore[no-untyped-def]
        labels = super().get_labels_for_ticks(ticks)
        return [label[1:] if label.startswith("-") and not label.strip("-0.") else label for label in labels]


class Chart(PlotWidget, can_focus=False):
    """A chart of plain numbers (from core code); no SQL, no files. Pan and zoom are off: the
    screens' own keys (arrows, `r`, `+`/`-`) keep their meaning."""

    DEFAULT_CSS = """
    Chart {
        height: 1fr;
        min-height: 8;
        & > .plot--axis { color: $foreground-muted; }
        & > .plot--tick { color: $foreground; text-style: none; }
        & > .plot--label { color: $foreground; text-style: bold; }
        #legend { border: round $foreground-muted; background: $surface; }
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes, allow_pan_and_zoom=False)
        self.has_data = False
        self._x_formatter = _NumbersFormatter()
        self._y_formatter = _NumbersFormatter()

    def compose(self) -> ComposeResult:
        # PlotWidget's own layout, with the canvas that survives NO_COLOR.
        with Grid():
            yield _FilterSafeCanvas(1, 1, id="margin-top")
            yield _FilterSafeCanvas(1, 1, id="margin-left")
            yield _FilterSafeCanvas(1, 1, id="plot")
            yield _FilterSafeCanvas(1, 1, id="margin-bottom")
        yield Legend(id="legend")

    def on_mount(self) -> None:
        super().on_mount()
        # Dataset colours are theme variables resolved at draw time: draw again on a theme switch.
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._redraw())
        self._redraw()

    def _update_margin_sizes(self) -> None:
        # textual-plot only resizes its canvases on a layout refresh of the chart itself; a new
        # margin resizes the grid's cells, not the chart, so the canvases kept their old sizes:
        # labels cut to the old margin and the plot running past the right edge.
        super()._update_margin_sizes()
        self.call_after_refresh(self.refresh, layout=True)

    # textual-plot centres the axis labels on a point and lets the canvas cut what runs past its
    # edges: at 80 columns the groups chart's legend lost both ends. Here a label stays inside its
    # margin, centred where it fits, shortened with an ellipsis where it does not.
    def _render_x_label(self) -> None:
        plot = self.query_one("#plot", Canvas)
        self._write_label(self.query_one("#margin-bottom", Canvas), plot.size.width // 2 + self.margin_left, 2, self._x_label)

    def _render_y_label(self) -> None:
        self._write_label(self.query_one("#margin-top", Canvas), self.margin_left - 2, 0, self._y_label)

    def _write_label(self, margin: Canvas, centre: int, y: int, label: str) -> None:
        width = margin.size.width
        if width <= 0 or not label:
            return
        text = safe_line(label, None)
        if cell_len(text) > width:
            text = set_cell_size(text, width - 1) + "…"
        half, odd = divmod(cell_len(text), 2)
        left = centre - half + (0 if odd else 1)  # where textual-plot's centring puts it
        left = min(max(left, 0), width - cell_len(text))
        margin.write_text(left, y, f"[{self.get_component_rich_style('plot--label')}]{text}", TextAlign.LEFT)

    def _redraw(self) -> None:
        if not self.has_data:
            return
        self.clear()
        self.draw()

    def draw(self) -> None:
        """Add the datasets for the numbers held (subclasses)."""
        raise NotImplementedError

    def replot(self) -> None:
        """Draw the numbers just given, replacing what was drawn."""
        self.has_data = True
        if self.is_mounted:  # else on_mount draws them
            self._redraw()
