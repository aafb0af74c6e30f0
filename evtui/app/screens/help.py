"""The `?` screen: every key of the screen it was opened from, with what it does."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Static


def describe_keys(screen: Screen) -> list[tuple[str, str]]:
    """(key, description) for the active bindings of `screen`, each key once: the keys the
    footer shows first, then the rest (navigation, Textual's own)."""
    app = screen.app
    rank = {screen: 0, app: 1}
    actives = sorted(
        screen.active_bindings.values(),
        key=lambda active: (not active.binding.show, rank.get(active.node, 2)),
    )
    rows: list[tuple[str, str]] = []
    seen: set[str] = set()
    for active in actives:
        binding = active.binding
        # A tooltip is the longer say of a key whose footer label is short (the runs list's `g Group`).
        description = binding.tooltip or binding.description
        key = binding.key_display or app.get_key_display(binding)
        if not description or key in seen:
            continue
        seen.add(key)
        rows.append((key, description))
    if "^p" not in seen:
        rows.append(("^p", "Command palette"))
    return rows


class HelpScreen(ModalScreen[None]):
    """Lists the keys of the screen below; any of escape, ? or q closes it."""

    BINDINGS = [
        Binding("escape", "dismiss", "Close"),
        Binding("question_mark", "dismiss", "Close", show=False),
        Binding("q", "dismiss", "Close", show=False),
    ]

    def __init__(self, under: Screen) -> None:
        super().__init__()
        self._keys = describe_keys(under)
        self._title = f"Keys — {under.title or under.__class__.__name__}"

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            yield Static(self._title, id="help-title")
            table: DataTable[str] = DataTable(cursor_type="none", zebra_stripes=True, id="help-keys")
            table.add_columns("Key", "Action")
            table.add_rows(self._keys)
            yield table
            yield Static("escape closes", id="help-hint")
