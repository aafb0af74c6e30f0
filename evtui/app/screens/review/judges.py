"""Judge against judge (issue 32): two score sources of one scorer in one run — the log's recorded
judge, an evtui job that re-graded it, a reviewer, the humans' verdict — side by side: each
source's headline and what made it (grader model, options, versions), the difference with its
interval and test, their agreement (κ, α, raw agreement with 95% intervals), and the flips each way,
each opening its sample; for a job that asked its judge several times, how stable it is.
`a`/`b` cycle the first/second source. The figures are scoring/judges.py's and
scoring/judge_draws.py's, the ones `evtui compare --sources`, `evtui agreement --between` and
`--draws` print."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static

from evtui.app.messages import LoadFailed
from evtui.app.safe_content import plain, plain_block
from evtui.app.widgets.bounded_table import BoundedTable
from evtui.app.widgets.key_footer import KeyFooter
from evtui.number_text import fixed, p_value
from evtui.safe_text import safe_line

FLIP_COLUMNS = ("Flip", "Sample", "Epoch", "First", "Second", "First says", "Second says")
AGREEMENT_FIGURES = ("agreement", "kappa", "kappa_linear", "kappa_quadratic", "alpha_nominal")


def summary_lines(view: dict[str, Any]) -> list[str]:
    """The view's text: sources, provenance, difference, agreement, draws (plain; sanitised when drawn)."""
    lines = [f"sources: {', '.join(view['sources']) or 'none'}   (a: first {view['first'] or '—'} · b: second {view['second'] or '—'})"]
    if view["error"]:
        return lines + [view["error"]]
    drift, agreement = view["drift"], view["agreement"]
    # The figures before what made each source: a log's provenance (its options dict) runs to
    # several lines, and at 80x24 it pushed the difference and the agreement out of sight.
    provenance_lines = []
    for label, mean, provenance in ((drift.first.label, drift.mean_first, drift.provenance[0]),
                                    (drift.second.label, drift.mean_second, drift.provenance[1])):  # fmt: skip
        known = ", ".join(f"{k} {v}" for k, v in provenance.items() if v not in (None, "", {}) and k != "source")
        provenance_lines.append(f"{label}: mean {fixed(mean)} over the {drift.n:,} samples both scored" + (f" · {known}" if known else ""))
    result = drift.result
    if result is None:
        lines.append(drift.note or "no paired difference")
    else:
        test = "exact McNemar" if result.test == "mcnemar_exact" else "paired t"
        lines.append(f"second − first {fixed(result.difference, sign=True)} [{fixed(result.ci[0], sign=True)}, "
                     f"{fixed(result.ci[1], sign=True)}] · p {p_value(result.p_value)} ({test}) · flips "
                     f"{'C→I' if drift.binary else 'down'} {len(drift.down):,}, {'I→C' if drift.binary else 'up'} {len(drift.up):,}")
    figures = []
    for name in AGREEMENT_FIGURES:
        value = getattr(agreement, name, None)
        if value is not None and math.isfinite(value):
            low, high = agreement.intervals.get(name, (math.nan, math.nan))
            figures.append(f"{name} {value:.3f} [{fixed(low, 2)}, {fixed(high, 2)}]")
    lines.append("agreement: " + (" · ".join(figures) or (agreement.note or "—")))
    draws = view["draws"]
    if draws is not None:
        lines.append(f"job {draws.job_id} asked its judge {draws.draws}×: flip rate {fixed(draws.flip_rate)} "
                     f"[{fixed(draws.flip_interval[0])}, {fixed(draws.flip_interval[1])}] (Wilson) · Fleiss κ {fixed(draws.fleiss_kappa)} "
                     f"· unanimous {fixed(draws.unanimous)} · majority {fixed(draws.headline)}, each draw "
                     f"{fixed(min(draws.draw_headlines, default=math.nan))}…{fixed(max(draws.draw_headlines, default=math.nan))}")
    return lines + provenance_lines


class JudgesScreen(Screen[None]):
    TITLE = "Judge against judge"
    DEFAULT_CSS = """
    JudgesScreen #judges-summary-box { height: auto; max-height: 50%; }
    JudgesScreen #judges-summary { height: auto; padding: 0 1; border: round $primary; }
    JudgesScreen #judges-tables { height: 1fr; }
    JudgesScreen #judges-confusion { width: auto; max-width: 40%; height: 1fr; margin-right: 1; }
    JudgesScreen #judges-flips { width: 1fr; height: 1fr; }
    """
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="judges.back"),
        Binding("a", "cycle_first", "First source", id="judges.first"),
        Binding("b", "cycle_second", "Second source", id="judges.second"),
    ]

    @dataclass
    class Loaded(Message):
        view: dict[str, Any]

    def __init__(self, run_id: int, scorer: str, *, first: str | None = None, second: str | None = None, title: str = "") -> None:
        super().__init__()
        self.run_id, self.scorer, self.run_title = run_id, scorer, title
        self.first, self.second = first, second
        self.view: dict[str, Any] | None = None
        self.flip_keys: list[tuple[str, int]] = []
        self.categories: list[str] = []

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="judges-summary-box"):  # at most half the screen; scrolls on a short terminal
            yield Static("comparing the sources…", id="judges-summary")
        with Horizontal(id="judges-tables"):  # the confusion beside the flips: both keep the height
            yield BoundedTable(("",), enter_label="Samples", id="judges-confusion")
            yield BoundedTable(FLIP_COLUMNS, enter_label="Open", id="judges-flips")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.sub_title = plain(f"{self.run_title} · {self.scorer}", 160).plain
        self.query_one("#judges-confusion", DataTable).cursor_type = "cell"
        self.load()

    @work(thread=True, exclusive=True, group="judges", exit_on_error=False)
    def load(self) -> None:
        from evtui.app.store_calls import fetch_judges

        try:
            view = fetch_judges(self.app.db_path, self.run_id, self.scorer, self.first, self.second)  # type: ignore[attr-defined]
        except Exception as error:  # shown on screen; the app stays usable
            self.post_message(LoadFailed("judges", f"{type(error).__name__}: {error}"))
            return
        self.post_message(self.Loaded(view))

    @on(Loaded)
    def _on_loaded(self, message: Loaded) -> None:
        self.view = view = message.view
        self.first, self.second = view["first"], view["second"]
        summary = self.query_one("#judges-summary", Static)
        summary.border_title = plain(f"{self.scorer}: {view['second'] or '—'} against {view['first'] or '—'}", 120)
        summary.update(plain_block("\n".join(summary_lines(view))))
        rows, self.flip_keys = [], []
        drift = view["drift"]
        if drift is not None:
            names = ("C→I", "I→C") if drift.binary else ("down", "up")
            for name, flips in zip(names, (drift.down, drift.up)):
                for flip in flips:
                    rows.append([name, safe_line(flip.sample_id, 40), str(flip.epoch), safe_line(flip.first, 12),
                                 safe_line(flip.second, 12), safe_line(flip.first_explanation or "", 60),
                                 safe_line(flip.second_explanation or "", 60)])  # fmt: skip
                    self.flip_keys.append((flip.sample_id, flip.epoch))
        self.query_one("#judges-flips", BoundedTable).show_rows(rows)
        self._show_confusion(view)
        self.query_one("#judges-flips", BoundedTable).focus()

    def _show_confusion(self, view: dict[str, Any]) -> None:
        """Rows: the first source's grades; columns: the second's; Enter on a cell lists its samples."""
        table = self.query_one("#judges-confusion", BoundedTable)
        agreement = view["agreement"]
        table.display = agreement is not None and agreement.confusion is not None
        if not table.display:
            return
        self.categories = [str(c) for c in agreement.scale.categories]
        table.column_labels = [f"{safe_line(view['first'], 20)} \\ {safe_line(view['second'], 20)}",
                               *(safe_line(c, 12) for c in self.categories)]  # fmt: skip
        table.show_rows([[safe_line(label, 12), *(str(v) for v in row)]
                         for label, row in zip(self.categories, agreement.confusion, strict=True)])  # fmt: skip

    @on(DataTable.CellSelected, "#judges-confusion")
    def _open_cell(self, event: DataTable.CellSelected) -> None:
        from evtui.app.dialogs.confusion_samples import ConfusionSamplesDialog

        row, column = event.coordinate.row, event.coordinate.column - 1
        if self.view is None or column < 0 or not 0 <= row < len(self.categories):
            return
        first_value, second_value = self.categories[row], self.categories[column]
        samples = self.view["cells"].get((first_value, second_value), [])
        label = f"{self.view['first']} {first_value} · {self.view['second']} {second_value}"
        self.app.push_screen(ConfusionSamplesDialog(self.run_id, self.scorer, label, samples))

    def _cycle(self, which: str) -> None:
        if self.view is None or len(self.view["sources"]) < 2:
            return
        sources = self.view["sources"]
        current, other = (self.first, self.second) if which == "first" else (self.second, self.first)
        if not set(sources) - {current, other}:
            # Nothing else to pick: say so rather than reload the same pair.
            self.notify(plain(f"{self.scorer} has only these two sources here ({', '.join(sources)}): "
                              "score the run again to have a third", 200).plain, markup=False)  # fmt: skip
            return
        start = sources.index(current) if current in sources else -1
        for step in range(1, len(sources) + 1):
            candidate = sources[(start + step) % len(sources)]
            if candidate != other:
                break
        if which == "first":
            self.first = candidate
        else:
            self.second = candidate
        self.load()

    def action_cycle_first(self) -> None:
        self._cycle("first")

    def action_cycle_second(self) -> None:
        self._cycle("second")

    @on(DataTable.RowSelected, "#judges-flips")
    def _open_flip(self, event: DataTable.RowSelected) -> None:
        """A flip opens its sample: every score, both sources' answers and explanations on its Scores tab."""
        from evtui.app.screens.sample import SampleScreen

        index = event.cursor_row
        if self.view is None or not 0 <= index < len(self.flip_keys):
            return
        rowid = self.view["rowids"].get(self.flip_keys[index])
        if rowid is not None:
            self.app.push_screen(SampleScreen(self.app.db_path, rowid, title=self.sub_title, scorer=self.scorer))  # type: ignore[attr-defined]

    @on(LoadFailed)
    def _on_failed(self, message: LoadFailed) -> None:
        self.query_one("#judges-summary", Static).update(plain(f"Could not compare the sources: {message.error}", 300))
