"""The command palette offers every action: the keys of the screen it was opened from, opening
any run by name, configuring scoring, exporting the view, switching theme."""

from __future__ import annotations

from conftest import APP_SIZE, settle

from evtui.app.app import EvtuiApp
from evtui.app.dialogs.configure_scoring import ConfigureScoringDialog
from evtui.app.dialogs.export_view import ExportViewDialog
from evtui.app.screens.groups import GroupsScreen
from evtui.app.screens.run import RunScreen
from evtui.app.screens.runs import RunsScreen
from evtui.app.screens.samples import SamplesScreen
from evtui.store.location import default_index_path


def make_app(run_dir) -> EvtuiApp:
    return EvtuiApp(db_path=default_index_path(run_dir), ingest_paths=[run_dir])


async def palette(app: EvtuiApp, pilot, text: str) -> None:
    """Open the palette, type `text`, take the best match."""
    await pilot.press("ctrl+p")
    await pilot.pause()
    await pilot.press(*text)
    await pilot.pause(0.4)  # the palette searches in a worker of its own
    await pilot.press("enter")
    await settle(app, pilot)
    await pilot.pause()


async def test_open_any_run_by_name_then_use_that_screens_actions(run_dir):
    app = make_app(run_dir)
    async with app.run_test(size=APP_SIZE) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, RunsScreen)
        await palette(app, pilot, "open run: mc_epochs")
        assert isinstance(app.screen, RunScreen)
        assert app.screen.run is not None and app.screen.run.row.task == "mc_epochs"

        await palette(app, pilot, "run: groups")  # the run screen's `g`
        assert isinstance(app.screen, GroupsScreen) and app.screen.run_id == app.screen_stack[-2].run_id


async def test_configure_and_export_are_in_the_palette(run_dir):
    app = make_app(run_dir)
    async with app.run_test(size=APP_SIZE) as pilot:
        await settle(app, pilot)
        await palette(app, pilot, "runs: score")  # configure scoring from the runs screen
        assert isinstance(app.screen, ConfigureScoringDialog)
        await pilot.press("escape")
        await pilot.pause()

        await palette(app, pilot, "open run: qa_match")
        await pilot.press("enter")  # the samples behind the first scalar
        await settle(app, pilot)
        assert isinstance(app.screen, SamplesScreen)
        await palette(app, pilot, "samples: export")
        assert isinstance(app.screen, ExportViewDialog)


async def test_over_a_dialog_the_palette_opens_no_screens_on_top_of_it(run_dir):
    from evtui.app.commands import EvtuiCommands

    app = make_app(run_dir)
    async with app.run_test(size=APP_SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("s")
        await settle(app, pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfigureScoringDialog)
        assert EvtuiCommands(dialog)._commands() == []
        # Over a normal screen: the screen's own keys, once each, under the key the footer shows.
        provider = EvtuiCommands(app.screen_stack[-2])
        await provider.startup()  # reads the runs, as when the palette opens
        titles = {title: help_text for title, help_text, _ in provider._commands()}
        assert titles["Runs: Score"] == "key s" and "Runs: Cursor up" not in titles
        assert any(title.startswith("Open run: qa_match") for title in titles)
