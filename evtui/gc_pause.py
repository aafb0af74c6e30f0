"""How evtui runs Python's cyclic garbage collector: paused around bulk work that allocates
millions of objects, and settled once for the interactive app (settle_for_interactive_use).

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


# The app's own objects (widgets, pages of rows, strips) come and go while the user pages; what
# the imports made stays for the whole session. With both in one generation, each full collection
# walked the imports' objects too: a page-down that met one took 0.06-0.09 s instead of 0.04 s
# (bench/across_runs_bench.py --screen). Frozen, they are never walked again; a larger first
# threshold makes the young collections (and the full ones they lead to) rarer.
INTERACTIVE_THRESHOLDS = (10_000, 10, 10)


def settle_for_interactive_use() -> None:
    """Freeze what exists now (call it after the imports, before the app runs) and raise the
    collector's first threshold, for a long-lived interactive process."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*INTERACTIVE_THRESHOLDS)
