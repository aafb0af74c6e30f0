"""The hand-review dialog: a new value for one score (validated as typed), a reason, an author."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.validation import ValidationResult, Validator
from textual.widgets import Button, Input, Label, Static

from evtui.safe_text import safe_line
from evtui.sample_view.view import ScoreView
from evtui.store.score_edits import default_author, parse_score_value
from evtui.app.widgets.key_footer import KeyFooter


@dataclass(frozen=True)
class ScoreEditRequest:
    """What the reviewer entered; the caller saves it."""

    score_id: int
    value: Any
    reason: str
    author: str


class ScoreValueValidator(Validator):
    """C, I, P, N or a number (the store's parse_score_value decides)."""

    def validate(self, value: str) -> ValidationResult:
        try:
            parse_score_value(value)
        except ValueError as error:
            return self.failure(str(error))
        return self.success()


class EditScoreDialog(ModalScreen[ScoreEditRequest | None]):
    """Edit one score; dismisses with the request, or None on cancel."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="edit_score.cancel")]
    DEFAULT_CSS = """
    EditScoreDialog {
        align: center middle;
    }
    #edit-box {
        width: 72;
        height: auto;
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }
    #edit-title {
        text-style: bold;
        color: $primary;
    }
    #edit-current {
        color: $text-muted;
        padding-bottom: 1;
    }
    #edit-value-hint {
        height: 1;
        color: $text-muted;
    }
    #edit-value-hint.-invalid {
        color: $error;
    }
    #edit-buttons {
        height: auto;
        align-horizontal: right;
        padding-top: 1;
    }
    #edit-buttons Button {
        margin-left: 1;
    }
    """

    def __init__(self, score: ScoreView) -> None:
        super().__init__()
        self.score = score

    def compose(self) -> ComposeResult:
        from evtui.app.widgets.sample.score_card import value_text

        score = self.score.score
        with Vertical(id="edit-box"):
            yield Static(Content(f"Review {safe_line(score.scorer, 120)}"), id="edit-title")
            yield Static(
                Content(f"current: {value_text(score.value)} ({safe_line(self.score.origin_label)}); the original is kept"),
                id="edit-current",
            )
            yield Label("New value (C, I, P, N or a number)")
            yield Input(
                placeholder="C", id="edit-value", validators=[ScoreValueValidator()], validate_on=["changed", "submitted"]
            )
            yield Static("", id="edit-value-hint")
            yield Label("Reason")
            yield Input(placeholder="why this value", id="edit-reason")
            yield Label("Author")
            yield Input(default_author(getattr(self.app, "reviewer", None)), id="edit-author")
            with Horizontal(id="edit-buttons"):
                yield Button("Cancel", id="edit-cancel")
                yield Button("Save", id="edit-save", variant="primary")
        yield KeyFooter()  # the dialog's own keys, not the dimmed screen's below it

    def on_mount(self) -> None:
        self.query_one("#edit-value", Input).focus()

    @on(Input.Changed, "#edit-value")
    def _show_validation(self, event: Input.Changed) -> None:
        hint = self.query_one("#edit-value-hint", Static)
        result = event.validation_result
        if not event.value.strip():
            hint.update("")
            hint.set_class(False, "-invalid")
        elif result is not None and not result.is_valid:
            hint.update(Content("✗ " + "; ".join(result.failure_descriptions)))
            hint.set_class(True, "-invalid")
        else:
            hint.update(Content(safe_line(f"✓ {parse_score_value(event.value)!r}")))
            hint.set_class(False, "-invalid")

    @on(Input.Submitted)
    def _next_or_save(self, event: Input.Submitted) -> None:
        # Enter moves through the fields and saves from the last one.
        if event.input.id == "edit-author":
            self._save()
        else:
            self.focus_next()

    @on(Button.Pressed, "#edit-save")
    def _save_pressed(self) -> None:
        self._save()

    @on(Button.Pressed, "#edit-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)

    def _save(self) -> None:
        value_input = self.query_one("#edit-value", Input)
        try:
            value = parse_score_value(value_input.value)
        except ValueError as error:
            hint = self.query_one("#edit-value-hint", Static)
            hint.update(Content(f"✗ {error}"))
            hint.set_class(True, "-invalid")
            value_input.focus()
            return
        reason = self.query_one("#edit-reason", Input).value.strip()
        author = self.query_one("#edit-author", Input).value.strip() or default_author(getattr(self.app, "reviewer", None))
        self.dismiss(ScoreEditRequest(self.score.score.id, value, reason, author))
