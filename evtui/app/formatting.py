"""How numbers, statuses and durations read on screen; pure functions shared by screens."""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from textual.content import Content

from evtui.safe_text import safe_block, safe_line

STATUS_STYLES = {
    "success": "$score-pass",
    "started": "$warning",
    "cancelled": "$score-partial",
    "error": "$score-fail",
}


def status_content(status: str | None) -> Content:
    """A run status coloured by meaning (the colour follows the theme)."""
    status = status or "?"
    return Content.styled(safe_line(status, 40), STATUS_STYLES.get(status, "$foreground-muted"))


def format_number(value: float | None, digits: int = 3) -> str:
    """A metric value: integers stay integral, floats get `digits` significant decimals."""
    if value is None:
        return "–"
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, int) or float(value).is_integer() and abs(value) >= 1000:
        return f"{int(value):,}"
    return f"{value:.{digits}f}"


def format_value_stderr(value: float | None, stderr: float | None, digits: int = 3) -> str:
    """`0.812 ± 0.012`, or the value alone when the run recorded no stderr."""
    text = format_number(value, digits)
    if stderr is None or value is None:
        return text
    return f"{text} ± {format_number(stderr, digits)}"


def format_value_interval(value: float | None, lower: float, upper: float, digits: int = 3) -> str:
    """`0.812 [0.788, 0.836]`."""
    return f"{format_number(value, digits)} [{format_number(lower, digits)}, {format_number(upper, digits)}]"


def format_tokens(tokens: int | None) -> str:
    """Token counts in compact form: 950, 12.3k, 4.1M."""
    if tokens is None:
        return "–"
    if tokens < 1000:
        return str(tokens)
    if tokens < 1_000_000:
        return f"{tokens / 1000:.1f}k"
    return f"{tokens / 1_000_000:.1f}M"


def format_cost(cost: float | None) -> str:
    """Dollars; `–` when the run does not say."""
    if cost is None:
        return "–"
    return f"${cost:.2f}" if cost >= 0.01 or cost == 0 else f"${cost:.4f}"


def format_duration(seconds: float | None) -> str:
    """`42s`, `3m 05s`, `2h 07m`; `–` when unknown."""
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "–"
    seconds = max(0.0, float(seconds))
    if seconds < 60:
        return f"{seconds:.1f}s" if seconds < 10 else f"{seconds:.0f}s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def format_span(seconds: float | None) -> str:
    """How long a step of a transcript took: `0.37 ms`, `50 ms`, `1.25 s`, `3m 05s`; `no time` when unknown."""
    if seconds is None:
        return "no time"
    if seconds < 0.01:  # a mock or cached model call: 0.37 ms, not "0 ms"
        return "0 ms" if not seconds else "<0.01 ms" if seconds < 1e-5 else f"{seconds * 1000:.2g} ms"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.2f} s"
    minutes, rest = divmod(int(round(seconds)), 60)
    return f"{minutes}m {rest:02d}s"


def format_samples(completed: int | None, total: int | None) -> str:
    """`48/50` samples completed of total."""
    if completed is None and total is None:
        return "–"
    return f"{'?' if completed is None else completed}/{'?' if total is None else total}"


def score_content(value_num: float | None, text: str) -> Content:
    """A score cell coloured pass (1), fail (0) or partial (between)."""
    text = safe_line(text, 200)  # score values are run data
    if value_num is None or math.isnan(value_num):
        return Content.styled(text, "$foreground-muted")
    if value_num >= 1:
        return Content.styled(text, "$score-pass")
    if value_num <= 0:
        return Content.styled(text, "$score-fail")
    return Content.styled(text, "$score-partial")


# $foreground-muted, not $text-muted: a Content span drops the alpha of $text-muted ("auto 60%") and draws it
# full white (Textual 8.2.8).
NOTE_MARKS = {"warning": ("⚠", "$warning"), "info": ("ℹ", "$foreground-muted")}


def notes_content(notes: Iterable[Any]) -> Content:
    """A run's notes (RunNote: text, level), one a line: warnings first with ⚠ in the warning
    colour, information after them with ℹ, muted. Note text is run text: through the sanitiser."""
    ordered = sorted(notes, key=lambda note: note.level != "warning")  # stable: each level keeps its order
    lines = []
    for note in ordered:
        mark, style = NOTE_MARKS.get(note.level, NOTE_MARKS["warning"])
        lines.append(Content.styled(f"{mark} {safe_block(note.text)}", style))
    return Content("\n").join(lines)


def format_relative_time(moment: datetime | None, now: datetime) -> str:
    """`just now`, `5m ago`, `3h ago`, `2d ago`, `4mo ago`; `–` when unknown (a clock ahead reads `in 5m`)."""
    if moment is None:
        return "–"
    seconds = (now - moment).total_seconds()
    ahead = seconds < 0
    seconds = abs(seconds)
    if seconds < 45:
        return "just now"
    # (unit size in seconds, its suffix, how many of it before the next unit takes over)
    for size, unit, limit in ((60, "m", 60), (3600, "h", 24), (86400, "d", 30), (86400 * 30, "mo", 12)):
        if seconds < size * limit:
            amount = max(1, int(seconds // size))
            return f"in {amount}{unit}" if ahead else f"{amount}{unit} ago"
    amount = int(seconds // (86400 * 365))
    return f"in {amount}y" if ahead else f"{amount}y ago"


def format_absolute_time(moment: datetime | None) -> str:
    """`2026-11-25 08:18` in the local zone; `–` when unknown."""
    return "–" if moment is None else moment.astimezone().strftime("%Y-%m-%d %H:%M")


def middle_ellipsis(text: str, width: int) -> str:
    """`text` in at most `width` cells, cut from the middle (`2026-11…09-00-00`): a run's name
    differs at its start (job) and its end (run), so both are kept."""
    from rich.cells import cell_len

    if cell_len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    tail_cells, head_cells = (width - 1) // 2, width - 1 - (width - 1) // 2
    head, used = "", 0
    for char in text:
        if used + cell_len(char) > head_cells:
            break
        head, used = head + char, used + cell_len(char)
    tail, used = "", 0
    for char in reversed(text):
        if used + cell_len(char) > tail_cells:
            break
        tail, used = char + tail, used + cell_len(char)
    return f"{head}…{tail}"
