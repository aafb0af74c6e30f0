"""The runs screen groups runs by task or by eval set (issue 30, item 1): `g` cycles none → task →
eval set → none; a header row per group (name, run count, newest time) above its runs; Enter on
a header folds the group; sort, filter and marks work within groups; on a header, space marks
the group's runs and `a` opens their samples across runs. The groups are run_list.group_runs's,
the ones `evtui runs --group-by` prints."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from conftest import settle

from evtui.app.app import EvtuiApp
from evtui.app.screens.runs import COLUMNS
from evtui.app.widgets.bounded_table import BoundedTable
from evtui.store.location import default_index_path
from evtui.store.queries.run_list import RunGroup, group_runs

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture
def logs(tmp_path) -> Path:
    directory = tmp_path / "logs"
    shutil.copytree(DATA / "inspect_reruns", directory / "reruns")
    shutil.copytree(DATA / "inspect_logical" / "evalset", directory / "evalset")
    shutil.copytree(DATA / "terminal_bench", directory / "terminal_bench")
    shutil.copy2(DATA / "inspect" / "cancelled.eval", directory / "cancelled.eval")
    return directory


def rows(app) -> list[dict[str, str]]:
    table = app.screen.query_one("#runs-table", BoundedTable)
    return [dict(zip(COLUMNS, (str(cell) for cell in table.get_row_at(i)), strict=True)) for i in range(table.row_count)]


def headers(app) -> list[str]:
    return [row["Task"] for row in rows(app) if row["Task"].startswith(("▼ ", "▶ "))]


def status_text(app) -> str:
    return str(app.screen.query_one("#runs-status").render())


async def cursor_to(app, pilot, task_cell: str) -> None:
    table = app.screen.query_one("#runs-table", BoundedTable)
    table.move_cursor(row=[row["Task"] for row in rows(app)].index(task_cell), animate=False)
    await pilot.pause()


async def test_g_groups_by_task_then_eval_set_then_not_with_headers_over_their_runs(logs):
    app = EvtuiApp(db_path=default_index_path(logs), ingest_paths=[logs])
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        flat = [row["Run"] for row in rows(app)]
        assert headers(app) == []

        await pilot.press("g")
        await pilot.pause()
        want = group_runs(screen.runs, "task")  # the core's groups, in the list's order
        assert headers(app) == [f"▼ {group.name}" for group in want]
        shown = rows(app)
        reruns = next(i for i, row in enumerate(shown) if row["Task"] == "▼ arith_reruns")
        assert shown[reruns]["Run"] == "4 runs" and shown[reruns]["Created"].endswith(" ago")
        assert [row["Task"] for row in shown[reruns + 1:reruns + 5]] == ["  arith_reruns"] * 4
        assert "task groups" in status_text(app)

        await pilot.press("g")
        await pilot.pause()
        assert headers(app)[0] == "▼ evalset" and headers(app)[-1] == "▼ (no eval set)"
        shown = rows(app)
        assert shown[0]["Run"] == "2 runs" and {shown[1]["Task"], shown[2]["Task"]} == {"  steady", "  flaky"}
        assert "eval set groups" in status_text(app)

        await pilot.press("g")
        await pilot.pause()
        assert headers(app) == [] and [row["Run"] for row in rows(app)] == flat

        from evtui.app.screens.help import describe_keys

        assert ("g", "Group by task / eval set") in describe_keys(screen)  # in ? help whole; the footer says `g Group` where it has room
        from textual.widgets._footer import FooterKey

        shown = [(key.key, key.description) for key in screen.query(FooterKey) if key.display]
        assert ("g", "Group") in shown and ("f", "Failed files") in shown  # at 160 columns, with room to spare


async def test_enter_on_a_header_folds_its_group_and_sort_and_filter_work_within_groups(logs):
    app = EvtuiApp(db_path=default_index_path(logs), ingest_paths=[logs])
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(app, pilot)
        await pilot.press("g")
        await pilot.pause()
        total = len(rows(app))
        await cursor_to(app, pilot, "▼ arith_reruns")
        await pilot.press("enter")
        await pilot.pause()
        assert len(rows(app)) == total - 4 and "▶ arith_reruns" in headers(app)
        assert app.screen.query_one("#runs-table", BoundedTable).cursor_row == [r["Task"] for r in rows(app)].index("▶ arith_reruns")
        await pilot.press("enter")  # unfold
        await pilot.pause()
        assert len(rows(app)) == total and "▼ arith_reruns" in headers(app)

        # Enter on a run still opens it
        await cursor_to(app, pilot, "▼ arith_reruns")
        await pilot.press("down", "enter")
        await settle(app, pilot)
        from evtui.app.screens.run import RunScreen

        assert isinstance(app.screen, RunScreen)
        await pilot.press("escape")
        await settle(app, pilot)

        await pilot.press("o", "o", "o")  # created → completed → duration → epochs
        await pilot.pause()
        assert "by ep" in status_text(app)
        screen = app.screen
        by_epochs = [row for row in rows(app)]
        start = [r["Task"] for r in by_epochs].index("▼ arith_reruns")
        epochs = [r["Ep"] for r in by_epochs[start + 1:start + 5]]
        assert epochs == sorted(epochs, reverse=True) and epochs[0] == "2"  # rerun_c: epochs 2, first
        assert headers(app) == [f"▼ {g.name}" for g in group_runs(screen.runs, "task")]

        await pilot.press("slash", *"nightly")
        await pilot.pause()
        assert headers(app) == ["▼ arith_reruns"]
        assert sorted(r["Run"] for r in rows(app)[1:]) == ["rerun_a.eval", "rerun_b.eval"]
        assert rows(app)[0]["Run"] == "2 runs"
        await pilot.press("escape")
        await pilot.pause()
        assert len(rows(app)) == total


async def test_space_on_a_header_marks_its_runs_and_a_opens_them_across(logs):
    from evtui.app.screens.across.table import AcrossRunsScreen

    app = EvtuiApp(db_path=default_index_path(logs), ingest_paths=[logs])
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(app, pilot)
        await pilot.press("g")
        await pilot.pause()
        screen = app.screen
        reruns = {run.id for run in screen.runs if run.task == "arith_reruns"}
        await cursor_to(app, pilot, "▼ arith_reruns")
        await pilot.press("space")
        await pilot.pause()
        assert screen.marked == reruns
        assert rows(app)[[r["Task"] for r in rows(app)].index("▼ arith_reruns")]["Run"] == "4 runs · 4 marked"
        assert "4 marked" in status_text(app)
        await pilot.press("g")  # marks outlive a change of grouping
        await pilot.pause()
        assert screen.marked == reruns
        await pilot.press("g", "g")  # back to tasks
        await pilot.pause()
        await cursor_to(app, pilot, "▼ arith_reruns")
        await pilot.press("space")  # all marked: unmark them
        await pilot.pause()
        assert screen.marked == set()

        await pilot.press("c")  # nothing marked, on a header: compare the group's runs
        await settle(app, pilot)
        from evtui.app.screens.compare.pairs import CompareScreen

        assert isinstance(app.screen, CompareScreen) and set(app.screen.run_ids) == reruns
        await pilot.press("escape")
        await settle(app, pilot)

        await pilot.press("g")  # by eval set: `a` on the set's header, nothing marked
        await pilot.pause()
        await cursor_to(app, pilot, "▼ evalset")
        await pilot.press("a")
        await settle(app, pilot)
        assert isinstance(app.screen, AcrossRunsScreen)
        assert sorted(run.task for run in app.screen.runs) == ["flaky", "steady"]
        assert "evalset" in app.screen.sub_title


@pytest.mark.parametrize("size", [(160, 45), (80, 24)], ids=["160x45", "80x24"])
async def test_hostile_task_and_eval_set_names_are_drawn_inert_in_group_headers(tmp_path, size):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from test_hostile_ui import FILE_NAME, HOSTILE_LOG, assert_safe
    from test_screens_80x24 import assert_fits

    logs = tmp_path / "logs"
    folder = logs / "set\x1b]0;PWN\x07[@click=app.quit]q[b]\u202ex"  # the eval set's name is its folder's
    folder.mkdir(parents=True)
    for path in (DATA / "inspect_logical" / "evalset").iterdir():
        shutil.copy2(path, folder / path.name)
    shutil.copy2(HOSTILE_LOG, logs / FILE_NAME)  # a task, model and every field hostile
    shutil.copy2(HOSTILE_LOG, logs / "second copy.eval")
    app = EvtuiApp(db_path=default_index_path(logs), ingest_paths=[logs])
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        for grouping in ("task", "eval set"):
            await pilot.press("g")
            await pilot.pause()
            text = assert_safe(app, f"{size} runs grouped by {grouping}")
            assert any(h.startswith("▼ ") for h in headers(app))
            if size == (80, 24):
                assert_fits(app, f"runs grouped by {grouping}")
            await cursor_to(app, pilot, headers(app)[0])
            await pilot.press("enter")  # fold the first group
            await pilot.pause()
            assert_safe(app, f"{size} runs grouped by {grouping}, one folded")
        assert "▼ set" in text or "▶ set" in text
        if size == (80, 24):  # a name wider than the Task column is cut from the middle, never mid-escape
            assert any("…" in h for h in headers(app) if "set" in h)
        hostile_header = next(h for h in headers(app) if "set" in h)
        assert "\x1b" not in hostile_header and "\u202e" not in hostile_header


async def test_x_on_a_grouped_list_exports_every_run_the_filter_keeps_with_its_group(logs):
    from evtui.app.dialogs.export_view import ExportViewDialog

    app = EvtuiApp(db_path=default_index_path(logs), ingest_paths=[logs])
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(app, pilot)
        await pilot.press("g", "g")  # by eval set
        await pilot.pause()
        await cursor_to(app, pilot, "▼ evalset")
        await pilot.press("enter")  # folded: its runs are exported all the same
        await pilot.pause()
        runs = list(app.screen.runs)
        await pilot.press("x")
        await settle(app, pilot)
        assert isinstance(app.screen, ExportViewDialog)
        view = app.screen.view
        assert view.columns == ("Group", *COLUMNS) and len(view.rows) == len(runs)  # runs only, no header rows
        groups = {row[3]: row[0] for row in view.rows}  # Run -> Group
        assert {groups[name] for name in groups if name.endswith(".eval") and "T03-56" in name} == {"evalset"}
        assert groups["rerun_a.eval"] == "(no eval set)" and groups["runs/2026-11-25__08-30-00"] == "(no eval set)"
        assert all(row[1] == row[1].strip() and not row[1].startswith(("▼", "▶")) for row in view.rows)
