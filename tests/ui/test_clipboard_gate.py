"""Textual's own copy (a mouse selection's ctrl+c, an input's copy) goes through evtui's clipboard
gate too: nothing reaches the terminal's clipboard without EVTUI_CLIPBOARD=osc52, and with it the
selected run text arrives without a working escape sequence (issue 30: copy never unasked, never
with run text unsanitised)."""

from __future__ import annotations

import base64
import re
import shutil
import sys
from pathlib import Path

import pytest
from conftest import settle

from evtui.app.app import EvtuiApp
from evtui.store.location import default_index_path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_hostile_ui import HOSTILE_LOG  # noqa: E402

OSC52 = re.compile(r"\x1b\]52;c;([A-Za-z0-9+/=]*)\x07")


async def copy_the_screen(tmp_path: Path, monkeypatch, allowed: bool) -> tuple[list[str], list[str], EvtuiApp]:
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy2(HOSTILE_LOG, logs / HOSTILE_LOG.name)
    if allowed:
        monkeypatch.setenv("EVTUI_CLIPBOARD", "osc52")
    else:
        monkeypatch.delenv("EVTUI_CLIPBOARD", raising=False)
    app = EvtuiApp(db_path=default_index_path(logs), ingest_paths=[logs])
    written: list[str] = []
    notes: list[str] = []
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(app, pilot)
        monkeypatch.setattr(app._driver, "write", lambda data: written.append(data))
        notify = app.notify
        monkeypatch.setattr(app, "notify", lambda message, *a, **k: (notes.append(str(message)), notify(message, *a, **k)))
        app.screen.text_select_all()
        await pilot.pause()
        selected = app.screen.get_selected_text()
        assert selected, "the runs screen has text to select"
        app.screen.action_copy_text()  # what ctrl+c does with a mouse selection
        await pilot.pause()
    return written, notes, app


@pytest.mark.asyncio
async def test_a_mouse_selection_is_not_copied_unless_allowed(tmp_path, monkeypatch):
    written, notes, _ = await copy_the_screen(tmp_path, monkeypatch, allowed=False)
    assert not any(OSC52.search(data) for data in written)
    assert any("Copying is off: set EVTUI_CLIPBOARD=osc52" in note for note in notes)


@pytest.mark.asyncio
async def test_an_allowed_mouse_selection_is_copied_without_escape_sequences(tmp_path, monkeypatch):
    written, _, _ = await copy_the_screen(tmp_path, monkeypatch, allowed=True)
    payloads = [match.group(1) for data in written for match in OSC52.finditer(data)]
    assert len(payloads) == 1
    text = base64.b64decode(payloads[0]).decode("utf-8")
    assert text.strip()
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", text)
