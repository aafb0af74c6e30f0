"""Helpers for formats whose run is a folder of JSON files (Harbor jobs, Terminal-Bench runs).

Each file is small and written whole by its framework, so it is parsed whole, within a size
bound; a file that is missing, cut off or not JSON comes back as a problem text naming it,
never as an exception, so one bad trial does not stop the run.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from evtui.readers.base import ReaderError
from evtui.readers.limits import mib, open_regular

JSON_FILE_LIMIT = 64 << 20  # bytes: a run folder's per-trial or per-run JSON file
TEXT_TAIL = 8000  # characters of a log (verifier stdout, pane capture) kept with a sample
_READ = os.O_RDONLY | getattr(os, "O_BINARY", 0)  # os.open fds are not inherited (PEP 446)
_FIRST_READ = 1 << 16  # bytes: a trial's result.json is ~4 KB; a longer file pays one fstat more


def load_json(path: str | Path, limit: int = JSON_FILE_LIMIT, *, missing_ok: bool = False) -> tuple[Any, str | None]:
    """(value, None), or (None, "<path>: what is wrong") for a missing, huge or broken file;
    (None, None) for a missing file when `missing_ok` (one open instead of exists + open)."""
    try:
        raw = read_whole(path, limit)
    except FileNotFoundError:
        return None, None if missing_ok else f"{path}: missing"
    except _TooBig as big:
        return None, f"{path}: {big.size} bytes, more than the {mib(limit)} a run folder's JSON file may have"
    except OSError as exc:
        return None, f"{path}: cannot open: {exc.strerror or exc}"
    if not raw.strip():
        return None, f"{path}: empty file (still being written?)"
    try:
        return orjson.loads(raw), None
    except orjson.JSONDecodeError:
        try:
            return json.loads(raw), None  # NaN/Infinity literals, which orjson rejects
        except ValueError as exc:
            cut = "" if raw.rstrip().endswith((b"}", b"]")) else " (it ends mid-document: half-written?)"
            return None, f"{path}: not valid JSON{cut}: {str(exc).splitlines()[0][:120]}"


class _TooBig(Exception):
    def __init__(self, size: int) -> None:
        self.size = size


def read_whole(path: str | Path, limit: int) -> bytes:
    """A small file's bytes with os.open/read (a third of what open() costs: a job has 10k
    trials of several files each); _TooBig beyond `limit` bytes; OSError as open() raises it
    (reading a directory too). A file shorter than the first read is whole after it (a regular
    file gives all it has), so only a bigger one pays an fstat, which refuses it before reading
    when it is over the limit."""
    fd = os.open(path, _READ)
    try:
        raw = os.read(fd, _FIRST_READ)
        if len(raw) < _FIRST_READ:
            return raw
        size = os.fstat(fd).st_size
        if size > limit:
            raise _TooBig(size)
        chunks, read = [raw], len(raw)  # read on to the end: the rest, or what was written meanwhile
        while chunk := os.read(fd, max(size - read + 1, 1 << 16)):
            chunks.append(chunk)
            read += len(chunk)
            if read > limit:
                raise _TooBig(read)
        return b"".join(chunks)
    finally:
        os.close(fd)


def load_object(path: str | Path, what: str, *, missing_ok: bool = False) -> tuple[dict[str, Any] | None, str | None]:
    """Like load_json, for a file that must hold a JSON object (`what` names it in the message)."""
    value, problem = load_json(path, missing_ok=missing_ok)
    if value is None and problem is None:
        return None, None
    if problem is None and not isinstance(value, dict):
        return None, f"{path}: not a {what} (a JSON {type(value).__name__}, not an object)"
    return value, problem


def load_run_file(path: Path, what: str) -> dict[str, Any]:
    """The run's own JSON object; ReaderError naming the file when it cannot be read."""
    value, problem = load_object(path, what)
    if value is None:
        raise ReaderError(str(path), (problem or "unreadable").removeprefix(f"{path}: "))
    return value


def side_file(path: Path, what: str, warnings: list[str]) -> dict[str, Any] | None:
    """An optional JSON object beside a run file: None when absent; a warning when unreadable."""
    if not path.exists():
        return None
    value, problem = load_object(path, what)
    if problem is not None:
        warnings.append(f"{problem}; ignored")
    return value


def text_tail(path: str | Path, limit: int = TEXT_TAIL) -> str | None:
    """The last `limit` characters of a text file, or None when it cannot be read."""
    try:
        fd = os.open(path, _READ)
    except OSError:
        return None
    window = limit * 4  # bytes enough for `limit` characters of UTF-8
    try:
        raw = os.read(fd, window + 1)  # a log within the window (most are) is whole after one read
        if len(raw) > window:  # a longer one: its last `window` bytes, to the end
            os.lseek(fd, -window, os.SEEK_END)
            raw = b"".join(iter(lambda: os.read(fd, 1 << 16), b""))
        data = raw.decode("utf-8", errors="replace")
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) <= limit else "…" + data[-limit:]


def head_of(path: Path, size: int = 8192) -> bytes:
    """The first `size` bytes of a regular file (b"" for anything else: a named pipe never blocks the read)."""
    try:
        with open_regular(path) as f:
            return f.read(size)
    except OSError:
        return b""


def seconds_between(start: Any, end: Any) -> float | None:
    """Seconds from one ISO-8601 time to another; None if either is missing or unreadable.

    Harbor writes job times without a zone and trial times with `Z`; both sides of one
    difference always come from the same writer, so the zone is dropped when only one has it.
    The common case first, in one expression: Harbor jobs hold 10k trials of 5 times each."""
    try:
        return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()  # >= 3.11 reads a Z
    except ValueError:
        return None
    except TypeError:  # a missing time, or one with a zone and one without
        pass
    try:
        first, last = datetime.fromisoformat(start), datetime.fromisoformat(end)
    except (TypeError, ValueError):
        return None
    if (first.tzinfo is None) != (last.tzinfo is None):
        first, last = first.replace(tzinfo=None), last.replace(tzinfo=None)
    return (last - first).total_seconds()


def mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def number(value: Any) -> float | int | None:
    """An int or float as written (bools and everything else: None)."""
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def whole(value: Any) -> int | None:
    found = number(value)
    return None if found is None else int(found)
