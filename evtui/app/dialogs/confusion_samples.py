"""The samples behind one confusion-matrix cell; `a` queues them for adjudication (a stored queue
of exactly these samples, opened at once), Enter opens one sample."""

from __future__ import annotations

from datetime import datetime, timezone

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from evtui.app.safe_content import plain
from evtui.app.widgets.key_footer import KeyFooter


class ConfusionSamplesDialog(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "dismiss", "Close", id="confusion.close"),
        Binding("a", "adjudicate", "Queue for adjudication", id="confusion.adjudicate"),
    ]
    DEFAULT_CSS = """
    ConfusionSamplesDialog { align: center middle; }
    #confusion-box { width: 70; max-width: 100%; height: auto; max-height: 90%; border: round $primary;
                     background: $surface; padding: 0 1; }
    #confusion-list { height: auto; max-height: 20; }
    #confusion-message { height: auto; color: $text-muted; }
    """

    def __init__(self, run_id: int, scorer: str, label: str, samples: list[tuple[str, int]]) -> None:
        super().__init__()
        self.run_id, self.scorer, self.label, self.samples = run_id, scorer, label, samples

    def compose(self) -> ComposeResult:
        with Vertical(id="confusion-box"):
            yield Static(plain(f"{self.label}: {len(self.samples)} sample{'s' if len(self.samples) != 1 else ''}"))
            yield OptionList(*[Option(plain(f"sample {s} · epoch {e}")) for s, e in self.samples], id="confusion-list")
            yield Static("a: queue these for adjudication · Enter: open one · Esc: close", id="confusion-message")
        yield KeyFooter()  # the dialog's own keys, not the dimmed screen's below it

    @on(OptionList.OptionSelected)
    def _open(self, event: OptionList.OptionSelected) -> None:
        self._open_sample(*self.samples[event.option_index])

    @work(thread=True, exclusive=True, group="confusion-open", exit_on_error=False)
    def _open_sample(self, sample_id: str, epoch: int) -> None:
        from evtui.app.store_calls import sample_rowid_of

        rowid = sample_rowid_of(self.app.db_path, self.run_id, sample_id, epoch)  # type: ignore[attr-defined]
        if rowid is not None:
            self.app.call_from_thread(self._push_sample, rowid)

    def _push_sample(self, rowid: int) -> None:
        from evtui.app.screens.sample import SampleScreen

        self.app.push_screen(SampleScreen(self.app.db_path, rowid, scorer=self.scorer))  # type: ignore[attr-defined]

    def action_adjudicate(self) -> None:
        if not self.samples:
            return
        from evtui.store.review.writes import reviewer_name

        name = f"adjudicate-{self.scorer}-{datetime.now(timezone.utc).strftime('%Y%m%d-%H%M%S')}"
        self._queue(name, reviewer_name(getattr(self.app, "reviewer", None)))

    @work(thread=True, exclusive=True, group="confusion-queue", exit_on_error=False)
    def _queue(self, name: str, reviewer: str) -> None:
        from evtui.app.store_calls import create_review_queue
        from evtui.store.review.queues import QueueError, Selection

        try:
            create_review_queue(self.app.db_path, name, self.run_id, self.scorer,  # type: ignore[attr-defined]
                                Selection(kind="samples", samples=tuple(self.samples)), reviewer=reviewer, blind=False,
                                purpose="adjudication")
        except QueueError as problem:
            self.app.call_from_thread(self.query_one("#confusion-message", Static).update, plain(str(problem)))
            return
        self.app.call_from_thread(self._open_queue, name, reviewer)

    def _open_queue(self, name: str, reviewer: str) -> None:
        from evtui.app.screens.review.queue import ReviewScreen

        self.dismiss(None)
        self.app.push_screen(ReviewScreen(name, reviewer=reviewer))
