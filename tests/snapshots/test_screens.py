"""SVG snapshots of the runs and run screens, dark and light, on copies of real Inspect logs.

Everything rendered comes from the logs (no clocks); paths show relative to the run dir.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from evtui.app.app import EvtuiApp
from evtui.store.location import default_index_path

INSPECT_LOGS = Path(__file__).resolve().parents[1] / "data" / "inspect"
SIZE = (150, 36)


@pytest.fixture
def snapshot_app(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("NO_COLOR", raising=False)
    run_dir = tmp_path / "logs"
    run_dir.mkdir()
    for name in ("qa_match.eval", "mc_epochs.eval", "cancelled.eval", "killed.eval", "dict_unscored.eval"):
        shutil.copy2(INSPECT_LOGS / name, run_dir / name)

    def make(theme: str) -> EvtuiApp:
        app = EvtuiApp(
            db_path=default_index_path(run_dir), ingest_paths=[run_dir], theme_name=theme, source_label="logs"
        )
        app.animation_level = "none"
        return app

    return make


# Workers that run for the app's lifetime (the run-directory watcher); waiting for them never ends.
LONG_LIVED_GROUPS = {"watch", "sqltable-fetch"}


async def settled(pilot) -> None:
    """Workers done and their results shown (exclusive workers replaced by newer ones end cancelled)."""
    app = pilot.app
    for _ in range(3):
        finite = [worker for worker in app.workers if worker.group not in LONG_LIVED_GROUPS]
        await asyncio.gather(*(worker.wait() for worker in finite), return_exceptions=True)
        await pilot.pause()


async def open_mc_epochs(pilot) -> None:
    await settled(pilot)
    screen = pilot.app.screen
    index = next(i for i, run in enumerate(screen.runs) if run.path.endswith("mc_epochs.eval"))
    screen.query_one("#runs-table").move_cursor(row=index)
    await pilot.press("enter")
    await settled(pilot)


@pytest.mark.parametrize("theme", ["evtui-dark", "evtui-light"])
def test_runs_screen(snap_compare, snapshot_app, theme):
    """Every run: task, model, coloured status, samples, headline ± stderr, tokens, duration."""
    assert snap_compare(snapshot_app(theme), run_before=settled, terminal_size=SIZE)


@pytest.mark.parametrize("theme", ["evtui-dark", "evtui-light"])
def test_run_screen(snap_compare, snapshot_app, theme):
    """mc_epochs: summary with epochs and reducers, recorded scorer × reducer × metric rows."""
    assert snap_compare(snapshot_app(theme), run_before=open_mc_epochs, terminal_size=SIZE)
