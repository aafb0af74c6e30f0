"""A table of hundreds of columns (samples across runs: an answer and the scores per run) draws the
columns on screen, not every one for every row (issue 30: a cross-run page over 200 runs spent
most of its time formatting cells off screen); scrolled right, it shows the right cells."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

from conftest import settle

from evtui.app.app import EvtuiApp
from evtui.app.screens.across.table import AcrossRunsScreen
from evtui.app.widgets.sql_table.parts import fit_cell
from evtui.app.widgets.sql_table.table import SqlTable
from evtui.store.location import default_index_path
from evtui.store.queries.across_runs import across_columns, page_across, table_header
from evtui.store.schema import connect

DATA = Path(__file__).resolve().parents[1] / "data"
RUNS = 40


def line(table: SqlTable, y: int) -> str:
    return table.render_line(y).text


async def test_a_wide_cross_run_table_draws_only_the_columns_on_screen_and_scrolls_to_the_last(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    for number in range(1, RUNS + 1):  # re-runs of one task: one real Inspect log, copied
        shutil.copy2(DATA / "inspect" / "qa_match.eval", logs / f"run{number:02d}.eval")
    app = EvtuiApp(db_path=default_index_path(logs), ingest_paths=[logs])
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("a")  # no marks: every run of the cursor run's task
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, AcrossRunsScreen) and len(screen.runs) == RUNS
        table = screen.query_one(SqlTable)
        per_run = 1 + len(screen.runs[0].scorers)  # its answer and each scorer's value
        assert len(table.columns) == 4 + per_run * RUNS  # and id, epoch, input, target

        asked: list[str] = []

        def counted(column):
            def cell(row):
                asked.append(column.key)
                return column.cell(row)

            return replace(column, cell=cell)

        table.columns = [counted(column) for column in table.columns]
        for y in range(1, table.size.height):
            table.render_line(y)
        rows = table.size.height - 1
        on_screen = {column.key for column, left in zip(table.columns, table._layout.lefts) if left < table.size.width}
        assert len(asked) <= rows * len(on_screen) < rows * len(table.columns) // 4
        assert set(asked) == on_screen

        db = connect(app.db_path)
        try:
            first = page_across(db, screen.runs, limit=3)
            header = table_header(across_columns(screen.runs))
        finally:
            db.conn.close()
        table.scroll_to(x=table.max_scroll_x, animate=False, immediate=True)  # the last runs' columns
        await pilot.pause()
        heading = line(table, 0)
        assert header[-per_run] == f"{RUNS} answer" and f"{RUNS} answer" in heading
        assert heading.rstrip().endswith(fit_cell(header[-1], 8, "right").strip())  # `40 incl…`, fitted with an ellipsis
        last_answer = first[0].answers[RUNS]
        assert last_answer[:10] in line(table, 1)  # run 40's answer to the first sample, on its row
