"""One line above the footer: what is indexed, indexing progress, failed-file count.

A status longer than the terminal is wide wraps onto a second line; past two lines it ends in an
ellipsis (a long filter or metadata key quoted from a run), never cut silently."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from evtui.app.safe_content import plain
from evtui.safe_text import safe_line


MAX_LINES = 2


class StatusLine(Static):
    """Follows the app's indexing reactives; screens set `detail` (e.g. "12 runs")."""

    DEFAULT_CSS = """
    StatusLine {
        height: auto;
        max-height: 2;
        padding: 0 1;
        background: $panel;
        color: $foreground;
    }
    """

    def __init__(self, detail: str = "", id: str | None = None) -> None:
        super().__init__("", id=id)
        self._detail = detail
        self._text = Content("")

    def on_mount(self) -> None:
        app = self.app
        for name in ("ingest_running", "ingest_done", "ingest_total", "ingest_current", "failure_count"):
            self.watch(app, name, self._update_text, init=False)
        self._update_text()

    def set_detail(self, detail: str) -> None:
        self._detail = detail
        self._update_text()

    def _update_text(self, *_: object) -> None:
        app = self.app
        parts: list[Content | str] = []
        if getattr(app, "ingest_running", False):
            total = app.ingest_total  # type: ignore[attr-defined]
            done = app.ingest_done  # type: ignore[attr-defined]
            current = app.ingest_current  # type: ignore[attr-defined]
            text = f"Indexing {done}/{total} files" if total else "Indexing"
            parts.append(Content.styled(f"{text} ({safe_line(current, 80)})…" if current else f"{text}…", "$warning"))
        if self._detail:
            parts.append(plain(self._detail))  # details quote scorer names and filters
        failures = getattr(app, "failure_count", 0)
        if failures:
            parts.append(Content.styled(f"{failures} failed file{'s' if failures != 1 else ''} (f: list)", "$error"))
        self._text = Content(" · ").join(parts)
        self._fit()

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        """The whole status, or its first MAX_LINES lines at this width with an ellipsis."""
        width = self.content_region.width or self.app.size.width - 2
        lines = self._text.wrap(max(width, 1))
        if len(lines) > MAX_LINES:
            kept = lines[: MAX_LINES - 1]
            last = lines[MAX_LINES - 1]
            lines = [*kept, last.truncate(max(width - 1, 0)).rstrip() + "…"]
            self.update(Content("\n").join(lines))
        else:
            self.update(self._text)
