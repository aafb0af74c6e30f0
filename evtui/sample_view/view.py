"""Everything the sample view shows about one sample, gathered without Textual.

`load_sample_view(db_path, sample_rowid, ordering)` joins the index row (input, target, output,
usage, error, every score with its edit history, the sample's epochs, its neighbours in the
samples list's order) with the transcript read from the run file (messages with tool calls and
results, and the model/tool/error events; transcript.py) and its timeline (timeline.py). When the
file is gone or unreadable the transcript comes from the messages stored in the index, and
`transcript_note` says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evtui.sample_view.timeline import Timeline, build_timeline, stamp_atif_steps
from evtui.sample_view.transcript import EventNode, EventView, MessageView, event_tree, message_tree, read_events, read_messages
from evtui.store.queries.effective_scores import effective_rank
from evtui.store.queries.filters import quote
from evtui.store.queries import EpochRow, SampleDetail, ScoreDetail, get_run, get_sample, page_samples, sample_epochs
from evtui.store.queries.ui import run_scorers
from evtui.store.schema import connect

__all__ = ["SampleOrdering", "ScoreView", "SampleView", "load_sample_view"]


@dataclass(frozen=True)
class SampleOrdering:
    """The samples list's order and filter, so next/previous follow what the user was looking at."""

    sort: str = "id"
    descending: bool = False
    filter: str | None = None
    search: str | None = None
    score_columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScoreView:
    """A score with where it came from, and whether it is the one that counts for its scorer."""

    score: ScoreDetail
    origin: str  # 'recorded' (in the run file) | 'job' (an evtui scoring job) | 'human'
    effective: bool

    @property
    def origin_label(self) -> str:
        if self.origin == "job":
            return f"evtui job {self.score.job_id}"
        return "human review" if self.origin == "human" else "recorded in the log"


@dataclass(frozen=True)
class SampleView:
    sample: SampleDetail
    run_path: str
    run_format: str
    task: str | None
    model: str | None
    scorers: list[str]  # the run's scorers, in the order of its results
    scores: list[ScoreView]
    epochs: list[EpochRow]
    messages: list[MessageView]
    events: list[EventView]
    transcript_from_file: bool
    transcript_note: str | None  # why the transcript is the indexed copy (None when from the file)
    error_traceback: str | None
    previous_rowid: int | None
    next_rowid: int | None
    ordering: SampleOrdering = field(default_factory=SampleOrdering)
    file_record: dict[str, Any] | None = None  # the sample's raw record, for formats other than Inspect
    run_part: str = ""  # which run of the file (a Harbor job's evals key), '' for a file's one run
    tree: list[EventNode] = field(default_factory=list)  # the events as a tree (Inspect: spans, subtasks)
    record: dict[str, Any] | None = None  # the sample as the run file records it (the JSON view)
    timeline: Timeline | None = None  # the tree's spans and events in time order (build_timeline)


_ORIGIN = {"log": "recorded", "job": "job", "human": "human"}


def load_sample_view(db_path: str | Path, sample_rowid: int, ordering: SampleOrdering | None = None) -> SampleView:
    """The sample with rowid `sample_rowid` as the sample view shows it.

    Raises LookupError when the sample is not in the index (deleted by a re-index, say).
    """
    ordering = ordering or SampleOrdering()
    db = connect(db_path)
    try:
        sample = get_sample(db, sample_rowid)
        if sample is None:
            raise LookupError(f"sample {sample_rowid} is not in the index")
        run = get_run(db, sample.run_id)
        assert run is not None  # samples cascade with their run
        scorers = run_scorers(db, sample.run_id)
        epochs = sample_epochs(db, sample.run_id, sample.sample_id)
        previous_rowid, next_rowid = _neighbours(db, sample, ordering)
    finally:
        db.conn.close()
    detail, note = _read_detail(run.row.format, run.row.path, run.row.missing, sample.detail_ref, run.row.part)
    if detail is not None and not sample.output_text and isinstance(detail.get("output"), dict):
        # A run indexed from an object store's summaries (no outputs): the output as the file has it.
        from dataclasses import replace

        from evtui.readers.inspect.common import output_completion

        sample = replace(sample, output_text=output_completion(detail["output"]) or "")
    file_record = None
    if detail is not None and _is_message_list(detail.get("messages")):  # Inspect: full messages and events
        messages = read_messages(detail["messages"], detail.get("events") or [])
        events = read_events(detail.get("events") or [])
        tree = event_tree(detail.get("events") or [])
    else:
        # Other formats: the reader's normalised messages (read from this same file) are the
        # transcript, and the file's own record is shown as it is.
        file_record = detail
        messages = read_messages(sample.messages, [])
        events = []
        tree = message_tree(messages, sample.scores)
        stamp_atif_steps(tree, detail)
    error = detail.get("error") if detail is not None else None
    traceback = error.get("traceback") if isinstance(error, dict) else None
    return SampleView(
        sample, run.row.path, run.row.format, run.row.task, run.row.model, scorers, _score_views(sample.scores, scorers),
        epochs, messages, events, note is None, note, traceback or None, previous_rowid, next_rowid, ordering,
        file_record, run.row.part, tree, detail, build_timeline(tree, detail),
    )  # fmt: skip


def _score_views(scores: list[ScoreDetail], scorers: list[str]) -> list[ScoreView]:
    """Scores grouped by scorer in the run's order, the effective one (human > latest job > log,
    a job's unscored one last: effective_scores.py EFFECTIVE_ORDER) first in each group."""
    ranked = sorted(scores, key=lambda s: (s.scorer, *effective_rank(s.source, s.job_id, s.value, s.value_num), s.id))
    views, seen = [], set()
    for score in ranked:
        views.append(ScoreView(score, _ORIGIN.get(score.source, score.source), score.scorer not in seen))
        seen.add(score.scorer)
    order = {name: i for i, name in enumerate(scorers)}
    return sorted(views, key=lambda v: (order.get(v.score.scorer, len(order)), v.score.scorer))


def _neighbours(db: Any, sample: SampleDetail, ordering: SampleOrdering) -> tuple[int | None, int | None]:
    """Rowids of the samples before and after this one in `ordering` (None at either end)."""
    common = dict(sort=ordering.sort, score_columns=ordering.score_columns)
    try:
        # The sort key of this sample does not depend on the filter: find it with an exact match.
        exact = f"id == {quote(sample.sample_id)} and epoch == {int(sample.epoch)}"
        here = page_samples(db, sample.run_id, filter=exact, limit=1, **common).rows
        if not here:
            return None, None
        key = here[0].key
        narrowed = dict(filter=ordering.filter, search=ordering.search, limit=1, after=key, **common)
        after = page_samples(db, sample.run_id, descending=ordering.descending, **narrowed).rows
        before = page_samples(db, sample.run_id, descending=not ordering.descending, **narrowed).rows
    except ValueError:  # an ordering the store no longer accepts (e.g. a scorer that vanished)
        return None, None
    return (before[0].rowid if before else None), (after[0].rowid if after else None)


def _read_detail(
    fmt: str, path: str, missing: bool, detail_ref: str | None, part: str = ""
) -> tuple[dict | None, str | None]:
    """The full sample from the run file, or None and the reason it could not be read."""
    if not detail_ref:
        return None, "the index has no pointer into the run file for this sample; showing the messages stored in the index"
    if missing or ("://" not in path and not Path(path).exists()):  # an object store's run is fetched below
        return None, f"the run file is missing ({path}); showing the messages stored in the index"
    try:
        from evtui.readers.detect import load_sample_detail

        detail = load_sample_detail(fmt, path, detail_ref, part)  # a URL stays a URL
    except Exception as error:  # any reader failure degrades to the indexed copy, named
        return None, f"could not read the run file ({type(error).__name__}: {error}); showing the messages stored in the index"
    if not isinstance(detail, dict):
        return None, "the run file's sample is not an object; showing the messages stored in the index"
    return detail, None


def _is_message_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(m, dict) and "role" in m for m in value)
