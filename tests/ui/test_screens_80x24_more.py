"""The screens and dialogs test_screens_80x24.py does not reach, at 80×24 (issue 30, item 5): a
footer key shows whole or not at all (`J Jobs` and `^p palette` always), every button whole, a
dialog inside the terminal — checked by that module's assert_fits on each of: the variance view,
the groups chart, decisions across tasks (from compare and from the matrix), the matrix chart,
agreement, judge against judge, the start-review dialog and the review queue, the edit-score and
event-detail dialogs, the confusion-samples dialog and the quit confirmation."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import settle
from test_screens_80x24 import HEIGHT, WIDTH, assert_fits

from evtui.app.app import EvtuiApp
from evtui.app.widgets.bounded_table import BoundedTable
from evtui.store.location import default_index_path
from tests.fixture_index import ingested


@pytest.fixture
def app(run_dir) -> EvtuiApp:
    app = EvtuiApp(db_path=default_index_path(run_dir), ingest_paths=[run_dir])
    app.animation_level = "none"
    return app


async def look(app, pilot, where: str, screen: str) -> None:
    await settle(app, pilot)
    assert type(app.screen).__name__ == screen, f"{where}: on {type(app.screen).__name__}, not {screen}"
    assert_fits(app, where)


async def open_run(app, pilot, name: str) -> None:
    await settle(app, pilot)
    runs = app.screen
    runs.query_one("#runs-table", BoundedTable).move_cursor(row=next(i for i, run in enumerate(runs.runs) if Path(run.path).name == name))
    await pilot.press("enter")
    await settle(app, pilot)


async def test_variance_groups_chart_decisions_and_the_matrix_chart_fit_80x24(app):
    async with app.run_test(size=(WIDTH, HEIGHT)) as pilot:
        await open_run(app, pilot, "mc_epochs.eval")
        await pilot.press("v")
        await look(app, pilot, "variance", "VarianceScreen")
        await pilot.press("escape")
        await pilot.press("g")
        await settle(app, pilot)
        await pilot.press("t")
        await look(app, pilot, "groups chart", "GroupsScreen")
        await pilot.press("escape")
        await settle(app, pilot)
        await pilot.press("escape")  # back to the runs
        await settle(app, pilot)
        await pilot.press("space", "down", "space", "c")
        await settle(app, pilot)
        await pilot.press("D")
        await look(app, pilot, "decisions (compare)", "DecisionsScreen")
        await pilot.press("escape")
        await settle(app, pilot)
        await pilot.press("escape")
        await settle(app, pilot)
        await pilot.press("M")
        await settle(app, pilot)
        await pilot.press("t")
        await look(app, pilot, "matrix chart", "MatrixScreen")
        await pilot.press("D")
        await look(app, pilot, "decisions (matrix)", "DecisionsScreen")


async def test_the_edit_score_and_event_detail_dialogs_fit_80x24(tmp_path):
    import shutil

    from textual.widgets import Tree

    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy2(Path(__file__).resolve().parents[1] / "data" / "inspect" / "tool_agent.eval", logs / "tool_agent.eval")
    app = EvtuiApp(db_path=default_index_path(logs), ingest_paths=[logs])
    app.animation_level = "none"
    async with app.run_test(size=(WIDTH, HEIGHT)) as pilot:
        await open_run(app, pilot, "tool_agent.eval")
        await pilot.press("enter")  # its samples
        await settle(app, pilot)
        await pilot.press("enter")  # the first sample
        await settle(app, pilot)
        await pilot.press("e")
        await look(app, pilot, "edit score", "EditScoreDialog")
        await pilot.press("escape")
        await settle(app, pilot)
        await pilot.press("v")  # the events tree
        await settle(app, pilot)
        app.screen.query_one("#event-tree", Tree).focus()
        await pilot.press("slash", *"add", "enter")  # the tool call
        await settle(app, pilot)
        await pilot.press("up", "enter")  # the model call before it: its raw request and response
        await look(app, pilot, "event detail", "EventDetailDialog")


async def test_quit_confirmation_fits_80x24(app):
    from evtui.app.dialogs.confirm_quit import ConfirmQuitDialog

    async with app.run_test(size=(WIDTH, HEIGHT)) as pilot:
        await settle(app, pilot)
        app.push_screen(ConfirmQuitDialog("A scoring job is running (qa_match · model_graded_qa, 3 of 12 samples)."))
        await look(app, pilot, "quit confirmation", "ConfirmQuitDialog")


SCORER = "model_graded_qa"


async def test_review_agreement_judges_and_confusion_samples_fit_80x24(tmp_path):
    from evtui.app.dialogs.confusion_samples import ConfusionSamplesDialog
    from evtui.store.review.queues import Selection, create_queue, give_verdict, item_at

    db_path, db, run_id = ingested(tmp_path, "review_graded.eval")
    queue = create_queue(db, "first", run_id, SCORER, Selection(), reviewer="alice")
    for position in range(6):  # a few verdicts: agreement has something to count
        give_verdict(db, queue, item_at(db, queue, position, "alice"), "CIPCIC"[position], reviewer="alice")
    db.conn.close()
    app = EvtuiApp(db_path=db_path)
    app.animation_level = "none"
    async with app.run_test(size=(WIDTH, HEIGHT)) as pilot:
        await open_run(app, pilot, "review_graded.eval")
        await pilot.press("r")
        await look(app, pilot, "start review", "StartReviewDialog")
        await pilot.press("escape")
        await settle(app, pilot)
        await pilot.press("A")
        await look(app, pilot, "agreement", "AgreementScreen")
        await pilot.press("b")
        await look(app, pilot, "judges", "JudgesScreen")
        app.push_screen(ConfusionSamplesDialog(run_id, SCORER, "judge C · human I", [("1", 1), ("2", 1), ("3", 1)]))
        await look(app, pilot, "confusion samples", "ConfusionSamplesDialog")
        await pilot.press("escape")
        await settle(app, pilot)
        from evtui.app.screens.review.queue import ReviewScreen

        app.push_screen(ReviewScreen("first", reviewer="alice"))
        await look(app, pilot, "review queue", "ReviewScreen")
