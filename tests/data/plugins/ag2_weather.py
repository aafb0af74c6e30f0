"""AG2-style scorers as the AG2 fixture run used them (scripts/make_ag2_fixtures.py), written
against evtui's names; event classes come from AG2 itself, as in an AG2 code base."""

from ag2.events import ToolCallEvent, ToolErrorEvent

from evtui.scoring import Feedback, scorer


@scorer
def answer_correct(outputs, reference_outputs) -> bool | None:
    if reference_outputs is None:
        return None
    return reference_outputs["answer"].lower() in (outputs.get("body") or "").lower()


@scorer
def tool_calls(trace) -> int:
    return len(trace.events_of(ToolCallEvent))


@scorer
def reply_words(outputs) -> float:
    return float(len((outputs.get("body") or "").split()))


@scorer
def outcome(trace) -> str:
    if trace.exception is not None:
        return "crashed"
    if trace.events_of(ToolErrorEvent):
        return "tool_error"
    return "answered"


@scorer
def style(outputs, task) -> list:
    body = outputs.get("body") or ""
    return [
        Feedback(key="style.polite", score=body.endswith(("!", ".")), comment="ends a sentence"),
        Feedback(
            key="style.tone",
            value="cheerful" if "!" in body else "neutral",
            comment=f"task tags: {', '.join(task.tags)}",
            detail={"chars": len(body), "exclamations": body.count("!")},
        ),
    ]


@scorer
async def starts_with_city(outputs, reference_outputs) -> bool:
    """Async, and raises KeyError/TypeError when there is no answer or reference."""
    return outputs["body"].startswith(reference_outputs["city"])
