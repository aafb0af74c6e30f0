"""The samples table's cell cursor on real Inspect logs: left/right and clicks move it, it is drawn
and scrolled into view, y / ctrl+c copy the cell's whole value, Y the row as tab-separated cells."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import APP_SIZE, INSPECT_LOGS, settle
from inspect_ai.log import read_eval_log

from evtui.app.app import EvtuiApp
from evtui.app.screens.help import describe_keys
from evtui.app.screens.samples import SamplesScreen
from evtui.app.widgets.sample.columns import SampleLine, sample_columns
from evtui.app.widgets.sql_table.table import SqlTable
from evtui.store.location import default_index_path


@pytest.fixture
def logs(tmp_path) -> Path:
    directory = tmp_path / "logs"
    directory.mkdir()
    for name in ("qa_match.eval", "cancelled.eval"):
        shutil.copy2(INSPECT_LOGS / name, directory / name)
    return directory


def make_app(logs: Path, copied: list[str], notes: list[str], monkeypatch) -> EvtuiApp:
    app = EvtuiApp(db_path=default_index_path(logs), ingest_paths=[logs])
    monkeypatch.setenv("EVTUI_CLIPBOARD", "osc52")  # copying is off unless the user allows it
    monkeypatch.setattr(app, "copy_to_clipboard", copied.append)
    original_notify = app.notify

    def notify(message, *args, **kwargs):
        notes.append(str(message))
        return original_notify(message, *args, **kwargs)

    monkeypatch.setattr(app, "notify", notify)
    return app


async def open_samples(app: EvtuiApp, pilot, file_name: str, scorer: str) -> SqlTable:
    await settle(app, pilot)
    run_id = next(run.id for run in app.screen.runs if Path(run.path).name == file_name)
    app.push_screen(SamplesScreen(run_id, scorer=scorer, title=file_name))
    await settle(app, pilot)
    assert isinstance(app.screen, SamplesScreen)
    return app.screen.query_one(SqlTable)


def answers(file_name: str, scorer: str) -> dict[str, str]:
    log = read_eval_log(str(INSPECT_LOGS / file_name))
    return {str(sample.id): sample.scores[scorer].answer for sample in log.samples if sample.scores}


def column_keys(table: SqlTable) -> list[str]:
    return [column.key for column in table.columns]


def row_line(table: SqlTable, index: int) -> int:
    """The widget line showing row `index` (line 0 is the header)."""
    return index - int(table.scroll_offset.y) + 1


async def test_right_and_left_move_the_cell_cursor_and_y_copies_the_whole_cell(logs, monkeypatch):
    copied: list[str] = []
    notes: list[str] = []
    full_answer = answers("qa_match.eval", "includes")["6"]
    assert full_answer == "answer: 1024\n\n**explanation:** 2^10 is 1024, step 2."
    app = make_app(logs, copied, notes, monkeypatch)
    async with app.run_test(size=APP_SIZE) as pilot:
        table = await open_samples(app, pilot, "qa_match.eval", "includes")
        # Input, target and answer by default, then the scores (issue 30).
        assert column_keys(table)[:7] == ["id", "epoch", "input", "target", "answer", "score:match", "score:includes"]
        assert table.cursor_column == 0
        await pilot.press("down", "down", "down", "down", "down")
        assert table.row_at(table.cursor_row).row.sample_id == "6"

        await pilot.press("right", "right", "right", "right")
        assert table.cursor_column == 4
        # The table shows the answer on one line, cut to its column with an ellipsis; the copy is the whole of it.
        shown = table.render_line(row_line(table, table.cursor_row)).text
        assert "answer: 1024 **explanation:**" in shown and "…" in shown
        await pilot.press("y")
        assert copied == [full_answer]
        assert notes[-1] == "Copied the answer of sample 6"

        await pilot.press("right", "right")
        assert table.cursor_column == 6
        await pilot.press("ctrl+c")  # the same as y
        assert copied[-1] == "C"  # the includes score of sample 6
        assert notes[-1] == "Copied the includes score of sample 6"

        await pilot.press("left")
        await pilot.press("y")
        assert copied[-1] == "I" and notes[-1] == "Copied the match score of sample 6"

        await pilot.press(*["left"] * 7)  # stops at the first column
        assert table.cursor_column == 0
        await pilot.press("y")
        assert copied[-1] == "6"


async def test_the_cursor_cell_is_drawn_apart_from_the_rest_of_its_row(logs, monkeypatch):
    app = make_app(logs, [], [], monkeypatch)
    async with app.run_test(size=APP_SIZE) as pilot:
        table = await open_samples(app, pilot, "qa_match.eval", "includes")
        await pilot.press("right")  # the epoch column
        await pilot.pause()
        segments = list(table.render_line(row_line(table, 0)))
        cell_style = table.get_component_rich_style("sqltable--cursor-cell")
        row_style = table.get_component_rich_style("sqltable--cursor")
        assert cell_style.bgcolor != row_style.bgcolor
        cursor_cells = [segment.text for segment in segments if segment.style == cell_style]
        assert cursor_cells == ["  1"]  # the epoch, right-aligned in its 3 cells
        assert any(segment.text.startswith("1 ") and segment.style == row_style for segment in segments)
        # Other rows show no cursor cell.
        assert all(segment.style != cell_style for segment in table.render_line(row_line(table, 1)))


async def test_Y_copies_the_row_as_tab_separated_cells(logs, monkeypatch):
    copied: list[str] = []
    notes: list[str] = []
    app = make_app(logs, copied, notes, monkeypatch)
    async with app.run_test(size=APP_SIZE) as pilot:
        table = await open_samples(app, pilot, "qa_match.eval", "includes")
        await pilot.press(*["down"] * 6, *["right"] * 5)
        assert table.row_at(table.cursor_row).row.sample_id == "7"
        await pilot.press("Y")
        assert len(copied) == 1
        cells = copied[0].split("\t")
        assert len(cells) == len(table.columns)
        keys = column_keys(table)
        assert cells[:2] == ["7", "1"] and cells[keys.index("target")] == "Paris"
        assert [cells[keys.index(key)] for key in ("score:match", "score:includes", "answer")] == ["C", "C", "the capital of france is paris."]
        assert cells[column_keys(table).index("tokens")] == "34"
        assert notes[-1] == "Copied the row of sample 7 (tab-separated)"
        await pilot.press("y")  # the cell cursor's cell alone: the match score
        assert copied[-1] == "C"

        keys = describe_keys(app.screen)  # what the help screen lists
        assert ("y", "Copy cell") in keys and ("Y", "Copy row") in keys and ("^c", "Copy cell") in keys
        assert ("←", "Previous column") in keys and ("→", "Next column") in keys


async def test_clicking_a_cell_moves_the_cell_cursor_there(logs, monkeypatch):
    copied: list[str] = []
    app = make_app(logs, copied, [], monkeypatch)
    async with app.run_test(size=APP_SIZE) as pilot:
        table = await open_samples(app, pilot, "qa_match.eval", "includes")
        answer_x = table.render_line(0).text.index("Answer")
        await pilot.click(SqlTable, offset=(answer_x + 3, 3))  # line 3: the third row, sample 3
        assert table.cursor_row == 2 and table.cursor_column == column_keys(table).index("answer")
        await pilot.press("y")
        assert copied == [answers("qa_match.eval", "includes")["3"]] == ["the total is $5"]

        await pilot.click(SqlTable, offset=(1, 1))  # the id of the first row
        assert (table.cursor_row, table.cursor_column) == (0, 0)


async def test_the_cursor_column_is_scrolled_into_view_and_clamped_when_columns_change(logs, monkeypatch):
    app = make_app(logs, [], [], monkeypatch)
    async with app.run_test(size=(60, 30)) as pilot:
        table = await open_samples(app, pilot, "qa_match.eval", "includes")
        width = table.size.width
        assert table.virtual_size.width > width  # the columns do not all fit
        last = len(table.columns) - 1
        for _ in range(last + 3):  # past the last column: it stays there
            await pilot.press("right")
            left = table._layout.lefts[table.cursor_column]
            right = left + table.columns[table.cursor_column].width
            assert table.scroll_offset.x <= left and right <= table.scroll_offset.x + width
        assert table.cursor_column == last and table.scroll_offset.x > 0
        assert "Error" in table.render_line(0).text

        await pilot.press(*["left"] * (last + 1))
        assert table.cursor_column == 0 and table.scroll_offset.x == 0

        table.cursor_column = last
        table.columns = table.columns[:3]
        assert table.cursor_column == 2


async def test_copying_an_error_copies_all_of_it_not_the_start_the_list_carries(logs, monkeypatch):
    copied: list[str] = []
    notes: list[str] = []
    log = read_eval_log(str(INSPECT_LOGS / "cancelled.eval"))
    error = next(sample.error.message for sample in log.samples if sample.id == 7)
    assert len(error) > 300  # longer than the start the store puts in list rows
    app = make_app(logs, copied, notes, monkeypatch)
    async with app.run_test(size=APP_SIZE) as pilot:
        table = await open_samples(app, pilot, "cancelled.eval", "match")
        await pilot.press("end", *["right"] * len(table.columns))
        assert table.row_at(table.cursor_row).row.sample_id == "7"
        assert table.columns[table.cursor_column].key == "error"
        await pilot.press("y")
        await settle(app, pilot)
        assert copied == [error]
        assert notes[-1] == "Copied the error of sample 7"


async def test_left_and_right_still_scroll_through_a_column_wider_than_the_view(logs, monkeypatch):
    app = make_app(logs, [], [], monkeypatch)
    async with app.run_test(size=(30, 30)) as pilot:
        table = await open_samples(app, pilot, "qa_match.eval", "includes")
        last = len(table.columns) - 1
        error_left, error_right = table._layout.span(last)
        assert error_right - error_left > table.size.width  # the error column (40) is wider than the view

        await pilot.press(*["right"] * last)
        assert table.cursor_column == last and table.scroll_offset.x == error_left  # its start
        await pilot.press("right")  # the last column: on to the table's right edge
        assert table.cursor_column == last and table.scroll_offset.x == table.max_scroll_x > error_left
        await pilot.press("left")  # back to the column's start first
        assert table.cursor_column == last and table.scroll_offset.x == error_left
        await pilot.press("left")
        assert table.cursor_column == last - 1

        table.scroll_to(x=5, animate=False, immediate=True)  # e.g. by the mouse, away from the cursor
        await pilot.press(*["left"] * (last + 1))
        assert table.cursor_column == 0 and table.scroll_offset.x == 0


def test_the_copy_of_a_rounded_or_abbreviated_cell_has_every_digit():
    row = SimpleNamespace(
        sample_id="s1", epoch=1, total_tokens=12_345, total_time=3.2, limit=None, input="in", target=["t"], output="out",
        error="ValueError: bad\nTraceback (most recent call last):\n  ...",
        scores={"m": SimpleNamespace(value=2 / 3, value_num=2 / 3)},
    )  # fmt: skip
    line = SampleLine(row, answer="x")
    columns = {column.key: column for column in sample_columns(["m"], "m")}
    shown = {key: column.text(line) for key, column in columns.items()}
    copied = {key: column.copy_text(line) for key, column in columns.items()}
    assert (shown["score:m"], copied["score:m"]) == ("0.667", "0.6666666666666666")
    assert (shown["tokens"], copied["tokens"]) == ("12.3k", "12345")
    assert (shown["error"], copied["error"]) == ("ValueError: bad", row.error)
    assert copied["id"] == shown["id"] == "s1" and copied["time"] == shown["time"]


async def test_the_cursor_column_stays_when_a_filter_makes_a_new_table(logs, monkeypatch):
    app = make_app(logs, [], [], monkeypatch)
    async with app.run_test(size=APP_SIZE) as pilot:
        table = await open_samples(app, pilot, "qa_match.eval", "includes")
        await pilot.press("right", "right", "slash", *'match=="I"', "enter")
        await settle(app, pilot)
        filtered = app.screen.query_one(SqlTable)
        assert filtered is not table and filtered.row_count == 5
        assert filtered.cursor_column == 2
