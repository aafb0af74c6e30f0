"""`i` on the runs screen: each headline's 95% confidence interval instead of ± stderr."""

from __future__ import annotations

from conftest import APP_SIZE, INSPECT_LOGS, settle
from inspect_ai.log import read_eval_log
from inspect_ai.scorer import SampleScore, ci

from evtui.app.app import EvtuiApp
from evtui.app.screens.runs import RunsScreen
from evtui.app.widgets.status_line import StatusLine
from evtui.store.location import default_index_path


def headline_of(screen: RunsScreen, task: str) -> str:
    table = screen.query_one("#runs-table")
    row = next(i for i, run in enumerate(screen.runs) if run.task == task)
    return str(table.get_row_at(row)[4])


async def test_i_shows_the_95_percent_interval_inspects_ci_gives_and_toggles_back(run_dir):
    app = EvtuiApp(db_path=default_index_path(run_dir), ingest_paths=[run_dir])
    async with app.run_test(size=APP_SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert headline_of(screen, "qa_match") == "match accuracy 0.583 ± 0.149"

        await pilot.press("i")
        await pilot.pause()
        log = read_eval_log(str(INSPECT_LOGS / "qa_match.eval"))
        interval = ci()([SampleScore(score=sample.scores["match"], sample_id=sample.id) for sample in log.samples])
        assert headline_of(screen, "qa_match") == f"match accuracy 0.583 [{interval['lower']:.3f}, {interval['upper']:.3f}]"
        assert "95% CI" in str(screen.query_one(StatusLine).render())

        await pilot.press("i")
        await pilot.pause()
        assert headline_of(screen, "qa_match") == "match accuracy 0.583 ± 0.149"

