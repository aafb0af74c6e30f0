"""One sample id × epoch in every run of a cross-run table, side by side: the input and target
once, then per run its answer, every score with its explanation, and the output."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import HorizontalScroll, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Header, Static

from evtui.app.safe_content import plain, plain_block
from evtui.app.widgets.key_footer import KeyFooter
from evtui.app.widgets.sample.columns import score_text
from evtui.safe_text import safe_line

TEXT_LIMIT = 20_000  # characters of an output shown per run (the run's own sample view has it all)


@dataclass
class SamplesLoaded(Message):
    samples: dict[int, Any]


@dataclass
class SamplesFailed(Message):
    error: str


class AcrossSampleScreen(Screen[None]):
    """The sample in each run, one column per run (scroll sideways past the first few)."""

    TITLE = "Sample across runs"
    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="across_sample.back")]
    DEFAULT_CSS = """
    AcrossSampleScreen #across-sample-head { height: auto; max-height: 8; padding: 0 1; }
    AcrossSampleScreen #across-sample-runs { height: 1fr; }
    /* 48 cells a run where there is room; at 80 columns two runs share the width (38 at least). */
    AcrossSampleScreen .across-run { width: 1fr; min-width: 38; max-width: 48; height: 1fr; border: round $panel; padding: 0 1; }
    """

    def __init__(self, runs: list[Any], sample_id: str, epoch: int, rowids: dict[int, int]) -> None:
        super().__init__()
        self.runs, self.sample_id, self.epoch, self.rowids = runs, sample_id, epoch, rowids

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("loading…", id="across-sample-head")
        with HorizontalScroll(id="across-sample-runs"):
            for run in self.runs:
                with VerticalScroll(classes="across-run", id=f"across-run-{run.index}"):
                    yield Static("", classes="across-run-text")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.sub_title = safe_line(f"sample {self.sample_id}" + (f" epoch {self.epoch}" if self.epoch != 1 else ""))
        for run in self.runs:
            column = self.query_one(f"#across-run-{run.index}", VerticalScroll)
            column.border_title = plain(f"{run.index} · {Path(run.path).name}" + (f" · {run.part}" if run.part else ""), 60)
            column.border_subtitle = plain(run.model or "–", 40)
        self.load()

    @work(thread=True, exclusive=True, group="across-sample", exit_on_error=False)
    def load(self) -> None:
        from evtui.app.store_calls import fetch_samples_side_by_side

        try:
            samples = fetch_samples_side_by_side(self.app.db_path, self.rowids)  # type: ignore[attr-defined]
        except Exception as error:  # shown; Back still works
            self.post_message(SamplesFailed(f"{type(error).__name__}: {error}"))
            return
        self.post_message(SamplesLoaded(samples))

    @on(SamplesFailed)
    def _on_failed(self, message: SamplesFailed) -> None:
        self.query_one("#across-sample-head", Static).update(plain(f"Could not load the sample: {message.error}"))

    @on(SamplesLoaded)
    def _on_loaded(self, message: SamplesLoaded) -> None:
        first = next((sample for sample in message.samples.values() if sample is not None), None)
        head = Content("")
        if first is not None:
            head = Content.assemble(
                ("Input  ", "bold"), plain(" ".join(first.input_text.split()), 600), "\n",
                ("Target ", "bold"), plain(" | ".join(first.target) or "–", 300),
            )  # fmt: skip
        self.query_one("#across-sample-head", Static).update(head)
        for run in self.runs:
            sample = message.samples.get(run.index)
            text = self.query_one(f"#across-run-{run.index} .across-run-text", Static)
            text.update(run_panel(run, sample))


def run_panel(run: Any, sample: Any) -> Content:
    """One run's side: answer, each score (value, answer, explanation), then the output."""
    if sample is None:
        return Content.styled("this run has no such sample", "$foreground-muted")
    parts: list[Any] = []
    answer_scorer = run.scorers[0] if run.scorers else None
    answer = next((score.answer for score in sample.scores if score.scorer == answer_scorer and score.answer is not None), None)
    parts += [("Answer ", "bold"), plain(answer if answer is not None else "–", 400), "\n"]
    from evtui.store.queries.effective_scores import effective_rank

    seen: set[str] = set()
    ranked = sorted(sample.scores, key=lambda score: effective_rank(score.source, score.job_id, score.value, score.value_num))
    for score in ranked:
        if score.scorer in seen:
            continue  # the effective score comes first; older sources are in the run's own sample view
        seen.add(score.scorer)
        parts += [(f"{safe_line(score.scorer, 40)} ", "bold"), plain(score_text(score.value), 80)]
        if score.explanation:
            parts += ["\n  ", Content.styled(safe_line(score.explanation, 400), "$foreground-muted")]
        parts.append("\n")
    if sample.error:
        parts += [Content.styled(f"error: {safe_line(sample.error, 400)}", "$error"), "\n"]
    output = sample.output_text or ""
    shown = output[:TEXT_LIMIT]
    parts += ["\n", ("Output", "bold"), "\n", plain_block(shown)]
    if len(output) > TEXT_LIMIT:
        parts.append(Content.styled(f"\n… {len(output) - TEXT_LIMIT:,} more characters (the run's sample view has them)", "$foreground-muted"))
    return Content.assemble(*parts)
