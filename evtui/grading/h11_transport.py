"""An httpx transport for grader requests: HTTP/1.1 by h11 over plain asyncio streams.

Why not httpx's own `AsyncHTTPTransport`: its layers (httpcore's pool, locks and tracing,
anyio's cancel scopes and socket wrappers) cost ~1.0 ms of CPU per grader request, and on a
2-core machine the client's CPU is what keeps a 32-wide grading job from the speed of the
server (bench/grading_bench.py). This transport keeps what matters of that stack — h11, the
HTTP/1.1 protocol engine httpcore itself uses, and httpx's Request/Response, decoding and
exception types — and drops the rest: ~0.6 ms per request. It serves one request at a time per
instance (a grading lane), keeping one keep-alive connection per origin.

Failures are raised as httpx's exception types, so callers cannot tell it from httpx's own.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Callable
from typing import Any

import h11
import httpx

# A write waits for the socket only when this much is queued (a grading request is a few KB).
_HIGH_WATER = 64 * 1024
_READ_SIZE = 64 * 1024
_DEFAULT_PORTS = {"http": 80, "https": 443}


class _Connection:
    """One keep-alive HTTP/1.1 connection: h11's state machine and an asyncio stream pair."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.protocol = h11.Connection(h11.CLIENT)
        self.idle_since = time.monotonic()

    @classmethod
    async def open(
        cls, request: httpx.Request, host: str, port: int, ssl_context: ssl.SSLContext | None, timeout: float | None
    ) -> "_Connection":
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(
                    host, port, ssl=ssl_context, server_hostname=host if ssl_context is not None else None
                )
        except TimeoutError:
            raise httpx.ConnectTimeout(f"could not connect to {host}:{port} within {timeout} s", request=request) from None
        except (OSError, ssl.SSLError) as error:
            raise httpx.ConnectError(str(error) or type(error).__name__, request=request) from error
        return cls(reader, writer)

    def reusable(self, keepalive_expiry: float) -> bool:
        """Idle, not too old, and not closed by the server while it waited."""
        return (
            self.protocol.our_state is h11.IDLE
            and time.monotonic() - self.idle_since < keepalive_expiry
            and not self.writer.transport.is_closing()
            # Anything readable on an idle connection is the server's EOF (or junk): not reusable.
            and not self.reader.at_eof()
            and not getattr(self.reader, "_buffer", b"")
        )

    async def exchange(self, request: httpx.Request, timeouts: dict[str, Any]) -> httpx.Response:
        protocol = self.protocol
        try:
            body = await request.aread()
            message = protocol.send(
                h11.Request(method=request.method, target=request.url.raw_path, headers=request.headers.raw)
            )
            message += protocol.send(h11.Data(data=body)) if body else b""
            message += protocol.send(h11.EndOfMessage())
        except h11.LocalProtocolError as error:
            raise httpx.LocalProtocolError(str(error), request=request) from error
        await self._write(request, message, timeouts.get("write"))  # the whole request in one send

        read_timeout = timeouts.get("read")
        response: h11.Response | None = None
        chunks: list[bytes] = []
        while True:
            try:
                event = protocol.next_event()
            except h11.RemoteProtocolError as error:
                raise httpx.RemoteProtocolError(str(error), request=request) from error
            if event is h11.NEED_DATA:
                protocol.receive_data(await self._read(request, read_timeout))
            elif isinstance(event, h11.Response):
                response = event
            elif isinstance(event, h11.Data):
                chunks.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                break
            elif isinstance(event, h11.ConnectionClosed):
                raise httpx.RemoteProtocolError("the server closed the connection without a complete reply", request=request)
            # h11.InformationalResponse (100 Continue and the like): nothing to do

        assert response is not None  # h11 yields a Response before the body's EndOfMessage
        if protocol.our_state is h11.DONE and protocol.their_state is h11.DONE:
            protocol.start_next_cycle()  # keep-alive: the next request reuses this connection
        self.idle_since = time.monotonic()
        return httpx.Response(
            response.status_code,
            headers=response.headers.raw_items(),
            stream=httpx.ByteStream(b"".join(chunks)),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": bytes(response.reason)},
            request=request,
        )

    async def _write(self, request: httpx.Request, data: bytes, timeout: float | None) -> None:
        try:
            self.writer.write(data)
            if self.writer.transport.is_closing():
                raise httpx.WriteError("the connection is closed", request=request)
            if self.writer.transport.get_write_buffer_size() > _HIGH_WATER:
                async with asyncio.timeout(timeout):
                    await self.writer.drain()
        except TimeoutError:
            raise httpx.WriteTimeout(f"could not send the request within {timeout} s", request=request) from None
        except OSError as error:
            raise httpx.WriteError(str(error) or type(error).__name__, request=request) from error

    async def _read(self, request: httpx.Request, timeout: float | None) -> bytes:
        try:
            async with asyncio.timeout(timeout):
                return await self.reader.read(_READ_SIZE)  # b"" at EOF, which h11 turns into an event
        except TimeoutError:
            raise httpx.ReadTimeout(f"no reply within {timeout} s", request=request) from None
        except OSError as error:
            raise httpx.ReadError(str(error) or type(error).__name__, request=request) from error

    def close(self) -> None:
        self.writer.close()


class H11Transport(httpx.AsyncBaseTransport):
    """Sends one request at a time, over one keep-alive connection per origin."""

    def __init__(self, *, ssl_context: Callable[[], ssl.SSLContext], keepalive_expiry: float = 5.0) -> None:
        self._ssl_context = ssl_context  # called at the first https request (loading certificates takes a while)
        self._keepalive_expiry = keepalive_expiry
        self._connections: dict[tuple[str, str, int], _Connection] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.scheme not in _DEFAULT_PORTS:
            raise httpx.UnsupportedProtocol(f"the URL must start with http:// or https:// (got {url})", request=request)
        origin = (url.scheme, url.host, url.port or _DEFAULT_PORTS[url.scheme])
        timeouts = request.extensions.get("timeout", {})
        connection = self._connections.pop(origin, None)
        if connection is not None and not connection.reusable(self._keepalive_expiry):
            connection.close()
            connection = None
        if connection is None:
            context = self._ssl_context() if url.scheme == "https" else None
            connection = await _Connection.open(request, url.host, origin[2], context, timeouts.get("connect"))
        try:
            response = await connection.exchange(request, timeouts)
        except BaseException:  # cancellation too: a connection left mid-exchange is never reused
            connection.close()
            raise
        if connection.protocol.our_state is h11.IDLE:
            self._connections[origin] = connection
        else:
            connection.close()  # the server asked to close (Connection: close, HTTP/1.0)
        return response

    async def aclose(self) -> None:
        connections, self._connections = list(self._connections.values()), {}
        for connection in connections:
            connection.close()
