"""The evtui JSONL format (docs/formats.md): one sample per line, an optional run header."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from evtui.readers import jsonl
from evtui.readers.base import ReaderError

DATA = Path(__file__).parent / "data" / "jsonl"
CAPITALS = DATA / "capitals.jsonl"
BARE = DATA / "bare.jsonl"


def _write(path: Path, *lines: str | dict) -> Path:
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line) + "\n") for line in lines), encoding="utf-8"
    )
    return path


def test_sniff_accepts_a_header_or_a_sample_line() -> None:
    assert jsonl.sniff(CAPITALS, CAPITALS.read_bytes()[:8192])
    assert jsonl.sniff(BARE, BARE.read_bytes()[:8192])
    assert not jsonl.sniff(BARE, b'{"kind": "eval", "task_id": "t", "reward": 1.0}\n')
    assert not jsonl.sniff(BARE, b'{"id": "q1", "input": "no output key"}\n')
    assert not jsonl.sniff(BARE, b"\n\n")
    assert not jsonl.sniff(BARE, b"id,output\nq1,4\n")


def test_run_header_fills_the_run_record() -> None:
    run = jsonl.read(CAPITALS).run
    assert run.format == "jsonl"
    assert (run.task, run.model, run.created, run.run_key) == (
        "capitals",
        "openai/gpt-4.1-mini",
        "2026-11-21T09:30:00+00:00",
        "capitals-0007",
    )
    assert run.usage.input_tokens == 310
    assert run.metadata["harness"] == "home-grown"  # unknown header keys are kept
    assert run.status == "success"


def test_file_without_header_still_loads() -> None:
    run_read = jsonl.read(BARE)
    assert run_read.run.task is None
    assert [(s.sample_id, s.epoch) for s in run_read.samples] == [("fr", 1), ("fr", 2)]


def test_samples_carry_every_field() -> None:
    run_read = jsonl.read(CAPITALS)
    samples = {(s.sample_id, s.epoch): s for s in run_read.samples}
    assert run_read.warnings == []
    assert sorted(samples) == [("3", 1), ("au", 1), ("de", 1), ("fr", 1), ("fr", 2)]

    fr = samples["fr", 1]
    assert (fr.input_text, fr.target, fr.output_text) == ("What is the capital of France?", ["Paris"], "Paris")
    (exact,) = fr.scores
    assert (exact.scorer, exact.value, exact.answer, exact.explanation) == ("exact", 1, "Paris", "exact match")
    assert fr.usage.input_tokens == 52 and fr.usage.total_time == 0.41
    assert fr.detail_ref == "2"

    de = samples["de", 1]
    assert de.input_text == "Capital of Germany?"  # the last user message of a chat input
    assert de.input[0]["role"] == "system"
    assert de.target == ["Berlin", "berlin"]
    assert [m["role"] for m in de.messages] == ["system", "user", "assistant"]
    judge = next(s for s in de.scores if s.scorer == "judge")
    assert judge.value == "C" and judge.metadata == {"grader": "gpt-x"}
    assert de.metadata == {"region": "europe"}

    mc = samples["3", 1]  # a numeric id becomes text
    assert mc.choices == ["Osaka", "Tokyo", "Kyoto"]
    assert mc.scores[0].value == "C"  # shorthand {"name": value}

    failed = samples["au", 1]
    assert failed.error == "RateLimitError: 429 Too Many Requests"
    assert math.isnan(failed.scores[0].value)


def test_load_sample_detail_returns_the_line() -> None:
    detail = jsonl.load_sample_detail(CAPITALS, "4")
    assert detail["id"] == "de"
    with pytest.raises(ReaderError, match="fewer lines"):
        jsonl.load_sample_detail(CAPITALS, "99")


def test_bad_lines_are_reported_with_line_numbers_and_skipped(tmp_path: Path) -> None:
    good = {"id": "a", "input": "x", "target": "1", "output": "1"}
    path = _write(
        tmp_path / "run.jsonl",
        {"run": {"task": "t"}},
        good,
        "this is not json\n",
        "\n",
        {"id": "b", "input": "no output"},
        {"input": "no id", "output": "x"},
        "[1, 2, 3]\n",
        {"id": "c", "epoch": 0, "output": "x"},
        {"id": "a", "output": "again"},
        {"id": "d", "output": "fine"},
        '{"id": "e", "output": "cut of',
    )
    run_read = jsonl.read(path)
    assert [s.sample_id for s in run_read.samples] == ["a", "d"]
    assert run_read.warnings[0].startswith(f"{path} (line 3): not valid JSON")
    assert run_read.warnings[1:6] == [
        f"{path} (line 5): missing 'output'; skipped",
        f"{path} (line 6): missing 'id'; skipped",
        f"{path} (line 7): not a JSON object; skipped",
        f"{path} (line 8): 'epoch' must be a whole number >= 1, not 0; skipped",
        f"{path} (line 9): sample 'a' epoch 1 already on line 2; skipped",
    ]
    assert run_read.warnings[6].startswith(f"{path} (line 11): not valid JSON (the line ends mid-record: cut off?)")
    assert len(run_read.warnings) == 7


def test_nan_literals_are_read(tmp_path: Path) -> None:
    path = _write(tmp_path / "nan.jsonl", '{"id": "a", "output": "x", "scores": {"s": {"value": NaN}}}\n')
    (sample,) = list(jsonl.read(path).samples)
    assert math.isnan(sample.scores[0].value)


def test_bad_run_header_status_is_reported_not_fatal(tmp_path: Path) -> None:
    path = _write(tmp_path / "h.jsonl", {"run": {"task": "t", "status": "finished"}}, {"id": "a", "output": "x"})
    run_read = jsonl.read(path)
    assert run_read.run.status == "success"
    assert run_read.warnings == [f"{path} (line 1): unknown run status 'finished'; read as 'success'"]


def test_unopenable_file_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(ReaderError) as caught:
        list(jsonl.read(tmp_path / "absent.jsonl").samples)
    assert "absent.jsonl" in str(caught.value)


def test_a_first_line_longer_than_the_sniffed_head_is_still_recognised(tmp_path: Path) -> None:
    transcript = [{"role": "user", "content": "word " * 5000}]
    path = _write(tmp_path / "long.jsonl", {"id": "a", "input": transcript, "output": "ok"})
    head = path.read_bytes()[:8192]
    assert b"\n" not in head  # the head ends mid-line
    assert jsonl.sniff(path, head)
    (sample,) = list(jsonl.read(path).samples)
    assert sample.input_text.startswith("word word")


def test_run_header_results_are_recorded_and_bad_ones_reported(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "r.jsonl",
        {
            "run": {
                "task": "t",
                "results": [
                    {"scorer": "exact", "metric": "accuracy", "value": 0.5, "reducer": "mean"},
                    {"metric": "accuracy"},
                ],
            }
        },
        {"id": "a", "output": "x"},
    )
    run_read = jsonl.read(path)
    (result,) = run_read.run.results
    assert (result.scorer, result.reducer, result.metric, result.value) == ("exact", "mean", "accuracy", 0.5)
    assert run_read.warnings == [f"{path} (line 1): run.results[1] ignored: scorer: Field required"]
