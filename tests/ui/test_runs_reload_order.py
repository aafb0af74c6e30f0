"""The runs list and a run's screen show the newest read of the index, even when an older read finishes last.

Indexing a directory reloads the list as files finish; a superseded load's thread keeps running
(Textual cannot stop a thread), and its rows, read when one run was indexed, used to replace the
whole list now and then: a new user saw 1 of 11 runs until pressing r.
"""

from __future__ import annotations

import threading

from conftest import APP_SIZE, settle

from evtui.app import store_calls
from evtui.app.app import EvtuiApp
from evtui.store.location import default_index_path


async def test_a_load_that_finishes_after_a_newer_one_does_not_replace_its_rows(run_dir, monkeypatch):
    app = EvtuiApp(db_path=default_index_path(run_dir), ingest_paths=[run_dir])
    async with app.run_test(size=APP_SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        every_run = [run.task for run in screen.runs]
        assert len(every_run) == 3

        real_fetch = store_calls.fetch_runs
        newer_done = threading.Event()
        calls = []

        older = []

        def fetch_runs(db_path, **kwargs):
            calls.append(kwargs)
            runs = real_fetch(db_path, **kwargs)
            if not older:
                older.append(threading.get_ident())
            if threading.get_ident() == older[0]:  # the older load: held until the newer has read, then stale
                newer_done.wait(10)
                return runs[:1]
            return runs

        monkeypatch.setattr(store_calls, "fetch_runs", fetch_runs)
        screen.reload_runs()  # the older load, held in fetch_runs
        await pilot.pause(0.1)
        screen.reload_runs()  # the newer one
        for _ in range(50):
            await pilot.pause(0.05)
            if len(calls) >= 3:  # the newer load read both passes
                break
        newer_done.set()
        await settle(app, pilot)
        assert [run.task for run in screen.runs] == every_run
        assert screen.query_one("#runs-table").row_count == 3


async def test_the_run_screen_keeps_the_newest_loads_results(run_dir, monkeypatch):
    """The same on a run's screen, whose results reload when the index or its scores change."""
    app = EvtuiApp(db_path=default_index_path(run_dir), ingest_paths=[run_dir])
    async with app.run_test(size=APP_SIZE) as pilot:
        await settle(app, pilot)
        row = next(i for i, run in enumerate(app.screen.runs) if run.task == "qa_match")
        app.screen.query_one("#runs-table").move_cursor(row=row)
        await pilot.press("enter")
        await settle(app, pilot)
        screen = app.screen
        results = [(r.scorer, r.metric) for r in screen.results]
        assert ("match", "accuracy") in results

        real_fetch = store_calls.fetch_run
        newer_done = threading.Event()
        older, calls = [], []

        def fetch_run(db_path, run_id):
            calls.append(run_id)
            run, found = real_fetch(db_path, run_id)
            if not older:
                older.append(threading.get_ident())
            if threading.get_ident() == older[0]:  # the older load: held, then without results
                newer_done.wait(10)
                return run, []
            return run, found

        monkeypatch.setattr(store_calls, "fetch_run", fetch_run)
        screen.reload_run()
        await pilot.pause(0.1)
        screen.reload_run()
        for _ in range(50):
            await pilot.pause(0.05)
            if len(calls) >= 2:
                break
        await pilot.pause(0.2)
        newer_done.set()
        await settle(app, pilot)
        assert [(r.scorer, r.metric) for r in screen.results] == results
