"""A harness's own scores (Harbor's reward, lm-eval's metrics) are named as such in the run's notes,
kept as recorded: not reported as an unknown scorer or a spec evtui failed to parse."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evtui.scoring.engine.reproduction import run_reproduction_notes
from evtui.store.ingest import ingest_paths
from evtui.store.schema import connect

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize(
    ("folder", "task", "note", "not_said"),
    [
        ("harbor/jobs/binary-attempts", "binary-attempts",
         "'reward' is harbor's own score (no evtui scorer has that name): kept as recorded", "unknown scorer"),
        ("lm_eval/evtui__scripted-tiny", "evtui_arith",
         "'exact_match,strict-match' is lm_eval's own score (no evtui scorer has that name): kept as recorded",
         "must be a name or a call"),
    ],
)  # fmt: skip
def test_a_harness_own_score_is_named_as_such(tmp_path: Path, folder: str, task: str, note: str, not_said: str) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(DATA / folder, logs / Path(folder).name)
    db_path = tmp_path / "index.db"
    assert not ingest_paths(db_path, [logs]).failures
    db = connect(db_path)
    (run_id,) = [row[0] for row in db.execute("SELECT id FROM runs WHERE task = ? AND part = ''", (task,))]
    notes = run_reproduction_notes(db, run_id)
    assert note in notes
    assert not any(not_said in text for text in notes)
