"""`evtui watch RUN_DIR [--db FILE] [--interval S] [--json]`: keep the index in step, print changes.

Indexes RUN_DIR once, then polls it (evtui.watch.RunDirWatcher) until Ctrl-C, printing one line
per change of the index, whoever made it (this command or a workbench open on the same folder):
runs new or updated, runs finished (once each: their final status, or 'started' when the writer
died), live Inspect runs (samples in flight, running metrics), files that failed or went
missing. `--json` prints one JSON object per line, each with `event`, `time` (ISO 8601, UTC) and,
but for a poll's error, the run file's `path`. Exit status 0 after Ctrl-C, 2 for bad usage.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from datetime import datetime
from pathlib import Path

from evtui.commands.run_paths import as_location, is_remote
from evtui.safe_text import safe_line
from evtui.store.ingest.files import ingest_paths
from evtui.store.location import default_index_path
from evtui.watch.poller import FinishedRun, LiveUpdate, RunDirWatcher, WatchChange


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", type=as_location, metavar="RUN_DIR",
                        help="directory of run logs (or one run file), or an object-store URL (s3://bucket/prefix)")
    parser.add_argument("--db", type=Path, metavar="FILE", help="the index (default: RUN_DIR/.evtui/index.db)")
    parser.add_argument(
        "--interval", type=float, default=None, metavar="S",
        help="seconds between looks (default: 1; 5 for an object store, each look lists it)"
    )
    parser.add_argument("--json", action="store_true", help="print each change as one JSON object per line")


def run(args: argparse.Namespace) -> int:
    if is_remote(args.run_dir):
        return _watch_store(args)
    if args.interval is None:
        args.interval = 1.0
    if not args.run_dir.exists():
        print(f"evtui watch: {args.run_dir}: no such file or directory", file=sys.stderr)
        return 2
    if args.interval <= 0:
        print("evtui watch: --interval must be positive", file=sys.stderr)
        return 2
    source = args.run_dir.resolve()
    db_path = args.db or default_index_path(source)
    base = source if source.is_dir() else source.parent
    emit = _json_line if args.json else _text_line
    try:
        report = ingest_paths(db_path, [source])
    except (OSError, RuntimeError) as exc:
        print(f"evtui watch: {db_path}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    # On stderr: it says when watching starts without mixing into the changes (--json parses them).
    print(f"watching {safe_line(source)} ({len(report.files)} runs indexed, {len(report.failures)} failed); Ctrl-C stops",
          file=sys.stderr, flush=True)

    stop = threading.Event()

    def on_change(change: WatchChange) -> None:
        try:
            for line in emit(change, base):
                print(line if args.json else safe_line(line, None), flush=True)  # JSON escapes its own controls
        except BrokenPipeError:  # the reader stopped reading (`| head`, a script that saw its run finish)
            from evtui.writers.stdout import quiet_stdout

            quiet_stdout()
            stop.set()

    watcher = RunDirWatcher(source, db_path, on_change, interval=args.interval)
    try:
        watcher.run(stop)
    except KeyboardInterrupt:
        stop.set()
    return 0


def _watch_store(args: argparse.Namespace) -> int:
    """Index the object-store URL, then poll its listing until Ctrl-C."""
    from evtui.readers.remote import RemoteError
    from evtui.watch.bucket import BucketWatcher

    url = args.run_dir
    interval = 5.0 if args.interval is None else args.interval
    if interval <= 0:
        print("evtui watch: --interval must be positive", file=sys.stderr)
        return 2
    db_path = args.db or default_index_path(url)
    emit = _json_line if args.json else _text_line
    from evtui.store.ingest.remote import ingest_urls

    try:
        report = ingest_urls(db_path, [url])
    except RemoteError as exc:  # listed before the index is opened: nothing was written
        print(f"evtui watch: {safe_line(exc)}", file=sys.stderr)
        return 2
    except (OSError, RuntimeError) as exc:
        print(f"evtui watch: {db_path}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    print(f"watching {safe_line(url)} every {interval:g} s ({len(report.files)} runs indexed, "
          f"{len(report.failures)} failed); Ctrl-C stops", file=sys.stderr, flush=True)
    base = url.rstrip("/") + "/"

    def on_change(change: WatchChange) -> None:
        for line in emit(change, base):
            print(line if args.json else safe_line(line, None), flush=True)

    stop = threading.Event()
    try:
        BucketWatcher(url, db_path, on_change, interval=interval).run(stop)
    except KeyboardInterrupt:
        stop.set()
    return 0


def _rel(path: str, base: Path | str) -> str:
    if isinstance(base, str):  # an object store's URL prefix
        return path[len(base):] if path.startswith(base) else path
    try:
        return str(Path(path).relative_to(base))
    except ValueError:
        return path


def _local_time(at: str) -> str:
    return datetime.fromisoformat(at).astimezone().strftime("%H:%M:%S")


def _text_line(change: WatchChange, base: Path) -> list[str]:
    now = _local_time(change.at)
    lines = [
        f"{now}  {f.change:8} {f.status:9} {f.samples:>6} samples  {f.task or '-'}  {f.model or '-'}  "
        f"{_rel(f.path, base)}"
        for f in change.ingested
    ]
    lines += [f"{now}  {'finished':8} {_finished_text(done)}  {_rel(done.run.path, base)}" for done in change.finished]
    lines += [f"{now}  {'live':8} {_live_text(update)}  {_rel(update.path, base)}" for update in change.live]
    lines += [f"{now}  {'missing':8} {_rel(path, base)} (file gone; its data is kept)" for path in change.missing]
    lines += [f"{now}  {'FAILED':8} {failure.error}" for failure in change.failures]
    if change.error:
        lines.append(f"{now}  {'error':8} {change.error} (retrying)")
    return lines


def _live_text(update: LiveUpdate) -> str:
    buffer = update.buffer
    if buffer is None:
        return "no longer live"
    if not buffer.process_alive:
        return f"writer gone (pid {buffer.pid}): {buffer.running} samples were in flight"
    metrics = ", ".join(f"{m.name} {m.value:.3g}" for m in buffer.metrics if m.value is not None)
    text = f"{buffer.running} running, {buffer.completed_unflushed} completed not yet flushed"
    return f"{text}; {metrics}" if metrics else text


def _finished_text(done: FinishedRun) -> str:
    if done.writer_gone:
        return f"{'started':9} {done.run.samples:>6} samples  writer gone before the run ended"
    return f"{done.run.status:9} {done.run.samples:>6} samples"


def _json_line(change: WatchChange, base: Path) -> list[str]:
    objects: list[dict] = [
        {"event": f.change, "path": f.path, "run_id": f.run_id, "format": f.format, "status": f.status, "task": f.task,
         "model": f.model, "samples": f.samples}
        for f in change.ingested
    ]
    for update in change.live:
        buffer = update.buffer
        entry: dict = {"event": "live", "path": update.path, "run_id": update.run_id, "live": buffer is not None}
        if buffer is not None:
            entry |= {
                "process_alive": buffer.process_alive,
                "pid": buffer.pid,
                "running": buffer.running,
                "completed_unflushed": buffer.completed_unflushed,
                "metrics": [{"scorer": m.scorer, "name": m.name, "value": m.value} for m in buffer.metrics],
            }
        objects.append(entry)
    # After the run's own new/updated and live events: a script waiting for it can stop reading here.
    objects += [
        {"event": "finished", "path": done.run.path, "run_id": done.run.run_id, "status": done.run.status,
         "samples": done.run.samples, "writer_gone": done.writer_gone}
        for done in change.finished
    ]
    objects += [{"event": "missing", "path": path} for path in change.missing]
    objects += [{"event": "failed", "path": f.path, "error": f.error} for f in change.failures]
    if change.error:
        objects.append({"event": "error", "error": change.error})
    return [json.dumps({"event": obj.pop("event"), "time": change.at, **obj}) for obj in objects]
