"""The workbench on a run directory in a bucket (issue 33): `evtui s3://…` against moto's S3
server on 127.0.0.1 (tests/s3_server.py); nothing else is reached."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("s3fs", reason="the s3 extra (evtui[s3]) is not installed")
pytest.importorskip("moto", reason="the test extra's moto[server] is not installed")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from s3_server import S3Server  # noqa: E402

from conftest import APP_SIZE, settle  # noqa: E402

from evtui.app.app import EvtuiApp  # noqa: E402
from evtui.app.screens.runs import RunsScreen  # noqa: E402
from evtui.app.widgets.bounded_table import BoundedTable  # noqa: E402
from evtui.readers import remote  # noqa: E402
from evtui.sample_view.view import load_sample_view  # noqa: E402
from evtui.store.location import default_index_path  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "data" / "inspect_logical"
URL = "s3://logs/team"


@pytest.fixture
def bucket(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    import s3fs

    with S3Server() as server:
        for name in list(os.environ):
            if name.startswith("AWS_"):
                monkeypatch.delenv(name)
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
        monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
        s3fs.S3FileSystem.clear_instance_cache()
        remote._stores.clear()
        client = server.client
        client.create_bucket(Bucket="logs")
        for path in sorted(DATA.rglob("*")):
            if path.is_file():
                client.upload_file(str(path), "logs", "team/" + path.relative_to(DATA).as_posix())
        yield server
        s3fs.S3FileSystem.clear_instance_cache()
        remote._stores.clear()


async def test_the_runs_screen_lists_a_buckets_logical_runs_and_a_sample_opens_from_it(bucket) -> None:
    db_path = default_index_path(URL)
    app = EvtuiApp(db_path=db_path, ingest_paths=[URL], source_label=URL)
    async with app.run_test(size=APP_SIZE) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, RunsScreen)
        table = app.screen.query_one("#runs-table", BoundedTable)
        rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
        name, status = 2, 3  # Task, Model, Run, Status, … (the runs list's columns)
        assert sorted(row[name] for row in rows if not row[name].endswith(".eval")) == ["unmerged.shards"]
        assert sorted(row[status] for row in rows if row[0] in ("flaky", "steady")) == [
            "success (2 attempts)", "success (3 attempts)"]
        assert len(rows) == 4 and app.failure_count == 0
        run = next(r for r in app.screen.runs if r.path.endswith("unmerged.shards"))
    bucket.faults.requests.clear()
    from evtui.store.schema import connect

    db = connect(db_path)
    try:
        rowid = db.execute("SELECT id FROM samples WHERE run_id = ? AND sample_id = '3'", [run.id]).fetchone()[0]
    finally:
        db.conn.close()
    view = load_sample_view(db_path, rowid)
    assert view.transcript_from_file and view.messages, view.transcript_note  # fetched from the bucket when opened
    assert view.sample.output_text == "Default output from mockllm/model"  # summaries hold none: the file's
    assert any(method == "GET" and "unmerged.shards/1/" in path for method, path, _ in bucket.faults.requests)
