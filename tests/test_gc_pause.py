"""The collector settings the interactive app runs with (evtui/gc_pause.py)."""

from __future__ import annotations

import gc

import pytest

from evtui.gc_pause import INTERACTIVE_THRESHOLDS, gc_paused, settle_for_interactive_use


@pytest.fixture
def restored_collector():
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


def test_settling_freezes_what_exists_and_makes_young_collections_rarer(restored_collector):
    made_before = [[index] for index in range(1000)]  # tracked containers, as the imports make
    settle_for_interactive_use()
    assert gc.get_freeze_count() >= len(made_before)
    assert gc.get_threshold() == INTERACTIVE_THRESHOLDS
    assert gc.isenabled()
    made_after: list = []
    made_after.append(made_after)  # a cycle made later is still collected
    del made_after
    assert gc.collect() >= 1


def test_pauses_nest_and_the_collector_comes_back_on():
    assert gc.isenabled()
    with gc_paused():
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
