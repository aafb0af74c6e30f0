"""The sample screen's keys, as a user met them (issue 11.3, 11.4, 11.8): the Scores tab lets go
of the keyboard, `e` reviews the scorer the user came from, keys typed while a sample loads count."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from conftest import APP_SIZE, INSPECT_LOGS, settle
from textual.widgets import TabbedContent

from evtui.app.app import EvtuiApp
from evtui.app.dialogs.edit_score import EditScoreDialog
from evtui.app.screens.sample import SampleScreen
from evtui.app.screens.samples import SamplesScreen
from evtui.sample_view import view as sample_view
from evtui.store.location import default_index_path
from evtui.store.schema import connect


@pytest.fixture
def logs(tmp_path) -> Path:
    directory = tmp_path / "logs"
    directory.mkdir()
    shutil.copy2(INSPECT_LOGS / "qa_match.eval", directory / "qa_match.eval")  # 12 samples, match and includes
    return directory


def make_app(logs: Path) -> EvtuiApp:
    return EvtuiApp(db_path=default_index_path(logs), ingest_paths=[logs])


def first_rowid(app: EvtuiApp) -> tuple[int, int]:
    db = connect(app.db_path)
    try:
        return db.execute("SELECT run_id, id FROM samples WHERE sample_id = '1'").fetchone()
    finally:
        db.conn.close()


async def loaded(app, pilot) -> None:
    await settle(app, pilot)
    for _ in range(3):
        await pilot.pause()


async def open_first_sample(app, pilot) -> SampleScreen:
    await settle(app, pilot)
    screen = SampleScreen(app.db_path, first_rowid(app)[1])
    await app.push_screen(screen)
    await loaded(app, pilot)
    return screen


async def test_the_scores_tab_lets_go_of_the_keyboard(logs):
    app = make_app(logs)
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_first_sample(app, pilot)
        assert len({s.score.scorer for s in screen.view.scores}) == 2
        tabs = screen.query_one(TabbedContent)
        for key, tab in [("o", "overview"), ("t", "transcript"), ("v", "events"), ("m", "metadata")]:
            await pilot.press("s")
            await loaded(app, pilot)
            assert tabs.active == "scores" and type(app.focused).__name__ == "ScoreCard"
            await pilot.press(key)
            await loaded(app, pilot)
            assert tabs.active == tab, f"{key} left the Scores tab"
        await pilot.press("s")
        await loaded(app, pilot)
        await pilot.press("left")
        await loaded(app, pilot)
        assert tabs.active == "events"
        await pilot.press("s", "right")
        await loaded(app, pilot)
        assert tabs.active == "metadata"


async def test_e_reviews_the_scorer_the_user_came_from(logs):
    app = make_app(logs)
    async with app.run_test(size=APP_SIZE) as pilot:
        await settle(app, pilot)
        run_id, _ = first_rowid(app)
        await app.push_screen(SamplesScreen(run_id, scorer="includes", title="qa"))
        await settle(app, pilot)
        await pilot.press("enter")
        await loaded(app, pilot)
        assert isinstance(app.screen, SampleScreen)
        await pilot.press("e")
        await loaded(app, pilot)
        assert isinstance(app.screen, EditScoreDialog)
        assert app.screen.score.score.scorer == "includes"  # not `match`, the first card


async def test_keys_typed_while_a_sample_loads_are_not_lost(logs, monkeypatch):
    real = sample_view.load_sample_view

    def slow(*args, **kwargs):  # a large run file: each sample takes a while to gather
        time.sleep(0.3)
        return real(*args, **kwargs)

    monkeypatch.setattr(sample_view, "load_sample_view", slow)
    app = make_app(logs)
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_first_sample(app, pilot)
        assert screen.view.sample.sample_id == "1"
        await pilot.press("n", "n", "n")
        for _ in range(40):
            await loaded(app, pilot)
            if not screen._loading:
                break
        assert screen.view.sample.sample_id == "4"
        await pilot.press("p", "p", "n", "p")
        for _ in range(40):
            await loaded(app, pilot)
            if not screen._loading:
                break
        assert screen.view.sample.sample_id == "2"
        assert screen.query_one(TabbedContent)  # the sample it stopped at is drawn
