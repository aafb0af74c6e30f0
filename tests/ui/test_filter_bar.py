"""The samples screen's filter bar, search, export and copy, driven by keys on real logs."""

from __future__ import annotations

import csv
import sqlite3
from pathlib import Path

from conftest import APP_SIZE, open_samples, settle
from inspect_ai.log import read_eval_log
from synthetic_index import build_index

from evtui.app.app import EvtuiApp
from evtui.app.dialogs.export_view import ExportViewDialog
from evtui.app.screens.groups import GroupsScreen
from evtui.app.screens.samples import SamplesScreen
from evtui.app.widgets.bounded_table import BoundedTable
from evtui.app.widgets.filter_bar import FilterBar
from evtui.app.widgets.sql_table.table import SqlTable
from evtui.store.location import default_index_path


def make_app(run_dir: Path) -> EvtuiApp:
    return EvtuiApp(db_path=default_index_path(run_dir), ingest_paths=[run_dir])


def status_text(screen) -> str:
    return str(screen.query_one("#samples-status").render())


def shown_ids(table: SqlTable) -> list[str]:
    return [table.row_at(index).row.sample_id for index in range(table.row_count)]


async def type_text(pilot, text: str) -> None:
    await pilot.press(*["space" if char == " " else char for char in text])


async def test_malformed_filter_shows_its_error_and_is_not_applied(run_dir):
    app = make_app(run_dir)
    changes: list[FilterBar.Changed] = []
    async with app.run_test(size=APP_SIZE, message_hook=lambda m: changes.append(m) if isinstance(m, FilterBar.Changed) else None) as pilot:
        screen = await open_samples(app, pilot, "qa_match.eval")
        table = screen.query_one(SqlTable)
        bar = screen.query_one(FilterBar)
        assert table.row_count == 12

        await pilot.press("slash")
        assert app.focused is bar.filter_input
        await type_text(pilot, "match ==")
        error = str(bar.query_one("#filter-error").render())
        assert "expected a number, a quoted string" in error and bar.query_one("#filter-error").display
        await pilot.press("enter")
        await settle(app, pilot)
        assert changes == [] and table.row_count == 12 and screen.query_one(SqlTable) is table
        assert app.focused is bar.filter_input  # still there to be fixed

        await pilot.press("escape")  # clears the text; the bar is empty again and nothing was ever applied
        assert bar.filter_input.value == "" and not bar.query_one("#filter-error").display
        await pilot.press("escape")  # on an empty input: back to the table, still on the samples screen
        assert isinstance(app.screen, SamplesScreen) and isinstance(app.focused, SqlTable)


async def test_filter_on_incorrect_shows_exactly_those_samples_n_of_m(run_dir):
    log = read_eval_log(str(run_dir / "qa_match.eval"))
    incorrect = sorted((s.id for s in log.samples if s.scores["match"].value == "I"), key=lambda i: str(i).zfill(20))
    app = make_app(run_dir)
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_samples(app, pilot, "qa_match.eval")
        await pilot.press("slash")
        await type_text(pilot, 'match == "I"')
        await pilot.press("enter")
        await settle(app, pilot)
        table = screen.query_one(SqlTable)
        assert table.row_count == len(incorrect) == 5
        assert shown_ids(table) == [str(i) for i in incorrect]
        assert f"{len(incorrect)} of {len(log.samples)} samples" in status_text(screen)
        assert isinstance(app.focused, SqlTable)

        # Escape in the bar clears the filter and applies that: every sample again.
        await pilot.press("slash", "escape")
        await settle(app, pilot)
        assert screen.query_one(SqlTable).row_count == 12
        assert "of 12" not in status_text(screen)


async def test_search_narrows_the_rows(run_dir, monkeypatch):
    monkeypatch.setenv("EVTUI_CLIPBOARD", "osc52")  # copying is off unless the user allows it
    app = make_app(run_dir)
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_samples(app, pilot, "qa_match.eval")
        await pilot.press("slash", "tab")
        assert app.focused is screen.query_one(FilterBar).search_input
        await type_text(pilot, "paris")
        await pilot.press("enter")
        await settle(app, pilot)
        table = screen.query_one(SqlTable)
        assert shown_ids(table) == ["7"]  # "Capital of France?" → "... is Paris."
        assert "1 of 12 samples" in status_text(screen)

        await pilot.press("Y")  # copies the row under the cursor, tab-separated
        cells = app.clipboard.split("\t")
        columns = screen.query_one(SqlTable).columns
        match = next(i for i, column in enumerate(columns) if column.key == "score:match")
        assert cells[:2] == ["7", "1"] and cells[match] == "C" and len(cells) == len(columns)


async def test_a_group_opens_its_samples_filtered(run_dir):
    log = read_eval_log(str(run_dir / "qa_match.eval"))
    geo = sorted(str(s.id) for s in log.samples if s.metadata["category"] == "geo")
    app = make_app(run_dir)
    async with app.run_test(size=APP_SIZE) as pilot:
        await settle(app, pilot)
        run_id = next(run.id for run in app.screen.runs if Path(run.path).name == "qa_match.eval")
        app.push_screen(GroupsScreen(run_id, scorer="match", title="qa_match"))
        await settle(app, pilot)
        groups = app.screen.query_one("#groups-table", BoundedTable)
        assert str(groups.get_row_at(1)[0]) == "geo"
        groups.move_cursor(row=1)
        await pilot.press("enter")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, SamplesScreen)
        table = screen.query_one(SqlTable)
        assert sorted(shown_ids(table)) == geo
        assert "metadata.category" in screen.query_one(FilterBar).filter_input.value
        assert f"{len(geo)} of 12 samples" in status_text(screen)


async def test_export_writes_every_matching_row_not_just_the_loaded_page(tmp_path):
    db_path = tmp_path / "index.db"
    build_index(db_path)  # 500 sample rows: more than the table's first page
    with sqlite3.connect(db_path) as conn:
        incorrect = conn.execute("SELECT count(*) FROM scores WHERE value = '\"I\"'").fetchone()[0]
    expected = 500 - incorrect
    out = tmp_path / "out" / "view.csv"
    app = EvtuiApp(db_path=db_path, ingest_paths=[])
    async with app.run_test(size=APP_SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(SamplesScreen(1, scorer="match", title="synthetic", filter='match != "I"'))
        await settle(app, pilot)
        screen = app.screen
        table = screen.query_one(SqlTable)
        assert table.row_count == expected > table.page_size
        await pilot.press("x")
        await settle(app, pilot)
        assert isinstance(app.screen, ExportViewDialog)
        path_input = app.screen.query_one("#export-path")
        assert path_input.value.endswith(".csv") and "/.evtui/exports/run-" in path_input.value
        path_input.value = str(out)
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.screen is screen
    with out.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == expected
    assert list(rows[0])[:4] == ["id", "epoch", "match", "answer"]
    assert "I" not in {row["match"] for row in rows}
    assert [(int(r["id"]), int(r["epoch"])) for r in rows] == sorted((int(r["id"]), int(r["epoch"])) for r in rows)


async def test_the_filter_bar_takes_only_its_own_lines_and_the_table_fills_the_screen(run_dir):
    app = make_app(run_dir)
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_samples(app, pilot, "qa_match.eval")
        bar, table = screen.query_one(FilterBar), screen.query_one(SqlTable)
        # The bar sits below the header, one input row high; the table gets the rest of the screen,
        # so every one of the 12 samples (plus the header line) is on screen at once.
        assert bar.region.y >= 1 and bar.region.height <= 4
        assert table.region.y >= bar.region.bottom and table.region.height >= 13
