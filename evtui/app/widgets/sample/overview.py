"""The first thing to read about a sample: epochs, input, target, choices, output, error, scores, usage."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Collapsible, Static

from evtui.app import formatting as fmt
from evtui.app.widgets.sample.epoch_table import EpochTable
from evtui.app.widgets.line_view import clipped
from evtui.safe_text import safe_line
from evtui.app.widgets.sample.score_card import value_text
from evtui.sample_view.view import SampleView


# Longer texts are cut here (Static wraps ~5 s per MB); the Transcript tab has inputs and outputs whole.
OVERVIEW_CHARS = 4000


class SampleOverview(VerticalScroll):
    """Sections one under another; the pane scrolls when the texts are long."""

    DEFAULT_CSS = """
    SampleOverview {
        height: 1fr;
        padding: 0 1;
    }
    SampleOverview > .overview--label {
        color: $primary;
        text-style: bold;
        margin-top: 1;
    }
    SampleOverview > .overview--text {
        padding-left: 2;
    }
    SampleOverview > .overview--error {
        padding-left: 2;
        color: $error;
    }
    SampleOverview > .overview--muted {
        padding-left: 2;
        color: $text-muted;
    }
    """

    def __init__(self, view: SampleView, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.view = view

    def compose(self) -> ComposeResult:
        view, sample = self.view, self.view.sample
        if len(view.epochs) > 1:
            yield Static(f"Epochs ({len(view.epochs)}) · < > or Enter: switch", classes="overview--label")
            yield EpochTable(view.epochs, view.scorers, sample.epoch, id="epoch-table")
        yield from self._section("Input", sample.input_text or "(empty)")
        yield from self._section("Target", "\n".join(sample.target) if sample.target else "(none)")
        if sample.choices:
            letters = [chr(ord("A") + i) if i < 26 else str(i + 1) for i in range(len(sample.choices))]
            yield from self._section("Choices", "\n".join(f"{l}) {c}" for l, c in zip(letters, sample.choices)))
        yield from self._section("Output", sample.output_text or "(no output)")
        if sample.error or sample.limit:
            yield Static("Error" if sample.error else "Limit", classes="overview--label")
            if sample.limit:
                yield Static(Content(f"stopped by the {safe_line(sample.limit, 80)} limit"), classes="overview--error")
            if sample.error:
                yield Static(Content(clipped(sample.error, OVERVIEW_CHARS)), classes="overview--error")
            if view.error_traceback:
                # Tracebacks run to dozens of lines: folded, so the scores below stay in view.
                with Collapsible(title="Traceback (Enter to unfold)", collapsed=True):
                    yield Static(Content(clipped(view.error_traceback.rstrip(), 20_000)), classes="overview--muted")
        yield Static("Scores", classes="overview--label")
        if not view.scores:
            yield Static("no scores", classes="overview--muted")
        for score in view.scores:
            detail = score.score
            yield Static(
                Content.assemble(
                    (f"{safe_line(detail.scorer, 120)}: ", "bold"),
                    fmt.score_content(detail.value_num, value_text(detail.value)),
                    (f"  {safe_line(score.origin_label)}" + ("" if score.effective else " (overridden)"), "$foreground-muted"),
                    (f"  answer: {clipped(detail.answer, 200)}" if detail.answer else "", "$foreground-muted"),
                ),
                classes="overview--text",
            )
        yield Static("Usage", classes="overview--label")
        yield Static(usage_text(view), classes="overview--text")

    def _section(self, label: str, text: str) -> ComposeResult:
        yield Static(label, classes="overview--label")
        yield Static(Content(clipped(text, OVERVIEW_CHARS)), classes="overview--text")


def usage_text(view: SampleView) -> str:
    sample = view.sample
    return (
        f"tokens {fmt.format_tokens(sample.input_tokens)} in / {fmt.format_tokens(sample.output_tokens)} out"
        f" / {fmt.format_tokens(sample.total_tokens)} total · cost {fmt.format_cost(sample.cost)}"
        f" · time {fmt.format_duration(sample.total_time)} (working {fmt.format_duration(sample.working_time)})"
        + ("" if sample.completed else " · not completed")
    )
