"""Inspect samples mapped straight to rows (store/ingest/inspect_rows.py) make the same index as
the record path: every committed Inspect log indexed both ways, table by table, and each sample
of them, and variants of a real sample in every shape the readers accept or refuse."""

from __future__ import annotations

import copy
import math
from pathlib import Path

import pytest

from evtui.readers import detect
from evtui.readers.base import ReaderError
from evtui.store.ingest import inspect_rows
from evtui.store.ingest.files import ingest_paths
from evtui.store.ingest.rows import sample_row

from test_ingest_worker import _contents

DATA = Path(__file__).parent / "data"


def _inspect_logs() -> list[Path]:
    """Every Inspect .eval / .json log committed under tests/data (made by scripts/make_*)."""
    logs = []
    for path in sorted(DATA.rglob("*")):
        if path.is_file() and path.suffix in (".eval", ".json") and detect.detect_format(path) in inspect_rows.FORMATS:
            logs.append(path)
    return logs


LOGS = _inspect_logs()


def _readable(log: Path) -> bool:
    try:
        detect.read_runs(log)
    except ReaderError:
        return False
    return True


# A log the reader refuses before its samples has no rows to compare: the whole-index test above
# covers its failure, so the per-sample comparison takes the readable ones only.
READABLE_LOGS = [log for log in LOGS if _readable(log)]


def _summary(report) -> tuple:
    return ([(f.path, f.part, f.samples, f.scores, f.status, f.change, f.warnings) for f in report.files],
            sorted((f.path, f.error) for f in report.failures))  # fmt: skip


def test_the_fixtures_cover_both_formats_and_the_legacy_layouts():
    names = {path.name for path in LOGS}
    assert {"qa_match.eval", "qa_match.json", "hostile.eval", "0.3.9_qa.json", "0.3.52_qa.eval"} <= names
    assert len(LOGS) >= 60


def test_every_inspect_fixture_indexes_the_same_as_through_records(tmp_path, monkeypatch):
    """The whole index (runs, samples, bodies, scores, edits, results, metadata, search, failures)
    is the same row for row whether samples are mapped directly or through records."""
    taken = []

    def counted(sample, detail_ref):
        row = usual_row(sample, detail_ref)
        taken.append(row is not None)
        return row

    usual_row = inspect_rows.usual_row
    monkeypatch.setattr(inspect_rows, "usual_row", counted)
    direct = _summary(ingest_paths(tmp_path / "direct.db", LOGS))
    monkeypatch.setattr(inspect_rows, "usual_row", lambda sample, detail_ref: None)
    through_records = _summary(ingest_paths(tmp_path / "records.db", LOGS))
    assert direct == through_records
    assert len(direct[0]) >= len(LOGS) - len(direct[1]) and sum(f[2] for f in direct[0]) > 500
    assert _contents(tmp_path / "direct.db") == _contents(tmp_path / "records.db")
    # Most samples take the direct path; the legacy ones (a lone `score`, edited scores) do not.
    assert sum(taken) > 0.8 * len(taken) and not all(taken)


@pytest.mark.parametrize("log", READABLE_LOGS, ids=lambda p: str(p.relative_to(DATA)))
def test_each_sample_maps_to_the_same_row(log):
    reads = detect.read_runs(log)
    for read in reads:
        assert read.raw_samples is not None
        try:
            for item in read.raw_samples:
                row = inspect_rows.usual_row(item.sample, item.detail_ref)
                if row is not None:
                    assert row == sample_row(item.record())
        except ReaderError:
            pass  # a log that fails part-way: the index test compares its failure both ways


def _real_sample() -> dict:
    read = detect.read_runs(DATA / "inspect" / "qa_match.eval")[0]
    item = next(iter(read.raw_samples))
    read.raw_samples.close()
    return item


NAN = float("nan")

# (description, change to a real qa_match sample); each must give the record path's row.
VARIANTS = [
    ("as written", lambda s: None),
    ("float id", lambda s: s.update(id=3.0)),
    ("true id", lambda s: s.update(id=True)),
    ("text id with digits", lambda s: s.update(id="q10-b2")),
    ("no epoch", lambda s: s.pop("epoch")),
    ("epoch 0", lambda s: s.update(epoch=0)),
    ("list target", lambda s: s.update(target=["a", "b"])),
    ("no target", lambda s: s.pop("target")),
    ("chat input", lambda s: s.update(input=[{"role": "system", "content": "x"},
                                             {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image", "image": "i"}]}])),
    ("choices", lambda s: s.update(choices=["A", "B"])),
    ("no output", lambda s: s.pop("output")),
    ("output without completion", lambda s: s["output"].pop("completion")),
    ("empty completion", lambda s: s["output"].update(completion="")),
    ("error and limit objects", lambda s: s.update(error={"message": "boom", "traceback": "t"}, limit={"type": "token", "limit": 5})),
    ("error and limit texts", lambda s: s.update(error="boom", limit="time")),
    ("empty error", lambda s: s.update(error={"message": ""})),
    ("not completed", lambda s: s.update(completed=False)),
    ("no model usage", lambda s: s.pop("model_usage")),
    ("two models and a cost", lambda s: s["model_usage"].update(other={"input_tokens": 1, "output_tokens": 2, "total_tokens": 3, "total_cost": 0.5})),
    ("quoted token counts", lambda s: s["model_usage"].update(m={"input_tokens": "12", "total_tokens": 1.0, "total_cost": "0.25"})),
    ("integer times", lambda s: s.update(total_time=3, working_time=None)),
    ("NaN and number values", lambda s: s["scores"].update(a={"value": NAN}, b={"value": 0.5}, c={"value": True}, d={"value": [1, "x"]})),
    ("dict value", lambda s: s["scores"].update(a={"value": {"x": 1, "y": NAN}})),
    ("unscored reason in metadata", lambda s: s["scores"]["match"].update(metadata={"unscored_reason": "refused"})),
    ("reason given", lambda s: s["scores"]["match"].update(reason="r", metadata={"unscored_reason": "other"})),
    ("a score that is not an object", lambda s: s["scores"].update(odd="C")),
    ("no scores", lambda s: s.pop("scores")),
    ("null scores", lambda s: s.update(scores=None)),
    ("an edit history", lambda s: s["scores"]["match"].update(history=[{"value": "I", "answer": "UNCHANGED", "provenance": {"author": "a"}}])),
    ("a lone version-1 score", lambda s: (s.pop("scores"), s.update(score={"value": "C"}))),
    ("hostile text", lambda s: s.update(input="[bold]x[/]\x1b[31m\u202e", metadata={"k": "\x00[link=x]"})),
    ("deep metadata", lambda s: s.update(metadata={"a": [[[[{"b": [1]}]]]]})),
]


@pytest.mark.parametrize("change", [v[1] for v in VARIANTS], ids=[v[0] for v in VARIANTS])
def test_a_sample_in_any_accepted_shape_maps_to_the_same_row(change):
    item = _real_sample()
    sample = copy.deepcopy(item.sample)
    change(sample)
    item = item._replace(sample=sample)
    expected = sample_row(item.record())
    assert inspect_rows.inspect_row(item) == expected
    direct = inspect_rows.usual_row(sample, item.detail_ref)
    assert direct is None or direct == expected


def test_the_usual_shape_is_mapped_directly_and_the_legacy_ones_are_not():
    item = _real_sample()
    assert inspect_rows.usual_row(item.sample, item.detail_ref) is not None
    edited = copy.deepcopy(item.sample)
    edited["scores"]["match"]["history"] = [{"value": "I", "provenance": None}]
    legacy = copy.deepcopy(item.sample)
    legacy["score"] = legacy.pop("scores")["match"]
    assert inspect_rows.usual_row(edited, item.detail_ref) is None
    assert inspect_rows.usual_row(legacy, item.detail_ref) is None


# Wrong-typed fields: refused with the record path's message, naming the member and the field.
REFUSED = [
    ("scores", "x", "field 'scores' is a string, expected an object (or null)"),
    ("output", {"choices": "x"}, "field 'output.choices' is a string, expected a list (or null)"),
    ("messages", ["x"], "field 'messages[0]' is a string, expected an object"),
    ("model_usage", {"m": 3}, "field 'model_usage.m' is a number, expected an object"),
    ("total_time", "1s", "field 'total_time' is a string, expected a number (or null)"),
    ("id", None, "field 'id' is null, expected a string or a number or a boolean"),
]


@pytest.mark.parametrize("field,value,message", REFUSED, ids=[r[0] for r in REFUSED])
def test_a_wrong_typed_field_is_refused_as_before(field, value, message):
    item = _real_sample()
    sample = copy.deepcopy(item.sample)
    sample[field] = value
    item = item._replace(sample=sample)
    with pytest.raises(ReaderError) as direct:
        inspect_rows.inspect_row(item)
    with pytest.raises(ReaderError) as recorded:
        item.record()
    assert str(direct.value) == str(recorded.value)
    assert message in str(direct.value) and item.where in str(direct.value) and item.path in str(direct.value)


def test_a_value_the_store_cannot_write_fails_as_before():
    """A score metadata nested past the JSON writer's depth: the same error both ways."""
    item = _real_sample()
    sample = copy.deepcopy(item.sample)
    deep: dict = {}
    for _ in range(300):
        deep = {"d": deep}
    sample["scores"]["match"]["metadata"] = deep
    item = item._replace(sample=sample)
    with pytest.raises(Exception) as direct:
        inspect_rows.inspect_row(item)
    with pytest.raises(Exception) as recorded:
        sample_row(item.record())
    assert type(direct.value) is type(recorded.value) and str(direct.value) == str(recorded.value)


def test_nan_survives_both_ways():
    item = _real_sample()
    sample = copy.deepcopy(item.sample)
    sample["scores"]["match"]["value"] = NAN
    row, scores = inspect_rows.usual_row(sample, item.detail_ref)
    assert scores[0][0][3] == "NaN" and scores[0][0][4] is None and math.isnan(sample["scores"]["match"]["value"])
