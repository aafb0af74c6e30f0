"""The collector pause used around bulk metric work: nested and overlapping pauses restore it."""

from __future__ import annotations

import gc
import threading

from evtui.gc_pause import gc_paused


def test_overlapping_pauses_switch_the_collector_back_on_only_after_the_last():
    assert gc.isenabled()
    inner_started, outer_may_end = threading.Event(), threading.Event()
    seen: list[bool] = []

    def other_thread() -> None:
        with gc_paused():
            inner_started.set()
            outer_may_end.wait(5)
        seen.append(gc.isenabled())  # the first pause is still open

    with gc_paused():
        thread = threading.Thread(target=other_thread)
        thread.start()
        inner_started.wait(5)
        outer_may_end.set()
        thread.join(5)
        assert gc.isenabled() is False
    assert seen == [False] and gc.isenabled()


def test_a_collector_that_was_off_stays_off():
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
