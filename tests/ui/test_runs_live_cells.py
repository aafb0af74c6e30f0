"""The runs list tells a run still being written apart: samples in flight, live metric, dead writer."""

from __future__ import annotations

from types import SimpleNamespace

from evtui.app.run_cells import run_cells
from evtui.store.live import LiveMetric, LiveRun


def _run(**fields):
    base = dict(path="/logs/a.eval", task="qa", model="m", status="started", samples_completed=3,
                samples_total=10, headline=[], total_tokens=None, cost=None, duration=None, missing=False,
                created=None, completed_at=None, epochs=None, task_args=None, tags=None, part="")
    return SimpleNamespace(**{**base, **fields})


def _live(alive=True, running=2, metrics=(), unflushed=0):
    return LiveRun(run_id=1, buffer_path="b.db", pid=1, process_alive=alive, version=4, running=running,
                   completed_unflushed=unflushed, metrics=tuple(metrics), updated_at=None)


def _text(cells):
    return [str(getattr(cell, "plain", cell)) for cell in cells]


def test_a_live_run_shows_samples_in_flight_and_its_running_headline_metric():
    metrics = [LiveMetric("match", "stderr", 0.1), LiveMetric("match", "accuracy", 0.75, headline=True)]
    task, _, _, status, samples, headline, *_ = _text(run_cells(_run(), live=_live(metrics=metrics)))
    assert status == "started"
    assert samples == "3/10 +2 running"
    assert headline == "live match accuracy 0.750"


def test_a_run_whose_writer_died_says_so_instead_of_running():
    _, _, _, status, samples, *_ = _text(run_cells(_run(), live=_live(alive=False)))
    assert status == "started (writer gone)"
    assert samples == "3/10"


def test_a_run_without_live_state_is_shown_as_recorded():
    _, _, _, status, samples, headline, *_ = _text(run_cells(_run()))
    assert (status, samples, headline) == ("started", "3/10", "–")


def test_completed_samples_still_in_the_buffer_count_as_completed():
    _, _, _, _, samples, *_ = _text(run_cells(_run(), live=_live(unflushed=4)))
    assert samples == "7/10 +2 running"
