"""One score in full: value, where it came from, answer, explanation, reason, metadata, edit history."""

from __future__ import annotations

import json
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import ScrollableContainer, Vertical
from textual.content import Content
from textual.widgets import Static

from evtui.app import formatting as fmt
from evtui.app.widgets.line_view import clipped, printable
from evtui.safe_text import safe_line
from evtui.sample_view.view import ScoreView

METADATA_CHARS = 20_000  # a grader's whole conversation can sit in metadata; Static wraps ~5 s per MB

ORIGIN_STYLES = {"recorded": "$foreground-muted", "job": "$secondary", "human": "$accent"}


def value_text(value: Any) -> str:
    """A decoded score value as text: C, 0.75, {"a":1}; NaN reads `unscored`."""
    if value is None:
        return "–"
    if isinstance(value, float) and value != value:
        return "unscored"
    if isinstance(value, str | int | float | bool):
        return safe_line(str(value), 200)
    return json.dumps(value, separators=(",", ":"), default=str)


class ScoreCard(Vertical, can_focus=True):
    """Focusable, so the screen knows which score `e` edits and `c` copies; arrows scroll the list."""

    BINDINGS = [
        Binding("down", "scroll_list('down')", "Scroll", show=False),
        Binding("up", "scroll_list('up')", "Scroll", show=False),
        Binding("pagedown", "scroll_list('page_down')", "Scroll", show=False),
        Binding("pageup", "scroll_list('page_up')", "Scroll", show=False),
        Binding("left", "screen.step_tab(-1)", "Prev tab", show=False),
        Binding("right", "screen.step_tab(1)", "Next tab", show=False),
    ]

    DEFAULT_CSS = """
    ScoreCard {
        height: auto;
        border: round $panel;
        padding: 0 1;
        margin-bottom: 1;
    }
    ScoreCard:focus {
        border: round $primary;
    }
    ScoreCard > .score--label {
        color: $text-muted;
        text-style: bold;
        margin-top: 1;
    }
    ScoreCard > .score--text {
        padding-left: 2;
    }
    ScoreCard > .score--muted {
        padding-left: 2;
        color: $text-muted;
    }
    """

    def __init__(self, view: ScoreView) -> None:
        super().__init__()
        self.view = view
        score = view.score
        # Content, not str: a border title string would be parsed as markup, and names may hold `[`.
        self.border_title = Content(safe_line(score.scorer, 120))
        self.border_subtitle = Content(safe_line(view.origin_label) + (" · counts" if view.effective else ""))

    def action_scroll_list(self, how: str) -> None:
        # A long explanation is taller than the pane: the keys scroll the list around the card.
        parent = self.parent
        if isinstance(parent, ScrollableContainer):
            getattr(parent, f"scroll_{how}")()

    def compose(self) -> ComposeResult:
        score = self.view.score
        yield Static(self.headline(), classes="score--headline")
        for label, text in (("Answer", score.answer), ("Explanation", score.explanation), ("Reason", score.reason)):
            if text:
                yield Static(label, classes="score--label")
                yield Static(Content(printable(text)), classes="score--text")
        yield Static(f"History ({len(score.edits)} entr{'y' if len(score.edits) == 1 else 'ies'})", classes="score--label")
        if not score.edits:
            yield Static("no edits", classes="score--muted")
        for edit in score.edits:
            yield Static(history_line(edit), classes="score--text")
        if score.metadata:
            yield Static("Metadata", classes="score--label")
            yield Static(Content(clipped(outline(score.metadata), METADATA_CHARS)), classes="score--text")

    def headline(self) -> Content:
        score = self.view.score
        number = "" if score.value_num is None else f" ({fmt.format_number(score.value_num)})"
        return Content.assemble(
            fmt.score_content(score.value_num, value_text(score.value)),
            number,
            "  ",
            (safe_line(self.view.origin_label), ORIGIN_STYLES.get(self.view.origin, "$text")),
            ("  ★ counts for this scorer" if self.view.effective else "  (overridden)", "$foreground-muted"),
        )


def outline(value: Any, indent: str = "") -> str:
    """JSON-ish data as an indented outline: multi-line strings (a grader's prompt and reply) keep
    their line breaks instead of showing `\\n` as JSON would."""
    if isinstance(value, dict):
        if not value:
            return indent + "{}"
        lines = []
        for key, item in value.items():
            if isinstance(item, dict | list) and item or isinstance(item, str) and "\n" in item:
                lines.append(f"{indent}{key}:")
                lines.append(outline(item, indent + "  "))
            else:
                lines.append(f"{indent}{key}: {_scalar(item)}")
        return "\n".join(lines)
    if isinstance(value, list):
        if not value:
            return indent + "[]"
        lines = []
        for item in value:
            text = outline(item, indent + "  ")
            lines.append(f"{indent}- {text[len(indent) + 2:]}")
        return "\n".join(lines)
    if isinstance(value, str) and "\n" in value:
        return "\n".join(indent + line for line in value.strip("\n").split("\n"))
    return indent + _scalar(value)


def _scalar(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def history_line(edit: Any) -> Content:
    """`#1 C · alice · 2026-11-23 08:06 · “reason”`; entry #0 of a history is the original value."""
    original = edit.seq == 0 and not edit.author
    when = safe_line((edit.timestamp or "")[:16].replace("T", " "))
    parts: list[str | tuple[str, str]] = [
        (f"#{edit.seq} ", "$foreground-muted"), (value_text(edit.value), "bold"),
        " · original value" if original else f" · {safe_line(edit.author or 'unknown author', 120)}",
    ]  # fmt: skip
    if when:
        parts.append((f" · {when}", "$foreground-muted"))
    if edit.edit_reason:
        parts.append(f" · “{printable(edit.edit_reason)}”")
    if edit.explanation and not original:
        parts.append((f" · explanation: {printable(edit.explanation)}", "$foreground-muted"))
    if not original:
        parts.append((" · edited in evtui" if edit.origin == "evtui" else " · edit recorded in the log", "$foreground-muted"))
    return Content.assemble(*parts)
