"""The samples filter bar: a filter expression checked as you type, and a full-text search.

Enter applies (a malformed filter never is: its error shows under it) and leaves the bar;
Escape clears the input it is in (applying that), or, when it is already empty, leaves the bar. What is applied is
posted as `FilterBar.Changed(filter, search)`; the screen reloads its table with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input, Static

from evtui.store.queries.filters import FilterError, compile_filter
from evtui.app.widgets.safe_input import SafeInput

FILTER_PLACEHOLDER = 'filter, e.g. match == "I" and tokens > 2000   (Enter applies)'
SEARCH_PLACEHOLDER = "search input and output"
# Shorter forms for a narrow terminal, longest first (SafeInput shows the longest that fits).
FILTER_PLACEHOLDERS = (FILTER_PLACEHOLDER, 'filter, e.g. match == "I" and tokens > 2000', 'filter, e.g. match == "I"', "filter")
SEARCH_PLACEHOLDERS = (SEARCH_PLACEHOLDER, "search input, output", "search text", "search")


class FilterBar(Widget):
    """Filter and search inputs over a sample table; posts Changed when Enter applies them."""

    BINDINGS = [Binding("escape", "clear", "Clear", id="filter_bar.clear")]
    DEFAULT_CSS = """
    FilterBar { height: auto; }
    FilterBar Vertical, FilterBar Horizontal { height: auto; }
    FilterBar #filter-input { width: 2fr; }
    FilterBar #search-input { width: 1fr; }
    FilterBar #filter-error { color: $error; height: auto; padding: 0 1; }
    FilterBar #filter-error.-hidden { display: none; }
    """

    @dataclass
    class Changed(Message):
        """A filter and search were applied (None = none)."""

        bar: FilterBar
        filter: str | None
        search: str | None

        @property
        def control(self) -> FilterBar:
            return self.bar

    @dataclass
    class Left(Message):
        """Escape on an empty input: focus should go back to the table."""

        bar: FilterBar

        @property
        def control(self) -> FilterBar:
            return self.bar

    def __init__(
        self,
        score_columns: Sequence[str] = (),
        *,
        filter: str | None = None,
        search: str | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.score_columns = list(score_columns)
        self.applied_filter = filter or None
        self.applied_search = search or None
        self.error: str | None = None

    def compose(self) -> ComposeResult:
        with Vertical():
            with Horizontal():
                yield SafeInput(self.applied_filter or "", placeholders=FILTER_PLACEHOLDERS, id="filter-input")
                yield SafeInput(self.applied_search or "", placeholders=SEARCH_PLACEHOLDERS, id="search-input")
            yield Static("", id="filter-error", classes="-hidden", markup=False)

    @property
    def filter_input(self) -> Input:
        return self.query_one("#filter-input", Input)

    @property
    def search_input(self) -> Input:
        return self.query_one("#search-input", Input)

    def set_applied(self, filter: str | None, search: str | None) -> None:
        """Show `filter` and `search` as applied (the screen applies them itself: no Changed)."""
        self.applied_filter, self.applied_search = filter or None, search or None
        self.filter_input.value = filter or ""
        self.search_input.value = search or ""
        self._check(self.filter_input.value)

    def set_score_columns(self, score_columns: Sequence[str]) -> None:
        """The scorers the filter may name (known once the run's scorers load); re-checks the text."""
        self.score_columns = list(score_columns)
        self._check(self.filter_input.value)

    def focus_filter(self) -> None:
        self.filter_input.focus()

    def check(self, text: str) -> str | None:
        """The error for filter `text` (None when it compiles)."""
        try:
            compile_filter(text, score_columns=self.score_columns)
        except FilterError as error:
            return f"{error.message} (at character {error.position + 1})"
        return None

    def _check(self, text: str) -> None:
        self.error = self.check(text)
        label = self.query_one("#filter-error", Static)
        label.update(self.error or "")
        label.set_class(self.error is None, "-hidden")
        self.filter_input.set_class(self.error is not None, "-invalid")

    @on(Input.Changed, "#filter-input")
    def _on_filter_typed(self, event: Input.Changed) -> None:
        event.stop()
        self._check(event.value)

    @on(Input.Changed, "#search-input")
    def _on_search_typed(self, event: Input.Changed) -> None:
        event.stop()

    @on(Input.Submitted)
    def _on_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.apply():
            self.post_message(self.Left(self))

    def apply(self, *, only_if_changed: bool = False) -> bool:
        """Apply the inputs' filter and search; False (nothing applied) while the filter is malformed."""
        self._check(self.filter_input.value)
        if self.error is not None:
            self.filter_input.focus()
            return False
        wanted = (self.filter_input.value.strip() or None, self.search_input.value.strip() or None)
        if only_if_changed and wanted == (self.applied_filter, self.applied_search):
            return True
        self.applied_filter, self.applied_search = wanted
        self.post_message(self.Changed(self, self.applied_filter, self.applied_search))
        return True

    def action_clear(self) -> None:
        """Clear the focused input and apply; leave the bar if it was already empty."""
        focused = self.screen.focused
        target = focused if isinstance(focused, Input) and focused in (self.filter_input, self.search_input) else None
        if target is None or not target.value:
            self.post_message(self.Left(self))
            return
        target.value = ""
        self._check(self.filter_input.value)
        if self.error is None:
            self.apply(only_if_changed=True)
