"""Dialog choosing which sample metadata keys the samples table shows as columns."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, SelectionList, Static

from evtui.app.safe_content import plain
from evtui.app.widgets.key_footer import KeyFooter


class MetadataColumnsDialog(ModalScreen[list[str] | None]):
    """The run's metadata keys, the shown ones ticked; returns the keys to show (None: cancelled)."""

    BINDINGS = [Binding("escape", "dismiss", "Cancel"), Binding("ctrl+s", "apply", "Apply")]
    DEFAULT_CSS = """
    MetadataColumnsDialog { align: center middle; }
    #metadata-columns-box { width: 60; height: auto; max-height: 80%; border: round $primary; padding: 0 1; background: $surface; }
    #metadata-columns-list { height: auto; max-height: 20; }
    #metadata-columns-buttons { height: auto; align-horizontal: right; }
    #metadata-columns-hint { color: $text-muted; }
    """

    def __init__(self, keys: list[str], shown: list[str]) -> None:
        super().__init__()
        self.keys = keys
        self.shown = shown

    def compose(self) -> ComposeResult:
        with Vertical(id="metadata-columns-box"):
            if self.keys:
                yield Static("Metadata columns", id="metadata-columns-title")
                yield SelectionList[str](*[(plain(key, 80), key, key in self.shown) for key in self.keys], id="metadata-columns-list")
                yield Static("space ticks a key · ctrl+s or Apply shows them · escape cancels", id="metadata-columns-hint")
            else:
                yield Static("This run's samples have no metadata.", id="metadata-columns-title")
            with Horizontal(id="metadata-columns-buttons"):
                yield Button("Cancel", id="metadata-columns-cancel")
                if self.keys:
                    yield Button("Apply", variant="primary", id="metadata-columns-apply")
        yield KeyFooter()  # the dialog's own keys, not the dimmed screen's below it

    def action_apply(self) -> None:
        if not self.keys:
            self.dismiss(None)
            return
        ticked = set(self.query_one(SelectionList).selected)
        self.dismiss([key for key in self.keys if key in ticked])

    @on(Button.Pressed, "#metadata-columns-apply")
    def _on_apply(self) -> None:
        self.action_apply()

    @on(Button.Pressed, "#metadata-columns-cancel")
    def _on_cancel(self) -> None:
        self.dismiss(None)
