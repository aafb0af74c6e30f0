"""A sample's events as a tree (issue 30, item 4): Inspect's spans hold their events, durations
from the events' own times, search by text; read from real Inspect logs."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from inspect_ai.log import read_eval_log

from evtui.sample_view.transcript import event_tree, search_tree

DATA = Path(__file__).resolve().parent / "data" / "inspect"


def raw_events(name: str, index: int = 0) -> tuple[list[dict], object]:
    sample = read_eval_log(str(DATA / name)).samples[index]
    return [event.model_dump(mode="json") for event in sample.events], sample


def shape(nodes, depth: int = 0) -> list[tuple[int, str, str]]:
    out = []
    for node in nodes:
        out.append((depth, node.kind, node.title))
        out += shape(node.children, depth + 1)
    return out


def test_spans_hold_their_model_calls_tool_calls_and_scores_with_their_durations():
    raw, sample = raw_events("tool_agent.eval")
    tree = event_tree(raw)
    assert shape(tree) == [
        (0, "span:solvers", "solvers"),
        (1, "span:solver", "solver · generate"),
        (2, "model", "model call · mockllm/model"),
        (2, "tool", 'tool call · add({"x": 19, "y": 23})'),
        (2, "model", "model call · mockllm/model"),
        (0, "span:scorers", "scorers"),
        (1, "span:scorer", "scorer · includes"),
        (2, "score", "score · includes"),
    ]  # use_tools logged nothing and init holds only the sample's start: no empty spans
    tool = tree[0].children[0].children[1]
    [tool_event] = [e for e in sample.events if e.event == "tool"]
    assert tool.detail == "42" and tool.error is None
    assert tool.seconds == tool_event.working_time
    begin = next(e for e in raw if e["event"] == "span_begin" and e["name"] == "solvers")
    end = next(e for e in raw if e["event"] == "span_end" and e["id"] == begin["id"])
    expected = (datetime.fromisoformat(end["timestamp"]) - datetime.fromisoformat(begin["timestamp"])).total_seconds()
    assert tree[0].seconds == expected
    model = tree[0].children[0].children[0]
    assert model.raw is not None and model.raw["input"][0]["content"] == "What is 19 + 23?"  # the raw request
    assert model.raw["output"]["choices"][0]["stop_reason"] == "tool_calls"  # and response


def test_a_failed_tool_call_carries_its_error():
    failed = 0
    for index in range(len(read_eval_log(str(DATA / "tool_agent.eval")).samples)):
        raw, sample = raw_events("tool_agent.eval", index)
        tools = [node for _, node in walk(event_tree(raw)) if node.kind == "tool"]
        recorded = [e for e in sample.events if e.event == "tool"]
        assert len(tools) == len(recorded)
        for node, event in zip(tools, recorded, strict=True):
            assert (node.error is not None) == (event.error is not None or bool(getattr(event, "failed", False)))
            if event.error is not None:
                assert event.error.message in node.error
                failed += 1
    assert failed  # the fixture's agent has tool errors


def walk(nodes, path=()):
    for i, node in enumerate(nodes):
        yield (*path, i), node
        yield from walk(node.children, (*path, i))


def test_search_finds_every_node_holding_the_text_in_tree_order():
    raw, _ = raw_events("tool_agent.eval")
    tree = event_tree(raw)
    hits = search_tree(tree, "MOCKLLM")
    assert hits == [path for path, node in walk(tree) if "mockllm" in node.text().lower()]
    assert hits == [(0, 0, 0), (0, 0, 2)]
    assert search_tree(tree, "   ") == [] and search_tree(tree, "no such text") == []


def test_harbor_atif_steps_and_verifiers_traces_map_onto_the_same_tree(tmp_path):
    """Formats that record a conversation (their readers' messages) become a transcript span of
    prompt, model replies, tool calls with their results, and a scorers span."""
    import shutil

    from evtui.sample_view.view import load_sample_view
    from evtui.store.ingest.files import ingest_paths
    from evtui.store.schema import connect

    root = Path(__file__).resolve().parent / "data"
    logs = tmp_path / "logs"
    shutil.copytree(root / "harbor" / "jobs" / "multi-key", logs / "multi-key")
    shutil.copytree(root / "verifiers" / "v04", logs / "v04")
    db_path = tmp_path / "index.db"
    ingest_paths(db_path, [logs])
    db = connect(db_path)
    try:
        firsts = {fmt: rowid for fmt, rowid in db.conn.execute(
            "SELECT r.format, min(s.id) FROM samples s JOIN runs r ON r.id = s.run_id GROUP BY r.format")}  # fmt: skip
    finally:
        db.conn.close()
    harbor = load_sample_view(db_path, firsts["harbor"])
    kinds = [(node.kind, node.title.split(" · ")[0]) for node in harbor.tree[0].children]
    assert kinds == [("input", "user"), ("model", "model reply"), ("tool", "tool call"), ("model", "model reply")]
    tool = harbor.tree[0].children[2]
    assert tool.title == 'tool call · bash({"command": "echo Hello > /app/hello.txt"})' and tool.detail == "exit 0"
    assert harbor.tree[1].title == "scorers" and "score · reward" in [n.title for n in harbor.tree[1].children]

    traces = load_sample_view(db_path, firsts["verifiers"])
    assert [node.kind for node in traces.tree[0].children] == ["input", "input", "model"]
    model = traces.tree[0].children[2]
    assert model.raw["content"] == traces.messages[2].text  # the whole reply, for Enter
    assert {node.title for node in traces.tree[1].children} >= {"score · reward", "score · correct_answer"}
