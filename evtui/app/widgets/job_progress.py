"""A scoring job's live progress: one bar per scorer with done/total, rate, ETA, errors and running metric."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Label, ProgressBar, Static

from evtui.app.formatting import middle_ellipsis
from evtui.app.safe_content import plain
from evtui.grading.fleet import endpoint_line
from evtui.safe_text import safe_line
from evtui.scoring.jobs.config import JobProgress


def format_seconds(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def progress_summary(progress: JobProgress, label: str = "") -> str:
    """`job 3 · running · 1,234/5,000 · 812/s · ETA 5s · 2 errors` (the headline above the bars)."""
    from evtui.scoring.jobs.unscored import unscored_line

    unscored = sum(progress.unscored.values())
    parts = [label or f"job {progress.job_id}", progress.status, f"{progress.done - unscored:,}/{progress.total:,} scored"]
    if unscored:
        parts.append(unscored_line(progress.unscored))
    if progress.rate > 0:
        parts.append(f"{progress.rate:,.0f}/s")
        if progress.status == "running" and progress.total > progress.done:
            parts.append(f"ETA {format_seconds((progress.total - progress.done) / progress.rate)}")
    parts.append(f"elapsed {format_seconds(progress.elapsed)}")
    parts.append(f"{progress.errors} error{'s' if progress.errors != 1 else ''}")
    return " · ".join(parts)


def scorer_line(name: str, done: int, total: int, progress: JobProgress) -> str:
    """The text beside a scorer's bar: counts, the running mean so far and the first error."""
    text = f"{done:,}/{total:,}"
    if name in progress.running_metrics:
        text += f"  mean {progress.running_metrics[name]:.4f}"
    error = progress.first_errors.get(name)
    if error:
        text += f"  first error: {error.splitlines()[0][:60]}"
    return text


class JobProgressView(Vertical):
    """Shows the newest JobProgress of one job; bars are added as scorers appear."""

    DEFAULT_CSS = """
    JobProgressView { height: auto; padding: 0 1; }
    JobProgressView .job-headline { height: 1; text-style: bold; }
    JobProgressView .job-run { height: 1; color: $text-muted; }
    JobProgressView .scorer-row { height: 1; }
    JobProgressView .scorer-name { width: 24; }
    JobProgressView .scorer-row ProgressBar { width: 1fr; max-width: 44; }  /* narrower at 80 columns */
    JobProgressView .scorer-row ProgressBar > Horizontal { width: 1fr; }
    JobProgressView .scorer-row Bar { width: 1fr; }
    JobProgressView .scorer-text { width: auto; }
    JobProgressView .job-endpoints { height: auto; color: $text-muted; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.job_id: int | None = None
        self._rows: dict[str, tuple[ProgressBar, Static]] = {}

    def compose(self) -> ComposeResult:
        yield Static("No scoring job running.", classes="job-headline")
        yield Static("", classes="job-run")
        # Several grader servers: each one's requests, errors, latency, benched (grading/fleet.py).
        endpoints = Static("", classes="job-endpoints", markup=False)
        endpoints.display = False
        yield endpoints

    def show(self, progress: JobProgress, label: str = "") -> None:
        """Draw `progress` (a new job replaces the bars of the previous one)."""
        if progress.job_id != self.job_id:
            self.job_id = progress.job_id
            for row in self.query(".scorer-row"):
                row.remove()
            self._rows.clear()
        self.query_one(".job-headline", Static).update(plain(progress_summary(progress, label)))
        run = self.query_one(".job-run", Static)  # a long path loses its middle, not the file's name
        run.update(plain(middle_ellipsis(safe_line(progress.run_path or ""), run.content_region.width or self.app.size.width - 2)))
        endpoints = self.query_one(".job-endpoints", Static)
        endpoints.update("\n".join(f"grader {endpoint_line(e)}" for e in progress.endpoints))
        endpoints.display = bool(progress.endpoints)
        for name, (done, total) in progress.per_scorer.items():
            row = self._rows.get(name)
            if row is None:
                bar = ProgressBar(total=total or None, show_eta=False)
                text = Static("", classes="scorer-text")
                self.mount(Horizontal(Label(plain(name, 23), classes="scorer-name"), bar, text, classes="scorer-row"))
                row = self._rows[name] = (bar, text)
            bar, text = row
            bar.update(total=total, progress=done)
            text.update(plain(scorer_line(name, done, total, progress)))

    def clear(self, text: str = "No scoring job running.") -> None:
        self.job_id = None
        for row in self.query(".scorer-row"):
            row.remove()
        self._rows.clear()
        self.query_one(".job-headline", Static).update(plain(text))
        self.query_one(".job-run", Static).update("")
        self.query_one(".job-endpoints", Static).display = False
