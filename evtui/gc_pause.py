"""Pause Python's cyclic garbage collector around bulk work that allocates millions of objects.

Computing a group's metrics builds two small objects per score. With a million score rows alive,
every full collection walks them all: 182k scores took 5.6 s with the collector on, 2.1 s
without. Nothing in that work makes reference cycles, so plain reference counting frees it all.

The collector is process-wide and several threads may pause it at once, so pauses are counted
and it is switched back on when the last one ends (if it was on before the first).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def gc_paused() -> Iterator[None]:
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
