"""Every screen and dialog at 80×24 (issue 30, item 5): nothing that is drawn is cut. A footer key
shows whole or not at all, `J Jobs` and `^p palette` always; every button shows its whole
label inside the terminal; a dialog's box fits the terminal."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import settle
from rich.cells import cell_len
from textual.screen import ModalScreen
from textual.widgets import Button
from textual.widgets._footer import FooterKey

from evtui.app.app import EvtuiApp
from evtui.app.widgets.bounded_table import BoundedTable
from evtui.app.widgets.key_footer import KeyFooter
from evtui.store.location import default_index_path

WIDTH, HEIGHT = 80, 24


def assert_fits(app, where: str) -> None:
    screen = app.screen
    for footer in screen.query(KeyFooter):
        keys = [key for key in footer.query(FooterKey) if key.display and key.region.width]
        palette = [key for key in keys if "-command-palette" in key.classes]
        modal = isinstance(screen, ModalScreen)  # a dialog's footer: its own keys (no palette, no jobs)
        assert modal or (palette and palette[0].region.right <= WIDTH), f"{where}: no ^p palette"
        edge = palette[0].region.x if palette else WIDTH
        for key in keys:
            if key in palette:
                continue
            label = f"{key.key_display} {key.description}"
            assert key.region.right <= edge, f"{where}: footer key {label!r} cut at {key.region}"
            assert key.region.width >= cell_len(label), f"{where}: footer key {label!r} narrower than its label"
        labels = {str(key.description) for key in keys}
        assert modal or "Jobs" in labels, f"{where}: J Jobs left the footer: {sorted(labels)}"
    for button in screen.query(Button):
        if not button.display or not button.region.width:
            continue
        label = str(button.label)
        assert button.region.right <= WIDTH and button.region.bottom <= HEIGHT, f"{where}: button {label!r} off screen"
        assert button.content_region.width >= cell_len(label), f"{where}: button {label!r} cut ({button.content_region})"
    if isinstance(screen, ModalScreen):
        for box in screen.children:
            if box.display and box.region.width:
                assert box.region.right <= WIDTH and box.region.bottom <= HEIGHT, f"{where}: dialog {box.region} off screen"


@pytest.fixture
def app(run_dir) -> EvtuiApp:
    app = EvtuiApp(db_path=default_index_path(run_dir), ingest_paths=[run_dir])
    app.animation_level = "none"
    return app


async def look(app, pilot, where: str) -> None:
    await settle(app, pilot)
    assert_fits(app, where)


async def dialog(app, pilot, key: str, where: str) -> None:
    screen = app.screen
    await pilot.press(key)
    await look(app, pilot, where)
    await pilot.press("escape")
    await settle(app, pilot)
    assert app.screen is screen, f"{where}: escape did not close it"


async def test_the_runs_screen_and_its_dialogs_fit_80x24(app):
    async with app.run_test(size=(WIDTH, HEIGHT)) as pilot:
        await look(app, pilot, "runs")
        for key, where in (("question_mark", "help"), ("f", "failed files"), ("x", "export (runs)"), ("s", "scoring")):
            await dialog(app, pilot, key, where)
        await pilot.press("J")
        await look(app, pilot, "jobs")
        await pilot.press("escape")
        await pilot.press("M")
        await look(app, pilot, "matrix")
        await pilot.press("escape")
        await pilot.press("space", "down", "space", "c")
        await look(app, pilot, "compare")
        await pilot.press("escape")
        await pilot.press("a")
        await look(app, pilot, "samples across runs")
        await pilot.press("enter")
        await look(app, pilot, "a sample across runs")


async def test_a_run_its_samples_and_a_sample_fit_80x24(app):
    async with app.run_test(size=(WIDTH, HEIGHT)) as pilot:
        await settle(app, pilot)
        runs = app.screen
        runs.query_one("#runs-table", BoundedTable).move_cursor(
            row=next(i for i, run in enumerate(runs.runs) if Path(run.path).name == "qa_match.eval")
        )
        await pilot.press("enter")
        await look(app, pilot, "run")
        await dialog(app, pilot, "x", "export (run)")
        await pilot.press("g")
        await look(app, pilot, "groups")
        await pilot.press("escape")
        await pilot.press("d")
        await look(app, pilot, "distribution")
        await pilot.press("escape")
        await settle(app, pilot)
        await pilot.press("enter")
        await look(app, pilot, "samples")
        await dialog(app, pilot, "x", "export (samples)")
        await dialog(app, pilot, "m", "metadata columns")
        await pilot.press("enter")
        await look(app, pilot, "sample")
        for key in ("t", "v", "s", "m", "j"):
            await pilot.press(key)
            await look(app, pilot, f"sample tab {key}")


async def test_scoring_form_labels_stand_apart_from_their_values_at_80x24(app):
    """`instructionsNone`: a parameter's name ran into its value at 80 columns."""
    from textual.widgets import Input, Label

    async with app.run_test(size=(WIDTH, HEIGHT)) as pilot:
        await settle(app, pilot)
        await pilot.press("s")
        await settle(app, pilot)
        app.screen.query_one("#picker-search", Input).focus()
        await pilot.press(*"model_graded_qa", "enter")
        await pilot.pause()
        await pilot.pause()
        labels = list(app.screen.query(".field-name"))
        assert {"instructions", "grade_pattern", "include_history"} <= {str(label.render()).rstrip(" *") for label in labels}
        for label in labels:
            assert isinstance(label, Label)
            name = str(label.render()).strip()
            editor = label.parent.children[1]
            assert label.content_region.width >= len(name), f"label {name!r} cut to {label.content_region.width}"
            assert label.content_region.right < editor.region.x, f"label {name!r} runs into its value"
        assert_fits(app, "scoring form")


def screen_lines(app) -> list[str]:
    """The terminal's text as drawn, one string a row."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


async def test_runs_headlines_drop_whole_parts_rather_than_cut_a_number_at_80x24(app):
    """`0.278 ± 0.`: with intervals on (and off) a headline wider than the room left was cut inside
    a number or bracket. It must show whole: the longest form that fits (no interval, then no
    second metric, then no scorer)."""
    from evtui.app.run_cells import headline_forms

    async with app.run_test(size=(WIDTH, HEIGHT)) as pilot:
        await settle(app, pilot)
        for intervals in (False, True):
            if intervals:
                await pilot.press("i")
                await settle(app, pilot)
            runs = app.screen
            table = runs.query_one("#runs-table", BoundedTable)
            lines = screen_lines(app)
            for row, run in enumerate(runs.runs):
                shown = table.get_row_at(row)[5].plain
                forms = headline_forms(run.headline, intervals=intervals, scales=runs._scales_of(run.id))
                assert shown in forms, f"headline {shown!r} is none of {forms}"
                line = next(line for line in lines if line.lstrip(" ●").startswith(run.task))
                assert shown in line, f"intervals={intervals}: headline {shown!r} cut on screen: {line!r}"
        await pilot.press("x")  # the export writes each headline whole, not as fitted to 80 columns
        await settle(app, pilot)
        view = app.screen.view
        column = view.columns.index("Headline")
        wanted = [headline_forms(run.headline, intervals=True, scales=runs._scales_of(run.id))[0] for run in runs.runs]
        assert [row[column].removesuffix(" computed") for row in view.rows] == wanted


COMPARE_LOGS = Path(__file__).resolve().parents[1] / "data" / "compare"
INSPECT_LOGS = Path(__file__).resolve().parents[1] / "data" / "inspect"


@pytest.mark.parametrize("size", [(80, 24), (160, 45)], ids=["80x24", "160x45"])
@pytest.mark.parametrize("logs", [
    [INSPECT_LOGS / "cancelled.eval", INSPECT_LOGS / "qa_match.eval"],  # two runs, one comparison (match)
    [COMPARE_LOGS / f"pair_{name}.eval" for name in ("alpha", "beta", "gamma")],  # three runs, six
], ids=["one-comparison", "three-runs"])
async def test_the_forest_plot_stays_inside_its_border_from_its_first_draw(tmp_path, monkeypatch, logs, size):
    """The compare forest plot's first frame was drawn for the canvas sizes before its label
    margin grew: the plot ran past its right border and the labels were cut (`match #2−`), in a
    real terminal for a moment. Every frame painted while the screen opens is checked."""
    import shutil

    from textual._compositor import Compositor

    frames: list[list[str]] = []
    paint = Compositor.render_update

    def recording(compositor, *args, **kwargs):  # each frame as the terminal gets it
        update = paint(compositor, *args, **kwargs)
        frames.append([strip.text for strip in compositor.render_strips()])
        return update

    monkeypatch.setattr(Compositor, "render_update", recording)
    run_dir = tmp_path / "logs"
    run_dir.mkdir()
    for log in logs:
        shutil.copy2(log, run_dir / log.name)
    app = EvtuiApp(db_path=default_index_path(run_dir), ingest_paths=[run_dir])
    app.animation_level = "none"
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        for _ in logs:
            await pilot.press("space", "down")
        frames.clear()
        await pilot.press("c")
        await settle(app, pilot)
        labels = {str(row.label) for series in app.screen.query_one("#compare-forest").series for row in series.rows}
    drawn = [frame for frame in frames if any("┫" in line for line in frame)]
    assert drawn, "the forest plot was never drawn"
    for number, frame in enumerate(drawn):
        rows = [line for line in frame if "┫" in line or "┏" in line]
        for line in rows:
            assert "┣" in line or "┓" in line, f"frame {number}: the plot runs past its border: {line!r}"
        shown = {line.split("┫")[0].strip() for line in rows if "┫" in line} - {""}
        shown = {label for label in shown if not label.replace(".", "").lstrip("-").isdigit()}  # not the empty plot's ticks
        assert shown <= labels, f"frame {number}: labels cut: {sorted(shown - labels)}"


async def test_end_and_home_move_the_runs_cursor_rather_than_scroll_sideways(app):
    """At 80 columns the runs table is wider than the screen: the stock DataTable's End scrolled
    to its right edge instead of going to the last run (fixed in BoundedTable; checked here on
    the runs screen, where it matters most)."""
    async with app.run_test(size=(WIDTH, HEIGHT)) as pilot:
        await settle(app, pilot)
        table = app.screen.query_one("#runs-table", BoundedTable)
        assert table.virtual_size.width > table.size.width  # columns past the right edge: End could scroll there
        await pilot.press("end")
        await pilot.pause()
        assert (table.cursor_row, table.scroll_x) == (table.row_count - 1, 0)
        await pilot.press("home")
        await pilot.pause()
        assert (table.cursor_row, table.scroll_x) == (0, 0)
        table.scroll_to(x=table.max_scroll_x, animate=False)  # the user scrolled sideways to the last columns
        await pilot.pause()
        assert table.scroll_x > 0
        await pilot.press("end", "home")
        await pilot.pause()
        assert (table.cursor_row, table.scroll_x) == (0, 0)  # Home: back to the top-left corner
