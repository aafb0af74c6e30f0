"""What a SqlTable has fetched and asked for: its cached pages, the queue of page jobs, the
row count as far as it is known, and the loops that serve pages and counts. No Textual here:
the table owns the two threads and turns what the loops report into messages.

Pages and the count run in separate threads, each with its own source (SQLite connections stay
in the thread that made them): a filtered count over a million rows can take a second while a
page takes milliseconds, so rows show first and the count follows. Until it does, the table
sizes itself from the pages it has (`rows_after_page`). The count starts once a first page is
in: a short one is the count, and a filter matching few rows then scans the run once, not twice
at the same time.

Every reload starts a new generation; jobs and results of an older one are dropped, so a page
or count of the previous filter or sort never lands in the new table, and a count still running
for an old generation is interrupted when the source can be.

A page continues by key from a neighbouring page when one is known; which one is decided when
the page is fetched, not when it was asked for: pages asked for together (a page-down past two
pages, a prefetch queued behind the page it follows) each continue from the one fetched just
before, instead of walking every key from the start to their offset.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from evtui.app.widgets.sql_table.parts import PageRequest, PageSource

MAX_CACHED_PAGES = 64
FIRST_PAGE_WAIT_S = 2.0  # the count starts anyway if no page of its query has come by then


@dataclass(order=True)
class _Job:
    priority: int
    seq: int
    generation: int = field(compare=False)
    page: int = field(compare=False, default=0)
    request: PageRequest | None = field(compare=False, default=None)
    deferred: bool = field(compare=False, default=False)  # put back once to follow its neighbour


class PageCache:
    """Pages of `page_size` rows by page number (least recently used dropped past MAX_CACHED_PAGES)."""

    def __init__(self, page_size: int) -> None:
        self.page_size = page_size
        self.generation = 0
        self.total: int | None = None
        """The exact row count of the current generation; None while it is being counted."""
        self._pages: OrderedDict[int, list[Any]] = OrderedDict()
        self._pending: set[int] = set()
        self._seq = 0
        self._jobs: queue.PriorityQueue[_Job] = queue.PriorityQueue()
        self._counts: queue.Queue[int] = queue.Queue()  # generations to count
        self._uncounted = -1  # a generation whose short first page made its count unneeded
        self._paged = -1  # the latest generation a page (or a failed fetch) has come for
        self._page_came = threading.Event()
        self._reach = 0  # rows the pages show to exist, plus one past a full page (there may be more)
        self._end: int | None = None  # where a short page says the rows end
        self._count_lock = threading.Lock()
        self._counting: tuple[int, PageSource] | None = None  # the generation being counted, and its source

    def reset(self) -> None:
        """Forget rows, requests and the count (they belong to the old query); ask for the new count
        and stop a count of the old query that is still running (called in the UI thread)."""
        self.generation += 1
        self._pages.clear()
        self._pending.clear()
        self.total, self._reach, self._end = None, 0, None
        self._counts.put(self.generation)
        self._interrupt_stale_count()

    def stop(self) -> None:
        """The table is going: results still to come are stale, and a running count stops if it can."""
        self.generation += 1
        self._interrupt_stale_count()

    def _interrupt_stale_count(self) -> None:
        with self._count_lock:  # held while the count thread swaps what it counts, so the source is still counting
            if self._counting is not None and self._counting[0] != self.generation:
                self._interrupt_counting()

    def _interrupt_counting(self) -> None:
        """Stop the running count if its source can be interrupted (call with _count_lock held)."""
        assert self._counting is not None
        interrupt = getattr(self._counting[1], "interrupt", None)
        if interrupt is not None:
            interrupt()

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
            total=self.total,
        )
        # Newest first within a priority: after a jump, the pages now on screen matter most.
        self._seq += 1
        self._jobs.put(_Job(priority, -self._seq, self.generation, page, request))

    def store(self, generation: int, page: int, rows: list[Any]) -> bool:
        """Keep a fetched page; False (and nothing kept) when it belongs to an older generation."""
        if generation != self.generation:
            return False
        self._pending.discard(page)
        self._pages[page] = rows
        while len(self._pages) > MAX_CACHED_PAGES:
            self._pages.popitem(last=False)
        if page == 0 and len(rows) < self.page_size:
            self._drop_count(generation)
        self._mark_paged(generation)  # last: the count thread then sees whether it is still needed
        return True

    def _drop_count(self, generation: int) -> None:
        """A short first page is the count: stop counting (a filter matching few rows scans the
        whole run for its first page, and the count would be a second scan at the same time)."""
        with self._count_lock:
            self._uncounted = generation
            if self._counting is not None and self._counting[0] == generation:
                self._interrupt_counting()

    def rows_after_page(self, page: int, size: int, shown: int | None) -> int:
        """While counting: how many rows the table should show now that `page` came with `size` rows.

        A full page means there may be more, so one row past it (shown loading) lets the next page
        be asked for; a short page says where the rows end. `shown` (what the table showed before,
        e.g. the previous query's count after a reload) is kept while nothing contradicts it, so a
        reload that changes nothing does not shrink the scroll range. A short first page is the
        exact count: `total` is set and the count to come only confirms it.
        """
        if size >= self.page_size:
            self._reach = max(self._reach, (page + 1) * self.page_size + 1)
        else:
            end = page * self.page_size + size
            self._end = end if self._end is None else min(self._end, end)
        rows = max(shown or 0, self._reach)
        if self._end is not None:
            rows = min(rows, self._end)
        if page == 0 and size < self.page_size:
            self.total = rows = size
        return rows

    def counted(self, generation: int, count: int) -> bool:
        """The count of `generation` arrived; True when it is news (current, and not already known)."""
        if generation != self.generation or count == self.total:
            return False
        self.total = count
        return True

    def failed(self, generation: int) -> bool:
        """A fetch of the current generation failed: nothing is pending any more. False when stale."""
        if generation != self.generation:
            return False
        self._mark_paged(generation)
        self._pending.clear()
        return True

    def _mark_paged(self, generation: int) -> None:
        self._paged = generation
        self._page_came.set()

    def _wait_for_a_page(self, generation: int, cancelled: Callable[[], bool]) -> None:
        deadline = time.monotonic() + FIRST_PAGE_WAIT_S
        while self._paged < generation and generation == self.generation and not cancelled():
            if time.monotonic() >= deadline:
                return
            self._page_came.wait(0.05)
            self._page_came.clear()

    def serve(
        self,
        source: PageSource,
        cancelled: Callable[[], bool],
        on_page: Callable[[int, int, list[Any]], None],
        on_error: Callable[[int, str], None],
    ) -> None:
        """Run page jobs against `source` until `cancelled()`; called in the fetch thread."""
        fetched: OrderedDict[int, list[Any]] = OrderedDict()  # this generation's pages fetched here, by number
        fetched_generation = -1
        while not cancelled():
            try:
                job = self._jobs.get(timeout=0.1)
            except queue.Empty:
                continue
            if job.generation != self.generation:
                continue  # a reload made it stale
            if job.generation != fetched_generation:
                fetched.clear()
                fetched_generation = job.generation
            assert job.request is not None
            request = self._anchored(job.request, job.page, fetched)
            if request.after is None and request.before is None and job.page > 0 and not job.deferred \
                    and job.page - 1 in self._pending and job.page - 1 not in fetched:
                # The page before is on its way: fetched first, this one continues from its last row.
                job.deferred, job.seq = True, 0  # last of its priority (the others' are negative)
                self._jobs.put(job)
                continue
            try:
                rows = source.fetch(request)
            except Exception as error:  # shown in the table; the loop keeps serving
                on_error(job.generation, f"{type(error).__name__}: {error}")
                continue
            fetched[job.page] = rows
            while len(fetched) > MAX_CACHED_PAGES:
                fetched.popitem(last=False)
            on_page(job.generation, job.page, rows)

    def _anchored(self, request: PageRequest, page: int, fetched: dict[int, list[Any]]) -> PageRequest:
        """`request` with a neighbour to continue from, when it has none and one is known now
        (fetched by this loop since it was asked for, or cached)."""
        if request.after is not None or request.before is not None:
            return request
        before_page = fetched.get(page - 1) or self._pages.get(page - 1)
        if before_page and len(before_page) == self.page_size:
            return replace(request, after=before_page[-1])
        after_page = fetched.get(page + 1) or self._pages.get(page + 1)
        if after_page:
            return replace(request, before=after_page[0])
        return request

    def serve_counts(
        self,
        source: PageSource,
        cancelled: Callable[[], bool],
        on_count: Callable[[int, int], None],
        on_error: Callable[[int, str], None],
    ) -> None:
        """Count each generation that asks (the newest only) against `source` until `cancelled()`;
        called in the count thread."""
        while not cancelled():
            try:
                generation = self._counts.get(timeout=0.1)
            except queue.Empty:
                continue
            self._wait_for_a_page(generation, cancelled)
            with self._count_lock:
                if generation != self.generation or generation == self._uncounted:
                    continue  # stale (the newer generation is queued behind it), or a short first page counted it
                self._counting = (generation, source)
            try:
                count = source.count()
            except Exception as error:  # shown in the table, unless it was interrupted because it was not needed
                with self._count_lock:
                    needed = generation == self.generation and generation != self._uncounted
                if needed:
                    on_error(generation, f"{type(error).__name__}: {error}")
            else:
                on_count(generation, count)
            finally:
                with self._count_lock:
                    self._counting = None
