"""ijson over JSON that contains NaN / Infinity / -Infinity literals (as Inspect AI writes them).

ijson (every backend) rejects those tokens. `NanTolerantStream` wraps a binary file and rewrites
each such token outside strings into a sentinel string; `restore_specials` maps the sentinels in
parsed values back to floats.
"""

from __future__ import annotations

from typing import Any, BinaryIO

# A NUL can only appear escaped in JSON text, so these strings never occur in a real log.
_SENTINEL_BYTES = {b"NaN": b'"\\u0000evtui:NaN"', b"Infinity": b'"\\u0000evtui:Infinity"',
                   b"-Infinity": b'"\\u0000evtui:-Infinity"'}
_SENTINEL_VALUES = {"\x00evtui:NaN": float("nan"), "\x00evtui:Infinity": float("inf"),
                    "\x00evtui:-Infinity": float("-inf")}
_LONGEST_TOKEN = len(b"-Infinity")


def _unescaped_quotes(segment: bytes) -> int:
    """Number of `"` in a segment that open or close strings (not `\\"` escapes)."""
    without_escaped_backslashes = segment.replace(b"\\\\", b"")
    return without_escaped_backslashes.count(b'"') - without_escaped_backslashes.count(b'\\"')


class NanTolerantStream:
    """A binary reader that replaces bare NaN/Infinity/-Infinity tokens with sentinel strings.

    Whether a token is inside a string is known from the parity of unescaped quotes, counted
    with bytes methods (C speed) so logs without NaN pay almost nothing. Chunks are cut after a
    newline when there is one (a raw newline is never inside a JSON string or token).
    """

    def __init__(self, raw: BinaryIO, chunk_size: int = 1 << 20) -> None:
        self.raw = raw
        self.chunk_size = chunk_size
        self.carry = b""
        self.in_string = False
        self.replaced = 0  # how many tokens were rewritten so far
        self.done = False
        self.ready = b""  # rewritten bytes; those before `offset` were handed out
        self.offset = 0

    def read(self, size: int = -1) -> bytes:
        # ijson's C backend copies at most `size` bytes of what read() returns: never exceed it.
        while self.offset >= len(self.ready) and not self.done:
            self.ready, self.offset = self._next_rewritten(), 0
        end = len(self.ready) if size < 0 else self.offset + size
        out = self.ready[self.offset:end]
        self.offset += len(out)
        return out

    def _next_rewritten(self) -> bytes:
        chunk = self.raw.read(self.chunk_size)
        if not chunk:
            self.done = True
            data, self.carry = self.carry, b""
            return self._rewrite(data)
        data = self.carry + chunk
        cut = data.rfind(b"\n") + 1 or self._safe_cut(data)
        self.carry = data[cut:]
        return self._rewrite(data[:cut])

    @staticmethod
    def _safe_cut(data: bytes) -> int:
        cut = max(0, len(data) - 2 * _LONGEST_TOKEN)
        while cut and data[cut - 1] == 0x5C:  # never split a run of backslashes (escapes)
            cut -= 1
        window_start = max(0, cut - _LONGEST_TOKEN)
        for start, end in _special_tokens(data[window_start:cut + _LONGEST_TOKEN]):
            if window_start + start < cut < window_start + end:
                return window_start + start
        return cut

    def _rewrite(self, segment: bytes) -> bytes:
        tokens = _special_tokens(segment)
        if not tokens:
            self.in_string ^= bool(_unescaped_quotes(segment) & 1)
            return segment
        pieces: list[bytes] = []
        scanned = kept = 0
        for start, end in tokens:
            self.in_string ^= bool(_unescaped_quotes(segment[scanned:start]) & 1)
            scanned = start
            if not self.in_string:
                pieces.append(segment[kept:start])
                pieces.append(_SENTINEL_BYTES[segment[start:end]])
                kept = end
                self.replaced += 1
        self.in_string ^= bool(_unescaped_quotes(segment[scanned:]) & 1)
        pieces.append(segment[kept:])
        return b"".join(pieces)


def _special_tokens(segment: bytes) -> list[tuple[int, int]]:
    """(start, end) of every NaN / Infinity / -Infinity in a segment, strings included.

    bytes.find is a C memchr-style scan; a regex with an optional leading `-` tries every
    position and is ~20x slower on the large segments here.
    """
    tokens = []
    for word in (b"NaN", b"Infinity"):
        at = segment.find(word)
        while at >= 0:
            start = at - 1 if word == b"Infinity" and at and segment[at - 1] == 0x2D else at
            tokens.append((start, at + len(word)))
            at = segment.find(word, at + len(word))
    tokens.sort()
    return tokens


def restore_specials(value: Any) -> Any:
    if isinstance(value, str):
        return _SENTINEL_VALUES.get(value, value) if value.startswith("\x00evtui:") else value
    if isinstance(value, dict):
        return {key: restore_specials(item) for key, item in value.items()}
    if isinstance(value, list):
        return [restore_specials(item) for item in value]
    return value


def restore_fields(item: dict[str, Any], keys: tuple[str, ...]) -> None:
    """Restore sentinels under some keys only: walking a whole large item costs as much as parsing it."""
    for key in keys:
        if key in item:
            item[key] = restore_specials(item[key])
