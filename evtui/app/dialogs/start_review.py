"""The dialog that starts a review queue over one scorer's scores: which samples (all, the current
filter, unscored, disagreements of one kind, disputed, a random sample), its name, blind mode and
the reviewer. It makes the queue in a worker and dismisses with (queue name, reviewer)."""

from __future__ import annotations

from datetime import datetime, timezone

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Select, Static

from evtui.app.safe_content import plain
from evtui.app.widgets.safe_input import SafeInput
from evtui.app.widgets.key_footer import KeyFooter

# (label, Selection kind, disagreement kind)
CHOICES: list[tuple[str, str, str]] = [
    ("All samples", "all", "any"),
    ("The current filter", "filter", "any"),
    ("Unscored samples / grader failures", "unscored", "any"),
    ("Disagreements: any kind", "disagreements", "any"),
    ("Disagreements: panel judges that split", "disagreements", "panel"),
    ("Disagreements: a job vs the log", "disagreements", "job_vs_log"),
    ("Disagreements: the judge vs a human", "disagreements", "judge_vs_human"),
    ("Disagreements: two humans", "disagreements", "humans"),
    ("Disputed samples (for adjudication)", "disputed", "any"),
    ("A random sample of N", "random", "any"),
]


class StartReviewDialog(ModalScreen[tuple[str, str] | None]):
    """Choose a queue's selection, name, blind mode and reviewer; None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="start_review.cancel")]
    DEFAULT_CSS = """
    StartReviewDialog { align: center middle; }
    #review-box { width: 76; max-width: 100%; height: auto; max-height: 100%; border: round $primary;
                  background: $surface; padding: 0 1; overflow-y: auto; }
    #review-box-title { text-style: bold; color: $primary; }
    #review-random { height: auto; }
    #review-random Input { width: 1fr; }
    #review-error { color: $error; height: auto; }
    #review-buttons { height: auto; align-horizontal: right; }
    #review-buttons Button { margin-left: 1; }
    """

    def __init__(self, run_id: int, scorer: str, *, filter: str | None = None, reviewer: str = "") -> None:
        super().__init__()
        self.run_id, self.scorer, self.filter, self.reviewer = run_id, scorer, filter, reviewer

    def compose(self) -> ComposeResult:
        choices = [(label, index) for index, (label, kind, _) in enumerate(CHOICES) if kind != "filter" or self.filter]
        stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M")
        with Vertical(id="review-box"):
            yield Static(plain(f"Review {self.scorer}"), id="review-box-title")
            if self.filter:
                yield Static(plain(f"filter: {self.filter}"))
            yield Select(choices, value=1 if self.filter else 0, allow_blank=False, id="review-selection")
            yield Label("N samples · seed · stratified", id="review-random-label")
            with Horizontal(id="review-random"):
                yield Input("50", placeholder="N", id="review-n", type="integer", tooltip="how many samples")
                yield Input("0", placeholder="seed", id="review-seed", type="integer")
                yield Checkbox("stratified by grade", id="review-stratified")
            yield Label("Queue name")
            yield SafeInput(f"{self.scorer}-{stamp}", id="review-name")
            yield Label("Reviewer")
            yield SafeInput(self.reviewer, id="review-reviewer")
            yield Checkbox("Blind: grade and other reviewers hidden until my verdict", True, id="review-blind")
            yield Static("", id="review-error")
            with Horizontal(id="review-buttons"):
                yield Button("Cancel", id="review-cancel")
                yield Button("Start", id="review-start", variant="primary")
        yield KeyFooter()  # the dialog's own keys, not the dimmed screen's below it

    def on_mount(self) -> None:
        self._show_random()
        self.query_one("#review-selection", Select).focus()

    @on(Select.Changed, "#review-selection")
    def _show_random(self) -> None:
        random = self._choice()[1] == "random"
        self.query_one("#review-random").display = self.query_one("#review-random-label").display = random

    def _choice(self) -> tuple[str, str, str]:
        value = self.query_one("#review-selection", Select).value
        return CHOICES[value if isinstance(value, int) else 0]

    def selection(self):  # type: ignore[no-untyped-def]
        """The Selection the form describes (ValueError on a bad N or seed)."""
        from evtui.store.review.queues import Selection

        _, kind, disagreement = self._choice()
        narrow = self.filter if kind != "all" else None
        if kind != "random":
            return Selection(kind=kind, filter=narrow, disagreement=disagreement)  # type: ignore[arg-type]
        n_text, seed_text = self.query_one("#review-n", Input).value, self.query_one("#review-seed", Input).value
        try:
            n, seed = int(n_text), int(seed_text or 0)
        except ValueError:
            raise ValueError("N and the seed must be whole numbers") from None
        if n <= 0:
            raise ValueError("N must be at least 1")
        stratified = self.query_one("#review-stratified", Checkbox).value
        return Selection(kind="random", filter=narrow, n=n, seed=seed, stratified=stratified)

    @on(Button.Pressed, "#review-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#review-start")
    @on(Input.Submitted)
    def _start(self) -> None:
        error = self.query_one("#review-error", Static)
        try:
            selection = self.selection()
        except ValueError as problem:
            error.update(plain(str(problem)))
            return
        name = self.query_one("#review-name", Input).value.strip()
        reviewer = self.query_one("#review-reviewer", Input).value.strip()
        if not reviewer:
            error.update("Give the reviewer's name.")
            return
        error.update("making the queue…")
        self._create(name, selection, reviewer, self.query_one("#review-blind", Checkbox).value)

    @work(thread=True, exclusive=True, group="start-review", exit_on_error=False)
    def _create(self, name: str, selection, reviewer: str, blind: bool) -> None:  # type: ignore[no-untyped-def]
        from evtui.app.store_calls import create_review_queue
        from evtui.store.review.queues import QueueError

        try:
            create_review_queue(self.app.db_path, name, self.run_id, self.scorer, selection,  # type: ignore[attr-defined]
                                reviewer=reviewer, blind=blind)
        except (QueueError, ValueError) as problem:
            self.app.call_from_thread(self.query_one("#review-error", Static).update, plain(str(problem)))
            return
        self.app.call_from_thread(self.dismiss, (name, reviewer))


def start_review(screen, run_id: int, scorer: str | None, *, filter: str | None = None) -> None:  # type: ignore[no-untyped-def]
    """Open the dialog from `screen`; once a queue is made, open the review screen on it."""
    from evtui.store.review.writes import reviewer_name

    if scorer is None:
        screen.notify("Put the cursor on a scorer's row to review its scores.", severity="warning")
        return

    def started(result: tuple[str, str] | None) -> None:
        if result is not None:
            from evtui.app.screens.review.queue import ReviewScreen

            screen.app.push_screen(ReviewScreen(result[0], reviewer=result[1]))

    screen.app.push_screen(StartReviewDialog(run_id, scorer, filter=filter,
                                             reviewer=reviewer_name(getattr(screen.app, "reviewer", None))), started)
