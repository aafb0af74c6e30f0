"""verifiers 0.1.x runs in the layout of Aug-Oct 2025 (issue 28): written by verifiers 0.1.3's own
`vf-eval --save-dataset` (scripts/make_verifiers_01x_fixtures.py), a tool environment, so rollouts
carry `id`, flat per-function columns, tool calls as JSON strings and tool replies; metadata.json
has `env`, `date`/`time` and `avg_<function>`. Expected numbers are the ones verifiers recorded."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evtui.readers import detect
from evtui.sample_view.view import load_sample_view
from evtui.store.ingest.files import ingest_paths
from evtui.store.schema import connect

RUN = Path(__file__).parent / "data" / "verifiers" / "v013" / "evals" / "evtui-tools--scripted--tiny" / "5aa9e983"
# verifiers 0.1.5 (Sep 2025): the same names, with `date` holding the time, `time_ms`, and per-rollout
# `generation_ms/scoring_ms/total_ms` (same script, run with verifiers==0.1.5)
RUN_015 = next((Path(__file__).parent / "data" / "verifiers" / "v015" / "evals" / "evtui-tools--scripted--tiny").iterdir())
REPO = Path(__file__).parent.parent


def evtui(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "evtui", *args], capture_output=True, text=True, timeout=600, env=env)


def _rollouts(run: Path = RUN) -> list[dict]:
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("run_dir", [RUN, RUN_015], ids=["0.1.3", "0.1.5"])
def test_the_old_field_names_load_with_verifiers_recorded_numbers(run_dir):
    metadata = json.loads((run_dir / "metadata.json").read_text())
    read = detect.read_run(run_dir / "results.jsonl")
    samples = list(read.samples)
    run = read.run
    assert run.format == "verifiers"
    assert (run.task, run.model) == (metadata["env"], metadata["model"])
    if "time" in metadata:  # 0.1.3: the day in `date`, the clock in `time`
        assert run.created == f"{metadata['date']}T{metadata['time']}"
    else:
        assert run.created == metadata["date"].replace(" ", "T")
        assert run.duration == pytest.approx(metadata["time_ms"] / 1000)
    recorded = {key[4:]: value for key, value in metadata.items() if key.startswith("avg_")}
    assert {r.scorer: r.value for r in run.results if r.metric == "mean"} == recorded
    assert len(samples) == metadata["num_examples"] * metadata["rollouts_per_example"] == run.completed_samples
    lines = _rollouts(run_dir)
    for sample, line in zip(samples, lines):
        assert sample.sample_id == str(line["id"])
        assert {s.scorer: s.value for s in sample.scores} == {k: line[k] for k in ("reward", "correct_answer", "tool_calls_made")}
        if "total_ms" in line:
            assert sample.usage.total_time == pytest.approx(line["total_ms"] / 1000)


def test_ids_that_do_not_name_examples_are_said():
    # vf-eval 0.1.3 numbers rollouts i // r while writing them rollout-major: id 0 asks two questions.
    read = detect.read_run(RUN / "results.jsonl")
    list(read.samples)
    assert any("ask different questions" in w for w in read.warnings)


def test_tool_calls_and_replies_are_drawn_in_the_transcript(tmp_path):
    ingest_paths(tmp_path / "index.db", [RUN / "results.jsonl"])
    db = connect(tmp_path / "index.db")
    try:
        rowid = db.execute("SELECT id FROM samples WHERE sample_id = '0' AND epoch = 1").fetchone()[0]
    finally:
        db.conn.close()
    view = load_sample_view(tmp_path / "index.db", rowid)
    line = _rollouts()[0]
    call = json.loads(line["completion"][0]["tool_calls"][0])
    [asked] = [m for m in view.messages if m.tool_calls]
    assert [(c.id, c.function) for c in asked.tool_calls] == [(call["id"], "add")]
    assert json.loads(asked.tool_calls[0].arguments) == json.loads(call["function"]["arguments"])
    [reply] = [m for m in view.messages if m.role == "tool"]
    assert (reply.function, reply.tool_call_id, reply.text) == ("add", call["id"], line["completion"][1]["content"])


@pytest.fixture()
def contradicted(tmp_path) -> Path:
    """The run with metadata.json's avg_reward set to 0.0, as verifiers' own committed runs of
    Sep-Oct 2025 record it (prml, wordle, mmmu: avg_reward 0.0 beside rewards averaging 8.08, 1.38 …)."""
    run = tmp_path / "outputs" / "evals" / RUN.parent.name / RUN.name
    shutil.copytree(RUN, run)
    metadata = json.loads((run / "metadata.json").read_text())
    metadata["avg_reward"] = 0.0
    (run / "metadata.json").write_text(json.dumps(metadata))
    return tmp_path / "outputs"


def test_a_recorded_mean_the_rollouts_contradict_is_flagged_with_theirs_beside_it(contradicted):
    rewards = [line["reward"] for line in _rollouts()]
    done = evtui("report", str(contradicted), "--json")
    assert done.returncode == 0, done.stderr
    [run] = json.loads(done.stdout)
    [reward] = [r for r in run["results"] if r["scorer"] == "reward" and r["metric"] == "mean"]
    assert reward["value"] == 0.0  # shown as recorded …
    assert reward["from_samples"] == pytest.approx(sum(rewards) / len(rewards))  # … with the rollouts' mean
    assert "avg_reward 0" in reward["warning"]
    assert "warning" not in next(r for r in run["results"] if r["scorer"] == "correct_answer")
    assert any("avg_reward 0" in w for w in run["read_warnings"])
    assert any("avg_reward 0" in note for note in run["notes"])
    text = evtui("report", str(contradicted), "--db", str(contradicted / ".evtui" / "index.db"))
    assert "⚠ samples: 0.5" in text.stdout


def test_ingest_json_gives_each_run_its_read_warnings(contradicted):
    done = evtui("ingest", str(contradicted), "--json")
    assert done.returncode == 0, done.stderr
    [run] = json.loads(done.stdout)["runs"]
    assert any("avg_reward 0" in w for w in run["warnings"])


def test_a_0_4_trace_tool_reply_gets_its_calls_function(tmp_path):
    # verifiers 0.4's fixture (scripts/make_verifiers_v04_fixtures.py) has no tool env: one trace's
    # message graph is edited here into a tool turn in the chat API's shape its nodes keep.
    source = next((Path(__file__).parent / "data" / "verifiers" / "v04").iterdir())
    run = tmp_path / source.name
    shutil.copytree(source, run)
    lines = (run / "traces.jsonl").read_text().splitlines()
    episode = json.loads(lines[0])
    nodes = episode["traces"][0]["nodes"]
    call = {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}
    nodes[2:2] = [{**nodes[2], "message": {"role": "assistant", "content": "", "tool_calls": [call]}},
                  {**nodes[2], "message": {"role": "tool", "content": "5", "tool_call_id": "call_1"}}]
    (run / "traces.jsonl").write_text("\n".join([json.dumps(episode), *lines[1:]]) + "\n")
    first = next(iter(detect.read_run(run / "traces.jsonl").samples))
    [reply] = [m for m in first.messages if m["role"] == "tool"]
    assert (reply["function"], reply["tool_call_id"]) == ("add", "call_1")
