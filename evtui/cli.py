"""Command line entry point: `evtui [RUN_DIR]` opens the app; subcommands run headless.

Each subcommand lives in evtui/commands/<name>.py with `add_arguments(parser)` and
`run(args) -> int`, so the core commands import no Textual.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

# evtui's numpy work is reductions over columns and vector products, which one BLAS thread does
# as fast: OpenBLAS's pool of one thread per core costs 55 ms of CPU at import (a third of a
# command's start) and its spinning threads slow a busy machine. The user's own setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

SUBCOMMANDS = {
    "ingest": "Index run files into the SQLite index and print a summary.",
    "score": "Re-score indexed runs with scorers, reducers and metrics; print each run's metrics.",
    "export": "Export scores from the index as JSONL or CSV.",
    "compare": "Compare runs: paired differences with stderr, interval, p-value and MDE per scorer.",
    "runs": "List the runs as the runs screen does: filtered, sorted, grouped by task or eval set.",
    "report": "Print each run's results and its metrics per group (the run screen and the groups view, headless).",
    "watch": "Keep the index of a run directory up to date and print changes as runs are written.",
    "grade": "Grader requests through batch files: export-batch (requests), import-batch (replies into the cache).",
    "serve": "Serve the workbench to web browsers (one app per tab; token outside loopback).",
    "agreement": "Judge-human and reviewer agreement for one scorer, and the judge's number after calibration.",
    "review": "Review queues and verdicts headless: queue, export, import, apply (edits into a copy of an Inspect log).",
    "samples": "Samples of several runs side by side: one row per sample id × epoch, each run's answer and scores.",
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in SUBCOMMANDS:
        name = argv[0]
        parser = argparse.ArgumentParser(prog=f"evtui {name}", description=SUBCOMMANDS[name])
        module = importlib.import_module(f"evtui.commands.{name}")
        module.add_arguments(parser)
        args = _parse(parser, argv[1:])
        return _run(name, module, args)
    parser = argparse.ArgumentParser(
        prog="evtui",
        description="A terminal workbench for LLM evaluation runs.",
        epilog="subcommands (evtui NAME --help for each):\n"
        + "\n".join(f"  {name:<8} {summary}" for name, summary in SUBCOMMANDS.items()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from evtui import __version__

    parser.add_argument("--version", action="version", version=f"evtui {__version__}")
    module = importlib.import_module("evtui.commands.open")
    module.add_arguments(parser)
    args = _parse(parser, argv)
    return _run("", module, args)


def _run(name: str, module, args: argparse.Namespace) -> int:
    """Run a command; a fault of the index itself (damaged, disk full, read-only) in any of them is
    one line naming the index and what to do, not a traceback (store.index_faults.index_fault_message)."""
    import sqlite3

    try:
        code = int(module.run(args) or 0)
        sys.stdout.flush()  # here, not at exit: a reader gone by then is caught below
        return code
    except BrokenPipeError:  # `evtui compare … --json | head`: the reader has all it wants
        from evtui.writers.stdout import quiet_stdout

        quiet_stdout()
        return 0
    except (sqlite3.DatabaseError, OSError) as error:
        from evtui.safe_text import safe_line
        from evtui.store.index_faults import index_fault_message

        message = index_fault_message(error)
        if message is None:
            raise
        print(f"evtui{' ' + name if name else ''}: {safe_line(message)}", file=sys.stderr)
        return 2


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """Parse, mapping argparse's usage errors to exit status 2 (it already does) and --help to 0."""
    return parser.parse_args(argv)


if __name__ == "__main__":
    raise SystemExit(main())
