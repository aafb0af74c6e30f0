"""Dialog listing the run files that could not be indexed, with each error."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static


class FailuresDialog(ModalScreen[None]):
    """Path and error of every file the index could not read."""

    BINDINGS = [Binding("escape", "dismiss", "Close"), Binding("f", "dismiss", "Close", show=False)]

    def __init__(self, failures: list[tuple[str, str]]) -> None:
        super().__init__()
        self.failures = failures

    def compose(self) -> ComposeResult:
        count = len(self.failures)
        with Vertical(id="failures-box"):
            yield Static(
                f"{count} file{'s' if count != 1 else ''} could not be indexed" if count else "Every file was indexed.",
                id="failures-title",
            )
            table: DataTable[str] = DataTable(cursor_type="row", id="failures-table")
            table.add_columns("File", "Error")
            for path, error in self.failures:
                table.add_row(path, error.replace("\n", " ")[:300])
            table.display = bool(count)
            yield table
            yield Static("escape closes", id="failures-hint")
