"""The grader key never reaches the index (or its WAL), exports, logs, output, errors or reprs."""

from __future__ import annotations

import logging
import secrets
import shutil
from pathlib import Path

import pytest

from evtui.cli import main
from evtui.grading.cache import MemoryCache
from evtui.grading.client import GraderError, GradingSession
from evtui.grading.settings import GraderSettings, resolve_endpoint
from evtui.store.schema import connect
from tests.grader_server import GraderServer

DATA = Path(__file__).parent / "data"


@pytest.fixture
def secret_key(monkeypatch) -> str:
    key = "sk-test-SECRET-" + secrets.token_hex(16)
    for name in ("EVTUI_GRADER_URL", "EVTUI_GRADER_KEY", "EVTUI_GRADER_MODEL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", key)
    return key


def fragments(key: str) -> list[str]:
    """The key and any 12-character piece of its random part (servers echo keys partially)."""
    tail = key.removeprefix("sk-test-SECRET-")
    return [key] + [tail[i : i + 12] for i in range(0, len(tail) - 11, 4)]


def assert_nowhere(key: str, texts: dict[str, str | bytes]) -> None:
    for where, text in texts.items():
        data = text.encode() if isinstance(text, str) else text
        for piece in fragments(key):
            assert piece.encode() not in data, f"secret (or a piece of it) found in {where}"


def every_file(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_a_scoring_job_leaves_no_trace_of_the_key(tmp_path, secret_key, capsys, caplog):
    caplog.set_level(logging.DEBUG)  # every logger, httpx and httpcore included
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(DATA / "jsonl" / "capitals.jsonl", logs / "capitals.jsonl")
    index = tmp_path / "state" / "index.db"
    # A reader held open through the job keeps the write-ahead log on disk, so it is grepped too.
    watcher = connect(index)
    with GraderServer() as server:
        # servers echo keys in errors: a 400 quoting the whole key, a 401 quoting most of it
        server.inject("400", contains="France", times=1, message=f"Incorrect API key provided: {secret_key}")
        server.inject("status", contains="Japan", times=99, status=401, message=f"key {secret_key[:-4]}**** revoked")
        server.inject("500", contains="Australia", times=2, message=f"upstream rejected Authorization: Bearer {secret_key}")
        argv = [
            "score", str(logs), "--db", str(index), "--scorer", "model_graded_qa()",
            "--grader-url", server.base_url, "--grader-model", "judge", "--json",
        ]
        code = main(argv)
        assert code == 0
        export = tmp_path / "export.jsonl"
        assert main(["export", str(logs), "--db", str(index), "--output", str(export)]) == 0
        csv_export = tmp_path / "export.csv"
        assert main(["export", str(logs), "--db", str(index), "--format", "csv", "--output", str(csv_export)]) == 0
        # the key was sent, as a bearer token, on every request; the throttled sample was retried
        assert server.requests and all(r.headers["Authorization"] == f"Bearer {secret_key}" for r in server.requests)
        assert [r.served for r in server.requests_containing("Australia")] == ["500", "500", "reply"]
    out, err = capsys.readouterr()
    files = every_file(tmp_path)
    watcher.conn.close()
    assert any(name.endswith("index.db") for name in files)
    assert any(name.endswith("index.db-wal") and data for name, data in files.items())
    assert export.read_text().strip()
    assert "rejected the request (HTTP 400)" in export.read_text()  # the failure is reported…
    assert_nowhere(secret_key, {"stdout": out, "stderr": err, "log": caplog.text, **files})  # …without the key
    for record in caplog.records:
        assert_nowhere(secret_key, {f"log record {record.name}": str(record.args) + str(record.msg)})


async def test_errors_and_reprs_do_not_show_the_key(secret_key):
    endpoint = resolve_endpoint(GraderSettings(model="judge"))
    assert endpoint.api_key.reveal() == secret_key
    with GraderServer() as server:
        server.inject("400", message=f"bad key {secret_key}")
        server.inject("500", contains="again", times=99, message=f"upstream saw Bearer {secret_key}")
        settings = GraderSettings(base_url=server.base_url, model="judge", backoff_base=0, max_retries=2)
        session = GradingSession(settings, cache=MemoryCache())
        async with session:
            with pytest.raises(GraderError) as caught:
                await session.chat(session.endpoint(), [{"role": "user", "content": "hi"}])
            with pytest.raises(GraderError) as exhausted:
                await session.chat(session.endpoint(), [{"role": "user", "content": "again"}])
    assert exhausted.value.kind == "exhausted" and "upstream saw Bearer ***" in str(exhausted.value)
    shown = {
        "str(exhausted)": str(exhausted.value), "exhausted metadata": str(exhausted.value.as_metadata()),
        "str(error)": str(caught.value), "repr(error)": repr(caught.value), "error metadata": str(caught.value.as_metadata()),
        "repr(endpoint)": repr(endpoint), "str(endpoint)": str(endpoint), "repr(settings)": repr(session.settings),
        "repr(session)": repr(session),
    }
    assert "bad key ***" in shown["str(error)"]
    assert_nowhere(secret_key, shown)


async def test_credentials_in_the_base_url_are_used_but_never_shown_or_stored(secret_key, tmp_path):
    from evtui.grading.cache import IndexCache
    from evtui.store import grader_cache

    with GraderServer() as server:
        server.inject("400", times=1, message="nope")
        plain_url = server.base_url
        host = plain_url.removeprefix("http://")
        base_url = f"http://judge:pw-{secret_key}@{host}?api-key={secret_key}"
        settings = GraderSettings(base_url=base_url, model="judge", backoff_base=0)
        async with GradingSession(settings, cache=IndexCache(tmp_path / "index.db")) as session:
            endpoint = session.endpoint()
            with pytest.raises(GraderError) as caught:
                await session.chat(endpoint, [{"role": "user", "content": "first"}])
            reply = await session.chat(endpoint, [{"role": "user", "content": "second"}])
        assert server.requests[-1].path == f"/v1/chat/completions?api-key={secret_key}"
    assert "GRADE" in reply.text
    db = connect(tmp_path / "index.db")
    [row] = [grader_cache.fetch(db, key) for (key,) in db.execute("SELECT key FROM grader_cache").fetchall()]
    db.conn.close()
    assert row.base_url == plain_url
    assert_nowhere(secret_key, {"error": str(caught.value), "endpoint": repr(endpoint), **every_file(tmp_path)})
