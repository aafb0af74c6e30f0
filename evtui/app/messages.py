"""App-level messages: results of thread workers, posted to the UI that owns the state."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.message import Message


@dataclass
class IngestProgress(Message):
    """Indexing moved on: `done` of `total` files handled; `path` is the latest one."""

    done: int
    total: int
    path: str = ""
    samples: int = 0
    """Samples read so far from `path` (the file being read)."""
    failed: bool = False
    """`path` could not be read (the error comes with IngestFinished)."""

    def can_replace(self, message: Message) -> bool:
        # Only the newest progress matters; coalescing keeps a flood from stalling frames.
        return isinstance(message, IngestProgress)


@dataclass
class IngestFinished(Message):
    """Indexing ended; `failures` lists (path, error) for files that could not be read."""

    files: int
    failures: list[tuple[str, str]]
    error: str | None = None


@dataclass
class IndexChanged(Message):
    """Runs were added or changed in the index; screens showing runs should reload."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, IndexChanged)


@dataclass
class RunsLoaded(Message):
    """The runs screen's rows, fetched in a worker, with the live state of runs still being written."""

    runs: list[Any]
    live: dict[int, Any] = field(default_factory=dict)
    number: int = 0  # which load of the screen sent them (RunsScreen.reload_runs)


@dataclass
class RunLoaded(Message):
    """One run and its results (recorded and computed), fetched in a worker."""

    run: Any
    results: list[Any]
    scorers: list[str] | None = None
    """Scorers with scores in the run (the samples table's columns), when fetched with it."""
    number: int = 0  # which load of the screen sent them (RunScreen.reload_run)


@dataclass
class LoadFailed(Message):
    """A worker could not fetch what a screen asked for."""

    what: str
    error: str


@dataclass
class ScorersLoaded(Message):
    """The scorers with scores in a run (the samples table's score columns)."""

    scorers: list[str]


@dataclass
class FailuresLoaded(Message):
    """(path, error) of every file the index could not read, fetched in a worker."""

    failures: list[tuple[str, str]]
