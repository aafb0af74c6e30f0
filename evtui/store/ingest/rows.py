"""Records → SQLite row tuples for ingest: each value serialised once, with a digest per sample.

Kept apart from ingest.py (which owns transactions and change detection) because this is the
hot loop of indexing: plain tuples in the column order of the INSERT statements below, JSON via
orjson, and score values through json (orjson turns NaN into null; a score value keeps NaN).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
import threading
from typing import Any

import orjson

from evtui.records import RunRecord, SampleRecord, ScoreRecord
from evtui.score_values import logger as _values_logger, value_to_float

SAMPLE_COLUMNS = (
    "sample_id, epoch, id_sort, input_tokens, output_tokens, total_tokens, cost, total_time, "
    "working_time, limit_type, completed, content_hash, error, target, detail_ref, metadata, "
    "input_text, output_text, choices"
)
SAMPLE_FIELD_COUNT = SAMPLE_COLUMNS.count(",") + 1
# The sample_bodies columns, which follow the samples columns in a sample_row.
BODY_COLUMNS = "input, messages"

# Ids first, then the payload columns of score_payload.
SCORE_COLUMNS = (
    "id, sample_rowid, run_id, scorer, source, job_id, value, value_num, answer, explanation, "
    "reason, metadata"
)
EDIT_COLUMNS = (
    "score_id, seq, value, answer, explanation, reason, metadata, author, edit_reason, timestamp, origin"
)

_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


def dump_json(value: Any) -> str:
    """Compact JSON text (NaN inside becomes null); unknown objects fall back to str()."""
    return orjson.dumps(value, option=_OPTIONS, default=str).decode()


_DIGITS = re.compile(r"\d+")


def id_sort_key(sample_id: str) -> str:
    """How sample ids sort, naturally: every run of digits zero-padded to 20 (an integer id as
    Inspect orders them; `q2` before `q10`)."""
    if sample_id.isdigit():
        return sample_id.zfill(20)
    return _DIGITS.sub(_padded, sample_id) if any(c.isdigit() for c in sample_id) else sample_id


def _padded(found: re.Match[str]) -> str:
    return found.group().zfill(20)


def dump_value(value: Any) -> str:
    """A score value as JSON text that keeps NaN/Infinity (Python json's literals)."""
    if isinstance(value, str):
        return orjson.dumps(value).decode()
    if isinstance(value, float) and not math.isfinite(value):
        return json.dumps(value)
    if isinstance(value, (bool, int, float)) or value is None:
        return orjson.dumps(value).decode()
    return json.dumps(value, allow_nan=True, default=str, separators=(",", ":"))


class _Mute(logging.Filter):
    """Drops value_to_float's 'unable to convert' warnings while ingest converts values."""

    local = threading.local()

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(self.local, "active", False)


_MUTE = _Mute()
_values_logger.addFilter(_MUTE)
_TO_FLOAT = value_to_float()
_STRING_FLOATS: dict[str, float] = {}


def value_num(value: Any) -> float | None:
    """Inspect's value_to_float for scalars; None for NaN (unscored), lists, dicts and None."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        number = float(value)
        return None if math.isnan(number) else number
    if isinstance(value, str):
        cached = _STRING_FLOATS.get(value)
        if cached is None:
            _MUTE.local.active = True
            try:
                cached = _TO_FLOAT(value)
            finally:
                _MUTE.local.active = False
            if len(_STRING_FLOATS) < 100_000:
                _STRING_FLOATS[value] = cached
        return cached
    return None


ScorePayload = tuple[tuple[Any, ...], list[tuple[Any, ...]]]


def sample_row(record: SampleRecord) -> tuple[list[Any], list[ScorePayload]]:
    """The samples row (SAMPLE_COLUMNS, then BODY_COLUMNS) and the sample's score payloads
    (see score_payload; deduplicated by scorer, last wins). `content_hash` digests them all."""
    usage = record.usage
    scores = [score_payload(s) for s in {s.scorer: s for s in record.scores}.values()]
    row: list[Any] = [
        record.sample_id,
        record.epoch,
        id_sort_key(record.sample_id),
        usage.input_tokens,
        usage.output_tokens,
        usage.total_tokens,
        usage.cost,
        usage.total_time,
        usage.working_time,
        record.limit,
        1 if record.completed else 0,
        None,  # content_hash, filled below
        record.error,
        dump_json(record.target),
        record.detail_ref,
        dump_json(record.metadata),
        record.input_text,
        record.output_text,
        None if record.choices is None else dump_json(record.choices),
        None if record.input is None else dump_json(record.input),
        dump_json(record.messages),
    ]
    row[11] = content_hash(row, scores)
    return row, scores


def content_hash(row: list[Any], scores: list[ScorePayload]) -> bytes:
    """The digest of everything read for a sample (its row and score payloads), by which a
    re-read finds the samples that changed."""
    return hashlib.blake2b(orjson.dumps((row, scores)), digest_size=16).digest()


def score_payload(score: ScoreRecord) -> ScorePayload:
    """A recorded score as (scores row without id/sample_rowid/run_id, its edit rows without
    score_id). Recorded scores are always stored with source 'log', so rows made in evtui
    ('human', 'job') are never confused with what the file says."""
    row = (
        score.scorer,
        "log",
        0,
        dump_value(score.value),
        value_num(score.value),
        score.answer,
        score.explanation,
        score.reason,
        dump_json(score.metadata),
    )
    edits = [
        (
            seq,
            dump_value(edit.value),
            edit.answer,
            edit.explanation,
            edit.reason,
            None if edit.metadata is None else dump_json(edit.metadata),
            edit.author,
            edit.edit_reason,
            edit.timestamp,
            "log",
        )
        for seq, edit in enumerate(score.history)
    ]
    return row, edits


RUN_FIELDS = (
    "format, run_key, task, model, status, created, started_at, completed_at, duration, "
    "total_samples, completed_samples, input_tokens, output_tokens, total_tokens, cost, error, "
    "config, metadata"
)


def run_fields(run: RunRecord) -> tuple[Any, ...]:
    """The runs columns RUN_FIELDS, in order."""
    usage = run.usage
    return (
        run.format,
        run.run_key,
        run.task,
        run.model,
        run.status,
        run.created,
        run.started_at,
        run.completed_at,
        run.duration,
        run.total_samples,
        run.completed_samples,
        usage.input_tokens,
        usage.output_tokens,
        usage.total_tokens,
        usage.cost,
        run.error,
        dump_json(run.config),
        dump_json(run.metadata),
    )
