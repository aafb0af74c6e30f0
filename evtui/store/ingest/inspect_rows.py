"""Inspect samples straight to index rows, without the records in between (issue 27).

The record path (reader → SampleRecord, ScoreRecord, Usage → rows.sample_row) builds four or
five model objects per sample only to read them back. For a sample of the usual shape the row
is built here from the parsed dict, with the same helpers and the same checks:

* every type check of the readers runs first (`sample_problem`, as `checked_sample_record`
  does), so a wrong-typed field is named exactly as before;
* the usual shape is: scores a dict (not a version-1 lone `score`) and no score carrying an
  edit history. Anything else, and any error met here, goes the record path, which maps the
  sample or names its problem word for word as it always did.

The reader's bounds (member size, nesting depth, the one opener, member names) are the
reader's and stay there: this only maps what it parsed. The rows are the same either way:
tests/test_inspect_rows.py compares whole indexes of every committed Inspect fixture.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from evtui.readers.base import RunRead
from evtui.readers.inspect.common import input_text, output_completion, score_reason, target_texts, usage_totals
from evtui.readers.inspect.shape import InspectSample, sample_problem
from evtui.score_values import sample_id_key
from evtui.store.ingest.rows import ScorePayload, content_hash, dump_json, dump_value, id_sort_key, sample_row, value_num

# Formats whose readers offer `raw_samples` of InspectSample.
FORMATS = ("inspect_eval", "inspect_json")

Row = tuple[list[Any], list[ScorePayload]]


def rows_of(read: RunRead) -> Iterator[Row]:
    """The (row, score payloads) of each sample of `read`, as rows.sample_row makes them."""
    if read.raw_samples is not None and read.run.format in FORMATS:
        return map(inspect_row, read.raw_samples)
    return map(sample_row, read.samples)


def inspect_row(item: InspectSample) -> Row:
    """One Inspect sample's row: built directly for the usual shape, else from its record."""
    try:
        row = usual_row(item.sample, item.detail_ref)
    except Exception:  # noqa: BLE001 - the record path raises it again, named as it always was
        row = None
    return row if row is not None else sample_row(item.record())


def usual_row(sample: dict[str, Any], detail_ref: str) -> Row | None:
    """rows.sample_row(common.sample_record(sample, detail_ref)) for a sample of the usual shape
    (see the module's docstring); None for any other."""
    if sample_problem(sample) is not None:
        return None
    get = sample.get
    scores = get("scores")
    if scores is None and isinstance(get("score"), dict):
        return None  # a version-1 sample: its scorer's name comes from the header
    payloads: list[ScorePayload] = []
    if scores:
        for name, score in scores.items():
            if not isinstance(score, dict):
                continue  # skipped, as the record path skips it
            if score.get("history"):
                return None
            metadata = score.get("metadata") or {}
            value = score.get("value")
            payloads.append(((name, "log", 0, dump_value(value), value_num(value), score.get("answer"),
                              score.get("explanation"), score_reason(score, metadata), _object_json(metadata)), []))
    sample_id = sample_id_key(get("id"))
    target = get("target")
    error = get("error")
    limit = get("limit")
    sample_input = get("input")
    choices = get("choices")
    input_tokens, output_tokens, total_tokens, cost = usage_totals(get("model_usage"))
    row: list[Any] = [
        sample_id,
        get("epoch") or 1,
        id_sort_key(sample_id),
        input_tokens,
        output_tokens,
        total_tokens,
        cost,
        get("total_time"),
        get("working_time"),
        # Full samples hold EvalSampleLimit and EvalError dicts; summaries plain strings.
        (limit.get("type") if isinstance(limit, dict) else limit) or None,
        1 if get("completed", True) else 0,
        None,  # content_hash, filled below
        (error.get("message") if isinstance(error, dict) else error) or None,
        dump_json([target] if type(target) is str else target_texts(target)),
        detail_ref,
        _object_json(get("metadata")),
        input_text(sample_input),
        output_completion(get("output")),
        None if choices is None else dump_json(choices),
        None if sample_input is None else dump_json(sample_input),
        _list_json(get("messages")),
    ]
    row[11] = content_hash(row, payloads)
    return row, payloads


def _object_json(value: dict[str, Any] | None) -> str:
    return dump_json(value) if value else "{}"  # most scores' metadata: no call for nothing


def _list_json(value: list[Any] | None) -> str:
    return dump_json(value) if value else "[]"
