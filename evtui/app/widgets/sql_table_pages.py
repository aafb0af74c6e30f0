"""What a SqlTable has fetched and asked for: its cached pages, the queue of count and page
jobs, and the loop that serves them in the table's fetch thread. No Textual here: the table
owns the thread and turns what the loop reports into messages.

Every reload starts a new generation; jobs and results of an older one are dropped, so a page
of the previous filter or sort never lands in the new table.
"""

from __future__ import annotations

import queue
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evtui.app.widgets.sql_table_parts import PageRequest, PageSource

MAX_CACHED_PAGES = 64


@dataclass(order=True)
class _Job:
    priority: int
    seq: int
    kind: str = field(compare=False)
    generation: int = field(compare=False)
    page: int = field(compare=False, default=0)
    request: PageRequest | None = field(compare=False, default=None)


class PageCache:
    """Pages of `page_size` rows by page number (least recently used dropped past MAX_CACHED_PAGES)."""

    def __init__(self, page_size: int) -> None:
        self.page_size = page_size
        self.generation = 0
        self._pages: OrderedDict[int, list[Any]] = OrderedDict()
        self._pending: set[int] = set()
        self._seq = 0
        self._jobs: queue.PriorityQueue[_Job] = queue.PriorityQueue()

    def reset(self) -> None:
        """Forget rows and requests (they belong to the old query) and ask for the new count."""
        self.generation += 1
        self._pages.clear()
        self._pending.clear()
        self._seq += 1
        self._jobs.put(_Job(0, self._seq, "count", self.generation))

    @property
    def waiting(self) -> bool:
        """A requested page has not arrived yet."""
        return bool(self._pending)

    def has(self, page: int) -> bool:
        return page in self._pages

    def rows(self, page: int) -> list[Any] | None:
        rows = self._pages.get(page)
        if rows is not None:
            self._pages.move_to_end(page)
        return rows

    def request(self, page: int, priority: int, row_count: int | None, sort: str | None, descending: bool) -> None:
        """Queue `page` unless it is cached, already asked for, or past the last row."""
        if page in self._pending or page in self._pages or page < 0:
            return
        if row_count is not None and page * self.page_size >= max(row_count, 1):
            return
        self._pending.add(page)
        before_page, after_page = self._pages.get(page - 1), self._pages.get(page + 1)
        request = PageRequest(
            offset=page * self.page_size,
            limit=self.page_size,
            sort=sort,
            descending=descending,
            after=before_page[-1] if before_page and len(before_page) == self.page_size else None,
            before=after_page[0] if after_page and not before_page else None,
        )
        # Newest first within a priority: after a jump, the pages now on screen matter most.
        self._seq += 1
        self._jobs.put(_Job(priority, -self._seq, "page", self.generation, page, request))

    def store(self, generation: int, page: int, rows: list[Any]) -> bool:
        """Keep a fetched page; False (and nothing kept) when it belongs to an older generation."""
        if generation != self.generation:
            return False
        self._pending.discard(page)
        self._pages[page] = rows
        while len(self._pages) > MAX_CACHED_PAGES:
            self._pages.popitem(last=False)
        return True

    def failed(self, generation: int) -> bool:
        """A fetch of the current generation failed: nothing is pending any more. False when stale."""
        if generation != self.generation:
            return False
        self._pending.clear()
        return True

    def serve(
        self,
        source: PageSource,
        cancelled: Callable[[], bool],
        on_count: Callable[[int, int], None],
        on_page: Callable[[int, int, list[Any]], None],
        on_error: Callable[[int, str], None],
    ) -> None:
        """Run count and page jobs against `source` until `cancelled()`; called in the fetch thread."""
        while not cancelled():
            try:
                job = self._jobs.get(timeout=0.1)
            except queue.Empty:
                continue
            if job.generation != self.generation:
                continue  # a reload made it stale
            try:
                if job.kind == "count":
                    on_count(job.generation, source.count())
                else:
                    assert job.request is not None
                    on_page(job.generation, job.page, source.fetch(job.request))
            except Exception as error:  # shown in the table; the loop keeps serving
                on_error(job.generation, f"{type(error).__name__}: {error}")
