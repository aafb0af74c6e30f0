"""Output to a reader that went away: `evtui compare … --json | head` ends quietly."""

from __future__ import annotations

import os
import sys


def quiet_stdout() -> None:
    """Send what is left for stdout to /dev/null: its reader is gone, and the flush at exit would
    otherwise print a BrokenPipeError of its own."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
