"""The evtui Textual app: themes, global keys, the indexing worker and the home screen."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from textual import on, work
from textual.app import App
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.theme import Theme
from textual.timer import Timer
from textual.notifications import SeverityLevel
from textual.worker import Worker, WorkerState

from evtui.app.clipboard import OFF_MESSAGE, clipboard_allowed
from evtui.app.commands import EvtuiCommands
from evtui.app.messages import FailuresLoaded, IndexChanged, IngestFinished, IngestProgress
from evtui.safe_text import safe_block, safe_line
from evtui.app.themes import (
    DEFAULT_DARK_THEME,
    FALLBACK_DARK,
    load_themes,
    saved_theme,
    semantic_defaults,
)

# Progress is posted at most this often from the indexing thread (the UI needs no more).
PROGRESS_INTERVAL_S = 0.1
# Runs screens reload at most this often while files are being indexed.
RELOAD_INTERVAL_S = 0.25


class EvtuiApp(App[None]):
    """Browse the runs indexed in one SQLite index, indexing `ingest_paths` into it first."""

    CSS_PATH = "app.tcss"
    TITLE = "evtui"
    COMMANDS = App.COMMANDS | {EvtuiCommands}
    BINDINGS = [
        Binding("q", "quit", "Quit", id="evtui.quit"),
        Binding("question_mark", "help", "Help", key_display="?", id="evtui.help"),
        Binding("f", "show_failures", "Failed files", id="evtui.failures"),
        Binding("J", "show_jobs", "Jobs", key_display="J", id="evtui.jobs"),
    ]

    ingest_running: reactive[bool] = reactive(False)
    """True while the indexing worker runs."""
    ingest_done: reactive[int] = reactive(0)
    ingest_total: reactive[int] = reactive(0)
    ingest_current: reactive[str] = reactive("")
    """The file being read and how far, e.g. `c.eval, 42,000 samples`."""
    failure_count: reactive[int] = reactive(0)
    """Files the index could not read (from the last indexing, or recorded in the index)."""

    def __init__(
        self,
        db_path: Path,
        ingest_paths: Sequence[Path] = (),
        theme_name: str | None = None,
        theme_dirs: list[Path] | None = None,
        source_label: str = "",
        review: tuple[str, str] | None = None,
        reviewer: str | None = None,
    ) -> None:
        super().__init__()
        self.review = review  # (queue name, reviewer) to open on start: `evtui --review NAME`
        # `--reviewer NAME`: who gives verdicts and edits scores (else the rule in store.review.writes).
        self.reviewer = reviewer or (review[1] if review else None)
        self.db_path = Path(db_path)
        # An object-store URL stays a string (a Path would fold its `//`).
        self.ingest_paths = [path if isinstance(path, str) and "://" in path else Path(path) for path in ingest_paths]
        self.source_label = source_label or (str(self.ingest_paths[0]) if self.ingest_paths else str(db_path))
        self.ingest_failures: list[tuple[str, str]] = []
        self.theme_warnings: list[str] = []
        self._register_themes(theme_dirs, theme_name)

    def _register_themes(self, theme_dirs: list[Path] | None, theme_name: str | None) -> None:
        """Register file themes and pick the requested one; problems become one warning."""
        loaded = load_themes(theme_dirs)
        self.theme_warnings.extend(loaded.failures)
        if DEFAULT_DARK_THEME not in loaded.themes:
            self.register_theme(FALLBACK_DARK)
        for theme in loaded.themes.values():
            self.register_theme(theme)
        saved = None if theme_name else saved_theme()  # --theme wins; else the theme picked last time
        if saved is not None and saved in self.available_themes:
            theme_name = saved
        wanted = theme_name or DEFAULT_DARK_THEME
        if wanted not in self.available_themes:
            self.theme_warnings.append(
                f"unknown theme {wanted!r}; available: {', '.join(sorted(self.available_themes))}"
            )
            wanted = DEFAULT_DARK_THEME
        self.theme = wanted

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """evtui's semantic colours for themes that do not set them (e.g. Textual built-ins)."""
        return semantic_defaults(self.current_theme)

    def on_mount(self) -> None:
        from evtui.app.screens.runs import RunsScreen

        # A theme picked from now on (palette, ctrl+t) is kept for the next start.
        self.theme_changed_signal.subscribe(self, self._keep_theme)

        if self.theme_warnings:
            # One notification however many files are broken, so startup is not a wall of toasts.
            self.notify(
                "Theme problems (using the fallback):\n" + "\n".join(self.theme_warnings),
                title="Themes",
                severity="warning",
                timeout=10,
                markup=False,
            )
        self.push_screen(RunsScreen())
        if self.review is not None:
            from evtui.app.screens.review.queue import ReviewScreen

            self.push_screen(ReviewScreen(self.review[0], reviewer=self.review[1]))
        from evtui.app.job_runner import JobRunner

        JobRunner.of(self).resume_interrupted()  # jobs left running/queued when evtui last quit
        if self.ingest_paths:
            self.ingest_running = True
            self.run_ingest()
        else:
            self.load_failure_count()

    def _keep_theme(self, theme: Theme) -> None:
        self._save_theme(theme.name)

    @work(thread=True, exclusive=True, group="save-theme", exit_on_error=False, description="Keeping the theme")
    def _save_theme(self, name: str) -> None:
        from evtui.app.themes import save_theme

        try:
            save_theme(name)
        except OSError as error:  # a read-only home: the choice lasts this session only
            self.call_from_thread(self.notify, f"Could not keep the theme for the next start: {error}",
                                  severity="warning", markup=False)

    @work(thread=True, exclusive=True, group="ingest", exit_on_error=False, description="Indexing")
    def run_ingest(self) -> None:
        """Index the run paths; progress and the outcome come back as messages."""
        from evtui.store.ingest.files import IngestProgress as Progress
        from evtui.store.ingest.remote import ingest_locations as ingest_paths  # URLs too

        last_post = 0.0

        def on_progress(progress: Progress) -> None:
            nonlocal last_post
            now = time.monotonic()
            finished_file = progress.phase != "reading"
            # A file finishing is worth showing (new runs); per-sample ticks are throttled.
            if finished_file or now - last_post >= PROGRESS_INTERVAL_S:
                last_post = now
                done = progress.file_index if finished_file else progress.file_index - 1
                self.post_message(
                    IngestProgress(
                        done=done,
                        total=progress.file_count,
                        path=str(progress.path),
                        samples=progress.samples,
                        failed=progress.phase == "failed",
                    )
                )

        from evtui.readers.remote import RemoteError

        try:
            report = ingest_paths(self.db_path, self.ingest_paths, on_progress=on_progress)
        except RemoteError as exc:  # the store could not be listed: said once, nothing written
            self.post_message(IngestFinished(files=1, failures=[(str(exc).split(": ", 1)[0], str(exc))]))
            return
        failures = [(failure.path, failure.error) for failure in report.failures]
        self.post_message(IngestFinished(files=len(report.files) + len(failures), failures=failures))

    @work(thread=True, exclusive=True, group="failures", exit_on_error=False)
    def load_failure_count(self) -> None:
        """The failed files recorded in the index (the dialog lists the same)."""
        from evtui.app.store_calls import failed_files

        self.post_message(FailuresLoaded(failed_files(self.db_path)))

    @on(FailuresLoaded)
    def _on_failures_loaded(self, message: FailuresLoaded) -> None:
        self.ingest_failures = message.failures
        self.failure_count = len(message.failures)

    @on(IngestProgress)
    def _on_ingest_progress(self, message: IngestProgress) -> None:
        self.ingest_done, self.ingest_total = message.done, message.total
        reading = message.done < message.total and not message.failed
        self.ingest_current = f"{Path(message.path).name}, {message.samples:,} samples" if reading else ""
        if message.failed:  # counted now; the list of errors comes when indexing ends
            self.failure_count += 1
        self._notify_index_changed()

    @on(IngestFinished)
    def _on_ingest_finished(self, message: IngestFinished) -> None:
        self.ingest_running = False
        self.ingest_current = ""
        self.ingest_failures = message.failures
        self.failure_count = len(message.failures)
        self.load_failure_count()  # the index's own list, so the count and the dialog agree
        if message.files:
            self.ingest_done = self.ingest_total = message.files
        self._last_reload = 0.0
        self._notify_index_changed(force=True)

    _last_reload = 0.0
    _reload_timer: Timer | None = None

    def _notify_index_changed(self, force: bool = False) -> None:
        """Tell every screen the index changed, at most every RELOAD_INTERVAL_S while indexing;
        a change inside the interval is sent when it ends, so the last one is never lost."""
        now = time.monotonic()
        wait = RELOAD_INTERVAL_S - (now - self._last_reload)
        if not force and wait > 0:
            if self._reload_timer is None:
                self._reload_timer = self.set_timer(wait, self._send_index_changed)
            return
        self._send_index_changed()

    def _send_index_changed(self) -> None:
        if self._reload_timer is not None:
            self._reload_timer.stop()
            self._reload_timer = None
        self._last_reload = time.monotonic()
        for screen in self.screen_stack:
            screen.post_message(IndexChanged())

    @on(Worker.StateChanged)
    def _on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Worker errors surface as one notification instead of killing the app."""
        if event.state != WorkerState.ERROR:
            return
        error = event.worker.error
        if event.worker.group == "ingest":
            self.ingest_running = False
        self.notify(
            f"{event.worker.description or event.worker.name}: {error}",
            title="Error",
            severity="error",
            timeout=10,
            markup=False,
        )

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Every notification, from any screen, through the one sanitiser and never as markup:
        messages quote run names, paths and errors."""
        super().notify(safe_block(str(message)), title=safe_line(title), severity=severity, timeout=timeout, markup=False)

    def copy_to_clipboard(self, text: str) -> None:
        """Every copy, evtui's keys and Textual's own (a mouse selection's ctrl+c, an input's copy),
        through the one gate: OSC 52 only with EVTUI_CLIPBOARD=osc52, and the text made safe first.
        When off, the text stays inside the app (Textual's paste still has it) and the terminal's
        clipboard is not written."""
        if not clipboard_allowed():
            self._clipboard = text
            self.notify(OFF_MESSAGE, title="Clipboard", severity="warning")
            return
        super().copy_to_clipboard(safe_block(text, None))

    def format_title(self, title: str, sub_title: str) -> Content:
        """Every screen's header through the one sanitiser: subtitles are task and model names."""
        return super().format_title(safe_line(title), safe_line(sub_title))

    def display_path(self, path: str) -> str:
        """`path` relative to the indexed directory when it lies inside it, else as is."""
        for root in self.ingest_paths:
            if isinstance(root, str):  # an object-store URL
                prefix = root.rstrip("/") + "/"
                if path.startswith(prefix):
                    return path[len(prefix):]
                continue
            base = root if root.is_dir() else root.parent
            try:
                return str(Path(path).relative_to(base))
            except ValueError:
                continue
        return path

    async def action_quit(self) -> None:
        """Quit; while a scoring job runs or waits, ask first (it resumes on the next start)."""
        from evtui.app.dialogs.confirm_quit import ConfirmQuitDialog
        from evtui.app.job_runner import JobRunner, job_label

        runner = JobRunner.of(self)
        if not runner.busy or isinstance(self.screen, ConfirmQuitDialog):
            self.exit()
            return
        current = runner.current
        progress = runner.progress.get(current.job_id) if current is not None else None
        what = (
            f"{job_label(current.name, current.job_id)} is scoring"
            + (f" ({progress.done:,}/{progress.total:,})" if progress is not None else "")
            if current is not None else "A scoring job is queued"
        )
        if runner.queue:
            what += f"; {len(runner.queue)} more queued"

        def chosen(quit_now: bool | None) -> None:
            if quit_now:
                self.exit()

        self.push_screen(ConfirmQuitDialog(what + "."), chosen)

    def action_help(self) -> None:
        from evtui.app.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def action_show_failures(self) -> None:
        from evtui.app.dialogs.failures import FailuresDialog

        if not isinstance(self.screen, FailuresDialog):
            self.push_screen(FailuresDialog(self.db_path, self.ingest_failures))

    def action_show_jobs(self) -> None:
        from evtui.app.screens.jobs import JobsScreen

        if not isinstance(self.screen, JobsScreen):
            self.push_screen(JobsScreen())

    def action_toggle_dark_light(self) -> None:
        """Switch between evtui's dark and light themes."""
        from evtui.app.themes import DEFAULT_LIGHT_THEME

        target = DEFAULT_LIGHT_THEME if self.current_theme.dark else DEFAULT_DARK_THEME
        if target in self.available_themes:
            self.theme = target

    # -- live runs: after the first indexing, keep the index in step with the run paths ---------

    class WatchChanged(Message):
        """The run-path watcher changed the index (or could not, saying why in `error`)."""

        def __init__(self, error: str | None = None, failures_changed: bool = False) -> None:
            super().__init__()
            self.error = error
            self.failures_changed = failures_changed

        def can_replace(self, message: Message) -> bool:
            # Refreshes coalesce; one carrying an error or a failed file is kept.
            return isinstance(message, EvtuiApp.WatchChanged) and not (message.error or message.failures_changed)

    _watching = False

    @on(IngestFinished)
    def _start_watching(self, message: IngestFinished) -> None:
        if self.ingest_paths and not self._watching:
            self._watching = True
            self.watch_run_paths()

    @work(thread=True, exclusive=True, group="watch", exit_on_error=False, description="Watching runs")
    def watch_run_paths(self) -> None:
        """Poll the run paths until the app exits (evtui.watch): new, changed, removed and live runs."""
        from textual.worker import get_current_worker

        from evtui.watch.poller import RunDirWatcher

        worker = get_current_worker()

        def on_change(change) -> None:
            self.post_message(self.WatchChanged(change.error, bool(change.failures or change.missing)))

        urls = [p for p in self.ingest_paths if isinstance(p, str)]
        if urls:  # an object store: its listing is polled (evtui.watch.bucket)
            from evtui.watch.bucket import BucketWatcher

            BucketWatcher(urls, self.db_path, on_change).run(worker.cancelled_event)
            return
        RunDirWatcher(self.ingest_paths, self.db_path, on_change).run(worker.cancelled_event)

    @on(WatchChanged)
    def _on_watch_changed(self, message: WatchChanged) -> None:
        if message.error:
            self.notify(f"Watching runs: {message.error}", title="Watch", severity="warning", markup=False)
        if message.failures_changed:
            self.load_failure_count()
        self._notify_index_changed()
