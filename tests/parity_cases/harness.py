"""Run the real inspect_ai scorer and evtui's on the same sample; compare every Score field."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Sequence
from typing import Any

from inspect_ai.model import ModelName, ModelOutput
from inspect_ai.scorer import Target as InspectTarget
from inspect_ai.solver import TaskState

from evtui.scoring.state import Choice, ModelOutput as EvtuiOutput, SampleState
from evtui.scoring.values import Target


def inspect_state(completion: str, choices: Sequence[str] | None = None, target: Sequence[str] = ("",)) -> TaskState:
    return TaskState(
        model=ModelName("mockllm/model"),
        sample_id="s1",
        epoch=1,
        input="question",
        messages=[],
        target=InspectTarget(list(target)),
        choices=list(choices) if choices is not None else None,
        output=ModelOutput.from_content("mockllm/model", completion),
    )


def evtui_state(completion: str, choices: Sequence[str] | None = None, run_config: dict | None = None) -> SampleState:
    return SampleState(
        sample_id="s1",
        output=EvtuiOutput(completion=completion),
        choices=[Choice(value=v, correct=None, original_position=i) for i, v in enumerate(choices or [])],
        run_config=run_config or {},
    )


def fields(score: Any) -> tuple:
    """Every field a user sees; NaN made comparable; a raised error reduced to its type."""
    if isinstance(score, BaseException):
        return ("raised", type(score).__name__)
    if score is None:
        return (None,)
    value = score.value
    if isinstance(value, float) and math.isnan(value):
        value = "NaN"
    return (value, type(value).__name__, score.answer, score.explanation, score.reason, score.metadata)


async def _outcome(coro_factory: Callable[[], Any]) -> Any:
    try:
        return await coro_factory()
    except ValueError as error:
        return error


async def compare(
    inspect_scorer: Any,
    evtui_scorer: Any,
    cases: Sequence[tuple[str, Sequence[str]]],
) -> list[str]:
    """Differences (one line each) between the two scorers over (completion, targets) cases."""
    differences = []
    for completion, targets in cases:
        theirs = await _outcome(
            lambda: inspect_scorer(inspect_state(completion, target=targets), InspectTarget(list(targets)))
        )
        ours = await _outcome(lambda: evtui_scorer(evtui_state(completion), Target(list(targets))))
        if fields(theirs) != fields(ours):
            differences.append(f"{completion!r} vs {list(targets)!r}: inspect {fields(theirs)} evtui {fields(ours)}")
    return differences


def run(coro: Any) -> Any:
    return asyncio.run(coro)
