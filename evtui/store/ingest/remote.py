"""Index a run directory in an object store (`s3://bucket/prefix`, any fsspec URL).

The store is listed first, before the index is opened: a store that cannot be listed (no
credentials, an endpoint that does not answer, a denied bucket) is a RemoteError and the index
is not touched. Then, as for local files (ingest/files.py), each run is skipped when its size,
modification time and ETags match what was indexed (no request beyond the listing), else read
— the header and sample summaries, by ranged requests, several runs at a time — and written in
one transaction; a run that fails (a 403 on one object, an object replaced while it was read)
is rolled back and reported, the others still load. Runs whose objects are gone are marked
missing. The index names runs by their URL without any credentials (remote.public_url).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from evtui.readers.base import ReaderError, RunRead
from evtui.readers.remote import RemoteRun, RemoteStore, StoreReadError
from evtui.store.ingest.files import (
    FailedFile,
    IngestProgress,
    IngestReport,
    _drop_vanished_parts,
    _index_write_error,
    _record_failure,
    _unchanged,
    _write_run,
)
from evtui.store.schema import has_query_stats, open_connection, refresh_query_stats
from evtui.store.transaction import transaction

__all__ = ["ingest_urls", "ingest_locations"]

_READ_AHEAD = 8  # runs fetched at once while earlier ones are written


def ingest_locations(
    db_path: Path,
    paths: Sequence[Path | str],
    *,
    on_progress: Callable[[IngestProgress], None] | None = None,
    samples: bool = False,
) -> IngestReport:
    """ingest_paths for local paths and object-store URLs (strings) alike: every URL is listed
    first (RemoteError, nothing written, when one cannot be), then everything is indexed
    (`samples`: an object store's samples in full, see ingest_urls)."""
    from evtui.readers.remote import is_url
    from evtui.store.ingest.files import ingest_paths

    urls = [p for p in paths if is_url(p)]
    local = [Path(p) for p in paths if not is_url(p)]
    if not urls:
        return ingest_paths(db_path, local, on_progress=on_progress)
    report = ingest_urls(db_path, urls, on_progress=on_progress, samples=samples)
    if local:
        more = ingest_paths(db_path, local, on_progress=on_progress)
        report.files += more.files
        report.failures += more.failures
        report.missing += more.missing
    return report


def ingest_urls(
    db_path: Path,
    urls: Sequence[str],
    *,
    on_progress: Callable[[IngestProgress], None] | None = None,
    samples: bool = False,
) -> IngestReport:
    """Index every run under the object-store URLs. Raises RemoteError (one line naming the URL
    and what to do) when a URL cannot be listed; nothing is written then.

    A run's samples are indexed from the log's summaries (scores, input, target, metadata,
    usage; each sample's transcript is fetched when it is opened) unless `samples`, which reads
    every sample member too: re-scoring and exports need the outputs, which summaries lack.
    A run read in full is not read again for summaries."""
    stores = [RemoteStore(url) for url in urls]
    listings = [(store, store.listing()) for store in stores]  # every listing before any write
    conn = open_connection(db_path)
    conn.execute("PRAGMA cache_size = -65536")
    report = IngestReport()
    try:
        for store, listing in listings:
            for url, problem in listing.refused:
                _record_failure(conn, report, url, f"{url}: {problem}", None, None)
            _ingest_listing(conn, store, listing.runs, report, on_progress, samples)
            report.missing += _mark_missing(conn, store.url, {run.url for run in listing.runs})
        if report.count("new") or report.count("updated") or not has_query_stats(conn):
            refresh_query_stats(conn)
    finally:
        conn.close()
    return report


def _ingest_listing(
    conn: sqlite3.Connection,
    store: RemoteStore,
    runs: list[RemoteRun],
    report: IngestReport,
    on_progress: Callable[[IngestProgress], None] | None,
    samples: bool,
) -> None:
    to_read: list[tuple[int, RemoteRun, tuple[int, int, str]]] = []
    for index, run in enumerate(runs, 1):
        signature = run.signature(samples)
        good_enough = {signature, run.signature(True)}  # a full read serves a summaries request
        known = conn.execute(
            "SELECT id, file_size, file_mtime_ns, file_hash FROM runs WHERE path = ? ORDER BY part", (run.url,)
        ).fetchall()
        current = [row[0] for row in known if tuple(row[1:]) in good_enough]
        if current:
            report.files += [_unchanged(conn, run_id) for run_id in current]
            _progress(on_progress, run.url, index, len(runs), report.files[-1].samples, "unchanged")
            continue
        failed = conn.execute(
            "SELECT error FROM ingest_failures WHERE path = ? AND file_size = ? AND file_mtime_ns = ?",
            (run.url, signature[0], signature[1]),
        ).fetchone()
        if failed:  # the same objects failed last time: not read again
            report.failures.append(FailedFile(run.url, failed[0]))
            continue
        to_read.append((index, run, signature))
    for (index, run, signature), outcome in zip(to_read, _fetched(store, [r for _, r, _ in to_read], samples)):
        _progress(on_progress, run.url, index, len(runs), 0, "reading")
        if isinstance(outcome, BaseException):
            message = str(outcome) if isinstance(outcome, ReaderError) else f"{run.url}: {type(outcome).__name__}: {outcome}"
            # The store's fault (denied, replaced mid-read, gone away) is not remembered against
            # the objects: they are asked for again at the next look. A bad log is.
            remembered = (None, None) if isinstance(outcome, StoreReadError) else signature[:2]
            _record_failure(conn, report, run.url, message, *remembered)
            _progress(on_progress, run.url, index, len(runs), 0, "failed")
            continue
        try:
            with transaction(conn):
                written = [_write_run(conn, run.url, read, signature, lambda n, phase: None) for read in outcome]  # type: ignore[arg-type]
                _drop_vanished_parts(conn, run.url, {read.part for read in outcome})
                conn.execute("DELETE FROM ingest_failures WHERE path = ?", (run.url,))
        except Exception as exc:
            if (unwritable := _index_write_error(exc)) is not None:
                raise unwritable from None
            message = str(exc) if isinstance(exc, ReaderError) else f"{run.url}: {type(exc).__name__}: {exc}"
            _record_failure(conn, report, run.url, message, signature[0], signature[1])
            _progress(on_progress, run.url, index, len(runs), 0, "failed")
            continue
        report.files += written
        _progress(on_progress, run.url, index, len(runs), written[-1].samples if written else 0, "done")


def _fetched(store: RemoteStore, runs: list[RemoteRun], samples: bool) -> Iterator[list[RunRead] | BaseException]:
    """Each run's reads (samples in memory: summaries are small), fetched a few at a time ahead
    of the writer; a failure comes back as the exception, in order."""
    if not runs:
        return

    def fetch(run: RemoteRun) -> list[RunRead]:
        reads = store.read(run, samples)
        for read in reads:
            read.samples = iter(list(read.samples))  # fetched here, off the writing thread
            read.raw_samples = None  # drawn on by the list above
        return reads

    with ThreadPoolExecutor(max_workers=_READ_AHEAD, thread_name_prefix="evtui-remote") as pool:
        pending: list[Future] = []
        queue = iter(runs)
        for run in queue:
            pending.append(pool.submit(fetch, run))
            if len(pending) >= _READ_AHEAD:
                break
        while pending:
            future = pending.pop(0)
            try:
                yield future.result()
            except Exception as exc:  # noqa: BLE001 - reported per run
                yield exc
            following = next(queue, None)
            if following is not None:
                pending.append(pool.submit(fetch, following))


def _progress(on_progress, url: str, index: int, count: int, samples: int, phase: str) -> None:
    if on_progress is not None:
        on_progress(IngestProgress(Path(url.split("://", 1)[1]), index, count, samples, phase))


def _mark_missing(conn: sqlite3.Connection, root: str, found: set[str]) -> list[str]:
    """Runs indexed under `root` whose objects the listing no longer holds."""
    prefix = root.rstrip("/") + "/"
    rows = conn.execute(
        "SELECT id, path FROM runs WHERE missing = 0 AND substr(path, 1, ?) = ?", (len(prefix), prefix)
    ).fetchall()
    vanished = [(run_id, path) for run_id, path in rows if path not in found]
    if vanished:
        with transaction(conn):
            conn.executemany("UPDATE runs SET missing = 1 WHERE id = ?", [(run_id,) for run_id, _ in vanished])
    return sorted({path for _, path in vanished})

