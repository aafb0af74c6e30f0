"""`evtui report` (and `evtui score`) carry the run screen's notes with their levels: a Harbor job's own reward kept
as recorded is information; an unseeded bootstrap metric a re-score cannot reproduce is a warning.
`--json` gives them as `notes_with_levels` ({"level", "text"}) beside `notes` (the texts, the key
`evtui score --json` has always had); the text outputs say "warning:" or "note:"."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evtui.cli import main

DATA = Path(__file__).parent / "data"
HARBOR_NOTE = "'reward' is harbor's own score (no evtui scorer has that name): kept as recorded"


def evtui(capsys, *args: str) -> str:
    """What `evtui ARGS` prints (it must exit 0)."""
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    logs = tmp_path_factory.mktemp("logs")
    shutil.copytree(DATA / "harbor" / "jobs" / "binary-attempts", logs / "binary-attempts")
    shutil.copy(DATA / "inspect_versions" / "0.3.9_qa.json", logs / "0.3.9_qa.json")  # recorded bootstrap_std
    shutil.copy(DATA / "inspect_versions" / "0.3.52_mc.eval", logs / "0.3.52_mc.eval")  # a re-score reproduces it
    return logs


def test_json_gives_each_note_its_level(runs: Path, capsys) -> None:
    report = json.loads(evtui(capsys, "report", str(runs), "--json"))
    by_name = {Path(run["path"]).parent.name if run["format"] == "harbor" else Path(run["path"]).name: run for run in report}
    assert by_name["binary-attempts"]["notes_with_levels"] == [{"level": "info", "text": HARBOR_NOTE}]
    assert by_name["binary-attempts"]["notes"] == [HARBOR_NOTE]
    [warning] = by_name["0.3.9_qa.json"]["notes_with_levels"]
    assert warning["level"] == "warning"
    assert "bootstrap_std" in warning["text"] and "not reproducible" in warning["text"]
    assert by_name["0.3.9_qa.json"]["notes"] == [warning["text"]]
    assert by_name["0.3.52_mc.eval"]["notes_with_levels"] == [] and by_name["0.3.52_mc.eval"]["notes"] == []


def test_text_output_says_warning_or_note(runs: Path, capsys) -> None:
    lines = evtui(capsys, "report", str(runs)).splitlines()
    assert f"  note: {HARBOR_NOTE}" in lines
    assert any(line.startswith("  warning: match bootstrap_std is a random resampling") for line in lines)
    assert not any(line.startswith(("  warning: 'reward'", "  note: match")) for line in lines)


def test_score_gives_the_same_levels(runs: Path, tmp_path: Path, capsys) -> None:
    job = json.loads(evtui(capsys, "score", str(runs / "binary-attempts"), str(runs / "0.3.9_qa.json"), "--db", str(tmp_path / "index.db"), "--json"))
    by_name = {Path(run["path"]).parent.name if run["path"].endswith("result.json") else Path(run["path"]).name: run
               for run in job["runs"]}  # fmt: skip
    assert by_name["binary-attempts"]["notes_with_levels"] == [{"level": "info", "text": HARBOR_NOTE}]
    assert by_name["binary-attempts"]["notes"] == [HARBOR_NOTE]
    assert [note["level"] for note in by_name["0.3.9_qa.json"]["notes_with_levels"]] == ["warning"]
    text = evtui(capsys, "score", str(runs / "binary-attempts"), "--db", str(tmp_path / "index.db"))
    assert f"  note: {HARBOR_NOTE}" in text.splitlines()
