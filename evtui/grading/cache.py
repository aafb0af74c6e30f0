"""Cache policy for grader replies: same (base URL, model, request body) → same reply, no request.

The key hashes the normalised base URL, the model and the whole JSON body (messages and every
parameter), so changing a template, a temperature or a grader changes the key. The API key is
never part of the key or of anything stored. `IndexCache` keeps replies in the index's
`grader_cache` table (SQL in evtui/store/grader_cache.py) on its own connection and thread, so
the event loop never waits on SQLite; `MemoryCache` is for notebooks and tests.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol


@dataclass(frozen=True)
class CachedReply:
    """A stored reply with what it cost when it was first fetched."""

    response: dict[str, Any]  # the server's JSON body
    input_tokens: int | None
    output_tokens: int | None
    seconds: float | None


def cache_key(base_url: str, model: str, body: dict[str, Any]) -> str:
    """Hex SHA-256 over the canonical JSON of (base URL, model, request body)."""
    canonical = json.dumps(
        {"base_url": base_url.rstrip("/"), "model": model, "body": body},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class GraderCache(Protocol):
    async def get(self, key: str) -> CachedReply | None: ...

    async def put(
        self, key: str, *, base_url: str, model: str, body: dict[str, Any], reply: CachedReply
    ) -> None: ...

    async def close(self) -> None: ...


class MemoryCache:
    """Replies kept for the life of the object."""

    def __init__(self) -> None:
        self._entries: dict[str, CachedReply] = {}

    async def get(self, key: str) -> CachedReply | None:
        return self._entries.get(key)

    async def put(self, key: str, *, base_url: str, model: str, body: dict[str, Any], reply: CachedReply) -> None:
        self._entries[key] = reply

    async def close(self) -> None:
        return None

    def __len__(self) -> int:
        return len(self._entries)


class IndexCache:
    """Replies in the index's `grader_cache` table, read and written on one dedicated thread."""

    def __init__(self, index_path: str | Path) -> None:
        self.index_path = Path(index_path)
        # One thread owns the connection: SQLite objects must not cross threads.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evtui-grader-cache")
        self._db: Any = None

    def _connection(self) -> Any:
        if self._db is None:
            from evtui.store.schema import connect

            self._db = connect(self.index_path)
        return self._db

    async def _run(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, lambda: fn(*args, **kwargs))

    async def get(self, key: str) -> CachedReply | None:
        from evtui.store import grader_cache

        row = await self._run(lambda: grader_cache.fetch(self._connection(), key))
        if row is None:
            return None
        try:
            response = json.loads(row.response)
        except ValueError:
            return None  # a damaged row is a miss; the fresh reply replaces it
        return CachedReply(response, row.input_tokens, row.output_tokens, row.seconds)

    async def put(self, key: str, *, base_url: str, model: str, body: dict[str, Any], reply: CachedReply) -> None:
        from evtui.store import grader_cache

        await self._run(
            lambda: grader_cache.store(
                self._connection(),
                key=key,
                base_url=base_url,
                model=model,
                request=json.dumps(body, ensure_ascii=False),
                response=json.dumps(reply.response, ensure_ascii=False),
                input_tokens=reply.input_tokens,
                output_tokens=reply.output_tokens,
                seconds=reply.seconds,
            )
        )

    def _close_connection(self) -> None:
        if self._db is not None:
            self._db.conn.close()
            self._db = None

    async def close(self) -> None:
        await self._run(self._close_connection)
        self._executor.shutdown(wait=True)
