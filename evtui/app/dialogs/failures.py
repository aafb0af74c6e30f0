"""Dialog listing the run files that could not be indexed, with each error."""

from __future__ import annotations

from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.content import Content
from textual.widgets import DataTable, Static

from rich.cells import cell_len
from rich.text import Text

from evtui.app.formatting import middle_ellipsis
from evtui.app.messages import FailuresLoaded
from evtui.app.safe_content import plain
from evtui.safe_text import safe_line
from evtui.app.widgets.key_footer import KeyFooter


class FailuresDialog(ModalScreen[None]):
    """Path and error of every file the index could not read (as recorded in the index now)."""

    BINDINGS = [Binding("escape", "dismiss", "Close"), Binding("f", "dismiss", "Close", show=False)]

    def __init__(self, db_path: Path, known: list[tuple[str, str]]) -> None:
        super().__init__()
        self.db_path = db_path
        self.failures = known

    def compose(self) -> ComposeResult:
        with Vertical(id="failures-box"):
            yield Static("", id="failures-title")
            table: DataTable[Content] = DataTable(cursor_type="row", id="failures-table")
            yield table
            yield Static("escape closes", id="failures-hint")
        yield KeyFooter()  # the dialog's own keys, not the dimmed screen's below it

    def on_mount(self) -> None:
        self._show(self.failures)
        self.load()

    @work(thread=True, exclusive=True, group="failures-dialog", exit_on_error=False)
    def load(self) -> None:
        """Read the list from the index: indexing may have added failures since the last count."""
        from evtui.app.store_calls import failed_files

        self.post_message(FailuresLoaded(failed_files(self.db_path)))

    @on(FailuresLoaded)
    def _on_loaded(self, message: FailuresLoaded) -> None:
        message.stop()  # the app's own handler keeps its count from its own loads
        self._show(message.failures)

    def _show(self, failures: list[tuple[str, str]]) -> None:
        self.failures = failures
        count = len(failures)
        title = f"{count} file{'s' if count != 1 else ''} could not be indexed" if count else "Every file was indexed."
        self.query_one("#failures-title", Static).update(title)
        table = self.query_one("#failures-table", DataTable)
        # Content, never str: a DataTable reads a str cell as markup, and file names are run data.
        # DataTable cannot measure Content, so the widths are given.
        # The error wraps in the width the file leaves (at 80 columns it was cut after a few
        # words); a long path loses its middle, not its name.
        room = (table.size.width or int(self.app.size.width * 0.9) - 4) - 2 - 2 * 2 * table.cell_padding
        # The error as rich Text (never markup-parsed, like Content): a DataTable row of auto
        # height wraps Text to its column, not Content.
        rows = [(safe_line(path), Text(safe_line(error, 300))) for path, error in failures]
        file_width = min(max([4, *(cell_len(path) for path, _ in rows)]), 60, max(16, room * 2 // 5))
        error_width = max(min(max([5, *(error.cell_len for _, error in rows)]), 300, room - file_width), 20)
        table.clear(columns=True)
        table.add_column("File", width=file_width)
        table.add_column("Error", width=error_width)
        for path, error in rows:
            table.add_row(plain(middle_ellipsis(path, file_width)), error, height=None)
        table.display = bool(count)
