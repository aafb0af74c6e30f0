"""Type checks on the Inspect sample fields the readers map, so a wrong-typed field is named.

The Inspect readers build records without validation (pydantic's is several times slower on
100k samples), so a sample with `"scores": "x"` or `"output": {"choices": "x"}` would break
somewhere inside with a bare AttributeError, or reach the store as a record of the wrong shape.
`sample_problem` names the first field whose JSON type is not what Inspect writes, as
"field 'output.choices' is a string, expected a list". It is a handful of isinstance checks per
sample (no walk of messages' content or of events).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from evtui.readers.base import ReaderError
from evtui.readers.inspect.common import run_record, sample_record
from evtui.readers.inspect.legacy import SCORER_PLACEHOLDER
from evtui.records import RunRecord, SampleRecord

_JSON_NAMES = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
               float: "a number", type(None): "null"}

Fields = list[tuple[str, frozenset, tuple[type, ...]]]


def _fields(types_by_name: dict[str, tuple[type, ...]]) -> Fields:
    return [(name, frozenset(types), types) for name, types in types_by_name.items()]


_OPTIONAL_OBJECT = (dict, type(None))
_OPTIONAL_LIST = (list, type(None))
_OPTIONAL_TEXT = (str, type(None))
_OPTIONAL_NUMBER = (int, float, type(None))
_TEXT_OR_OBJECT = (str, dict, type(None))
_TEXT_OR_LIST = (str, list, type(None))

# field -> JSON types Inspect writes there (top level of an EvalSample / EvalSampleSummary)
_SAMPLE_FIELDS = _fields({
    "id": (str, int, float, bool),  # Inspect reads 1.0 and True as the id 1 (score_values.sample_id_key)
    "epoch": (int, type(None)),
    "input": _TEXT_OR_LIST,
    "target": _TEXT_OR_LIST,
    "choices": _OPTIONAL_LIST,
    "messages": _OPTIONAL_LIST,
    "output": _OPTIONAL_OBJECT,
    "scores": _OPTIONAL_OBJECT,
    "metadata": _OPTIONAL_OBJECT,
    "model_usage": _OPTIONAL_OBJECT,
    "total_time": _OPTIONAL_NUMBER,
    "working_time": _OPTIONAL_NUMBER,
    "error": _TEXT_OR_OBJECT,
    "limit": _TEXT_OR_OBJECT,
    "completed": (bool, type(None)),
})
_OUTPUT_FIELDS = _fields({"completion": _OPTIONAL_TEXT, "choices": _OPTIONAL_LIST, "model": _OPTIONAL_TEXT})
_SCORE_FIELDS = _fields({"answer": _OPTIONAL_TEXT, "explanation": _OPTIONAL_TEXT, "reason": _OPTIONAL_TEXT,
                         "metadata": _OPTIONAL_OBJECT, "history": _OPTIONAL_LIST})
_HEADER_FIELDS = _fields({"eval": (dict,), "plan": _OPTIONAL_OBJECT, "results": _OPTIONAL_OBJECT,
                          "stats": _OPTIONAL_OBJECT, "error": _OPTIONAL_OBJECT, "status": _OPTIONAL_TEXT})
_EVAL_FIELDS = _fields({"task": _OPTIONAL_TEXT, "model": _OPTIONAL_TEXT, "dataset": _OPTIONAL_OBJECT,
                        "config": _OPTIONAL_OBJECT, "packages": _OPTIONAL_OBJECT, "created": _OPTIONAL_TEXT})


def json_type(value: Any) -> str:
    return _JSON_NAMES.get(type(value), type(value).__name__)


def _expected(types: tuple[type, ...]) -> str:
    names = []
    for kind in types:
        name = _JSON_NAMES[kind]
        if kind is not type(None) and name not in names:
            names.append(name)
    return " or ".join(names) + (" (or null)" if type(None) in types else "")


_MISSING = object()


def _check(record: dict[str, Any], fields: Fields, prefix: str) -> str | None:
    # Parsed JSON holds exact types (bool is not taken for int): a set lookup of type() is the
    # cheapest check, and this runs for every sample.
    get = record.get
    for name, allowed, types in fields:
        value = get(name, _MISSING)
        if type(value) not in allowed and value is not _MISSING:
            return f"field '{prefix}{name}' is {json_type(value)}, expected {_expected(types)}"
    return None


def sample_problem(sample: dict[str, Any]) -> str | None:
    """The first field of an Inspect sample with the wrong JSON type, described; None if all fit."""
    problem = _check(sample, _SAMPLE_FIELDS, "")
    if problem:
        return problem
    output = sample.get("output")
    if isinstance(output, dict):
        problem = _check(output, _OUTPUT_FIELDS, "output.")
        if problem:
            return problem
    for index, message in enumerate(sample.get("messages") or ()):
        if not isinstance(message, dict):
            return f"field 'messages[{index}]' is {json_type(message)}, expected an object"
    for name, usage in (sample.get("model_usage") or {}).items():
        if not isinstance(usage, dict):
            return f"field 'model_usage.{name}' is {json_type(usage)}, expected an object"
    for name, score in (sample.get("scores") or {}).items():
        if isinstance(score, dict):  # a non-object score is skipped by the reader, as before
            problem = _check(score, _SCORE_FIELDS, f"scores.{name}.")
            if problem:
                return problem
            for index, edit in enumerate(score.get("history") or ()):
                if not isinstance(edit, dict) or not isinstance(edit.get("provenance"), _OPTIONAL_OBJECT):
                    where = f"scores.{name}.history[{index}]"
                    return (f"field '{where}' is {json_type(edit)}, expected an object" if not isinstance(edit, dict)
                            else f"field '{where}.provenance' is {json_type(edit['provenance'])}, expected an object")
    return None


def header_problem(header: dict[str, Any]) -> str | None:
    """The first field of an Inspect log header with the wrong JSON type, described; None if all fit."""
    problem = _check(header, _HEADER_FIELDS, "")
    if problem:
        return problem
    return _check(header.get("eval") or {}, _EVAL_FIELDS, "eval.")


def checked_sample_record(path: str, sample: dict[str, Any], where: str, detail_ref: str, **options: Any) -> SampleRecord:
    """sample_record, with a wrong-typed field named (member and field) instead of a bare error."""
    problem = sample_problem(sample)
    if problem is None:
        try:
            return sample_record(sample, detail_ref=detail_ref, **options)
        except Exception as exc:  # a shape the checks above do not know yet
            problem = f"cannot map the sample: {type(exc).__name__}: {exc}"
    raise ReaderError(path, problem, where=where)


class InspectSample(NamedTuple):
    """One parsed Inspect sample and where it is in its file, before it becomes a record: what
    the Inspect readers' `raw_samples` stream (RunRead) holds. Nothing is checked yet; `record()`
    checks and maps it as the `samples` stream does."""

    path: str
    sample: dict[str, Any]
    where: str  # the member or position errors name
    detail_ref: str
    legacy_scorer: str = SCORER_PLACEHOLDER  # the name a version-1 sample's lone `score` takes

    def record(self) -> SampleRecord:
        return checked_sample_record(self.path, self.sample, self.where, self.detail_ref,
                                     legacy_scorer=self.legacy_scorer)


def records(samples: Iterator[InspectSample]) -> Iterator[SampleRecord]:
    """The checked SampleRecord of each sample (closing `samples` when stopped early)."""
    try:
        for sample in samples:
            yield sample.record()
    finally:
        close = getattr(samples, "close", None)
        if close is not None:
            close()


def checked_run_record(path: str, fmt: str, header: dict[str, Any], where: str, **options: Any) -> RunRecord:
    """run_record, with a wrong-typed header field named instead of a bare error."""
    problem = header_problem(header)
    if problem is None:
        try:
            return run_record(path, fmt, header, **options)
        except Exception as exc:
            problem = f"cannot map the log header: {type(exc).__name__}: {exc}"
    raise ReaderError(path, problem, where=where)
