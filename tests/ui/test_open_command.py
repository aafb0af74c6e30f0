"""`evtui [RUN_DIR] [--db FILE] [--theme NAME] [--demo]`: argument handling and the demo."""

from __future__ import annotations

import argparse
from pathlib import Path

import platformdirs
from conftest import APP_SIZE, settle

from evtui.app.app import EvtuiApp
from evtui.cli import main
from evtui.commands import open as open_command
from evtui.store.location import default_index_path

CHECKOUT_DEMO = Path(__file__).resolve().parents[2] / "demo"


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    open_command.add_arguments(parser)
    return parser.parse_args(argv)


def test_missing_run_dir_is_a_clear_error(tmp_path, capsys):
    assert main([str(tmp_path / "nowhere")]) == 2
    error = capsys.readouterr().err
    assert "nowhere: no such file or directory" in error


def test_db_without_run_dir_must_exist(tmp_path, capsys):
    assert main(["--db", str(tmp_path / "none.db")]) == 2
    assert "no such index file" in capsys.readouterr().err


def test_run_dir_indexes_into_its_own_evtui_folder(run_dir):
    db, paths, label = open_command.resolve_paths(parse(str(run_dir)))
    assert db == default_index_path(run_dir) == run_dir / ".evtui" / "index.db"
    assert paths == [run_dir] and label == str(run_dir)


def test_db_option_overrides_the_index_location(run_dir, tmp_path):
    db, paths, _ = open_command.resolve_paths(parse(str(run_dir), "--db", str(tmp_path / "elsewhere.db")))
    assert db == tmp_path / "elsewhere.db" and paths == [run_dir]


def test_demo_indexes_the_bundled_runs_into_the_user_cache():
    db, paths, label = open_command.resolve_paths(parse("--demo"))
    assert paths == [open_command.demo_dir()] and open_command.demo_dir() == CHECKOUT_DEMO
    assert db.is_relative_to(Path(platformdirs.user_cache_dir("evtui"))) and label == "demo runs"


async def test_demo_opens_with_every_demo_run():
    db, paths, label = open_command.resolve_paths(parse("--demo"))
    app = EvtuiApp(db_path=db, ingest_paths=paths, source_label=label)
    async with app.run_test(size=APP_SIZE) as pilot:
        await settle(app, pilot)
        shown = sorted(Path(run.path).name for run in app.screen.runs)
        assert shown == sorted(path.name for path in CHECKOUT_DEMO.glob("*.eval"))
        assert app.failure_count == 0 and app.screen.sub_title == "demo runs"
    assert not (CHECKOUT_DEMO / ".evtui").exists()  # the checkout stays clean


def test_each_install_keeps_its_own_demo_index(monkeypatch, tmp_path):
    # Two checkouts (say a clone and a working tree) must not list each other's demo runs.
    ours, _, _ = open_command.resolve_paths(parse("--demo"))
    other_demo = tmp_path / "other-checkout" / "demo"
    other_demo.mkdir(parents=True)
    monkeypatch.setattr(open_command, "demo_dir", lambda: other_demo)
    theirs, paths, _ = open_command.resolve_paths(parse("--demo"))
    assert paths == [other_demo] and theirs != ours
