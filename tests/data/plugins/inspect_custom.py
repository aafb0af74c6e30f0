"""An Inspect-style custom scorer, metric and reducer written against evtui's names.

Porting from Inspect is changing the imports: `inspect_ai.scorer` / `inspect_ai.solver` → `evtui.scoring`.
"""

from evtui.scoring import (
    CORRECT,
    INCORRECT,
    Score,
    Target,
    TaskState,
    accuracy,
    metric,
    score_reducer,
    scorer,
    stderr,
)


@scorer(metrics=[accuracy(), stderr()])
def ends_with_target(ignore_case: bool = True):
    """C when the completion ends with one of the targets."""

    async def score(state: TaskState, target: Target) -> Score:
        completion = state.output.completion.strip()
        if ignore_case:
            completion = completion.casefold()
        for text in target:
            wanted = text.casefold() if ignore_case else text
            if completion.endswith(wanted):
                return Score(value=CORRECT, answer=completion[-len(text):], explanation=state.output.completion)
        return Score(value=INCORRECT, answer=completion, explanation=state.output.completion)

    return score


@metric
def share_correct():
    """The fraction of scores that are exactly "C"."""

    def compute(scores) -> float:
        return sum(1 for s in scores if s.score.value == CORRECT) / len(scores) if scores else 0.0

    return compute


@score_reducer(name="any_correct")
def any_correct():
    """C when any epoch is C."""

    def reduce(scores):
        return Score(value=CORRECT if any(s.value == CORRECT for s in scores) else INCORRECT)

    return reduce
