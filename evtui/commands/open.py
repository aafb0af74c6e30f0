"""The default command: `evtui [RUN_DIR] [--db FILE] [--theme NAME] [--demo]` opens the app."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evtui.safe_text import safe_line
from evtui.store.location import default_index_path, demo_dir, demo_index_path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "run_dir",
        nargs="?",
        metavar="RUN_DIR",
        help="directory (or single file) of run logs to index and browse, or an object-store URL "
        "(s3://bucket/prefix, gs://…); default: the current directory",
    )
    parser.add_argument("--db", metavar="FILE", help="index file (default: RUN_DIR/.evtui/index.db)")
    parser.add_argument("--theme", metavar="NAME", help="colour theme, e.g. evtui-dark, evtui-light, nord")
    parser.add_argument("--demo", action="store_true", help="open the bundled demo runs")
    parser.add_argument("--review", metavar="NAME", help="resume the review queue NAME at the first sample not yet done")
    parser.add_argument("--reviewer", metavar="NAME", help="who reviews (default: $EVTUI_REVIEWER, git user.name, login)")


__all__ = ["add_arguments", "demo_dir", "resolve_paths", "run"]


def resolve_paths(args: argparse.Namespace) -> tuple[Path, list[Path | str], str] | str:
    """(index path, paths to index, label) for the arguments, or an error message."""
    if args.demo:
        if args.run_dir:
            return "give either RUN_DIR or --demo, not both"
        source = demo_dir()
        if not source.is_dir():
            return f"demo runs not found at {source} (broken install?)"
        # The same index as `evtui score --demo` and `evtui score demo/…` (store/location.py).
        db = Path(args.db) if args.db else demo_index_path(source)
        return db, [source], "demo runs"
    if args.run_dir is None and args.db:
        db = Path(args.db)
        if not db.is_file():
            return f"{db}: no such index file (give RUN_DIR to create one)"
        return db, [], str(db)
    from evtui.commands.run_paths import as_location, is_remote

    location = as_location(args.run_dir or ".")
    if is_remote(location):  # indexed in the user cache dir, one index per URL
        db = Path(args.db) if args.db else default_index_path(location)
        return db, [location], location
    source = Path(location)
    if not source.exists():
        return f"{source}: no such file or directory"
    source = source.resolve()
    db = Path(args.db) if args.db else default_index_path(source)
    return db, [source], str(source)


def unlistable(paths: list) -> str | None:
    """Why an object-store URL among `paths` cannot be listed (before the app starts), or None."""
    from evtui.readers.remote import RemoteError, RemoteStore

    for path in paths:
        if isinstance(path, str):
            try:
                RemoteStore(path).list_files()
            except RemoteError as exc:
                return str(exc)
    return None


def run(args: argparse.Namespace) -> int:
    resolved = resolve_paths(args)
    if isinstance(resolved, str):
        print(f"evtui: {safe_line(resolved, None)}", file=sys.stderr)
        return 2
    db_path, ingest_paths, label = resolved
    problem = unlistable(ingest_paths)  # a bucket that cannot be listed: one line, nothing written
    if problem:
        print(f"evtui: {safe_line(problem)}", file=sys.stderr)
        return 2
    from evtui.store.schema import open_connection

    # A damaged or unwritable index is one line from cli.py before the app takes the screen
    # (inside it, every worker would fail on its own).
    open_connection(db_path).close()
    from evtui.app.app import EvtuiApp

    review = None
    if getattr(args, "review", None):
        from evtui.store.review.writes import reviewer_name

        review = (args.review, reviewer_name(getattr(args, "reviewer", None)))
    app = EvtuiApp(db_path=db_path, ingest_paths=ingest_paths, theme_name=args.theme, source_label=label,
                   review=review, reviewer=getattr(args, "reviewer", None))
    from evtui.gc_pause import settle_for_interactive_use

    settle_for_interactive_use()  # after the imports and the app's construction: see gc_pause.py
    app.run()
    return app.return_code or 0
