"""What every reader returns, and the one error type readers raise."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from evtui.records import RunRecord, SampleRecord


class ReaderError(Exception):
    """A run file that cannot be read; the message names the file and what is wrong."""

    def __init__(self, path: str, problem: str, *, where: str | None = None) -> None:
        self.path = path
        self.problem = problem
        self.where = where  # a line number or archive member, when known
        location = f" ({where})" if where else ""
        super().__init__(f"{path}{location}: {problem}")


@dataclass
class RunRead:
    """A run read from one file: the run record now, the samples as a lazy stream.

    `samples` may be consumed once; a reader streams it so a huge log never sits in memory.
    `warnings` collects per-line/per-member problems that were skipped (e.g. a bad JSONL line).
    `part` names which run of the file this is when one file holds several (a Harbor job's
    evals key, an lm-eval task read from the results file); '' for a file's one (or main) run.

    `raw_samples`, when a reader offers it, is the same stream before mapping: the parsed sample
    objects with their place in the file (the Inspect readers' `InspectSample`), for a consumer
    that maps them itself (ingest builds rows from them). Both draw on one stream: a consumer
    takes one or the other, and code that replaces `samples` sets `raw_samples` to None.
    """

    run: RunRecord
    samples: Iterator[SampleRecord]
    warnings: list[str] = field(default_factory=list)
    part: str = ""
    raw_samples: Iterator[Any] | None = None
