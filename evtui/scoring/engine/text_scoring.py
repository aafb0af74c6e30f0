"""Scoring on columns for text scorers: `match`, `includes` and the other `str_match_scorer`s.

Such a scorer is a pure function of (completion, targets): the runner's per-sample path builds a
sample state, awaits a coroutine, makes a Score and converts it back to a row for every sample
(about 15 µs of a 22 µs sample on 100k). Here the runner reads only (rowid, sample id, target,
output) in batches and calls the scorer's own `check` on them, writing the scores rows directly:
the same values, answers, reasons and explanations as the per-sample path (tests check parity).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import orjson

from evtui.scoring.engine.unscored import unscored_reason
from evtui.score_values import Target
from evtui.store import jobs

__all__ = ["text_check", "score_text_run"]

Check = Callable[[str, str], tuple[str, bool]]
# The JSON text and numeric face of str_match_scorer's two values, as jobs.write_scores stores them.
_CORRECT = (jobs.dumps("C"), 1.0)
_INCORRECT = (jobs.dumps("I"), 0.0)
_NAN = float("nan")


def text_check(unit: Any) -> Check | None:
    """The (completion, target) check of a unit made by str_match_scorer, else None."""
    if unit.is_ag2:
        return None
    return getattr(unit.made, "text_check", None)


def _targets(text: str | None) -> list[str]:
    """The sample's targets as state_from_row gives them to a scorer (a JSON string: one target)."""
    if text is None or text == "[]":
        return []
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:  # NaN and the like: the slower reader
        value = jobs.loads(text, [])
    if type(value) is list:  # what list(Target(value)) gives, without its two copies
        return value
    return [value] if isinstance(value, str) else list(Target(value))


def score_text_run(db: Any, job_id: int, run_id: int, units: list[Any], checks: list[Check], pending: list[int],
                   scored: dict[str, set[int]], batch_size: int, progress: Any, collector: Any, cancel: Any,
                   flush_seconds: float) -> str:
    """Score `pending` sample rowids of `run_id` with text-check units: "done" or "cancelled".

    Scores are written every `batch_size` rows or `flush_seconds` (one transaction each), as the
    per-sample path does; `progress` (runner._Progress) and `collector` are kept the same way.
    The loop is per row and unit, so it keeps its counts locally and adds them to `progress`
    before each flush, post or return (`settle`).
    """
    names = [unit.name for unit in units]
    sums = {name: progress.sums.setdefault(name, [0.0, 0]) for name in names}
    made: list[tuple] = []
    # Per scorer, this batch's (rowids, values as floats, sample ids) for the collector.
    columns: dict[str, tuple[list, list, list]] = {name: ([], [], []) for name in names}
    counts = dict.fromkeys(names, 0)  # scores made since the last settle, per scorer
    last_flush = time.monotonic()
    cancelled = cancel.is_set if cancel is not None else None
    plan = [(name, check, scored[name], sums[name], *(column.append for column in columns[name])) for name, check in
            zip(names, checks, strict=True)]  # fmt: skip

    def settle() -> None:
        for name, count in counts.items():
            if count:
                progress.done += count
                progress.session_done += count
                progress.per_scorer[name][0] += count
                counts[name] = 0

    def flush() -> None:
        nonlocal made, last_flush
        settle()
        if made:
            for name, column in columns.items():
                if collector is not None:
                    collector.add_floats(name, *column)
                for values in column:
                    values.clear()
            job = {"job_id": job_id, "done": progress.done, "errors": progress.errors, "grader_usage": tuple(progress.grader_usage)}
            jobs.write_score_rows(db, made, job=job)
            made = []
        last_flush = time.monotonic()

    try:
        for start in range(0, len(pending), batch_size):
            now = jobs.now_text()  # as write_scores stamps each batch
            add = made.append
            for rowid, sample_id, target_text, output in jobs.fetch_text_samples(db, pending[start : start + batch_size]):
                targets = _targets(target_text)
                completion = output or ""
                reason = "no_response" if not completion.strip() else None
                for name, check, done, total, add_rowid, add_number, add_sample_id in plan:
                    if rowid in done:
                        continue
                    if cancelled is not None and cancelled():  # before each piece of work, as the per-sample path
                        return "cancelled"
                    value, answer, failed = _score(check, completion, targets)
                    if failed is not None:
                        add((rowid, run_id, name, job_id, "NaN", None, None, failed, "scoring_failed", "{}", now))
                        progress.errors += 1
                        progress.first_errors.setdefault(name, failed)
                        progress.unscored[unscored_reason("scoring_failed", failed, None)] += 1
                        number = _NAN
                    else:
                        text, number = value
                        add((rowid, run_id, name, job_id, text, number, answer, completion, reason, "{}", now))
                        total[0] += number
                        total[1] += 1
                    add_rowid(rowid), add_number(number), add_sample_id(sample_id)
                    counts[name] += 1
                    done.add(rowid)
            if len(made) >= batch_size or time.monotonic() - last_flush >= flush_seconds:
                flush()
            settle()
            progress.post()
    finally:
        flush()  # a cancel or a crash keeps every score already made
    return "done"


def _score(check: Check, completion: str, targets: list[str]) -> tuple[tuple[str, float], str | None, str | None]:
    """str_match_scorer's verdict: ((value JSON, value_num), answer, None), or a failure's explanation."""
    answer: str | None = None
    try:
        for one_target in targets:
            answer, matched = check(completion, one_target)
            if matched:
                return _CORRECT, answer, None
    except Exception as error:  # noqa: BLE001 - as units.ScorerUnit.score records it
        return _INCORRECT, None, f"scorer raised: {type(error).__name__}: {error}"
    return _INCORRECT, answer, None

