"""The sample view's content, gathered without Textual, one module per idea:

view.py (`load_sample_view`: the sample from the index with its scores, epochs and neighbours,
and its transcript from the run file), transcript.py (the messages, the events list, the events
tree and what `y` copies) and timeline.py (the tree's spans and events and the record's phases in
time order).

The names stay importable from `evtui.sample_view` as before the split (bench/event_tree_bench.py
and code written against it import them from here); evtui's own modules import from the module.
"""

from evtui.sample_view.timeline import Timeline, TimelineRow, build_timeline
from evtui.sample_view.transcript import (
    EventNode,
    EventView,
    MessageView,
    ToolCallView,
    content_text,
    event_copy_text,
    event_tree,
    message_copy_text,
    search_tree,
)
from evtui.sample_view.view import SampleOrdering, SampleView, ScoreView, load_sample_view

__all__ = [
    "SampleOrdering",
    "ToolCallView",
    "MessageView",
    "EventView",
    "ScoreView",
    "SampleView",
    "load_sample_view",
    "content_text",
    "EventNode",
    "TimelineRow",
    "Timeline",
    "build_timeline",
    "event_copy_text",
    "message_copy_text",
    "event_tree",
    "search_tree",
]
