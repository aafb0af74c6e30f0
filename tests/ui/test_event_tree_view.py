"""The sample's Events tab as a collapsible tree (issue 30, item 4): `/` searches and jumps to the
hit, Enter on a model call shows its raw request and response, a long transcript becomes nodes
only as it is opened, hostile text stays inert."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from conftest import settle
from textual.app import App, ComposeResult
from textual.widgets import Tree

from evtui.app.app import EvtuiApp
from evtui.app.dialogs.event_detail import EventDetailDialog
from evtui.app.screens.sample import SampleScreen
from evtui.app.widgets.line_view import LineView
from evtui.app.widgets.sample.event_tree import CHUNK, EventTree
from evtui.sample_view.transcript import EventNode
from evtui.store.location import default_index_path
from evtui.store.schema import connect

DATA = Path(__file__).resolve().parents[1] / "data" / "inspect"


def first_rowid(db_path: Path, file_name: str) -> int:
    db = connect(db_path)
    try:
        return db.execute("SELECT s.id FROM samples s JOIN runs r ON r.id = s.run_id WHERE r.path LIKE ? "
                          "ORDER BY s.id_sort, s.epoch LIMIT 1", (f"%{file_name}",)).fetchone()[0]  # fmt: skip
    finally:
        db.conn.close()


async def open_events(app, pilot, file_name: str) -> EventTree:
    await settle(app, pilot)
    await app.push_screen(SampleScreen(app.db_path, first_rowid(app.db_path, file_name)))
    await settle(app, pilot)
    await pilot.press("v")
    await settle(app, pilot)
    tree = app.screen.query_one(EventTree)
    app.screen.query_one("#event-tree", Tree).focus()
    await pilot.pause()
    return tree


async def test_search_jumps_to_the_tool_call_and_enter_shows_the_model_call_raw(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy2(DATA / "tool_agent.eval", logs / "tool_agent.eval")
    app = EvtuiApp(db_path=default_index_path(logs), ingest_paths=[logs])
    async with app.run_test(size=(120, 40)) as pilot:
        events = await open_events(app, pilot, "tool_agent.eval")
        tree = events.query_one("#event-tree", Tree)
        assert [str(node.label).split("  ")[0] for node in tree.root.children] == ["solvers", "scorers"]
        assert not tree.root.children[0].is_expanded  # collapsed until asked

        await pilot.press("slash", *"add", "enter")
        await pilot.pause()
        await pilot.pause()
        assert str(tree.cursor_node.label).startswith('tool call · add({"x": 19, "y": 23})')
        assert "hit 1 of 1" in str(events.query_one("#event-search-status").render())

        await pilot.press("up")  # the model call before it
        assert str(tree.cursor_node.label).startswith("model call · mockllm/model")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, EventDetailDialog)
        text = app.screen.query_one(LineView).plain_text()
        assert "request and response as recorded" in text and '"What is 19 + 23?"' in text and '"stop_reason": "tool_calls"' in text
        await pilot.press("escape")
        await pilot.press("escape")  # clears the search, stays on the sample
        await pilot.pause()
        assert isinstance(app.screen, SampleScreen) and not events.hits
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, SampleScreen)


class TreeApp(App[None]):
    def __init__(self, roots: list[EventNode]) -> None:
        super().__init__()
        self.roots = roots

    def compose(self) -> ComposeResult:
        yield EventTree(self.roots, "none")


def count_nodes(node) -> int:
    return 1 + sum(count_nodes(child) for child in node.children)


async def test_ten_thousand_events_make_a_chunk_node_each_until_opened_and_search_opens_the_way():
    roots = [EventNode("span:solver", f"solver · step {i}", children=[EventNode("model", f"model call · m{i}", "x")])
             for i in range(10_000)]  # fmt: skip
    roots[7_777].children[0].detail = "the needle"
    app = TreeApp(roots)
    async with app.run_test(size=(100, 30)) as pilot:
        events = app.query_one(EventTree)
        tree = events.query_one("#event-tree", Tree)
        assert len(tree.root.children) == 10_000 // CHUNK and count_nodes(tree.root) == 1 + 10_000 // CHUNK
        tree.focus()
        await pilot.press("slash", *"needle", "enter")
        for _ in range(4):
            await pilot.pause()
        assert str(tree.cursor_node.label).startswith("model call · m7777")
        assert count_nodes(tree.root) == 1 + 10_000 // CHUNK + CHUNK + 1  # one chunk and one span opened


@pytest.mark.parametrize("size", [(160, 45), (80, 24)], ids=["160x45", "80x24"])
async def test_hostile_events_opened_and_shown_whole_are_inert(tmp_path, size):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_hostile_ui import HOSTILE_LOG, assert_safe

    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy2(HOSTILE_LOG, logs / "hostile.eval")
    app = EvtuiApp(db_path=default_index_path(logs), ingest_paths=[logs])
    async with app.run_test(size=size) as pilot:
        events = await open_events(app, pilot, "hostile.eval")
        tree = events.query_one("#event-tree", Tree)
        events.open_all()
        await pilot.pause()
        assert_safe(app, f"{size} events tree, opened")
        leaves = [node for node in _walk(tree.root) if not node.children and node.data is not None]
        for node in leaves[:4]:
            tree.move_cursor(node)
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, EventDetailDialog)
            assert_safe(app, f"{size} event shown whole")
            app.screen.query_one(LineView).scroll_end(animate=False)
            await pilot.pause()
            assert_safe(app, f"{size} event shown whole, its end")
            await pilot.press("escape")
            await pilot.pause()
        await pilot.press("slash", *"click", "enter")
        await pilot.pause()
        assert_safe(app, f"{size} events searched")


def _walk(node):
    for child in node.children:
        yield child
        yield from _walk(child)


async def test_j_shows_the_sample_as_the_run_file_records_it(tmp_path):
    import json

    from inspect_ai.log import read_eval_log

    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy2(DATA / "tool_agent.eval", logs / "tool_agent.eval")
    app = EvtuiApp(db_path=default_index_path(logs), ingest_paths=[logs])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await app.push_screen(SampleScreen(app.db_path, first_rowid(app.db_path, "tool_agent.eval")))
        await settle(app, pilot)
        await pilot.press("j")
        await settle(app, pilot)
        text = app.screen.query_one("#json-pane", LineView).plain_text()
        sample = read_eval_log(str(DATA / "tool_agent.eval")).samples[0]
        shown = json.loads(text)
        assert shown["id"] == sample.id and shown["input"] == sample.input
        assert len(shown["events"]) == len(sample.events)


async def test_the_heading_holds_input_target_answer_and_every_score(tmp_path):
    from inspect_ai.log import read_eval_log
    from textual.widgets import Static

    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy2(DATA / "qa_match.eval", logs / "qa_match.eval")
    app = EvtuiApp(db_path=default_index_path(logs), ingest_paths=[logs])
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(app, pilot)
        await app.push_screen(SampleScreen(app.db_path, first_rowid(app.db_path, "qa_match.eval")))
        await settle(app, pilot)
        text = str(app.screen.query_one("#sample-heading", Static).render())
        sample = read_eval_log(str(DATA / "qa_match.eval")).samples[0]
        assert f"input {sample.input}" in text and f"target {sample.target}" in text
        assert f"answer {sample.scores['match'].answer}" in text
        for name, score in sample.scores.items():
            assert f"{name} {score.value}" in text


@pytest.mark.parametrize("allowed", [False, True], ids=["off", "allowed"])
async def test_Y_copies_the_sample_as_safe_json_only_when_the_user_allows_it(tmp_path, monkeypatch, allowed):
    import json

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from hostile_strings import FORBIDDEN_CHARS

    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy2(DATA / "hostile.eval", logs / "hostile.eval")
    if allowed:
        monkeypatch.setenv("EVTUI_CLIPBOARD", "osc52")
    else:
        monkeypatch.delenv("EVTUI_CLIPBOARD", raising=False)
    app = EvtuiApp(db_path=default_index_path(logs), ingest_paths=[logs])
    copied: list[str] = []
    monkeypatch.setattr(app, "copy_to_clipboard", copied.append)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await app.push_screen(SampleScreen(app.db_path, first_rowid(app.db_path, "hostile.eval")))
        await settle(app, pilot)
        await pilot.press("Y")
        await pilot.pause()
        if not allowed:
            assert copied == []
            return
        [text] = copied
        assert not {char for char in text if char in FORBIDDEN_CHARS - {"\n"}}  # no escape reaches the terminal
        assert "[@click=" in text  # the markup is there as text
        assert "events" in json.loads(text)  # whole JSON (safe_block keeps it JSON: escapes become visible text)
