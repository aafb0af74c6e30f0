"""Export the current table view to a CSV or JSON file: the samples table's (every matching row,
read from the index) or any other screen's table as it shows it; a chart screen also offers SVG
(the chart as drawn, its numbers as CSV/JSON)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, RadioButton, RadioSet, Static
from textual.worker import get_current_worker

from evtui.app.formatting import middle_ellipsis
from evtui.app.safe_content import plain
from evtui.store.export.view import SampleView, TableView
from evtui.app.widgets.safe_input import SafeInput
from evtui.safe_text import safe_line
from evtui.app.widgets.key_footer import KeyFooter


@dataclass
class ExportDefaults(Message):
    path: Path


@dataclass
class ExportDone(Message):
    path: Path
    rows: int


@dataclass
class ExportFailed(Message):
    error: str


# The cells a run's title, a filter or a search takes in the summary: a line of the dialog at 80 columns.
SUMMARY_PART_CELLS = 70

class ExportViewDialog(ModalScreen[Path | None]):
    """Pick CSV or JSON and a path; the export runs in a worker; dismissed with the written path."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="export_view.cancel")]
    DEFAULT_CSS = """
    ExportViewDialog { align: center middle; }
    ExportViewDialog > Vertical {
        width: 90; max-width: 100%; height: auto; max-height: 100%; padding: 1 2; border: thick $primary;
        background: $surface;  /* at most the terminal: at 80 columns Cancel was cut to `Canc` */
    }
    ExportViewDialog #export-summary { color: $text-muted; margin-bottom: 1; }
    ExportViewDialog RadioSet { layout: horizontal; height: auto; margin-bottom: 1; }
    ExportViewDialog #export-status { height: auto; margin-top: 1; }
    ExportViewDialog #export-status.-error { color: $error; }
    ExportViewDialog Horizontal { height: auto; margin-top: 1; align-horizontal: right; }
    ExportViewDialog Button { margin-left: 1; }
    """

    def __init__(
        self, db_path: Path, view: SampleView | TableView, roots: Sequence[Path] = (), title: str = "", svg: str | None = None
    ) -> None:
        super().__init__()
        self.svg = svg  # a chart screen's SVG: offered as a third format
        self.db_path = Path(db_path)
        self.view = view
        self.roots = [Path(root) for root in roots]
        self.run_title = title
        self.written: tuple[Path, int] | None = None
        self._replace: Path | None = None  # the existing file the user was told about

    def compose(self) -> ComposeResult:
        view = self.view
        if isinstance(view, TableView) and self.svg is not None:
            heading = "Export the chart (SVG) or the numbers behind it (CSV, JSON)"
            count = len(view.rows)
            parts = [self.run_title or view.name, f"{count:,} row{'s' if count != 1 else ''} of numbers"]
        elif isinstance(view, TableView):
            heading = "Export this table as it shows"
            count = len(view.rows)
            parts = [self.run_title or view.name, f"{count:,} row{'s' if count != 1 else ''}"]
        else:
            heading = "Export the samples view (every matching row)"
            parts = [self.run_title or f"run {view.run_id}"]
            if view.filter:
                parts.append(f"filter: {view.filter}")
            if view.search:
                parts.append(f"search: {view.search}")
        with Vertical():
            yield Label(heading)
            # A run's title, filter or search takes a line at most: a long one loses its middle
            # rather than push the buttons off an 80×24 terminal.
            yield Static(plain(" · ".join(middle_ellipsis(safe_line(part), SUMMARY_PART_CELLS) for part in parts)), id="export-summary")
            with RadioSet(id="export-format"):
                # A chart screen's export is first of all the chart.
                yield RadioButton("CSV", value=self.svg is None, id="format-csv")
                yield RadioButton("JSON", id="format-json")
                if self.svg is not None:
                    yield RadioButton("SVG (the chart)", value=True, id="format-svg")
            yield SafeInput(placeholder="path of the file to write", id="export-path")
            yield Static("", id="export-status", markup=False)
            with Horizontal():
                yield Button("Export", variant="primary", id="export-start")
                yield Button("Cancel", id="export-cancel")
        yield KeyFooter()  # the dialog's own keys, not the dimmed screen's below it

    def on_mount(self) -> None:
        self.load_defaults()
        self.query_one("#export-path", Input).focus()

    @property
    def format(self) -> str:
        if self.svg is not None and self.query_one("#format-svg", RadioButton).value:
            return "svg"
        return "json" if self.query_one("#format-json", RadioButton).value else "csv"

    @work(thread=True, exclusive=True, group="export-defaults", exit_on_error=False)
    def load_defaults(self) -> None:
        """Find the run's file to name the default export path after it."""
        from evtui.store.export.view import default_export_path, default_table_export_path, run_file, run_part
        from evtui.store.schema import connect

        if isinstance(self.view, TableView):
            self.post_message(ExportDefaults(default_table_export_path(self.roots, self.db_path, self.view.name)))
            return
        db = connect(self.db_path)
        try:
            run_path = run_file(db, self.view.run_id)
            part = run_part(db, self.view.run_id)
        finally:
            db.conn.close()
        if run_path is None:
            run_path = str(self.db_path.parent / f"run-{self.view.run_id}")
        self.post_message(ExportDefaults(default_export_path(run_path, self.roots, "csv", part=part)))

    @on(ExportDefaults)
    def _on_defaults(self, message: ExportDefaults) -> None:
        path_input = self.query_one("#export-path", Input)
        if not path_input.value:
            path_input.value = str(message.path.with_suffix(f".{self.format}"))

    @on(RadioSet.Changed)
    def _on_format_changed(self) -> None:
        path_input = self.query_one("#export-path", Input)
        if path_input.value:
            path = Path(path_input.value)
            if path.suffix.lower() in (".csv", ".json", ".svg"):
                path_input.value = str(path.with_suffix(f".{self.format}"))

    @on(Input.Submitted, "#export-path")
    @on(Button.Pressed, "#export-start")
    def action_export(self) -> None:
        text = self.query_one("#export-path", Input).value.strip()
        status = self.query_one("#export-status", Static)
        if not text:
            status.update("Give a path to write.")
            status.add_class("-error")
            return
        path = Path(text).expanduser()
        if path.exists() and self._replace != path:
            # Never over an existing file unasked: a second Export (or Enter) on the same path replaces it.
            self._replace = path
            status.update(plain(f"{path} exists. Export again to replace it, or change the path."))
            status.add_class("-error")
            return
        status.remove_class("-error")
        status.update("Exporting…")
        self.query_one("#export-start", Button).disabled = True
        self.run_export(path, self.format)

    @work(thread=True, exclusive=True, group="export", exit_on_error=False)
    def run_export(self, path: Path, format: str) -> None:
        """Write the view in a thread with its own connection."""
        from evtui.store.export.view import export_table, export_view
        from evtui.store.schema import connect

        worker = get_current_worker()
        try:
            if format == "svg" and self.svg is not None:
                from evtui.writers.svg import export_svg

                export_svg(self.svg, path)
                rows = -1  # a chart, not rows
            elif isinstance(self.view, TableView):
                rows = export_table(self.view, path, format)
            else:
                db = connect(self.db_path)
                try:
                    rows = export_view(db, self.view, path, format, should_stop=lambda: worker.is_cancelled)
                finally:
                    db.conn.close()
        except Exception as error:  # shown in the dialog; the user may fix the path and retry
            self.post_message(ExportFailed(f"{type(error).__name__}: {error}"))
            return
        self.post_message(ExportDone(path, rows))

    @on(ExportDone)
    def _on_done(self, message: ExportDone) -> None:
        self.written = (message.path, message.rows)
        noun = "row" if message.rows == 1 else "rows"
        what = "the chart" if message.rows < 0 else f"{message.rows:,} {noun}"
        self.app.notify(f"Exported {what} to {message.path}", title="Export", markup=False)
        self.dismiss(message.path)

    @on(ExportFailed)
    def _on_failed(self, message: ExportFailed) -> None:
        status = self.query_one("#export-status", Static)
        status.update(plain(f"Could not export: {message.error}"))
        status.add_class("-error")
        self.query_one("#export-start", Button).disabled = False

    @on(Button.Pressed, "#export-cancel")
    def action_cancel(self) -> None:
        self.workers.cancel_group(self, "export")
        self.dismiss(None)


def export_table_view(screen, table, name: str, title: str = "") -> None:
    """Open the export dialog for a screen's DataTable, with its rows as they show now."""
    columns = tuple(str(column.label) for column in table.columns.values())
    labels = getattr(table, "column_labels", None)  # a BoundedTable's, without its sort mark
    if labels is not None and len(labels) == len(columns):
        columns = tuple(str(label) for label in labels)
    row_at = getattr(table, "full_row_at", table.get_row_at)  # a BoundedTable's: headlines whole, not fitted to the screen
    rows = tuple(tuple(str(cell) for cell in row_at(index)) for index in range(table.row_count))
    app = screen.app
    roots = getattr(app, "ingest_paths", [])
    app.push_screen(ExportViewDialog(app.db_path, TableView(name, columns, rows), roots, title=title))


def export_plot_view(screen, panel, view: TableView, title: str = "") -> None:
    """Open the export dialog for a chart screen: SVG of the chart (shown first if the table was
    showing), CSV or JSON of `view`, the numbers behind it."""
    app = screen.app
    roots = getattr(app, "ingest_paths", [])

    def open_dialog() -> None:
        svg = panel.svg(title or view.name)
        app.push_screen(ExportViewDialog(app.db_path, view, roots, title=title, svg=svg))

    if panel.showing != "chart":
        panel.showing = "chart"
        screen.call_after_refresh(open_dialog)  # the SVG is of the chart as drawn
    else:
        open_dialog()
