"""What the transcript draws for messages that carry no text."""

from __future__ import annotations

from evtui.app.widgets.sample.transcript import transcript_blocks
from evtui.sample_view.transcript import MessageView, ToolCallView


def texts(messages):
    return [block.text for block in transcript_blocks(messages, None) if block.text]


def test_a_message_without_text_says_so_and_a_call_or_an_error_is_drawn_instead():
    # Harbor's oracle writes an empty oracle.txt: its message is there, with nothing said.
    assert texts([MessageView("assistant", "", model="oracle")]) == ["(empty message)"]
    assert texts([MessageView("tool", "", function="lookup")]) == ["(empty result)"]
    call = ToolCallView("c1", "lookup", '{"q": 1}')
    assert texts([MessageView("assistant", "", tool_calls=(call,))]) == ['→ call lookup {"q": 1}   id c1']
    assert texts([MessageView("assistant", "", error="boom")]) == ["✗ error: boom"]
    assert texts([MessageView("assistant", "hi")]) == ["hi"]
