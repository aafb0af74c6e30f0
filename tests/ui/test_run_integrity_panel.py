"""The run screen's integrity panel (issue 29): samples planned … errored and each scorer's
unscored samples split into the model's failures and the instrument's, the same lines
`evtui report` prints, readable at 160×45 and 80×24 with a hostile score reason."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import settle

from evtui.app.app import EvtuiApp
from evtui.app.screens.run import RunScreen
from evtui.store.location import default_index_path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from hostile_strings import FORBIDDEN_CHARS, hostile  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "inspect"


def _panel_text(screen) -> str:
    widget = screen.query_one("#run-integrity")
    return "\n".join("".join(segment.text for segment in widget.render_line(y)).rstrip() for y in range(widget.size.height))


@pytest.mark.parametrize("size", [(160, 45), (80, 24)])
async def test_the_panel_tells_the_models_failures_from_the_instruments(tmp_path, size):
    log = json.loads((DATA / "dict_unscored.json").read_text())
    reason = hostile("reason", long=False)
    log["samples"][2]["scores"]["strict_yes_no"]["reason"] = reason  # was invalid_response_format
    run_dir = tmp_path / "logs"
    run_dir.mkdir()
    (run_dir / "unscored.json").write_text(json.dumps(log))
    app = EvtuiApp(db_path=default_index_path(run_dir), ingest_paths=[run_dir])
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, RunScreen)
        panel = screen.query_one("#run-integrity")
        assert panel.display
        text = _panel_text(screen)
        assert "samples: 5 planned · 5 attempted · 5 completed · 0 errored" in text
        assert "strict_yes_no: 3 scored · 2 unscored (model: 1 no response; other: 1 reason:" in " ".join(text.split())
        assert "all scored: shape 5" in text
        assert not FORBIDDEN_CHARS & set(text)
        assert "[@click" in text  # the reason's markup shown as text, never run



@pytest.mark.parametrize("fetch, what", [("fetch_run_integrity", "run's integrity"), ("fetch_live_view", "live view")])
async def test_a_part_that_fails_to_load_is_named_and_the_rest_of_the_run_shows(tmp_path, monkeypatch, fetch, what):
    """The integrity panel and the live view load in workers of their own: when one fails (a
    damaged index, say) the status line says which and why, and keeps saying it after the run's
    own load lands (it used to write its line over the failure); the summary and results show."""
    from evtui.app import store_calls
    from evtui.app.widgets.status_line import StatusLine

    def failing(db_path, run_id):
        raise OSError("disk I/O error")

    told: list[str] = []
    set_detail = StatusLine.set_detail
    monkeypatch.setattr(StatusLine, "set_detail", lambda line, detail: (told.append(detail), set_detail(line, detail))[1])
    monkeypatch.setattr(store_calls, fetch, failing)
    run_dir = tmp_path / "logs"
    run_dir.mkdir()
    (run_dir / "unscored.json").write_text((DATA / "dict_unscored.json").read_text())
    app = EvtuiApp(db_path=default_index_path(run_dir), ingest_paths=[run_dir])
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, RunScreen)
        assert any(f"Could not compute the {what}: OSError: disk I/O error" in line for line in told)
        shown = " ".join(str(screen.query_one(StatusLine).render()).split())
        assert f"Could not compute the {what}: OSError: disk I/O error" in shown  # still there once the run shows
        assert "recorded metric" in shown  # after the run's own line
        assert "Samples   5/5 completed" in str(screen.query_one("#run-summary").render())
        assert screen.query_one("#results-table").row_count > 0
        assert screen.query_one("#run-integrity").display is (fetch != "fetch_run_integrity")
