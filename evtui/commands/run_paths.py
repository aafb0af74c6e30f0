"""What the headless commands that work on indexed runs share: check PATHs, index them, find the runs.

A PATH may be an object-store URL (`s3://bucket/prefix`, `gs://…`, any fsspec URL): it stays a
string (a Path would fold its `//`), its index lives in the user cache dir, and a store that
cannot be listed is one line naming the URL and what to do, exit status 2, the index untouched.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Union

from evtui.store.location import default_index_path, demo_dir


def add_path_arguments(parser, help: str = "run files or directories (indexed first if needed)") -> None:
    """PATH... and --demo (PATHs are then names inside the bundled demo folder; none = all of it)."""
    parser.add_argument("paths", nargs="*", metavar="PATH", help=help)
    parser.add_argument("--demo", action="store_true",
                        help="the bundled demo runs, in the same index as `evtui --demo` (PATHs, if any, name files in it)")


def run_paths(args) -> list[Path] | str:
    """The PATHs the arguments name, or the usage error (none given, or one that does not exist)."""
    if getattr(args, "demo", False):
        base = demo_dir()
        paths = [base / p for p in args.paths] or [base]
    elif not args.paths:
        return "give PATH... or --demo"
    else:
        paths = [as_location(p) for p in args.paths]
    return missing_paths_message(paths) or paths


Location = Union[Path, str]  # a local path, or an object-store URL


def as_location(text: str | Path) -> Location:
    """An object-store URL as its public form (no credentials), anything else as a Path."""
    from evtui.readers.remote import canonical_url, is_url

    return canonical_url(text) if is_url(text) else Path(text)


def is_remote(location: object) -> bool:
    return isinstance(location, str)


def usage_error(prog: str, message: str, code: int = 2) -> int:
    """Print `message` after the command's name on stderr, through the one sanitiser (it quotes
    PATHs, run names and reader errors); return the exit status."""
    from evtui.safe_text import safe_block

    print(f"{prog}: {safe_block(message)}", file=sys.stderr)
    return code


def missing_paths_message(paths: Sequence[Location]) -> str | None:
    """The usage error for PATHs that do not exist, or None when all do (URLs are checked when listed)."""
    missing = [str(path) for path in paths if not is_remote(path) and not path.exists()]
    return f"no such file or directory: {', '.join(missing)}" if missing else None


def index_path_for(paths: Sequence[Path], db: str | None) -> Path:
    """`--db`, else the index beside the first PATH."""
    return Path(db) if db else default_index_path(_resolved(paths[0]))


def _resolved(location: Location) -> Location:
    return location if is_remote(location) else Path(location).resolve()


def index_runs(prog: str, db_path: Path, paths: Sequence[Path], *, samples: bool = False) -> list[int]:
    """Index PATHs (unchanged files are skipped), report files that failed, return the runs under PATHs."""
    from evtui.safe_text import safe_line
    from evtui.store import jobs
    from evtui.store.ingest.remote import ingest_locations as ingest_paths
    from evtui.store.schema import connect

    from evtui.readers.remote import RemoteError

    try:
        # `samples`: an object store's sample members too, for commands that need the outputs
        report = ingest_paths(db_path, paths, samples=samples)
    except RemoteError as exc:  # listed before the index is opened: nothing was written
        print(f"{prog}: {safe_line(exc)}", file=sys.stderr)
        raise SystemExit(2) from None
    for failure in report.failures:
        print(f"{prog}: skipped {safe_line(failure.path)}: {safe_line(failure.error)}", file=sys.stderr)
    db = connect(db_path)
    try:
        return latest_attempts(db, jobs.run_ids_under(db, paths), paths)
    finally:
        db.conn.close()


def latest_attempts(db, run_ids: list[int], paths: Sequence[Path]) -> list[int]:
    """`run_ids` less the earlier attempts at an eval-set task (the runs list shows the latest
    successful one), except a run file named itself among PATHs."""
    from evtui.store.queries.runs import superseded_attempts

    named = {str(_resolved(p)) for p in paths}
    older = superseded_attempts(db, run_ids)
    if not older:
        return run_ids
    paths_of = dict(db.execute(
        f"SELECT id, path FROM runs WHERE id IN ({', '.join('?' * len(older))})", list(older)).fetchall())
    return [i for i in run_ids if i not in older or paths_of.get(i) in named]
