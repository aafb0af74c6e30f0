"""Inspect logs written by older inspect-ai releases (0.3.9 ... 0.3.132, 2024-2025) load as
inspect_ai 0.3.285's own reader reads them, and re-scoring them reproduces the recorded metrics.

The logs in tests/data/inspect_versions were written by each release installed with its
dependencies as of its date (scripts/make_inspect_version_fixtures.py).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from evtui.readers import detect
from evtui.readers.inspect import eval_log as inspect_eval
from evtui.readers.inspect import json_log as inspect_json
from evtui.readers.base import ReaderError
from evtui.readers.inspect.legacy import base57_id_hash
from evtui.sample_view.view import load_sample_view
from evtui.store.ingest.files import ingest_paths
from evtui.store.schema import connect

DATA = Path(__file__).parent / "data" / "inspect_versions"
LOGS = sorted(DATA.glob("*.eval")) + sorted(DATA.glob("*.json"))
# 0.3.9 (log version 1) recorded bootstrap_std, random and since renamed: see the test below.
RESCORABLE = [p for p in LOGS if not p.name.startswith("0.3.9_")]
SINGLE_EPOCH = [p for p in RESCORABLE if "_single" in p.name]


def release(path: Path) -> tuple[int, ...]:
    return tuple(int(part) for part in path.name.split("_")[0].split("."))


def read(path: Path):
    run_read = detect.read_run(path)
    return run_read.run, list(run_read.samples)


def test_the_fixtures_span_2024_and_2025_releases_and_both_formats() -> None:
    releases = {release(p) for p in LOGS}
    assert {(0, 3, 9), (0, 3, 22), (0, 3, 42), (0, 3, 52), (0, 3, 88), (0, 3, 132)} <= releases
    assert {json.loads(p.read_text())["version"] for p in DATA.glob("*.json")} == {1, 2}
    assert any(p.suffix == ".eval" for p in LOGS)


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_each_log_loads_as_inspect_reads_it(path: Path) -> None:
    assert detect.detect_format(path) == ("inspect_eval" if path.suffix == ".eval" else "inspect_json")
    run, samples = read(path)
    log = read_eval_log(str(path))
    assert run.status == log.status == "success"
    assert (run.task, run.model) == (log.eval.task, log.eval.model)
    assert run.run_key == log.eval.eval_id  # derived from run_id/task_id/created where not written
    assert run.metadata["inspect_version"] == ".".join(map(str, release(path)))
    assert [(s.sample_id, s.epoch) for s in samples] == [(str(s.id), s.epoch) for s in log.samples]
    for record, sample in zip(samples, log.samples):
        assert record.output_text == sample.output.completion, (record.sample_id, record.epoch)
        assert record.input_text == sample.input and record.target == [sample.target]
        assert [s.scorer for s in record.scores] == list(sample.scores)
        for score in record.scores:
            expected = sample.scores[score.scorer]
            assert (score.value, score.answer, score.explanation) == (expected.value, expected.answer, expected.explanation)
    expected_results = [(s.name, s.reducer, key, m.value) for s in log.results.scores for key, m in s.metrics.items()]
    assert [(r.scorer, r.reducer, r.metric, r.value) for r in run.results] == expected_results


def raw_samples(path: Path) -> list[dict]:
    if path.suffix == ".json":
        return json.loads(path.read_text())["samples"]
    with zipfile.ZipFile(path) as archive:
        return [json.loads(archive.read(n)) for n in archive.namelist() if n.startswith("samples/")]


@pytest.mark.parametrize("path", [p for p in LOGS if "_qa" in p.name], ids=lambda p: p.name)
def test_completion_comes_from_the_message_where_the_log_has_none(path: Path) -> None:
    assert all(("completion" in s["output"]) == (release(path) >= (0, 3, 132)) for s in raw_samples(path))
    _, samples = read(path)
    by_key = {(s.sample_id, s.epoch): s.output_text for s in samples}
    assert by_key[("1", 1)] == "ANSWER: 42"  # str content
    assert by_key[("1", 2)] == "Let me think.\n42"  # two text parts, joined as ChatMessage.text does
    assert by_key[("6", 1)] == "The Nile"  # one text part
    assert by_key[("3", 1)] == ""  # an empty reply stays empty


def test_version_1_scores_take_the_scorer_name_and_results_become_scores() -> None:
    run, samples = read(DATA / "0.3.9_qa.json")
    assert [s.scorer for s in samples[0].scores] == ["match"]
    assert [(r.scorer, r.metric) for r in run.results] == [("match", "accuracy"), ("match", "bootstrap_std")]
    assert run.results[0].value == 0.625
    mc, mc_samples = read(DATA / "0.3.9_mc.json")
    assert [s.scorer for s in mc_samples[0].scores] == ["answer"]
    assert mc.config["scorers"] == [{"name": "answer", "options": {"type": "letter"},
                                     "metrics": [{"name": "accuracy", "options": {}},
                                                 {"name": "bootstrap_std", "options": {}}],
                                     "metadata": {}}]


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_scorers_are_rebuilt_from_the_results_only_where_the_log_lacks_them(path: Path) -> None:
    run, _ = read(path)
    assert bool(run.config.get("scorers_inferred")) == (release(path) < (0, 3, 88))
    version_1 = release(path) == (0, 3, 9)
    expected = (["answer"] if version_1 else ["choice"]) if "_mc" in path.name else (
        ["match"] if version_1 else ["match", "includes"])
    assert [s["name"] for s in run.config["scorers"]] == expected
    for scorer in run.config["scorers"]:
        recorded_metrics = [r.metric for r in run.results if r.scorer == scorer["name"]]
        assert [m["name"].removeprefix("inspect_ai/") for m in scorer["metrics"]] == list(dict.fromkeys(recorded_metrics))


@pytest.mark.parametrize("name", ["0.3.9_qa.json", "0.3.42_qa.json"])
def test_eval_id_is_inspects_hash_where_the_log_has_none(name: str) -> None:
    spec = json.loads((DATA / name).read_text())["eval"]
    assert "eval_id" not in spec
    run, _ = read(DATA / name)
    # Inspect hashes `created` as it holds it: in UTC, a naive time (0.3.9 wrote them) taken as UTC.
    created = spec["created"] if spec["created"].endswith("+00:00") else spec["created"] + "+00:00"
    assert run.run_key == base57_id_hash(spec["run_id"] + spec["task_id"] + created)
    assert len(run.run_key) == 22


def test_transcript_of_0_3_42_is_shown_as_events() -> None:
    path = DATA / "0.3.42_qa.json"
    run_read = detect.read_run(path)
    first = next(iter(run_read.samples))
    detail = detect.load_sample_detail("inspect_json", path, first.detail_ref)
    assert "transcript" in raw_samples(path)[0] and "transcript" not in detail
    assert len(detail["events"]) == len(raw_samples(path)[0]["transcript"]["events"])
    assert {e["event"] for e in detail["events"]} >= {"model", "score"}


def test_a_later_log_format_version_is_refused_with_its_number(tmp_path: Path) -> None:
    header = json.loads((DATA / "0.3.52_qa.json").read_text())
    header["version"] = 3
    path = tmp_path / "future.json"
    path.write_text(json.dumps(header, indent=2))
    assert inspect_json.sniff(path, path.read_bytes()[:8192])
    with pytest.raises(ReaderError, match="format version 3: evtui reads .json logs of versions 1 and 2"):
        detect.read_run(path)


# --- re-scoring reproduces the recorded metrics ----------------------------------------------------


def _score(tmp_path: Path, paths: list[Path], *flags: str) -> dict[str, dict]:
    runs = tmp_path / "logs"
    runs.mkdir()
    for path in paths:
        shutil.copy(path, runs / path.name)
    done = subprocess.run([sys.executable, "-m", "evtui", "score", str(runs), "--json", *flags],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return {Path(run["path"]).name: run for run in json.loads(done.stdout)["runs"]}


def _recorded_and_rescored(path: Path, run: dict) -> tuple[dict, dict]:
    recorded = {(r.scorer, r.reducer, r.metric): r.value for r in detect.read_run(path).run.results}
    rescored = {(r["scorer"], r["reducer"], key): value for r in run["results"] for key, value in r["metrics"].items()}
    return recorded, rescored


def test_rescoring_reproduces_every_recorded_metric_exactly(tmp_path: Path) -> None:
    # match, includes and choice re-run on the completions the reader gives; before the
    # completion fallback every one of these scored "no_response" (accuracy 0.0).
    by_name = _score(tmp_path, RESCORABLE)
    assert set(by_name) == {p.name for p in RESCORABLE}
    for path in RESCORABLE:
        recorded, rescored = _recorded_and_rescored(path, by_name[path.name])
        assert not by_name[path.name]["notes"], path.name
        assert all(value > 0 for (_, _, metric), value in recorded.items() if metric == "accuracy")
        if path in SINGLE_EPOCH:  # the values; their reducer labels are the next test's
            recorded = {(scorer, metric): value for (scorer, _, metric), value in recorded.items()}
            rescored = {(scorer, metric): value for (scorer, _, metric), value in rescored.items()}
        assert rescored == recorded, path.name


def test_one_epoch_rescore_keeps_the_recorded_reducer_labels(tmp_path: Path) -> None:
    by_name = _score(tmp_path, SINGLE_EPOCH)
    for path in SINGLE_EPOCH:
        recorded, rescored = _recorded_and_rescored(path, by_name[path.name])
        assert sorted(rescored) == sorted(recorded), path.name


def test_version_1_rescore_reproduces_accuracy(tmp_path: Path) -> None:
    # 0.3.9's answer() took `type=` (today's `pattern=`): it is re-run, so no note.
    by_name = _score(tmp_path, [DATA / "0.3.9_qa.json", DATA / "0.3.9_mc.json"], "--metric", "accuracy")
    assert by_name["0.3.9_qa.json"]["results"][0]["metrics"] == {"accuracy": 0.625}
    assert not by_name["0.3.9_qa.json"]["notes"]
    assert by_name["0.3.9_mc.json"]["results"][0]["metrics"] == {"accuracy": 0.5}
    assert not by_name["0.3.9_mc.json"]["notes"]


def test_every_fixture_rescores_and_bootstrap_std_is_said_to_be_a_new_draw(tmp_path: Path) -> None:
    # 0.3.9 recorded bootstrap_std (bootstrap_stderr before 0.3.58): random and unseeded, so
    # the re-score computes it again and the note says its value is not the recorded one.
    by_name = _score(tmp_path, LOGS)
    assert set(by_name) == {p.name for p in LOGS}
    qa = by_name["0.3.9_qa.json"]
    assert qa["results"][0]["metrics"]["accuracy"] == 0.625
    assert set(qa["results"][0]["metrics"]) == {"accuracy", "bootstrap_std"}
    [note] = qa["notes"]
    assert "bootstrap_std" in note and "bootstrap_stderr" in note and "not reproducible" in note
    assert qa["notes_with_levels"] == [{"level": "warning", "text": note}]  # the re-score is not the recorded value


def _edited_log(tmp_path: Path, edit) -> Path:
    data = json.loads((DATA / "0.3.88_qa.json").read_text())
    edit(data)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data))
    return path


def test_an_unknown_recorded_metric_leaves_out_that_scorer_only(tmp_path: Path) -> None:
    def unknown_metric(data: dict) -> None:
        data["eval"]["scorers"][1]["metrics"] = [{"name": "my_pkg/custom_metric", "options": {}}]

    edited = _edited_log(tmp_path, unknown_metric)
    by_name = _score(tmp_path, [edited, DATA / "0.3.52_mc.eval"])
    run = by_name["edited.json"]
    assert {r["scorer"] for r in run["results"]} == {"match"}
    assert run["results"][0]["metrics"] == {"accuracy": 0.625, "stderr": 0.125}
    assert any("includes" in note and "custom_metric" in note and "not recomputed" in note for note in run["notes"])
    assert by_name["0.3.52_mc.eval"]["results"] and not by_name["0.3.52_mc.eval"]["notes"]


def test_a_log_without_samples_says_its_results_cannot_be_recomputed(tmp_path: Path) -> None:
    edited = _edited_log(tmp_path, lambda data: data.pop("samples"))
    run = _score(tmp_path, [edited])["edited.json"]
    assert "the log holds no samples: recorded results cannot be recomputed" in run["notes"]


def test_outputs_that_cannot_be_read_are_said_to_be_empty_answers(tmp_path: Path) -> None:
    def strip_outputs(data: dict) -> None:
        for sample in data["samples"]:
            sample["output"] = {"model": sample["output"]["model"], "choices": []}

    run = _score(tmp_path, [_edited_log(tmp_path, strip_outputs)])["edited.json"]
    assert run["results"][0]["metrics"]["accuracy"] == 0.0
    assert any(note.startswith("match: every re-run answer is empty (no_response)") for note in run["notes"])


def test_the_sample_view_shows_each_releases_transcript_events_and_scores(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    two_epochs = [p for p in LOGS if "_single" not in p.name]
    for path in two_epochs:
        shutil.copy(path, logs / path.name)
    db_path = tmp_path / "index.db"
    assert not ingest_paths(db_path, [logs]).failures
    db = connect(db_path)
    try:
        rows = db.execute("SELECT s.id, r.path FROM samples s JOIN runs r ON r.id = s.run_id "
                          "WHERE s.sample_id IN ('1', 'mc-1') AND s.epoch = 2").fetchall()
    finally:
        db.conn.close()
    assert len(rows) == len(two_epochs)
    for rowid, run_path in rows:
        view = load_sample_view(db_path, rowid)
        name = Path(run_path).name
        assert view.transcript_from_file, name
        assert [m.role for m in view.messages][-1] == "assistant", name
        assert view.messages[-1].text == ("Let me think.\n42" if "_qa" in name else "ANSWER: B"), name
        # 0.3.9 and 0.3.22 logged no events; 0.3.42 logged them as a transcript.
        assert bool(view.events) == (release(Path(name)) >= (0, 3, 42)), name
        assert {s.score.scorer for s in view.scores} == set(view.scorers) and view.scorers, name


@pytest.mark.parametrize("path", sorted(DATA.glob("*.eval")), ids=lambda p: p.name)
def test_older_sample_summaries_give_the_samples_and_their_scores(path: Path) -> None:
    # summaries.json of 0.3.52 held whole scores, of 0.3.88 only their values: either way the
    # quick look (and a killed run's counts) has every sample and its score values.
    summaries = inspect_eval.read_summaries(path)
    _, samples = read(path)
    assert sorted((s.sample_id, s.epoch) for s in summaries) == sorted((s.sample_id, s.epoch) for s in samples)
    full = {(s.sample_id, s.epoch): {x.scorer: x.value for x in s.scores} for s in samples}
    assert all({x.scorer: x.value for x in s.scores} == full[(s.sample_id, s.epoch)] for s in summaries)
