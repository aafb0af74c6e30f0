"""The sample's timeline (issue 30, item 4): the events tree's spans and events in time order,
each with its start offset and duration, from real logs: Inspect events (times checked against
inspect_ai's own event objects), a Harbor trial's phases, a verifiers rollout's timing; what a
format does not time is listed with no time. Headless as `evtui samples RUN --sample ID --json`.
Also what `y` copies of an event or a message: the whole of it, not the tree's preview."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from evtui.sample_view.timeline import build_timeline
from evtui.sample_view.transcript import EventNode, MessageView, ToolCallView, event_copy_text, event_tree, message_copy_text
from evtui.sample_view.view import load_sample_view
from evtui.store.ingest import ingest_paths
from evtui.store.schema import connect

DATA = Path(__file__).resolve().parent / "data"


def raw_events(name: str, index: int = 0):
    sample = read_eval_log(str(DATA / "inspect" / name)).samples[index]
    return [event.model_dump(mode="json") for event in sample.events], sample


def test_inspect_rows_start_and_last_as_the_events_say_in_time_order():
    raw, sample = raw_events("tool_agent.eval")
    timeline = build_timeline(event_tree(raw))
    labels = [(row.depth, row.kind, row.label) for row in timeline.rows]
    assert labels == [
        (0, "span:solvers", "solvers"),
        (1, "span:solver", "solver · generate"),
        (2, "model", "model call · mockllm/model"),
        (2, "tool", 'tool call · add({"x": 19, "y": 23})'),  # started before the second call, recorded after its span
        (2, "model", "model call · mockllm/model"),
        (0, "span:scorers", "scorers"),
        (1, "span:scorer", "scorer · includes"),
        (2, "score", "score · includes"),
    ]
    events = sample.events
    solvers = next(e for e in events if e.event == "span_begin" and e.name == "solvers")
    origin = solvers.timestamp  # the first span the tree keeps (init holds no event: left out)

    def offset(moment: datetime) -> float:
        return (moment - origin).total_seconds()

    models = [e for e in events if e.event == "model"]
    (tool,) = [e for e in events if e.event == "tool"]
    rows = timeline.rows
    assert [rows[2].start, rows[3].start, rows[4].start] == pytest.approx(
        [offset(models[0].timestamp), offset(tool.timestamp), offset(models[1].timestamp)], abs=1e-6
    )
    assert [rows[2].seconds, rows[3].seconds, rows[4].seconds] == pytest.approx(
        [models[0].working_time, tool.working_time, models[1].working_time]
    )
    ends = {e.id: e.timestamp for e in events if e.event == "span_end"}
    begun = {e.name: e for e in events if e.event == "span_begin"}
    assert rows[0].seconds == pytest.approx((ends[begun["solvers"].id] - begun["solvers"].timestamp).total_seconds())
    assert rows[5].start == pytest.approx(offset(begun["scorers"].timestamp), abs=1e-6)
    assert rows[7].seconds is None  # a score event records no duration
    assert timeline.total == pytest.approx(max(offset(ends[b.id]) for b in begun.values() if b.name != "init"), abs=1e-6)
    assert [row.start for row in rows] == sorted(row.start for row in rows)
    # each row finds its event in the tree
    tree = event_tree(raw)
    assert tree[0].children[0].children[1].title == rows[3].label and rows[3].path == (0, 0, 1)


def test_a_step_without_a_time_stays_after_the_step_before_it():
    roots = [
        EventNode("span:solver", "a", seconds=2.0, started="2026-01-01T00:00:00+00:00", children=[
            EventNode("model", "a1", seconds=1.0, started="2026-01-01T00:00:01+00:00"),
            EventNode("info", "a2 untimed"),
        ]),
        EventNode("model", "b", seconds=0.5, started="2026-01-01T00:00:00.500000+00:00"),
        EventNode("log", "c untimed"),
    ]  # fmt: skip
    timeline = build_timeline(roots)
    assert [(row.label, row.start, row.seconds) for row in timeline.rows] == [
        ("a", 0.0, 2.0), ("b", 0.5, 0.5), ("c untimed", None, None), ("a1", 1.0, 1.0), ("a2 untimed", None, None),
    ]  # fmt: skip
    assert timeline.total == 2.0
    untimed = build_timeline([EventNode("input", "user"), EventNode("model", "reply")])
    assert [(row.label, row.start) for row in untimed.rows] == [("user", None), ("reply", None)] and untimed.total is None


def indexed_view(tmp_path: Path, source: Path, name: str, sample_id: str):
    target = tmp_path / name
    shutil.copytree(source, target) if source.is_dir() else shutil.copy2(source, target)
    db_path = tmp_path / "index.db"
    ingest_paths(db_path, [target])
    db = connect(db_path)
    try:
        rowid = db.execute("SELECT id FROM samples WHERE sample_id = ? ORDER BY epoch LIMIT 1", (sample_id,)).fetchone()[0]
    finally:
        db.conn.close()
    return load_sample_view(db_path, rowid)


def test_a_harbor_trial_shows_its_phases_timed_and_its_steps_without_times(tmp_path):
    view = indexed_view(tmp_path, DATA / "harbor" / "jobs" / "multi-key", "multi-key", "hello-pass")
    result = json.loads((DATA / "harbor" / "jobs" / "multi-key" / "hello-pass__xNUJakj" / "result.json").read_text())
    timeline = view.timeline
    phases = [row for row in timeline.rows if row.kind == "phase"]
    names = ("environment_setup", "agent_setup", "agent_execution", "verifier")
    assert [row.label for row in phases] == ["environment setup", "agent setup", "agent execution", "verifier"]
    first = datetime.fromisoformat(result["environment_setup"]["started_at"])
    for row, name in zip(phases, names):
        begun, ended = (datetime.fromisoformat(result[name][key]) for key in ("started_at", "finished_at"))
        assert row.start == pytest.approx((begun - first).total_seconds()) and row.seconds == pytest.approx((ended - begun).total_seconds())
        assert row.path is None  # not an event of the tree
    # the turns at their ATIF steps' times (a tool call at its turn's), inside the agent's phase
    trajectory = json.loads((DATA / "harbor" / "jobs" / "multi-key" / "hello-pass__xNUJakj" / "agent" / "trajectory.json").read_text())
    stamps = [(datetime.fromisoformat(step["timestamp"]) - first).total_seconds() for step in trajectory["steps"]]
    turns = [row for row in timeline.rows if row.depth == 1 and row.kind in ("input", "model", "tool")]
    assert [(row.kind, row.start) for row in turns] == [
        ("input", pytest.approx(stamps[0])), ("model", pytest.approx(stamps[1])), ("tool", pytest.approx(stamps[1])),
        ("model", pytest.approx(stamps[2])),
    ]  # fmt: skip
    assert turns[2].label == 'tool call · bash({"command": "echo Hello > /app/hello.txt"})'
    assert all(row.seconds is None and row.path is not None for row in turns)  # ATIF records no step durations
    scores = [row for row in timeline.rows if row.kind == "score"]
    assert scores and all(row.start is None for row in scores)  # the verifier's scores: no time of their own
    assert [row.start for row in timeline.rows if row.start is not None] == sorted(row.start for row in timeline.rows if row.start is not None)


def test_a_verifiers_rollout_shows_its_timing(tmp_path):
    folder = DATA / "verifiers" / "evals" / "evtui-arith--scripted--tiny" / "1faf9f36"
    timing = json.loads((folder / "results.jsonl").read_text().splitlines()[0])["timing"]
    view = indexed_view(tmp_path, folder, "run", "0")
    timed = {row.label: row for row in view.timeline.rows if row.path is None}
    first = min(timing[name]["start"] for name in ("setup", "generation", "scoring"))
    for name in ("setup", "generation", "scoring"):
        assert timed[name].seconds == pytest.approx(timing[name]["duration"])
        assert timed[name].start == pytest.approx(timing[name]["start"] - first, abs=1e-5)
    assert timed["model call 1"].seconds == pytest.approx(timing["model"]["spans"][0]["duration"])


def test_evtui_samples_sample_json_prints_the_timeline_rows(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy2(DATA / "inspect" / "tool_agent.eval", logs / "tool_agent.eval")
    run = subprocess.run([sys.executable, "-m", "evtui", "samples", str(logs / "tool_agent.eval"), "--sample", "1", "--json"],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert run.returncode == 0, run.stderr
    shown = json.loads(run.stdout)
    raw, sample = raw_events("tool_agent.eval")
    want = build_timeline(event_tree(raw)).as_json()
    assert shown["timeline"] == want["rows"] and shown["timeline_total_seconds"] == pytest.approx(want["total_seconds"])
    assert {"start", "duration", "kind", "label"} <= set(shown["timeline"][0])
    assert shown["sample"]["id"] == "1" and shown["sample"]["scores"] == {"includes": sample.scores["includes"].value}
    text = subprocess.run([sys.executable, "-m", "evtui", "samples", str(logs / "tool_agent.eval"), "--sample", "1"],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert '\t    tool call · add({"x": 19, "y": 23})' in text.stdout and "0.071\t–\tscore\t    score · includes" in text.stdout
    missing = subprocess.run([sys.executable, "-m", "evtui", "samples", str(logs / "tool_agent.eval"), "--sample", "nope", "--json"],
                             capture_output=True, text=True, timeout=300)  # fmt: skip
    assert missing.returncode == 1 and "'nope' is not in" in missing.stderr and missing.stdout == ""


def test_copying_an_event_gives_it_whole():
    raw, sample = raw_events("tool_agent.eval")
    (tool,) = [event for event in raw if event["event"] == "tool"]
    tool["result"] = "R" * 5_000  # longer than the tree's preview
    tree = event_tree(raw)
    generate = tree[0].children[0]
    copied = event_copy_text(generate.children[1])
    assert copied.startswith('tool call · add({"x": 19, "y": 23})') and "R" * 5_000 in copied
    reply = event_copy_text(generate.children[0])
    assert "Let me use a tool." in reply and '→ call add {"x": 19, "y": 23}' in reply
    outline = event_copy_text(tree[0]).splitlines()
    assert outline[:3] == ["solvers", "  solver · generate", "    model call · mockllm/model"]

    graded, graded_sample = raw_events("model_graded.eval")
    score = next(node for span in event_tree(graded) for scorer in span.children for node in scorer.children if node.kind == "score")
    explanation = next(iter(graded_sample.scores.values())).explanation
    assert explanation and explanation in event_copy_text(score)


def test_copying_a_message_gives_the_speaker_text_calls_and_error():
    message = MessageView("assistant", "thinking", "gpt", (ToolCallView("c1", "add", '{"x": 1}'),))
    assert message_copy_text(message) == 'assistant · gpt\n\nthinking\n\n→ call add {"x": 1}'
    failed = MessageView("tool", "", None, (), "c1", "add", "boom")
    assert message_copy_text(failed) == "tool · add\n\nerror: boom"


def test_evtui_samples_sample_prints_hostile_text_inert(tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from hostile_strings import FORBIDDEN_CHARS

    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy2(DATA / "inspect" / "hostile.eval", logs / "hostile.eval")
    sample = read_eval_log(str(DATA / "inspect" / "hostile.eval")).samples[0]
    assert "\x1b" in str(sample.id)
    for shape in ([], ["--json"]):
        run = subprocess.run([sys.executable, "-m", "evtui", "samples", str(logs / "hostile.eval"), "--sample", str(sample.id), *shape],
                             capture_output=True, text=True, timeout=300)  # fmt: skip
        assert run.returncode == 0, run.stderr
        assert not {char for char in run.stdout if char in FORBIDDEN_CHARS - {"\n", "\t"}}
        assert "timeline" in run.stdout
    assert json.loads(run.stdout)["sample"]["id"] == str(sample.id)  # JSON keeps the exact value, escaped
