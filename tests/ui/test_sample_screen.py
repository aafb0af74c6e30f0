"""The sample view on an index of real Inspect logs: explanation, tool calls, next/previous,
epochs, hand review (history grows, the original is kept), clipboard, escape back."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from conftest import APP_SIZE, INSPECT_LOGS, settle
from inspect_ai.log import read_eval_log
from textual.widgets import Input, Static, TabbedContent

from evtui.app.app import EvtuiApp
from evtui.app.dialogs.edit_score import EditScoreDialog
from evtui.app.screens.runs import RunsScreen
from evtui.app.screens.sample import SampleScreen
from evtui.app.widgets.line_view import LineView
from evtui.app.widgets.sample.score_card import ScoreCard
from evtui.store.location import default_index_path
from evtui.store.schema import connect


@pytest.fixture
def logs(tmp_path) -> Path:
    directory = tmp_path / "logs"
    directory.mkdir()
    for name in ("tool_agent.eval", "model_graded.eval", "mc_epochs.eval", "qa_edited.eval"):
        shutil.copy2(INSPECT_LOGS / name, directory / name)
    return directory


def make_app(logs: Path) -> EvtuiApp:
    return EvtuiApp(db_path=default_index_path(logs), ingest_paths=[logs])


def rowid_of(app: EvtuiApp, file_name: str, sample_id: str, epoch: int = 1) -> int:
    db = connect(app.db_path)
    try:
        return db.execute(
            "SELECT s.id FROM samples s JOIN runs r ON r.id = s.run_id WHERE r.path LIKE ? AND s.sample_id = ? "
            "AND s.epoch = ?",
            (f"%{file_name}", sample_id, epoch),
        ).fetchone()[0]
    finally:
        db.conn.close()


async def open_sample(app: EvtuiApp, pilot, file_name: str, sample_id: str, epoch: int = 1) -> SampleScreen:
    await settle(app, pilot)
    screen = SampleScreen(app.db_path, rowid_of(app, file_name, sample_id, epoch))
    await app.push_screen(screen)
    await loaded(app, pilot)
    return screen


async def loaded(app: EvtuiApp, pilot) -> None:
    """Workers done, their messages handled, lazy panes mounted."""
    await settle(app, pilot)
    for _ in range(3):
        await pilot.pause()


def pane_text(screen: SampleScreen, tab: str) -> str:
    """The text of one tab pane: its Statics, or the rows of its line view, top to bottom."""
    pane = screen.query_one(f"TabPane#{tab}")
    views = list(pane.query(LineView))
    if views:
        return "\n".join(view.row_text(i) for view in views for i in range(view.row_count))
    return "\n".join(str(static.render()) for static in pane.query(Static))


def tree_text(screen: SampleScreen) -> str:
    """Every line of the Events tab's tree, its spans all opened."""
    from textual.widgets import Tree

    from evtui.app.widgets.sample.event_tree import EventTree

    screen.query_one(EventTree).open_all()
    tree = screen.query_one("TabPane#events").query_one(Tree)
    lines = []

    def walk(node) -> None:
        for child in node.children:
            lines.append(str(child.label))
            walk(child)

    walk(tree.root)
    return "\n".join(lines)


def heading(screen: SampleScreen) -> str:
    return str(screen.query_one("#sample-heading", Static).render())


async def test_model_graded_sample_shows_input_output_and_the_graders_explanation(logs):
    app = make_app(logs)
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_sample(app, pilot, "model_graded.eval", "5")
        sample = next(s for s in read_eval_log(str(logs / "model_graded.eval")).samples if s.id == 5)
        overview = pane_text(screen, "overview")
        assert sample.input in overview and sample.target in overview
        assert sample.output.completion in overview

        await pilot.press("s")
        await loaded(app, pilot)
        assert screen.query_one(TabbedContent).active == "scores"
        scores = pane_text(screen, "scores")
        explanation = sample.scores["model_graded_qa"].explanation
        assert explanation.splitlines()[-1] in scores and explanation.splitlines()[0] in scores
        assert "recorded in the log" in scores
        assert "You are assessing a submitted answer" in scores  # the grader's prompt, from metadata


async def test_transcript_shows_tool_calls_with_arguments_and_tool_errors(logs):
    app = make_app(logs)
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_sample(app, pilot, "tool_agent.eval", "3")
        await pilot.press("t")
        await loaded(app, pilot)
        transcript = pane_text(screen, "transcript")
        assert '→ call lookup {"city": "Atlantis"}' in transcript
        assert "#3 tool · lookup" in transcript
        assert "✗ error: No such city: Atlantis" in transcript
        assert "Atlantis does not exist, so unknown." in transcript

        await pilot.press("v")
        await loaded(app, pilot)
        events = tree_text(screen)  # the events tree (issue 30), every span opened
        assert events.count("model call · mockllm/model") == 2
        assert 'tool call · lookup({"city": "Atlantis"})' in events
        assert "No such city: Atlantis" in events  # the tool call's error, on its line


async def test_a_crashed_sample_shows_its_error_traceback_and_the_failed_call(logs):
    app = make_app(logs)
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_sample(app, pilot, "tool_agent.eval", "4")
        assert "✗ error" in heading(screen)
        overview = pane_text(screen, "overview")
        assert "RuntimeError('lookup service unavailable')" in overview
        assert "Traceback" in overview
        await pilot.press("t")
        await loaded(app, pilot)
        assert "the tool call failed; no result was recorded" in pane_text(screen, "transcript")


async def test_next_and_previous_walk_the_samples_without_going_back(logs):
    app = make_app(logs)
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_sample(app, pilot, "tool_agent.eval", "1")
        assert heading(screen).startswith("sample 1 ")
        for key, expected in (("n", "2"), ("right_square_bracket", "3"), ("p", "2"), ("left_square_bracket", "1")):
            await pilot.press(key)
            await loaded(app, pilot)
            assert heading(screen).startswith(f"sample {expected} "), key
            assert app.screen is screen
        await pilot.press("p")  # already first: stays, says so
        await loaded(app, pilot)
        assert heading(screen).startswith("sample 1 ")


async def test_epochs_sit_side_by_side_and_a_key_switches_epoch(logs):
    app = make_app(logs)
    async with app.run_test(size=APP_SIZE) as pilot:
        log = read_eval_log(str(logs / "mc_epochs.eval"))
        first_id = str(log.samples[0].id)
        screen = await open_sample(app, pilot, "mc_epochs.eval", first_id)
        epochs = log.eval.config.epochs
        assert f"epoch 1 of {epochs}" in heading(screen)
        table = screen.query_one("#epoch-table")
        assert table.row_count == epochs
        scorer = next(iter(log.samples[0].scores))
        for row_index in range(epochs):
            sample = next(s for s in log.samples if str(s.id) == first_id and s.epoch == row_index + 1)
            assert str(table.get_row_at(row_index)[2]) == str(sample.scores[scorer].value)

        await pilot.press("greater_than_sign")
        await loaded(app, pilot)
        assert f"epoch 2 of {epochs}" in heading(screen)
        assert screen.view.sample.sample_id == first_id
        await pilot.press("less_than_sign")
        await loaded(app, pilot)
        assert f"epoch 1 of {epochs}" in heading(screen)


async def test_editing_a_score_keeps_the_original_and_the_history_grows(logs, monkeypatch):
    monkeypatch.setenv("EVTUI_REVIEWER", "reviewer")
    app = make_app(logs)
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_sample(app, pilot, "qa_edited.eval", "8")
        await pilot.press("s")
        await loaded(app, pilot)
        cards = list(screen.query(ScoreCard))
        edited = next(card for card in cards if card.view.score.edits)
        recorded = edited.view.score
        edited.focus()
        await pilot.press("e")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, EditScoreDialog)
        assert dialog.query_one("#edit-author", Input).value == "reviewer"

        await pilot.press("X")
        await pilot.pause()
        assert "is not C, I, P, N or a number" in str(dialog.query_one("#edit-value-hint", Static).render())
        await pilot.press("backspace", "c", "enter", *"Kyoto counts", "enter", "enter")
        await loaded(app, pilot)
        assert app.screen is screen

        human = next(c.view for c in screen.query(ScoreCard) if c.view.origin == "human")
        assert human.effective and human.score.value == "C" and human.score.scorer == recorded.scorer
        assert [(e.value, e.author, e.edit_reason) for e in human.score.edits] == [
            (recorded.value, None, None),
            ("C", "reviewer", "Kyoto counts"),
        ]
        text = pane_text(screen, "scores")
        assert "History (2 entries)" in text and "reviewer" in text and "“Kyoto counts”" in text
        assert isinstance(app.focused, ScoreCard) and app.focused.view.origin == "human"

        # The index row: a human score that counts, the recorded score and its history untouched.
        db = connect(app.db_path)
        rows = db.execute(
            "SELECT source, value FROM scores WHERE sample_rowid = ? AND scorer = ? ORDER BY source",
            (screen.view.sample.rowid, recorded.scorer),
        ).fetchall()
        assert rows == [("human", '"C"'), ("log", f'"{recorded.value}"')]
        assert db.execute("SELECT count(*) FROM score_edits WHERE score_id = ?", (recorded.id,)).fetchone()[0] == len(
            recorded.edits
        )
        db.conn.close()

        # A second review appends to the same history.
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("0", ".", "5", "enter", *"half", "enter", "enter")
        await loaded(app, pilot)
        human = next(c.view for c in screen.query(ScoreCard) if c.view.origin == "human")
        assert [e.value for e in human.score.edits] == [recorded.value, "C", 0.5]
        assert "History (3 entries)" in pane_text(screen, "scores")


async def test_escape_cancels_the_dialog_then_returns_to_the_previous_screen(logs):
    app = make_app(logs)
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_sample(app, pilot, "model_graded.eval", "2")
        await pilot.press("e")  # one scorer: its score is edited straight away
        await pilot.pause()
        assert isinstance(app.screen, EditScoreDialog)
        await pilot.press("escape")
        await loaded(app, pilot)
        assert app.screen is screen
        assert all(card.view.origin != "human" for card in screen.query(ScoreCard))
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)


async def test_the_edit_dialog_footer_shows_its_own_keys_not_the_sample_screens(logs):
    """A dialog over a screen lists the keys that work in it (Esc Cancel), not the dimmed screen's
    below it (e Edit score, n Next), which do nothing while the dialog is open."""
    from textual.widgets._footer import FooterKey

    app = make_app(logs)
    async with app.run_test(size=APP_SIZE) as pilot:
        await open_sample(app, pilot, "model_graded.eval", "2")
        await pilot.press("e")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, EditScoreDialog)
        keys = [str(key.description) for key in dialog.query(FooterKey) if key.display]
        assert "Cancel" in keys
        assert "Edit score" not in keys and "Next" not in keys


async def test_copy_the_sample_id_and_the_explanation(logs, monkeypatch):
    monkeypatch.setenv("EVTUI_CLIPBOARD", "osc52")  # copying is off unless the user allows it
    app = make_app(logs)
    copied: list[str] = []
    monkeypatch.setattr(app, "copy_to_clipboard", copied.append)
    async with app.run_test(size=APP_SIZE) as pilot:
        await open_sample(app, pilot, "model_graded.eval", "2")
        await pilot.press("y", "c")
        assert copied == ["2", "The answer is wrong.\nGRADE: I"]


async def test_a_missing_run_file_still_shows_the_indexed_transcript_and_says_so(logs):
    app = make_app(logs)
    async with app.run_test(size=APP_SIZE) as pilot:
        await settle(app, pilot)
        (logs / "tool_agent.eval").unlink()
        screen = await open_sample(app, pilot, "tool_agent.eval", "1")
        assert "transcript from the index" in heading(screen)
        await pilot.press("t")
        await loaded(app, pilot)
        transcript = pane_text(screen, "transcript")
        assert "the run file is missing" in transcript
        assert "→ call add" in transcript and "The sum is 42." in transcript


async def test_enter_on_a_samples_row_opens_it_and_next_follows_the_tables_sort(logs):
    from evtui.app.screens.samples import SamplesScreen
    from evtui.app.widgets.sql_table.table import SqlTable

    app = make_app(logs)
    async with app.run_test(size=APP_SIZE) as pilot:
        await settle(app, pilot)
        run_id = connect(app.db_path).execute("SELECT id FROM runs WHERE path LIKE '%tool_agent.eval'").fetchone()[0]
        await app.push_screen(SamplesScreen(run_id, title="tool_agent"))
        await loaded(app, pilot)
        table = app.screen.query_one(SqlTable)
        table.set_sort("id", descending=True)
        await loaded(app, pilot)
        assert table.row_at(0).row.sample_id == "6"
        await pilot.press("enter")
        await loaded(app, pilot)
        screen = app.screen
        assert isinstance(screen, SampleScreen)
        assert heading(screen).startswith("sample 6 ")
        await pilot.press("n")  # descending: the next row is sample 5
        await loaded(app, pilot)
        assert heading(screen).startswith("sample 5 ")
        await pilot.press("escape")
        assert isinstance(app.screen, SamplesScreen)


async def test_next_and_previous_walk_only_the_filtered_list(logs):
    from evtui.app.screens.samples import SamplesScreen
    from evtui.app.widgets.sql_table.table import SqlTable

    app = make_app(logs)
    async with app.run_test(size=APP_SIZE) as pilot:
        await settle(app, pilot)
        run_id = connect(app.db_path).execute("SELECT id FROM runs WHERE path LIKE '%mc_epochs.eval'").fetchone()[0]
        await app.push_screen(SamplesScreen(run_id, scorer="choice", title="mc_epochs", filter='choice == "I"'))
        await loaded(app, pilot)
        table = app.screen.query_one(SqlTable)
        listed = [table.row_at(i).row.rowid for i in range(table.row_count)]
        assert 2 < len(listed) < 18 and listed != list(range(listed[0], listed[0] + len(listed)))  # gaps: filtered
        await pilot.press("enter")
        await loaded(app, pilot)
        screen = app.screen
        walked = [screen.view.sample.rowid]
        for _ in range(len(listed)):  # one press past the end stays on the last
            await pilot.press("n")
            await loaded(app, pilot)
            walked.append(screen.view.sample.rowid)
        assert walked == listed + [listed[-1]]
        await pilot.press("p")
        await loaded(app, pilot)
        assert screen.view.sample.rowid == listed[-2]


async def test_a_review_shows_in_the_samples_list_on_the_way_back(logs):
    from evtui.app.screens.samples import SamplesScreen
    from evtui.app.widgets.sql_table.table import SqlTable

    app = make_app(logs)
    async with app.run_test(size=APP_SIZE) as pilot:
        await settle(app, pilot)
        run_id = connect(app.db_path).execute("SELECT id FROM runs WHERE path LIKE '%model_graded.eval'").fetchone()[0]
        await app.push_screen(SamplesScreen(run_id, title="model_graded"))
        await loaded(app, pilot)
        table = app.screen.query_one(SqlTable)
        assert table.row_at(1).row.scores["model_graded_qa"].value == "I"
        await review_as_correct(app, pilot, table, 1)
        await pilot.press("escape")
        await loaded(app, pilot)
        assert app.screen.query_one(SqlTable).row_at(1).row.scores["model_graded_qa"].value == "C"


async def review_as_correct(app: EvtuiApp, pilot, table, row: int) -> None:
    """Open the samples table's `row` and review its first score as C, with a reason."""
    table.cursor_row = row
    await pilot.press("enter")
    await loaded(app, pilot)
    await pilot.press("e")
    await pilot.pause()
    await pilot.press("c", "enter", *"plants do absorb oxygen", "enter", "enter")
    await loaded(app, pilot)


async def test_the_run_screen_shows_its_metrics_with_the_reviews_in_place(logs):
    from inspect_ai.scorer import SampleScore as ISampleScore
    from inspect_ai.scorer import Score as IScore
    from inspect_ai.scorer import accuracy as iaccuracy
    from textual.widgets import DataTable

    from evtui.app.screens.run import RunScreen
    from evtui.app.widgets.status_line import StatusLine

    app = make_app(logs)
    async with app.run_test(size=APP_SIZE) as pilot:
        await settle(app, pilot)
        run_id = connect(app.db_path).execute("SELECT id FROM runs WHERE path LIKE '%model_graded.eval'").fetchone()[0]
        await app.push_screen(RunScreen(run_id))
        await loaded(app, pilot)
        run_screen = app.screen
        before = [(r.metric, r.value, r.reviews) for r in run_screen.results]
        assert before and all(reviews == 0 for *_, reviews in before)
        await pilot.press("enter")  # the samples behind `model_graded_qa accuracy`
        await loaded(app, pilot)
        from evtui.app.widgets.sql_table.table import SqlTable

        await review_as_correct(app, pilot, app.screen.query_one(SqlTable), 1)  # an `I`
        await pilot.press("escape", "escape")
        await loaded(app, pilot)
        assert app.screen is run_screen

        reviewed = [r for r in run_screen.results if r.reviews]
        assert [(r.metric, r.reviews, r.job_id) for r in reviewed] == [("accuracy", 1, 0), ("stderr", 1, 0)]
        db = connect(app.db_path)
        effective = [json.loads(v) for (v,) in db.execute(
            "SELECT (SELECT value FROM scores sc WHERE sc.sample_rowid = s.id AND sc.scorer = 'model_graded_qa' "
            "ORDER BY sc.source, sc.job_id DESC LIMIT 1) FROM samples s WHERE s.run_id = ?", (run_id,))]  # fmt: skip
        db.conn.close()
        scored = [v for v in effective if not (isinstance(v, float) and math.isnan(v))]  # NaN: unscored, as in Inspect
        scores = [ISampleScore(score=IScore(value=v), sample_id=i) for i, v in enumerate(scored)]
        assert reviewed[0].value == iaccuracy()(scores) > dict((m, v) for m, v, _ in before)["accuracy"]
        table = run_screen.query_one("#results-table", DataTable)
        sources = [str(table.get_row_at(i)[-1]) for i in range(table.row_count)]
        assert sources == ["recorded", "recorded", "recorded + 1 review", "recorded + 1 review"]
        assert "2 with hand reviews in place" in str(run_screen.query_one(StatusLine).render())

        # g and d on a reviewed row show the reviewed scores too.
        from evtui.app.screens.distribution import DistributionScreen
        from evtui.app.screens.groups import GroupsScreen

        table.move_cursor(row=2)
        await pilot.press("g")
        await loaded(app, pilot)
        assert isinstance(app.screen, GroupsScreen) and app.screen.reviewed and app.screen.sub_title.endswith("recorded + reviews")
        await pilot.press("escape")
        await loaded(app, pilot)
        await pilot.press("d")
        await loaded(app, pilot)
        assert isinstance(app.screen, DistributionScreen) and app.screen.reviewed
        assert {b.label: b.count for b in app.screen.distribution.buckets}["C"] == 4  # 3 recorded + the review


@pytest.mark.parametrize(
    "text",
    [
        "The quick brown fox jumps over the lazy dog. " * 20,
        "一二三四五六七八九十 漢字かな交じり文 " * 15,
        "x" * 95 + " tail",
        "line one\n\nline three\twith a tab",
    ],
)
def test_wrapped_rows_fit_the_width_and_keep_every_word(text):
    from rich.cells import cell_len

    from evtui.app.widgets.line_view import wrap_text

    rows = wrap_text(text, 30)
    assert all(cell_len(row) <= 30 for row in rows)
    assert "".join("".join(rows).split()) == "".join(text.split())  # nothing lost but the break spaces
    words = set(text.split())
    if all(cell_len(word) <= 30 for word in words):  # only a word wider than a row is ever cut
        assert all(word in words for row in rows for word in row.split())


def test_control_characters_never_reach_the_terminal():
    from evtui.app.widgets.line_view import wrap_text

    assert wrap_text("red \x1b[31mtext\x07 done\r\n", 80) == ["red ␛[31mtext␇ done", ""]  # control pictures (issue 12)


def test_long_texts_are_cut_with_a_count_and_escapes_are_defused():
    from evtui.app.widgets.line_view import clipped

    assert clipped("abc", 10) == "abc"
    assert clipped("x" * 12_345, 10) == "x" * 10 + "\n… 12,335 more characters not shown here"
    assert "\x1b" not in clipped("\x1b]52;c;evil\x07", 100)


def test_score_metadata_reads_as_an_outline_with_real_line_breaks():
    from evtui.app.widgets.sample.score_card import outline

    grading = {"grading": [{"content": "Task:\nWho wrote Hamlet?", "role": "user"}, {"content": "GRADE: C", "role": "assistant"}]}
    assert outline(grading) == (
        "grading:\n  - content:\n      Task:\n      Who wrote Hamlet?\n    role: user\n"
        "  - content: GRADE: C\n    role: assistant"
    )
    assert outline({"n": 1, "none": None, "flag": True, "empty": []}) == "n: 1\nnone: null\nflag: true\nempty: []"


async def test_a_direct_edit_is_authored_by_the_apps_reviewer(logs, monkeypatch):
    """Issue 31: `e` offered "unknown" (no $USER in a served session) instead of `--reviewer`."""
    monkeypatch.delenv("USER", raising=False)
    monkeypatch.delenv("EVTUI_REVIEWER", raising=False)
    app = EvtuiApp(db_path=default_index_path(logs), ingest_paths=[logs], reviewer="ada")
    async with app.run_test(size=APP_SIZE) as pilot:
        await open_sample(app, pilot, "model_graded.eval", "2")
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, EditScoreDialog)
        assert app.screen.query_one("#edit-author", Input).value == "ada"
