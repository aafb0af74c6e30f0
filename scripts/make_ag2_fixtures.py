"""Write real AG2 eval run files into tests/data/ag2/ by running AG2's own `run_agent`.

Nothing here is hand-written JSON: the agent is driven offline by AG2's scripted test model
(`TestConfig`, one "cassette" per task id) and the framework saves `<store_dir>/<run_id>.json`.

The same script makes both schema versions, depending on which AG2 the interpreter has:

    /work/venv/bin/python scripts/make_ag2_fixtures.py          # ag2 1.2.1 -> ag2.eval, schema "0.2"
    /work/venv-ag2-014/bin/python scripts/make_ag2_fixtures.py  # ag2 0.14.0 -> autogen.beta.eval, "0.1"
    (the second venv: python -m venv /work/venv-ag2-014 && pip install ag2==0.14.0 opentelemetry-sdk)

The suite covers what a reader must handle: tool calls with arguments, a tool that raises,
a task whose model call raises (so the agent raises), repeats (`<id>#<n>` ids), tasks with and
without reference outputs, and scorers of every return type (bool, int, float, str, None,
a list of Feedback, one that raises) plus AG2's prebuilt scorers. Run ids are fixed so the
file names stay stable; timestamps, durations and span ids are whatever the run produced.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

try:  # ag2 >= 1.0
    from ag2 import Agent
    from ag2.eval import Feedback, Suite, run_agent, scorer
    from ag2.eval.scorers import (
        agent_judge,
        failure_attribution,
        final_answer_matches,
        no_tool_errors,
        token_budget,
        tool_called,
    )
    from ag2.events import ModelMessage, ModelResponse, ToolCallEvent, ToolCallsEvent, ToolErrorEvent, Usage
    from ag2.testing import TestConfig

    SCHEMA = "0.2"
except ImportError:  # ag2 0.14: the same framework under autogen.beta
    from autogen.beta import Agent
    from autogen.beta.eval import Feedback, Suite, run_agent, scorer
    from autogen.beta.eval.scorers import (
        agent_judge,
        failure_attribution,
        final_answer_matches,
        no_tool_errors,
        token_budget,
        tool_called,
    )
    from autogen.beta.events import ModelMessage, ModelResponse, ToolCallEvent, ToolCallsEvent, ToolErrorEvent, Usage
    from autogen.beta.testing import TestClient, TestConfig

    SCHEMA = "0.1"

REPO = Path(__file__).resolve().parent.parent
WEATHER = {"Paris": "sunny, 22C", "Oslo": "snow, -3C"}


def get_weather(city: str) -> str:
    """Current weather for a city."""
    if city not in WEATHER:
        raise ValueError(f"unknown city: {city}")
    return WEATHER[city]


def get_population(city: str) -> int:
    """Population of a city."""
    return {"Paris": 2_100_000, "Oslo": 700_000}.get(city, 0)


def reply(text: str, prompt_tokens: int, completion_tokens: int) -> ModelResponse:
    return ModelResponse(
        ModelMessage(text),
        usage=Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens),
        model="scripted-model",
        provider="test",
        finish_reason="stop",
    )


def call(name: str, arguments: str, prompt_tokens: int, completion_tokens: int, call_id: str) -> ModelResponse:
    return ModelResponse(
        tool_calls=ToolCallsEvent([ToolCallEvent(name=name, arguments=arguments, id=call_id)]),
        usage=Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens),
        model="scripted-model",
        provider="test",
        finish_reason="tool_calls",
    )


if SCHEMA == "0.1":

    class _ProviderDownClient(TestClient):
        """0.14's test client cannot script an exception; a provider outage raises like this."""

        async def __call__(self, messages, context, **kwargs):
            raise TimeoutError("provider timed out after 30s")

    class ProviderDown(TestConfig):
        def create(self):
            return _ProviderDownClient()

    def provider_down() -> TestConfig:
        return ProviderDown()

    def recovering(*turns) -> TestConfig:
        # 0.14's test client re-raises a tool error on the next model call, so the task errors.
        return TestConfig(*turns)

else:

    def provider_down() -> TestConfig:
        return TestConfig(TimeoutError("provider timed out after 30s"))

    def recovering(*turns) -> TestConfig:
        # Behave like a real provider: the failed tool call is an ordinary result and the model goes on.
        return TestConfig(*turns, raise_tool_errors=False)


SUITE_ROWS = [
    {
        "task_id": "paris",
        "inputs": {"input": "What's the weather in Paris?"},
        "reference_outputs": {"city": "Paris", "answer": "sunny"},
        "tags": ["weather", "easy"],
        "metadata": {"difficulty": 1},
    },
    {
        "task_id": "atlantis",
        "inputs": {"input": "What's the weather in Atlantis?"},
        "reference_outputs": {"city": "Atlantis", "answer": "unknown"},
        "tags": ["weather", "tool-error"],
        "metadata": {"difficulty": 2},
    },
    {
        "task_id": "oslo",
        "inputs": {"input": "Weather and population of Oslo?"},
        "reference_outputs": {"city": "Oslo", "answer": "snow"},
        "tags": ["weather", "multi-tool"],
        "metadata": {"difficulty": 3},
    },
    {"task_id": "greet", "inputs": {"input": "Say hello."}, "tags": ["smalltalk"]},
]


def cassettes() -> dict[str, TestConfig]:
    """One scripted model per expanded task id (`<id>#<n>`); repeat 2 differs on purpose."""
    return {
        "paris#1": TestConfig(
            call("get_weather", '{"city": "Paris"}', 40, 8, "call-paris-1"),
            reply("It is sunny in Paris, 22C.", 60, 9),
        ),
        "paris#2": TestConfig(
            call("get_weather", '{"city": "Paris"}', 40, 8, "call-paris-2"),
            reply("Paris: overcast, I think.", 60, 7),
        ),
        "atlantis#1": recovering(
            call("get_weather", '{"city": "Atlantis"}', 41, 8, "call-atl-1"),
            reply("I could not find a city called Atlantis.", 70, 10),
        ),
        "atlantis#2": provider_down(),
        "oslo#1": TestConfig(
            call("get_weather", '{"city": "Oslo"}', 45, 8, "call-oslo-w1"),
            call("get_population", '{"city": "Oslo"}', 60, 8, "call-oslo-p1"),
            reply("Oslo has snow (-3C) and about 700000 people.", 80, 14),
        ),
        "oslo#2": TestConfig(
            call("get_weather", '{"city": "Oslo"}', 45, 8, "call-oslo-w2"),
            reply("Oslo: snow, -3C.", 62, 8),
        ),
        "greet#1": TestConfig(reply("Hello!", 20, 2)),
        "greet#2": TestConfig(reply("Hi there, hello!", 20, 4)),
    }


# --- scorers: one per return type -------------------------------------------------------------


@scorer
def answer_correct(outputs, reference_outputs) -> bool | None:
    """bool -> pass_rate; None (no reference) -> no feedback record for that task."""
    if reference_outputs is None:
        return None
    return reference_outputs["answer"].lower() in (outputs.get("body") or "").lower()


@scorer
def tool_calls(trace) -> int:
    """int -> score_stats."""
    return len(trace.events_of(ToolCallEvent))


@scorer
def reply_words(outputs) -> float:
    """float -> score_stats."""
    return float(len((outputs.get("body") or "").split()))


@scorer
def outcome(trace) -> str:
    """str -> value_counts."""
    if trace.exception is not None:
        return "crashed"
    if trace.events_of(ToolErrorEvent):
        return "tool_error"
    return "answered"


@scorer
def style(outputs, task) -> list:
    """A list of Feedback with explicit keys, scores, values, comments and detail."""
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
def starts_with_city(outputs, reference_outputs) -> bool:
    """Raises KeyError when the task has no reference or no final answer: AG2 records score None."""
    return outputs["body"].startswith(reference_outputs["city"])


def scorers() -> list:
    judge = TestConfig('{"score": 0.75, "reasoning": "Mostly answers the question."}')
    return [
        answer_correct,
        tool_calls,
        reply_words,
        outcome,
        style,
        starts_with_city,
        tool_called("get_weather"),
        no_tool_errors(),
        final_answer_matches(field="city", matcher="contains"),
        token_budget(150),
        agent_judge(judge, criterion="The answer resolves the user's request.", key="helpfulness"),
        failure_attribution(key="failure_mode"),
    ]


async def make_run(store_dir: Path) -> Path:
    agent = Agent(
        "weather_bot",
        "You answer weather questions with the tools.",
        config=TestConfig("unused"),
        tools=[get_weather, get_population],
    )
    run_id = f"weather-schema-{SCHEMA.replace('.', '')}"
    await run_agent(
        Suite.from_list(SUITE_ROWS, name="weather"),
        agent=agent,
        store_dir=store_dir,
        scorers=scorers(),
        model_config=cassettes(),
        repeats=2,
        concurrency=1,
        run_id=run_id,
        label="weather-nightly",
    )
    return store_dir / f"{run_id}.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "tests" / "data" / "ag2")
    args = parser.parse_args()
    path = asyncio.run(make_run(args.out))
    print(f"wrote {path} (schema {SCHEMA})")


if __name__ == "__main__":
    main()
