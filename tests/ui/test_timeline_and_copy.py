"""The sample view's timeline (`l`) and what `y` / `Y` copy (issue 30, item 4): the timeline lists
the transcript's spans and events in time order with their bars, Enter lands on the event in
the tree; `y` copies the event or message under the cursor whole, `Y` the sample as JSON, both
only with EVTUI_CLIPBOARD=osc52 and never with an escape sequence in them. Hostile text in every
field at 160x45 and 80x24; the samples list's copy keys are behind the same setting."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from conftest import settle
from textual.app import App, ComposeResult
from textual.widgets import Tree

from evtui.app.app import EvtuiApp
from evtui.app.screens.help import describe_keys
from evtui.app.screens.sample import SampleScreen
from evtui.app.widgets.sample.event_tree import EventTree
from evtui.app.widgets.sample.timeline import TimelineView
from evtui.app.widgets.sample.transcript import Transcript
from evtui.sample_view.timeline import Timeline, TimelineRow
from evtui.store.location import default_index_path
from evtui.store.schema import connect

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile_strings import FORBIDDEN_CHARS, hostile  # noqa: E402
from test_hostile_ui import HOSTILE_LOG, assert_safe  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "inspect"
OFF = "Copying is off: set EVTUI_CLIPBOARD=osc52"


def rowids(db_path: Path, file_name: str) -> list[int]:
    db = connect(db_path)
    try:
        return [row[0] for row in db.execute(
            "SELECT s.id FROM samples s JOIN runs r ON r.id = s.run_id WHERE r.path LIKE ? ORDER BY s.id_sort, s.epoch",
            (f"%{file_name}",))]  # fmt: skip
    finally:
        db.conn.close()


def make_app(tmp_path: Path, source: Path, name: str, monkeypatch, allowed: bool = True):
    logs = tmp_path / "logs"
    logs.mkdir(parents=True)
    shutil.copy2(source, logs / name)
    if allowed:
        monkeypatch.setenv("EVTUI_CLIPBOARD", "osc52")
    else:
        monkeypatch.delenv("EVTUI_CLIPBOARD", raising=False)
    app = EvtuiApp(db_path=default_index_path(logs), ingest_paths=[logs])
    copied: list[str] = []
    notes: list[str] = []
    monkeypatch.setattr(app, "copy_to_clipboard", copied.append)
    notify = app.notify

    def noting(message, *args, **kwargs):
        notes.append(str(message))
        return notify(message, *args, **kwargs)

    monkeypatch.setattr(app, "notify", noting)
    return app, copied, notes


async def open_sample(app, pilot, name: str, index: int = 0) -> SampleScreen:
    await settle(app, pilot)
    await app.push_screen(SampleScreen(app.db_path, rowids(app.db_path, name)[index]))
    await settle(app, pilot)
    for _ in range(3):
        await pilot.pause()
    assert isinstance(app.screen, SampleScreen)
    return app.screen


async def test_l_lists_the_events_in_time_order_and_enter_lands_on_the_event_in_the_tree(tmp_path, monkeypatch):
    app, copied, _ = make_app(tmp_path, DATA / "tool_agent.eval", "tool_agent.eval", monkeypatch)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await open_sample(app, pilot, "tool_agent.eval")
        await pilot.press("l")
        await pilot.pause()
        rows = screen.query_one(TimelineView)
        assert screen.active_tab == "events" and app.focused is rows
        assert rows.timeline is screen.view.timeline  # the core's rows, drawn as they are
        assert not screen.query_one(EventTree).display or not screen.query_one(EventTree).visible
        text = assert_safe(app, "timeline")
        assert "Timeline: 8 steps on 71 ms · ⏎ tree · l back" in text
        tool_line = next(line for line in text.splitlines() if 'tool call · add({"x": 19, "y": 23})' in line)
        assert "+12 ms" in tool_line and "50 ms" in tool_line and "█" in tool_line
        score_line = next(line for line in text.splitlines() if "score · includes" in line)
        assert "+71 ms" in score_line and " – " in score_line and "│" in score_line  # a start, no duration: a tick

        await pilot.press("down", "down", "down")
        assert rows.current.label.startswith("tool call · add")
        await pilot.press("y")
        assert copied[-1] == 'tool call · add({"x": 19, "y": 23})\n\nresult:\n42'
        await pilot.press("enter")
        for _ in range(3):
            await pilot.pause()
        tree = screen.query_one("#event-tree", Tree)
        assert app.focused is tree and str(tree.cursor_node.label).startswith('tool call · add({"x": 19, "y": 23})')
        assert not screen.query_one(TimelineView).display
        await pilot.press("l")  # the timeline again, then back
        await pilot.pause()
        assert screen.query_one(TimelineView).display and app.focused is rows
        await pilot.press("l")
        await pilot.pause()
        assert not screen.query_one(TimelineView).display and app.focused is tree

        await pilot.press("l", "n")  # the next sample opens in the timeline too
        await settle(app, pilot)
        for _ in range(3):
            await pilot.pause()
        assert screen.view.sample.sample_id == "2" and screen.timeline_shown
        assert screen.query_one(TimelineView).display and "solvers" in assert_safe(app, "next sample's timeline")


async def test_y_copies_the_selected_message_and_Y_the_json(tmp_path, monkeypatch):
    import json

    app, copied, notes = make_app(tmp_path, DATA / "tool_agent.eval", "tool_agent.eval", monkeypatch)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await open_sample(app, pilot, "tool_agent.eval")
        await pilot.press("t")
        await settle(app, pilot)
        transcript = screen.query_one(Transcript)
        transcript.focus()
        await pilot.press("y")
        assert copied[-1] == "user\n\nWhat is 19 + 23?" and notes[-1] == "Copied message #1 (user)"
        await pilot.press("down")  # a short transcript: ↓ selects the next message
        await pilot.press("y")
        assert copied[-1] == 'assistant · mockllm/model\n\nLet me use a tool.\n\n→ call add {"x": 19, "y": 23}'
        await pilot.press("down", "down", "y")
        assert copied[-1] == "assistant · mockllm/model\n\nThe sum is 42." and notes[-1] == "Copied message #4 (assistant)"
        first, last = transcript.message_rows(3)
        shaded = {row for row in range(transcript.row_count) if transcript.row_class(row)}
        assert shaded == set(range(first, last + 1))  # the selected message is the shaded one
        await pilot.press("up", "y")
        assert notes[-1] == "Copied message #3 (tool)" and copied[-1] == "tool · add\n\n42"
        await pilot.press("o", "y")  # no selection on the overview: the sample id
        assert copied[-1] == "1"
        await pilot.press("Y")
        assert json.loads(copied[-1])["id"] == 1


@pytest.mark.parametrize("key", ["y", "Y", "c"])
async def test_nothing_is_copied_unless_the_user_allows_it(tmp_path, monkeypatch, key):
    app, copied, notes = make_app(tmp_path, DATA / "model_graded.eval", "model_graded.eval", monkeypatch, allowed=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await open_sample(app, pilot, "model_graded.eval")
        await pilot.press("v")
        await settle(app, pilot)
        await pilot.press(key)
        await pilot.pause()
        assert copied == [] and any(note.startswith(OFF) for note in notes)


@pytest.mark.parametrize("size", [(160, 45), (80, 24)], ids=["160x45", "80x24"])
async def test_hostile_timeline_and_copies_are_inert(tmp_path, monkeypatch, size):
    app, copied, notes = make_app(tmp_path, HOSTILE_LOG, "hostile.eval", monkeypatch)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        count = len(rowids(app.db_path, "hostile.eval"))
        assert count >= 3
        for index in range(count):
            screen = await open_sample(app, pilot, "hostile.eval", index)
            await pilot.press("l")
            await pilot.pause()
            assert_safe(app, f"{size} sample {index} timeline")
            rows = screen.query_one(TimelineView)
            for _ in rows.timeline.rows:
                await pilot.press("y")
                await pilot.press("down")
            await pilot.press("enter")
            await pilot.pause()
            assert_safe(app, f"{size} sample {index} tree after Enter")
            await pilot.press("t")
            await settle(app, pilot)
            await pilot.press("y", "Y")
            await pilot.press("escape")
            await pilot.pause()
        assert copied, notes
        for text in copied:
            assert not {char for char in text if char in FORBIDDEN_CHARS - {"\n", "\t"}}, text[:200]
        assert any("[@click=" in text for text in copied)  # the markup is there, as text


class TimelineApp(App[None]):
    def __init__(self, timeline: Timeline) -> None:
        super().__init__()
        self.timeline = timeline

    def compose(self) -> ComposeResult:
        yield TimelineView(self.timeline)


@pytest.mark.parametrize("size", [(160, 45), (80, 24)], ids=["160x45", "80x24"])
async def test_hostile_labels_and_kinds_in_ten_thousand_rows_draw_inert(size):
    rows = [TimelineRow(hostile(f"kind{i}", long=False) if i % 3 else "model", hostile(f"label{i}"), i % 6,
                        i * 0.01 if i % 5 else None, 0.02 if i % 2 else None, (i,)) for i in range(10_000)]  # fmt: skip
    app = TimelineApp(Timeline(rows, 100.0))
    async with app.run_test(size=size) as pilot:
        view = app.query_one(TimelineView)
        view.focus()
        await pilot.pause()
        assert_safe(app, f"{size} first rows")
        await pilot.press("end")
        await pilot.pause()
        text = assert_safe(app, f"{size} last rows")
        assert view.current is rows[-1] and "label9999:" in text
        assert "no time" in text  # rows with neither a start nor a duration


async def test_help_and_footer_list_the_copy_and_timeline_keys(tmp_path, monkeypatch):
    app, _, _ = make_app(tmp_path, DATA / "tool_agent.eval", "tool_agent.eval", monkeypatch)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await open_sample(app, pilot, "tool_agent.eval")
        keys = describe_keys(screen)
        assert ("y", "Copy message") in keys and ("Y", "Copy JSON") in keys and ("l", "Timeline") in keys
        footer = assert_safe(app, "footer").splitlines()[-1]
        assert "y Copy message" in footer and "Y Copy JSON" in footer and "l Timeline" in footer


async def test_the_samples_list_copies_only_when_allowed_and_made_safe(tmp_path, monkeypatch):
    from conftest import open_samples
    from evtui.app.widgets.sql_table.table import SqlTable

    for allowed in (False, True):
        app, copied, notes = make_app(tmp_path / str(allowed), HOSTILE_LOG, "hostile.eval", monkeypatch, allowed=allowed)
        async with app.run_test(size=(160, 45)) as pilot:
            screen = await open_samples(app, pilot, "hostile.eval")
            table = screen.query_one(SqlTable)
            table.focus()
            await pilot.press("y", "Y", "ctrl+c")
            await pilot.pause()
            if not allowed:
                assert copied == [] and sum(note.startswith(OFF) for note in notes) == 3
                continue
            assert len(copied) == 3 and "\x1b" in (table.row_at(table.cursor_row).row.sample_id)
            for text in copied:
                assert not {char for char in text if char in FORBIDDEN_CHARS - {"\n", "\t"}}, text[:200]


class TranscriptApp(App[None]):
    def __init__(self, messages) -> None:
        super().__init__()
        self.messages = messages

    def compose(self) -> ComposeResult:
        yield Transcript(self.messages)


async def test_down_reads_through_a_long_message_before_selecting_the_next_and_paging_follows():
    from evtui.sample_view.transcript import MessageView

    lines = "\n".join(f"line {i}" for i in range(60))
    messages = [MessageView("user", f"first\n{lines}"), MessageView("assistant", f"second\n{lines}"), MessageView("user", "third")]
    app = TranscriptApp(messages)
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.focus()
        await pilot.pause()
        assert transcript.selected == 0
        await pilot.press("down")
        assert transcript.selected == 0 and transcript.scroll_offset.y == 1  # more of the first message below
        first, last = transcript.message_rows(0)
        for _ in range(last - 24):  # until its last row is the view's last
            await pilot.press("down")
        assert transcript.selected == 0
        await pilot.press("down")
        assert transcript.selected == 1  # the first one read to its end: the next is selected
        await pilot.press("end")
        await pilot.pause()
        assert transcript.selected == 1  # still in sight at the end
        await pilot.press("down")
        assert transcript.selected == 2
        await pilot.press("home")  # scrolled out of sight: the one on top
        await pilot.pause()
        assert transcript.selected == 0
        await pilot.click(Transcript, offset=(5, 0))
        assert transcript.selected == 0


async def test_a_harbor_trials_timeline_holds_its_phases_and_enter_on_a_turn_finds_it(tmp_path, monkeypatch):
    logs = tmp_path / "logs"
    shutil.copytree(DATA.parent / "harbor" / "jobs" / "multi-key", logs / "multi-key")
    monkeypatch.setenv("EVTUI_CLIPBOARD", "osc52")
    app = EvtuiApp(db_path=default_index_path(logs), ingest_paths=[logs])
    copied: list[str] = []
    monkeypatch.setattr(app, "copy_to_clipboard", copied.append)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        db = connect(app.db_path)
        try:
            (rowid,) = db.execute("SELECT id FROM samples WHERE sample_id = 'hello-pass'").fetchone()
        finally:
            db.conn.close()
        await app.push_screen(SampleScreen(app.db_path, rowid))
        await settle(app, pilot)
        for _ in range(3):
            await pilot.pause()
        await pilot.press("l")
        await pilot.pause()
        text = assert_safe(app, "harbor timeline")
        for phase in ("environment setup", "agent setup", "agent execution"):
            assert phase in text
        rows = app.screen.query_one(TimelineView)
        assert rows.current.label == "environment setup"
        await pilot.press("y", "enter")  # a phase: copied as a line; not in the tree
        await pilot.pause()
        assert copied[-1].startswith("environment setup: starts at +0 ms, takes ") and rows.has_focus
        while not rows.current.label.startswith("tool call · bash("):
            await pilot.press("down")
        await pilot.press("enter")
        for _ in range(3):
            await pilot.pause()
        tree = app.screen.query_one("#event-tree", Tree)
        assert app.focused is tree and str(tree.cursor_node.label).startswith("tool call · bash(")
        await pilot.press("y")
        assert copied[-1].startswith('tool call · bash({"command": "echo Hello > /app/hello.txt"})') and "exit 0" in copied[-1]
