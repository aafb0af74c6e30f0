"""Every screen and dialog at 80×24 shows the UI's own text whole (issue 30, item 5): labels,
column headers, panel and border titles, tabs, key hints, headlines, notifications, empty
states, placeholders. The checker is tests/ui/cut_text.py; here each screen and dialog is opened
by keys, as a user would, on the demo runs, on the fixtures with the most columns (AG2: 13
scorers, lm-eval: 10, verifiers: 6), on a reviewed model-graded run, on runs across tasks and on
the hostile log, and each walk lists every cut it met before failing (one run of the test
shows them all). The demo walk runs at 160×45 too: what fits there is left as it was."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import settle
from cut_text import cut_texts, drawn_in, screen_lines, shown_whole, squeeze

from textual.widgets._toast import Toast

from evtui.app.app import EvtuiApp
from evtui.app.widgets.bounded_table import BoundedTable
from evtui.store.location import default_index_path

DATA = Path(__file__).resolve().parents[1] / "data"
DEMO = Path(__file__).resolve().parents[2] / "demo"
SMALL = (80, 24)


class Walk:
    """Opens screens on one app and keeps every cut it sees, by place."""

    def __init__(self, app, pilot) -> None:
        self.app, self.pilot = app, pilot
        self.cuts: list[str] = []
        self.places: list[str] = []

    async def look(self, where: str) -> None:
        await settle(self.app, self.pilot)
        for _ in range(40):  # a notification is drawn a moment after it is raised
            if len(self.app.screen.query(Toast)) >= len(self.app._notifications):
                break
            await self.pilot.pause(0.05)
        self.places.append(where)
        self.cuts.extend(f"{where} ({type(self.app.screen).__name__}): {cut}" for cut in cut_texts(self.app))

    async def press(self, *keys: str, where: str) -> None:
        await self.pilot.press(*keys)
        await self.look(where)

    async def back(self, to=None) -> None:
        """Escape; to a given screen, Escape until there (a filtered list clears its filter first)."""
        for _ in range(3):
            await self.pilot.press("escape")
            await settle(self.app, self.pilot)
            if to is None or self.app.screen is to:
                break
        if to is not None:
            assert self.app.screen is to, f"escape left {type(self.app.screen).__name__}, not {type(to).__name__}"

    async def dialog(self, key: str, where: str) -> None:
        """A dialog opened by `key` from the current screen, then closed with Escape."""
        screen = self.app.screen
        await self.press(key, where=where)
        assert self.app.screen is not screen, f"{where}: {key!r} opened nothing"
        await self.back(to=screen)

    async def open_run(self, file_name: str) -> None:
        runs = self.app.screen
        table = runs.query_one("#runs-table", BoundedTable)
        table.move_cursor(row=next(i for i, run in enumerate(runs.runs) if Path(run.path).name == file_name))
        await self.press("enter", where=f"run {file_name}")

    def assert_whole(self) -> None:
        assert not self.cuts, f"{len(self.cuts)} cut texts:\n" + "\n".join(self.cuts)


def app_on(directory: Path) -> EvtuiApp:
    app = EvtuiApp(db_path=default_index_path(directory), ingest_paths=[directory])
    app.animation_level = "none"
    return app


def copied(tmp_path: Path, *sources: Path) -> Path:
    directory = tmp_path / "logs"
    directory.mkdir()
    for source in sources:
        if source.is_dir():
            shutil.copytree(source, directory / source.name)
        else:
            shutil.copy2(source, directory / source.name)
    return directory


def test_the_checker_finds_a_cut_label_and_lets_an_ellipsis_pass():
    assert shown_whole("Cancel", "│ Cancel │")
    assert shown_whole("instructions  None", "instructions\nNone")  # wrapped is whole
    assert shown_whole("model_graded.eval", "model_gr…ed.eval")  # shortened with an ellipsis
    assert shown_whole("Created", "Crea…")
    assert not shown_whole("Cancel", "│ Canc")
    assert not shown_whole("instructions", "instructionsNone"[:10])
    assert not shown_whole("0.278 ± 0.041", "0.278 ± 0.")


async def test_a_deliberately_long_label_is_reported(tmp_path):
    """The checker on a live screen: a label made longer than the terminal is reported, and
    the same label shortened with an ellipsis is not."""
    from textual.widgets import Static

    app = app_on(copied(tmp_path, DEMO / "qa_match.eval"))
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        await settle(app, pilot)
        long_label = "a label that is far too long to fit the width of an eighty column terminal: " + "x" * 30
        status = Static(long_label, id="too-long")
        status.styles.height = 1  # one line: the rest of the words are cut
        await app.screen.mount(status, before="#runs-status")
        await settle(app, pilot)
        [cut] = [cut for cut in cut_texts(app) if cut.text == long_label]
        assert cut.drawn.strip() and "x" * 30 not in cut.drawn
        status.set_styles("text-wrap: nowrap; text-overflow: ellipsis;")
        await settle(app, pilot)
        assert "…" in drawn_in(screen_lines(app), status.region)
        assert not [cut for cut in cut_texts(app) if cut.text == long_label]


async def walk_run(walk: Walk, file_name: str, *, deep: bool) -> None:
    """A run's screen, its samples, a sample and its tabs; with `deep` also what opens from them."""
    app = walk.app
    runs = app.screen
    await walk.open_run(file_name)
    run = app.screen
    if deep:
        await walk.dialog("x", f"export dialog (run {file_name})")
        for key, where in (("g", "groups"), ("d", "distribution"), ("v", "variance")):
            await walk.press(key, where=f"{where} ({file_name})")
            if key in "gd":
                await walk.press("t", where=f"{where} chart/table ({file_name})")
            await walk.back(to=run)
    await walk.press("enter", where=f"samples ({file_name})")
    samples = app.screen
    if deep:
        await walk.dialog("m", f"metadata columns dialog ({file_name})")
        await walk.dialog("x", f"export dialog (samples {file_name})")
        await walk.press("x", where=f"export dialog (samples {file_name})")
        app.screen.query_one("#export-start").press()  # written: a notification says where
        await walk.look(f"samples, exported ({file_name})")
        assert app.screen is samples and app.screen.query("Toast"), f"no notification of the export: {app.screen} {list(app._notifications)}"
        app.clear_notifications()
        await walk.press("slash", *'id == "no such sample"', "enter", where=f"samples, nothing matches ({file_name})")
        await walk.press("slash", *" and (", "enter", where=f"samples, a malformed filter ({file_name})")
        await walk.press("escape", "escape", where=f"samples, filter cleared ({file_name})")  # clears it, leaves the bar
        assert app.screen is samples and samples.query_one("#samples-table").row_count, "the filter was not cleared"
        await walk.press("t", where=f"samples with output ({file_name})")
    await walk.press("enter", where=f"sample ({file_name})")
    for key, tab in (("t", "transcript"), ("v", "events"), ("s", "scores"), ("m", "metadata"), ("j", "json"), ("o", "overview")):
        await walk.press(key, where=f"sample {tab} tab ({file_name})")
    if deep:
        await walk.dialog("e", f"edit score dialog ({file_name})")
        await walk.press("v", where=f"sample events tab ({file_name})")
        from evtui.app.widgets.sample.event_tree import EventTree

        events = app.screen.query(EventTree)
        if events:
            events.first().open_all()
            await settle(app, walk.pilot)
        tree = app.screen.query_one("#event-tree")
        nodes, leaves = list(tree.root.children), []
        while nodes:
            node = nodes.pop(0)
            nodes.extend(node.children)
            if not node.children and node.data is not None and not node.allow_expand:
                leaves.append(node)
        if leaves:  # an event without children opens its detail
            sample = app.screen
            tree.focus()
            tree.select_node(leaves[0])
            await walk.look(f"event detail dialog ({file_name})")
            assert type(app.screen).__name__ == "EventDetailDialog", f"{file_name}: no event detail"
            await walk.back(to=sample)
    await walk.back()
    assert app.screen is samples
    await walk.back()
    await walk.back(to=runs)


@pytest.mark.parametrize("size", [SMALL, (160, 45)], ids=["80x24", "160x45"])
async def test_the_demo_runs_every_screen_and_dialog(tmp_path, size):
    directory = copied(tmp_path, *sorted(DEMO.glob("*.eval")))
    app = app_on(directory)
    async with app.run_test(size=size, notifications=True) as pilot:
        walk = Walk(app, pilot)
        await walk.look("runs")
        runs = app.screen
        await walk.press("slash", where="runs filter")
        await walk.back(to=runs)
        await walk.press("ctrl+p", where="command palette")
        assert type(app.screen).__name__ == "CommandPalette"
        await walk.back(to=runs)
        for key, where in (("question_mark", "help"), ("f", "failed files dialog"), ("x", "export dialog (runs)")):
            await walk.dialog(key, where)
        await walk.press("s", where="scoring dialog")
        await walk.press("ctrl+r", where="scoring dialog, run without a scorer")  # a notification
        await walk.back(to=runs)
        await walk.press("J", where="jobs")
        await walk.back(to=runs)
        await walk.press("M", where="matrix")
        await walk.press("t", where="matrix table/chart")
        await walk.press("D", where="decisions (matrix)")
        await walk.press("t", where="decisions chart/table")
        await walk.back()
        await walk.back(to=runs)
        pair = [i for i, run in enumerate(runs.runs) if Path(run.path).name.startswith("pair_")]
        table = runs.query_one("#runs-table", BoundedTable)
        for row in pair:
            table.move_cursor(row=row)
            await walk.press("space", where="runs, marked")
        await walk.press("c", where="compare")
        compare = app.screen
        await walk.press("t", where="compare forest/table")
        await walk.press("d", where="compare discordant")
        await walk.press("enter", where="a discordant sample")
        await walk.press("b", where="a discordant sample, both runs")
        assert type(app.screen).__name__ == "SampleScreen"
        await walk.back(to=compare)
        await walk.press("D", where="decisions (compare)")
        await walk.back(to=compare)
        await walk.back(to=runs)
        await walk.press("a", where="samples across runs")
        await walk.press("enter", where="a sample across runs")
        await walk.back()
        await walk.back(to=runs)
        for number, run in enumerate(sorted(path.name for path in DEMO.glob("*.eval"))):
            await walk_run(walk, run, deep=number == 0 or run == "tool_agent.eval")
    assert any(place.startswith("event detail dialog") for place in walk.places)
    walk.assert_whole()


@pytest.mark.parametrize("source", ["ag2", "lm_eval", "verifiers"])
async def test_the_fixtures_with_the_most_columns(tmp_path, source):
    directory = copied(tmp_path, DATA / source)
    app = app_on(directory)
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        walk = Walk(app, pilot)
        await walk.look(f"runs ({source})")
        files = []
        for run in app.screen.runs:
            name = Path(run.path).name
            if name not in files:
                files.append(name)
        for number, name in enumerate(files[:3]):
            await walk_run(walk, name, deep=number == 0)
        await walk.press("a", where=f"samples across runs ({source})")
        await walk.back()
    walk.assert_whole()


async def test_a_reviewed_model_graded_run(tmp_path):
    """The review queue, agreement (with its confusion dialog) and judges screens, the start
    review dialog and the scoring form of a model-graded scorer."""
    from textual.widgets import Input

    from evtui.store.review.queues import Selection, create_queue, give_verdict, item_at
    from tests.ui.test_review_screen import ALICE, BOB, SCORER

    directory = copied(tmp_path, DATA / "inspect" / "review_graded.eval")
    app = app_on(directory)
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        walk = Walk(app, pilot)
        await settle(app, pilot)
        from evtui.store.schema import connect

        db = connect(app.db_path)
        run_id = app.screen.runs[0].id
        queue = create_queue(db, "double", run_id, SCORER, Selection(), reviewer="alice")
        for reviewer, grades in (("alice", ALICE), ("bob", BOB)):
            for position in range(queue.size):
                item = item_at(db, queue, position, reviewer)
                give_verdict(db, queue, item, grades[int(item.sample_id) - 1], reviewer=reviewer)
        await walk.open_run("review_graded.eval")
        run = app.screen
        await walk.press("A", where="agreement")
        await walk.press("t", where="agreement table")
        await walk.press("l", where="agreement reliability")
        await walk.back(to=run)
        await walk.press("c", where="judges")
        await walk.back(to=run)
        await walk.press("r", where="start review dialog")
        app.screen.query_one("#review-start").press()
        await walk.look("review queue")
        for key in ("v", "c", "right", "u"):
            await walk.press(key, where=f"review queue after {key}")
        await walk.back()
        while app.screen is not run:
            await walk.back()
        await walk.press("s", where="scoring dialog (run)")
        app.screen.query_one("#picker-search", Input).focus()
        await walk.press(*"model_graded_qa", "enter", where="scoring form of model_graded_qa")
        await walk.back(to=run)
    walk.assert_whole()


async def test_an_empty_folder(tmp_path):
    directory = tmp_path / "logs"
    directory.mkdir()
    app = app_on(directory)
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        walk = Walk(app, pilot)
        await walk.look("runs of an empty folder")
        await walk.press("a", where="samples across no runs")
        await walk.press("M", where="matrix of no runs")
    walk.assert_whole()


async def test_a_folder_with_a_broken_file(tmp_path):
    directory = copied(tmp_path, DEMO / "qa_match.eval")
    (directory / "broken.eval").write_bytes(b"PK\x03\x04 not really a zip archive")
    (directory / "broken.json").write_text('{"version": 2, "status": "success", "eval": ')
    app = app_on(directory)
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        walk = Walk(app, pilot)
        await walk.look("runs with failed files")
        await walk.press("f", where="failed files dialog, two files")
        # What went wrong is the point of the dialog: each error is drawn whole (it was cut after
        # a few words at 80 columns), wrapped under its column.
        box = app.screen.query_one("#failures-box")
        drawn = drawn_in(screen_lines(app), box.region)
        errors = [str(app.screen.query_one("#failures-table").get_cell_at((row, 1))) for row in range(2)]
        for error in errors:
            assert shown_whole(error, drawn) and "…" not in squeeze(error), f"error cut: {error!r} in {drawn}"
        await walk.back()
    walk.assert_whole()


async def test_the_confusion_and_quit_dialogs(tmp_path):
    from evtui.app.dialogs.confirm_quit import ConfirmQuitDialog
    from evtui.app.dialogs.confusion_samples import ConfusionSamplesDialog

    directory = copied(tmp_path, DATA / "inspect" / "review_graded.eval")
    app = app_on(directory)
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        walk = Walk(app, pilot)
        await settle(app, pilot)
        run_id = app.screen.runs[0].id
        app.push_screen(ConfusionSamplesDialog(run_id, "model_graded_qa", "judge C · alice I", [("1", 1), ("2", 1), ("3", 1)]))
        await walk.look("confusion samples dialog")
        await walk.back()
        app.push_screen(ConfirmQuitDialog("Job #1 model_graded_qa is scoring (12/24)."))
        await walk.look("confirm quit dialog")
        await walk.back()
    walk.assert_whole()


async def test_runs_across_tasks_decisions_and_variance(tmp_path):
    directory = copied(tmp_path, *sorted((DATA / "decisions").glob("*.eval")))
    app = app_on(directory)
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        walk = Walk(app, pilot)
        await walk.look("runs (decisions)")
        await walk.press("M", where="matrix (decisions)")
        await walk.press("D", where="decisions (decisions)")
        await walk.press("m", where="decisions, next models")
        await walk.back()
        await walk.back()
        await walk.open_run("arith_alpha.eval")
        await walk.press("v", where="variance with epochs and replicate runs")
    walk.assert_whole()


async def test_the_hostile_log(tmp_path):
    """Run text may be shortened (with an ellipsis); the screen's own words around it are whole."""
    directory = copied(tmp_path, DATA / "inspect" / "hostile.eval", DATA / "inspect" / "hostile_chart.eval",
                       DATA / "inspect" / "hostile_chart_b.eval")
    app = app_on(directory)
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        walk = Walk(app, pilot)
        await walk.look("runs (hostile)")
        for name in ("hostile.eval", "hostile_chart.eval"):
            await walk_run(walk, name, deep=True)
    walk.assert_whole()
