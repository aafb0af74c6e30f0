"""What is wrong with the index file itself (damaged, its disk full or read-only), said in one line.

Kept apart from the schema: this is about telling the user what to do with the file, and every
command's one catch-all (cli.py) asks it about any error, wherever the fault struck.
"""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

_OPENED: list[str] = []  # the indexes this process opened, newest last (index_fault_message names one)


def note_opened(path: Path) -> None:
    """Remember `path` as the index this process opened last (open_connection calls it)."""
    text = str(path)
    if not _OPENED or _OPENED[-1] != text:
        if text in _OPENED:
            _OPENED.remove(text)
        _OPENED.append(text)
        del _OPENED[:-8]


_DAMAGED = ("not a database", "malformed", "corrupt", "file is encrypted")
_UNWRITABLE = ("full", "disk i/o", "readonly", "read-only", "unable to open")
_DISK_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS}


def index_fault_message(error: BaseException) -> str | None:
    """One line for a fault of the index itself (damaged, or its disk full or read-only), naming
    the index and what to do; None for any other error (a bug, to be shown as one).

    Made for the command line's one catch-all (cli.py): every command opens the index through
    open_connection, which notes the path, so the message can name it wherever the fault struck."""
    where = f"the index {_OPENED[-1]}" if _OPENED else "the index"
    text = str(error).lower()
    if isinstance(error, sqlite3.DatabaseError) and any(word in text for word in _DAMAGED):
        return (f"{where} is damaged ({error}): move it aside and run the command again to rebuild it from the run "
                "files (it also holds scoring jobs and review verdicts: `sqlite3 FILE .recover` may save them)")
    unwritable = isinstance(error, sqlite3.OperationalError) and any(word in text for word in _UNWRITABLE)
    if unwritable or (isinstance(error, OSError) and error.errno in _DISK_ERRNOS):
        return (f"cannot write {where} ({error}): is its disk full or read-only? Free some space (or give another "
                "index with --db FILE) and run the command again; what was written before is kept")
    return None
