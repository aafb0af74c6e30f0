"""The review screen worked by keys on a model-graded run written by the real inspect-ai
(review_graded.eval: 24 samples, C/P/I grades, sample 14 unscored): blind mode, undo, skip,
resume after quitting mid-queue, two reviewers then adjudication, an off-scale verdict, a
vanished sample, the start dialog from the run screen, and the layout at 80×24 and 160×45."""

from __future__ import annotations

import pytest

from evtui.app.app import EvtuiApp
from evtui.app.screens.review.queue import ReviewScreen
from evtui.store.review.queues import Selection, create_queue, get_queue, give_verdict, item_at, queue_items
from evtui.store.review.ledger import review_status
from tests.fixture_index import ingested
from tests.ui.conftest import settle

SCORER = "model_graded_qa"
ALICE = "CCIICICP" "CCICCCIC" "CPCICCII"
BOB = "CCIPCCCP" "ICICCCIC" "CPCICICI"


@pytest.fixture
def graded(tmp_path):
    db_path, db, run_id = ingested(tmp_path, "review_graded.eval")
    yield db_path, db, run_id


def app_on(db_path, queue, reviewer):
    return EvtuiApp(db_path=db_path, review=(queue, reviewer))


async def walk(app, pilot, grades, count=None):
    """Give the verdicts `grades[sample id - 1]` by key, one key per sample, from where the screen is."""
    screen = app.screen
    assert isinstance(screen, ReviewScreen)
    given = 0
    while screen.item is not None and (count is None or given < count):
        await pilot.press(grades[int(screen.item.sample_id) - 1].lower())
        await settle(app, pilot)
        given += 1
    return given


def shown(app, part):
    return str(app.screen.query_one(f"#review-{part}").render())


async def test_blind_queue_by_keys_then_resume_after_quitting(graded):
    db_path, db, run_id = graded
    create_queue(db, "blind", run_id, SCORER, Selection(), reviewer="alice", blind=True)
    app = app_on(db_path, "blind", "alice")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, ReviewScreen) and screen.item.position == 0
        assert "hidden (blind)" in shown(app, "grader")
        assert "Question" in shown(app, "question") and "Submission" in shown(app, "submission")
        assert await walk(app, pilot, ALICE, count=10) == 10
        # ← back on a sample given: the grader's grade and reasoning are shown now.
        await pilot.press("left")
        await settle(app, pilot)
        assert screen.item.position == 9 and "Grader:" in shown(app, "grader") and "hidden" not in shown(app, "grader")
    # Quit mid-queue; reopening resumes at the first sample not done (the 11th).
    app = app_on(db_path, "blind", "alice")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        assert app.screen.item.position == 10
        await walk(app, pilot, ALICE)
        assert app.screen.item is None  # past the end
        assert "24/24 done" in shown(app, "progress-line")
    queue = get_queue(db, "blind")
    assert [item.own_value for item in queue_items(db, queue, "alice")] == list(ALICE)


async def test_undo_skip_accept_and_an_off_scale_verdict(graded):
    db_path, db, run_id = graded
    create_queue(db, "q", run_id, SCORER, Selection(), reviewer="alice", blind=False)
    app = app_on(db_path, "q", "alice")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert "Grader: " in shown(app, "grader") and "hidden" not in shown(app, "grader")
        await pilot.press("s")  # skip sample 1
        await settle(app, pilot)
        assert screen.item.position == 1
        await pilot.press("a")  # accept the judge's grade on sample 2
        await settle(app, pilot)
        await pilot.press("7")  # a digit on a C/P/I/N scale: refused, nothing written
        await settle(app, pilot)
        assert "outside the scale" in shown(app, "message") and screen.item.position == 2
        await pilot.press("i")
        await settle(app, pilot)
        await pilot.press("k", "u")  # back to sample 3, undo
        await settle(app, pilot)
        assert "undone" in shown(app, "message")
    queue = get_queue(db, "q")
    items = queue_items(db, queue, "alice")
    assert [item.done for item in items[:4]] == [False, True, False, False]
    status = review_status(db, run_id, SCORER)
    assert status.reviewers == {"alice": 1}


async def test_two_reviewers_then_adjudication_by_keys(graded):
    db_path, db, run_id = graded
    create_queue(db, "double", run_id, SCORER, Selection(), reviewer="alice", blind=True)
    for reviewer, grades in (("alice", ALICE), ("bob", BOB)):
        app = app_on(db_path, "double", reviewer)
        async with app.run_test(size=(140, 40)) as pilot:
            await settle(app, pilot)
            await walk(app, pilot, grades)
    disputed = [i + 1 for i, (a, b) in enumerate(zip(ALICE, BOB)) if a != b]
    assert review_status(db, run_id, SCORER).counts == {"agreed": 24 - len(disputed), "disputed": len(disputed)}
    create_queue(db, "adjudicate", run_id, SCORER, Selection(kind="disputed"), purpose="adjudication")
    app = app_on(db_path, "adjudicate", "carol")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        # Adjudication is not blind here: both reviewers' verdicts are shown.
        assert "alice" in shown(app, "grader") and "bob" in shown(app, "grader")
        assert await walk(app, pilot, ALICE) == len(disputed)
    assert review_status(db, run_id, SCORER).counts == {"agreed": 24 - len(disputed), "adjudicated": len(disputed)}


async def test_a_vanished_sample_is_shown_as_such(graded):
    db_path, db, run_id = graded
    queue = create_queue(db, "gone", run_id, SCORER, Selection(), reviewer="alice")
    db.execute("UPDATE review_queue_items SET sample_id = 'no-such-sample' WHERE queue_id = ? AND position = 0", (queue.id,))
    db.conn.commit()
    app = app_on(db_path, "gone", "alice")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("left")  # resume skips the vanished one; go back to it
        await settle(app, pilot)
        assert app.screen.item.vanished and "no longer in the run" in shown(app, "question")
        await pilot.press("c")
        await settle(app, pilot)
        assert "vanished" in shown(app, "message")


async def test_r_on_the_run_screen_starts_a_random_queue(graded):
    from textual.widgets import Input, Select

    from evtui.app.dialogs.start_review import StartReviewDialog
    from evtui.app.screens.run import RunScreen

    db_path, db, run_id = graded
    app = EvtuiApp(db_path=db_path)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        app.push_screen(RunScreen(run_id))
        await settle(app, pilot)
        await pilot.press("r")
        await settle(app, pilot)
        dialog = app.screen
        assert isinstance(dialog, StartReviewDialog)
        dialog.query_one(Select).value = 9  # a random sample of N
        dialog.query_one("#review-n", Input).value = "5"
        dialog.query_one("#review-seed", Input).value = "3"
        dialog.query_one("#review-name", Input).value = "rand5"
        dialog.query_one("#review-reviewer", Input).value = "dana"
        dialog.query_one("#review-name", Input).focus()
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, ReviewScreen), str(dialog.query_one("#review-error").render())
        assert isinstance(app.screen, ReviewScreen) and app.screen.reviewer == "dana"
        assert app.screen.queue.size == 5 and app.screen.queue.selection["kind"] == "random"
        assert await walk(app, pilot, ALICE) == 5


@pytest.mark.parametrize("size", [(80, 24), (160, 45)])
async def test_layout_keeps_the_parts_a_reviewer_needs(graded, size):
    db_path, db, run_id = graded
    create_queue(db, "layout", run_id, SCORER, Selection(), reviewer="alice", blind=True)
    app = app_on(db_path, "layout", "alice")
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        screen = app.screen
        for part in ("progress-line", "review-bar", "body", "message"):
            widget = screen.query_one(f"#{part}" if part == "review-bar" else f"#review-{part}")
            region = widget.region
            assert region.width > 0 and region.bottom <= size[1], part
        assert screen.query_one("#review-body").region.height >= size[1] // 3
        assert "1/24" in shown(app, "title")


async def test_a_note_goes_with_the_verdict_and_a_later_note_stays_on_the_sample(graded):
    from evtui.store.review.ledger import sample_verdicts

    db_path, db, run_id = graded
    create_queue(db, "notes", run_id, SCORER, Selection(), reviewer="alice")
    app = app_on(db_path, "notes", "alice")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        first = app.screen.item.sample_id
        await pilot.press("slash", *"full name not needed", "enter")
        await settle(app, pilot)
        await pilot.press("c")
        await settle(app, pilot)
        await pilot.press("left", "t", *"second look", "enter")  # on a sample given: recorded again, no move
        await settle(app, pilot)
        assert app.screen.item.sample_id == first
    notes = [(v.value, v.note) for v in sample_verdicts(db, run_id, SCORER, first, 1)]
    assert notes == [("C", "full name not needed"), ("C", "second look")]


async def test_metadata_keys_are_picked_once_for_the_queue(graded):
    from evtui.store.queries.ui import metadata_keys

    db_path, db, run_id = graded
    [key, *_] = metadata_keys(db, run_id)
    create_queue(db, "meta", run_id, SCORER, Selection(), reviewer="alice")
    app = app_on(db_path, "meta", "alice")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        assert not app.screen.query_one("#review-metadata").display
        await pilot.press("m")
        await settle(app, pilot)
        await pilot.press("space", "ctrl+s")
        await settle(app, pilot)
        assert f"{key}:" in shown(app, "metadata") and app.screen.query_one("#review-metadata").display
        await pilot.press("c")
        await settle(app, pilot)
        assert f"{key}:" in shown(app, "metadata")  # the next sample too
    assert get_queue(db, "meta").options["metadata_keys"] == [key]


async def test_the_palette_resumes_a_queue_and_the_cli_option_opens_one(graded, monkeypatch):
    import argparse

    from evtui.commands import open as open_command

    db_path, db, run_id = graded
    queue = create_queue(db, "from-palette", run_id, SCORER, Selection(), reviewer="erin")
    item = item_at(db, queue, 0, "erin")
    give_verdict(db, queue, item, "C", reviewer="erin")
    monkeypatch.setenv("EVTUI_REVIEWER", "erin")
    app = EvtuiApp(db_path=db_path)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"resume review queue: from-palette")
        await pilot.pause(0.4)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, ReviewScreen) and app.screen.reviewer == "erin"
        assert app.screen.item.position == 1  # the first sample erin has not done
    # `evtui --review NAME --reviewer WHO` hands the queue and reviewer to the app.
    made = {}
    monkeypatch.setattr("evtui.app.app.EvtuiApp.run", lambda self: made.setdefault("review", self.review))
    monkeypatch.setattr("evtui.gc_pause.settle_for_interactive_use", lambda: None)  # not the test process's collector
    parser = argparse.ArgumentParser()
    open_command.add_arguments(parser)
    assert open_command.run(parser.parse_args(["--db", str(db_path), "--review", "from-palette", "--reviewer", "fay"])) == 0
    assert made["review"] == ("from-palette", "fay")


async def test_u_right_after_a_verdict_undoes_it_and_goes_back_to_its_sample(graded):
    """Issue 31: `u` after a verdict did nothing (the screen had moved on; ← was needed first)."""
    db_path, db, run_id = graded
    create_queue(db, "q", run_id, SCORER, Selection(), reviewer="alice", blind=False)
    app = app_on(db_path, "q", "alice")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        await pilot.press("c", "i")  # verdicts on samples 1 and 2; the screen shows sample 3
        await settle(app, pilot)
        assert screen.item.position == 2
        await pilot.press("u")
        await settle(app, pilot)
        assert "undone" in shown(app, "message") and screen.item.position == 1 and not screen.item.done
    items = queue_items(db, get_queue(db, "q"), "alice")
    assert [item.done for item in items[:3]] == [True, False, False]


async def test_the_end_of_a_queue_sums_it_up_and_names_the_next_queue(graded):
    """Issue 31: a queue's end said only "End of the queue."."""
    db_path, db, run_id = graded
    first_ids = tuple((str(i), 1) for i in range(1, 13))
    queue = create_queue(db, "first", run_id, SCORER, Selection(kind="samples", samples=first_ids), reviewer="alice", blind=False)
    for position in range(queue.size):  # bob has been through it already: some samples are disputed
        item = item_at(db, queue, position, "bob")
        give_verdict(db, queue, item, BOB[int(item.sample_id) - 1], reviewer="bob")
    create_queue(db, "second", run_id, SCORER, Selection(), reviewer="alice", blind=False)  # samples 13-24 wait
    disputed = sum(a != b for a, b in zip(ALICE[:12], BOB[:12], strict=True))
    app = app_on(db_path, "first", "alice")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await walk(app, pilot, ALICE)
        await settle(app, pilot)
        assert app.screen.item is None
        summary = shown(app, "question")
        agreeing = int(shown(app, "progress-line").split("agrees with the grader ")[1].split("/")[0])
        assert f"You agree with the grader on {agreeing} of 12 samples" in summary
        assert f"{disputed} samples of {SCORER} disputed" in summary
        assert "Next queue with samples for you: second" in summary
