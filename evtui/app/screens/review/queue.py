"""Working a review queue: one sample at a time laid out for a reviewer (question, submission,
target, the grader's grade and reasoning, the queue's metadata keys), a verdict by one key.

A verdict moves on to the next sample at once (one key per sample); the previous sample's
outcome (your verdict against the grader's) stays in the line above the keys. In blind mode the
grader's grade, its reasoning and the other reviewers' verdicts are shown only on a sample this
reviewer has already given a verdict on (go back with ← to see them)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Header, Input, ProgressBar, Static

from evtui.app.safe_content import plain, plain_block
from evtui.app.widgets.key_footer import KeyFooter
from evtui.safe_text import safe_line
from evtui.app.widgets.safe_input import SafeInput



def judge_score(sample: Any, scorer: str) -> Any:
    """The grader's score a verdict stands over: the latest evtui job's, else the log's, as the
    samples list picks it (a job's unscored result never hides a graded one)."""
    from evtui.store.queries.effective_scores import effective_rank

    scores = [s for s in sample.scores if s.scorer == scorer and s.source != "human"]
    return min(scores, key=lambda s: (*effective_rank(s.source, s.job_id, s.value, s.value_num), s.id), default=None)


def value_text(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "—"
    return safe_line(value, 40)


def pace_text(done_here: int, started: float | None, left: int) -> str:
    """Samples per minute in this session and the time the rest would take at that pace."""
    if not done_here or started is None:
        return "pace —"
    minutes = max(time.monotonic() - started, 1.0) / 60
    rate = done_here / minutes
    return f"{rate:.1f}/min · ~{left / rate:.0f} min left" if rate else "pace —"


class ReviewScreen(Screen[None]):
    """One queue, one sample at a time; verdicts by key."""

    TITLE = "Review"
    BINDINGS = [
        Binding("escape", "leave", "Back", id="review.back"),
        Binding("c", "verdict('C')", "Correct", id="review.c"),
        Binding("p", "verdict('P')", "Partial", id="review.p"),
        Binding("i", "verdict('I')", "Incorrect", id="review.i"),
        Binding("n", "verdict('N')", "No answer", show=False, id="review.n"),
        *[Binding(str(d), f"verdict({d})", f"Verdict {d}", show=False) for d in range(10)],
        Binding("a", "accept", "Accept grade", id="review.accept"),
        Binding("slash", "note", "Note", key_display="/", id="review.note"),
        Binding("t", "note", "Note", show=False),
        Binding("equals_sign", "type_value", "Type value", key_display="=", show=False, id="review.type"),
        Binding("right", "move(1)", "Next", key_display="→", id="review.next"),
        Binding("j", "move(1)", "Next", show=False),
        Binding("left", "move(-1)", "Previous", key_display="←", id="review.previous"),
        Binding("k", "move(-1)", "Previous", show=False),
        Binding("s", "move(1)", "Skip", id="review.skip"),
        Binding("u", "undo", "Undo", id="review.undo"),
        Binding("v", "transcript", "Transcript", id="review.transcript"),
        Binding("m", "pick_metadata", "Metadata keys", id="review.metadata"),
    ]
    DEFAULT_CSS = """
    ReviewScreen #review-progress-line { height: auto; padding: 0 1; }  /* two lines at 80 columns */
    ReviewScreen ProgressBar { padding: 0 1; height: 1; }
    ReviewScreen #review-body { height: 1fr; padding: 0 1; }
    ReviewScreen .review-part { margin-bottom: 1; }
    ReviewScreen .review-head { text-style: bold; color: $primary; }
    ReviewScreen #review-grader { color: $text-muted; }
    ReviewScreen #review-input { display: none; }
    ReviewScreen #review-input.-open { display: block; }
    ReviewScreen #review-message { height: auto; padding: 0 1; }
    ReviewScreen #review-message.-error { color: $error; }
    """

    @dataclass
    class ItemLoaded(Message):
        position: int
        item: Any
        sample: Any

    @dataclass
    class Opened(Message):
        queue: Any
        scale: tuple[Any, ...]
        position: int | None

    def __init__(self, queue_name: str, *, reviewer: str) -> None:
        super().__init__()
        self.queue_name, self.reviewer = queue_name, reviewer
        self.queue: Any = None
        self.scale: tuple[Any, ...] = ()
        self.position = 0
        self.item: Any = None
        self.sample: Any = None
        self.note: str | None = None  # goes with this sample's next verdict
        self._input_mode = "note"
        self._done_here = 0
        self._started: float | None = None
        self.last_outcome = ""
        self.loaded_at = 0.0  # monotonic time the shown sample was drawn (the bench reads it)
        # The sample after the shown one, read ahead so → draws at once: (position, item, sample).
        self._next: tuple[int, Any, Any] | None = None
        self._last_verdict: Any = None  # the item of the last verdict given here (u undoes it)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("opening the queue…", id="review-progress-line")
        yield ProgressBar(total=None, show_eta=False, show_percentage=True, id="review-bar")
        with VerticalScroll(id="review-body"):
            yield Static("", id="review-title", classes="review-part review-head")
            yield Static("", id="review-question", classes="review-part")
            yield Static("", id="review-submission", classes="review-part")
            yield Static("", id="review-target", classes="review-part")
            yield Static("", id="review-metadata", classes="review-part")
            yield Static("", id="review-grader", classes="review-part")
        yield SafeInput(placeholder="note for this sample's verdict (Enter keeps it, Esc drops it)", id="review-input")
        yield Static("", id="review-message")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.sub_title = safe_line(f"{self.queue_name} · {self.reviewer}", 120)
        self.query_one("#review-body").focus()  # PageUp/PageDown/Home/End scroll a long sample
        self._open()

    # --- loading ---------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="review-open", exit_on_error=False)
    def _open(self) -> None:
        from evtui.app.store_calls import open_review_queue
        from evtui.store.review.queues import QueueError

        try:
            queue, scale, position = open_review_queue(self.app.db_path, self.queue_name, self.reviewer)  # type: ignore[attr-defined]
        except (QueueError, LookupError) as problem:
            self.app.call_from_thread(self._say, str(problem), True)
            return
        self.post_message(self.Opened(queue, scale, position))

    @on(Opened)
    def _on_opened(self, message: Opened) -> None:
        self.queue, self.scale = message.queue, message.scale
        done_all = message.position is None
        self.position = 0 if done_all else message.position
        if done_all:
            self._say("Every sample of this queue has your verdict; ←/→ walk it, u undoes.")
        self._load_item(self.position)
        self._load_progress()

    @work(thread=True, exclusive=True, group="review-item", exit_on_error=False)
    def _load_item(self, position: int) -> None:
        from evtui.app.store_calls import fetch_review_item

        item, sample = fetch_review_item(self.app.db_path, self.queue, position, self.reviewer)  # type: ignore[attr-defined]
        self.post_message(self.ItemLoaded(position, item, sample))

    @work(thread=True, exclusive=True, group="review-progress", exit_on_error=False)
    def _load_progress(self) -> None:
        from evtui.app.store_calls import fetch_queue_progress

        progress = fetch_queue_progress(self.app.db_path, self.queue, self.reviewer)  # type: ignore[attr-defined]
        self.app.call_from_thread(self._show_progress, progress)

    def _show_progress(self, progress: Any) -> None:
        bar = self.query_one("#review-bar", ProgressBar)
        bar.update(total=max(progress.total, 1), progress=progress.done)
        agreement = f"agrees with the grader {progress.agreeing}/{progress.done}" + (
            f" ({100 * progress.agreeing / progress.done:.0f}%)" if progress.done else "")
        vanished = f" · {progress.vanished} vanished" if progress.vanished else ""
        blind = " · blind" if self.queue.blind else ""
        self.query_one("#review-progress-line", Static).update(plain(
            f"{self.queue.name}: {progress.done}/{progress.total} done · {agreement} · "
            f"{pace_text(self._done_here, self._started, progress.total - progress.done)}{vanished}{blind}", None))

    @on(ItemLoaded)
    def _on_item_loaded(self, message: ItemLoaded) -> None:
        if message.position != self.position:
            return
        self.item, self.sample = message.item, message.sample
        with self.app.batch_update():
            self._draw()
        self.loaded_at = time.monotonic()
        if self.item is not None and self.position + 1 <= self.queue.size:
            self._read_ahead(self.position + 1)

    @work(thread=True, exclusive=True, group="review-read-ahead", exit_on_error=False)
    def _read_ahead(self, position: int) -> None:
        from evtui.app.store_calls import fetch_review_item

        item, sample = fetch_review_item(self.app.db_path, self.queue, position, self.reviewer)  # type: ignore[attr-defined]
        self.app.call_from_thread(setattr, self, "_next", (position, item, sample))

    def _draw(self) -> None:
        item, sample, queue = self.item, self.sample, self.queue
        part = {name: self.query_one(f"#review-{name}", Static) for name in
                ("title", "question", "submission", "target", "metadata", "grader")}
        if item is None:
            part["title"].update("End of the queue.")
            for name in ("question", "submission", "target", "metadata", "grader"):
                part[name].update("")
            self._load_end()
            return
        done = f" · your verdict {value_text(item.own_value)}" if item.done else ""
        part["title"].update(plain(
            f"{item.position + 1}/{queue.size} · sample {item.sample_id} · epoch {item.epoch} · {queue.scorer}{done}", None))
        if item.vanished:
            part["question"].update(plain(
                f"This sample is no longer in the run ({queue.run_path}): the file changed. "
                "Its earlier verdicts are kept; → moves on.", None))
            for name in ("submission", "target", "metadata", "grader"):
                part[name].update("")
            return
        part["question"].update(plain_block("Question\n" + (sample.input_text or "")))
        part["submission"].update(plain_block("Submission\n" + (sample.output_text or "")))
        part["target"].update(plain_block("Target\n" + "\n".join(sample.target or ["—"])))
        keys = (queue.options or {}).get("metadata_keys") or []
        shown = [f"{key}: {safe_line(sample.metadata.get(key), 200)}" for key in keys if key in sample.metadata]
        part["metadata"].update(plain_block("Metadata\n" + "\n".join(shown)) if shown else "")
        part["metadata"].display = bool(shown)  # no blank lines where the queue shows no metadata
        part["grader"].update(self._grader_text())

    @work(thread=True, exclusive=True, group="review-end", exit_on_error=False)
    def _load_end(self) -> None:
        from evtui.app.store_calls import fetch_queue_end

        end = fetch_queue_end(self.app.db_path, self.queue, self.reviewer)  # type: ignore[attr-defined]
        self.app.call_from_thread(self._show_end, end)

    def _show_end(self, end: Any) -> None:
        """The queue's summary where its end is shown: agreement so far, disputes, what comes next."""
        if self.item is not None:
            return  # moved back into the queue meanwhile
        agreement = (f"You agree with the grader on {end.agreeing} of {end.done} samples ({100 * end.agreeing / end.done:.0f}%)."
                     if end.done else "No verdicts given in this queue yet.")
        disputes = (f"{end.disputed} sample{'s' if end.disputed != 1 else ''} of {self.queue.scorer} disputed between "
                    "reviewers: adjudicate them (a on the agreement view's confusion cell, or a queue of disputed samples)."
                    if end.disputed else "No disputes between reviewers to adjudicate.")
        after = (f"Next queue with samples for you: {end.next_queue} (Ctrl+P → resume review queue)."
                 if end.next_queue else "No other queue has samples waiting for you.")
        self.query_one("#review-question", Static).update(plain_block("\n".join((agreement, disputes, after))))

    def _grader_text(self) -> Any:
        item, queue = self.item, self.queue
        if queue.blind and not item.done:
            return "Grader: hidden (blind) until you give your verdict"
        score = judge_score(self.sample, queue.scorer)
        lines = [f"Grader: {value_text(score.value) if score else 'no score'}"]
        if score is not None and score.answer:
            lines.append(f"answer: {score.answer}")
        if score is not None and score.explanation:
            lines.append(score.explanation)
        if item.others:
            lines.append("Other reviewers: " + ", ".join(f"{name} {value_text(v)}" for name, v in sorted(item.others.items())))
        return plain_block("\n".join(lines))

    # --- keys ------------------------------------------------------------------------------

    def action_move(self, step: int) -> None:
        if self.queue is None:
            return
        self.position = min(max(self.position + step, 0), self.queue.size)
        self.note = None
        self._say("")
        ahead, self._next = self._next, None
        if ahead is not None and ahead[0] == self.position:
            self._on_item_loaded(self.ItemLoaded(*ahead))  # read ahead: drawn at once
        else:
            self._load_item(self.position)

    def action_verdict(self, value: Any) -> None:
        if self.item is None or self.queue is None:
            return
        if self.item.vanished:
            self._say("This sample vanished from the run: no verdict can be given on it.", True)
            return
        self._save(self.item, value)

    def action_accept(self) -> None:
        if self.item is None or self.sample is None:
            return
        score = judge_score(self.sample, self.queue.scorer)
        if score is None or score.value is None or score.value != score.value:
            self._say("The grader gave no grade here to accept.", True)
            return
        self._save(self.item, score.value)

    @work(thread=True, group="review-save", exit_on_error=False)
    def _save(self, item: Any, value: Any, advance: bool = True) -> None:
        from evtui.app.store_calls import save_review_verdict
        from evtui.store.review.scale import ScaleError
        from evtui.store.review.writes import VanishedSampleError

        try:
            save_review_verdict(self.app.db_path, self.queue, item, value, reviewer=self.reviewer,  # type: ignore[attr-defined]
                                note=self.note, scale=self.scale)
        except (ScaleError, VanishedSampleError) as problem:
            self.app.call_from_thread(self._say, str(problem), True)
            return
        self.app.call_from_thread(self._saved, item, value, advance)

    def _saved(self, item: Any, value: Any, advance: bool = True) -> None:
        if self._started is None:
            self._started = time.monotonic()
        self._done_here += 0 if item.done else 1
        score = judge_score(self.sample, self.queue.scorer) if self.sample is not None and item is self.item else None
        grader = "" if score is None else f" · grader {value_text(score.value)}" + (" ✓" if score.value == value else " ✗")
        self.last_outcome = f"sample {item.sample_id}: you {value_text(value)}{grader}"
        self._last_verdict = item  # what `u` undoes from anywhere
        if item is self.item and advance:
            self.action_move(1)
        elif item is self.item:
            self._load_item(self.position)  # the same sample, its note recorded
        self._say(self.last_outcome + (f" · note: {self.note}" if self.note and not advance else ""))
        self._load_progress()

    def action_undo(self) -> None:
        """Undo this sample's verdict, or, on a sample without one (a verdict moves on at once),
        the last verdict given here, going back to its sample."""
        if self.item is not None and self.item.done and not self.item.vanished:
            self._undo(self.item)
        elif self._last_verdict is not None:
            self._undo(self._last_verdict)
        elif self.item is not None and not self.item.vanished:
            self._undo(self.item)

    @work(thread=True, group="review-save", exit_on_error=False)
    def _undo(self, item: Any) -> None:
        from evtui.app.store_calls import undo_review_verdict

        undone = undo_review_verdict(self.app.db_path, self.queue, item, reviewer=self.reviewer)  # type: ignore[attr-defined]
        self.app.call_from_thread(self._undone, item, undone)

    def _undone(self, item: Any, undone: Any) -> None:
        if self._last_verdict is not None and self._last_verdict.position == item.position:
            self._last_verdict = None
        if undone is None:
            self._say("Nothing to undo on this sample (← goes back to the one before).", True)
            return
        self._done_here = max(self._done_here - 1, 0)
        self.position, self._next = item.position, None  # back on the sample, to give it again
        self._say(f"sample {item.sample_id}: your verdict undone")
        self._load_item(self.position)
        self._load_progress()

    def action_note(self) -> None:
        self._open_input("note", "note for this sample's verdict (Enter keeps it, Esc drops it)", self.note or "")

    def action_type_value(self) -> None:
        shown = ", ".join(str(v) for v in self.scale)
        self._open_input("value", f"a verdict on the scale {shown} (Enter gives it)", "")

    def _open_input(self, mode: str, placeholder: str, value: str) -> None:
        field = self.query_one("#review-input", Input)
        self._input_mode = mode
        field.placeholder, field.value = placeholder, value
        field.add_class("-open")
        field.focus()

    @on(Input.Submitted, "#review-input")
    def _on_input(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        self._close_input()
        if self._input_mode == "note":
            self.note = text or None
            self._say(f"note kept for this sample's verdict: {text}" if text else "note dropped")
            if self.note and self.item is not None and self.item.done:
                # A note on a verdict given: the verdict is recorded again with it; stay on the sample.
                self._save(self.item, self.item.own_value, advance=False)
            return
        from evtui.store.score_edits import parse_score_value

        try:
            value = parse_score_value(text)
        except ValueError as problem:
            self._say(str(problem), True)
            return
        self.action_verdict(value)

    def _close_input(self) -> None:
        field = self.query_one("#review-input", Input)
        field.remove_class("-open")
        self.query_one("#review-body").focus()

    def action_leave(self) -> None:
        if self.query_one("#review-input", Input).has_class("-open"):
            self._close_input()
            self._say("")
            return
        self.app.pop_screen()

    def action_pick_metadata(self) -> None:
        """Pick the metadata keys shown for every sample of this queue (stored with the queue)."""
        if self.queue is not None and self.queue.run_id is not None:
            self._pick_metadata()

    @work(thread=True, exclusive=True, group="review-metadata", exit_on_error=False)
    def _pick_metadata(self) -> None:
        from evtui.app.store_calls import fetch_metadata_keys

        keys = fetch_metadata_keys(self.app.db_path, self.queue.run_id)  # type: ignore[attr-defined]
        self.app.call_from_thread(self._ask_metadata, keys)

    def _ask_metadata(self, keys: list[str]) -> None:
        from evtui.app.dialogs.metadata_columns import MetadataColumnsDialog

        if not keys:
            self._say("The run's samples have no metadata.")
            return
        shown = list((self.queue.options or {}).get("metadata_keys") or [])
        self.app.push_screen(MetadataColumnsDialog(keys, shown), self._metadata_picked)

    def _metadata_picked(self, keys: list[str] | None) -> None:
        if keys is not None:
            self._save_metadata(keys)

    @work(thread=True, exclusive=True, group="review-metadata", exit_on_error=False)
    def _save_metadata(self, keys: list[str]) -> None:
        from evtui.app.store_calls import save_queue_metadata_keys

        queue = save_queue_metadata_keys(self.app.db_path, self.queue.name, keys)  # type: ignore[attr-defined]
        if queue is not None:
            self.app.call_from_thread(self._metadata_saved, queue)

    def _metadata_saved(self, queue: Any) -> None:
        self.queue = queue
        if self.item is not None:
            self._draw()

    def action_transcript(self) -> None:
        from evtui.app.screens.sample import SampleScreen

        if self.item is not None and not self.item.vanished:
            self.app.push_screen(SampleScreen(self.app.db_path, self.item.sample_rowid, title=self.sub_title,  # type: ignore[attr-defined]
                                              scorer=self.queue.scorer))

    def _say(self, text: str, error: bool = False) -> None:
        message = self.query_one("#review-message", Static)
        message.update(plain(text, None))
        message.set_class(error, "-error")
