"""Write small, real Inspect AI logs into tests/data/inspect/ (and a few into demo/).

Every log is produced by the real `inspect_ai` (0.3.285) with the `mockllm/model` provider and
fixed outputs, so the files are exactly what Inspect writes. Run from the repository root:

    /work/venv/bin/python scripts/make_inspect_fixtures.py              # all of them
    /work/venv/bin/python scripts/make_inspect_fixtures.py killed.json  # only the named ones

(qa_edited.eval is derived from the qa_match.eval on disk.) Token counts come from a word-count
stand-in for tiktoken (see below), so the logs can be made offline.

Files written (stable names; Inspect's own names are timestamped, so each log is renamed):
    qa_match.eval / qa_match.json           12 QA samples, match(numeric=True) + includes()
    mc_epochs.eval / mc_epochs.json         multiple_choice + choice(), Epochs(3, [mean, pass_at_2])
    model_graded.eval                       model_graded_qa with a mock grader (one reply ungraded)
    tool_agent.eval                         use_tools + generate, tool errors, errored samples
    failed.eval                             the same agent with fail_on_error on -> status "error"
    cancelled.eval                          SIGINT mid-run -> status "cancelled"
    killed.eval / killed.json               SIGKILL mid-run -> status "started" (journal / flushed samples)
    qa_edited.eval                          qa_match.eval with edit_score() applied (provenance)
    dict_unscored.eval / dict_unscored.json dict-valued scorer + Score.unscored NaN values

The cancelled/killed runs re-invoke this script as a child process (`--child KIND LOG_DIR FORMAT`).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from inspect_ai import Epochs, Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import ProvenanceData, edit_score, read_eval_log, write_eval_log
from inspect_ai.model import ModelOutput, get_model
from inspect_ai.scorer import (
    Score,
    ScoreEdit,
    Target,
    choice,
    includes,
    match,
    mean,
    model_graded_qa,
    scorer,
    accuracy,
)
from inspect_ai.solver import Generate, TaskState, generate, multiple_choice, solver, use_tools
from inspect_ai.tool import ToolError, tool

import inspect_ai.model._model as _inspect_model_module

# mockllm counts tokens with tiktoken, which downloads its vocabulary on first use; offline (CI,
# sandboxes) that fails every sample. A word-count estimate keeps fixtures reproducible offline.
_inspect_model_module.count_text_tokens = lambda text: max(1, len(text.split()))

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "tests" / "data" / "inspect"
DEMO = REPO / "demo"
MODEL = "mockllm/model"


def _last_user_text(messages) -> str:
    for message in reversed(messages):
        if message.role == "user":
            return message.text
    return ""


def _keyed_outputs(replies: dict[str, list[str]]):
    """A mockllm `custom_outputs` callable: picks the reply by a key found in the prompt.

    Each key's replies are used in turn (epoch 1, 2, 3 …), so outputs vary across epochs while
    staying deterministic with max_samples=1.
    """
    calls: dict[str, int] = {}

    def outputs(input, tools, tool_choice, config) -> ModelOutput:
        prompt = _last_user_text(input)
        for key, options in replies.items():
            if key in prompt:
                n = calls.get(key, 0)
                calls[key] = n + 1
                return ModelOutput.from_content(MODEL, options[n % len(options)])
        return ModelOutput.from_content(MODEL, "I am not sure.")

    return outputs


def _run(task: Task, model, log_dir: Path, fmt: str, **kwargs):
    logs = eval(
        task,
        model=model,
        log_dir=str(log_dir),
        log_format=fmt,
        display="none",
        max_samples=1,
        **kwargs,
    )
    return logs[0]


def _place(log, name: str) -> Path:
    """Move Inspect's timestamped log to a stable name in tests/data/inspect/."""
    source = Path(log.location)
    target = OUT / name
    shutil.move(str(source), target)
    return target


# 1. QA ---------------------------------------------------------------------------------------

QA = [
    ("q01", "What is 6 times 7?", "42", "math", "Let me think. 6 x 7 = 42.\n\nANSWER: 42"),
    ("q02", "What is 1000 + 234.5?", "1234.5", "math", "Adding them gives 1,234.50"),
    ("q03", "A book costs 2 dollars and a pen 3. Total?", "5", "math", "The total is $5"),
    ("q04", "What is 10 / 4?", "2.5", "math", "10 / 4 = 2.25\nANSWER: 2.25"),
    ("q05", "What is 123456 rounded to thousands?", "123000", "math", "ANSWER: 123,000"),
    ("q06", "What is 2 to the 10th?", "1024", "math", "ANSWER: 1024\n\n**Explanation:** 2^10 is 1024, step 2."),
    ("q07", "Capital of France?", "Paris", "geo", "The capital of France is Paris."),
    ("q08", "Capital of Japan?", "Tokyo", "geo", "I believe it is Kyoto."),
    ("q09", "Longest river in Africa?", "Nile", "geo", "ANSWER: The Nile"),
    ("q10", "Largest ocean?", "Pacific", "geo", ""),
    ("q11", "Capital of Australia?", "Canberra", "geo", "Sydney"),
    ("q12", "Mountain on the Nepal-China border, tallest on Earth?", "Everest", "geo", "Mount Everest."),
]


def qa_task() -> Task:
    samples = [
        Sample(id=i + 1, input=q, target=t, metadata={"category": cat, "key": key})
        for i, (key, q, t, cat, _) in enumerate(QA)
    ]
    return Task(
        dataset=samples,
        solver=generate(),
        scorer=[match(numeric=True), includes()],
        name="qa_match",
    )


def qa_model():
    return get_model(MODEL, custom_outputs=_keyed_outputs({q: [out] for _, q, _, _, out in QA}), memoize=False)


# 2. Multiple choice ------------------------------------------------------------------------------

MC = [
    ("Which planet is largest?", ["Mars", "Jupiter", "Venus", "Mercury"], "B",
     ["ANSWER: B", "ANSWER: B", "ANSWER: A"]),
    ("Which is a mammal?", ["Shark", "Trout", "Whale"], "C",
     ["ANSWER: C", "I think ANSWER: (C)", "ANSWER: C"]),
    ("H2O is?", ["Water", "Salt", "Sugar", "Iron"], "A",
     ["ANSWER: B", "ANSWER: B", "ANSWER: A"]),
    ("Which is a prime?", ["4", "6", "7", "9"], "C",
     ["ANSWER: D", "ANSWER: D", "ANSWER: D"]),
    ("Which colour mixes blue and yellow?", ["Green", "Purple", "Orange"], "A",
     ["Hmm, hard to say.", "ANSWER: A", "**ANSWER: A**"]),
    ("Which is the fastest land animal?", ["Cheetah", "Horse", "Lion", "Dog"], "A",
     ["ANSWER: A", "ANSWER: A", "ANSWER: A"]),
]


def mc_task() -> Task:
    samples = [Sample(id=f"mc-{i + 1}", input=q, choices=c, target=t) for i, (q, c, t, _) in enumerate(MC)]
    return Task(dataset=samples, solver=multiple_choice(), scorer=choice(), name="mc_epochs",
                epochs=Epochs(3, ["mean", "pass_at_2"]))


def mc_model():
    return get_model(MODEL, custom_outputs=_keyed_outputs({q: outs for q, _, _, outs in MC}), memoize=False)


# 3. Model graded ---------------------------------------------------------------------------------

GRADED = [
    ("Who wrote Hamlet?", "William Shakespeare", "Hamlet was written by Shakespeare.", "GRADE: C"),
    ("What gas do plants absorb?", "Carbon dioxide", "Plants absorb oxygen.", "The answer is wrong.\nGRADE: I"),
    ("Boiling point of water at sea level in C?", "100", "It boils at 100 degrees.", "Looks right to me. GRADE: C"),
    ("What is the chemical symbol for gold?", "Au", "Ag", "I cannot decide on this one."),
    ("Speed of light in km/s, roughly?", "300000", "About 300,000 km/s.", "Reasoning...\nGRADE: I\nOn reflection GRADE: C"),
]


def graded_task() -> Task:
    grader = get_model(
        MODEL,
        custom_outputs=_keyed_outputs({q: [g] for q, _, _, g in GRADED}),
        memoize=False,
    )
    samples = [Sample(id=i + 1, input=q, target=t) for i, (q, t, _, _) in enumerate(GRADED)]
    return Task(dataset=samples, solver=generate(), scorer=model_graded_qa(model=grader), name="model_graded")


def graded_model():
    return get_model(MODEL, custom_outputs=_keyed_outputs({q: [a] for q, _, a, _ in GRADED}), memoize=False)


# 4. Tool agent -----------------------------------------------------------------------------------


@tool
def add():
    async def execute(x: int, y: int):
        """Add two numbers.

        Args:
            x: First number.
            y: Second number.
        """
        return x + y

    return execute


@tool
def lookup():
    async def execute(city: str):
        """Look up the population of a city.

        Args:
            city: The city name.
        """
        if city == "Atlantis":
            raise ToolError(f"No such city: {city}")
        if city == "Crashville":
            raise RuntimeError("lookup service unavailable")
        return {"Paris": "2.1 million", "Oslo": "0.7 million"}.get(city, "unknown")

    return execute


AGENT = [
    ("What is 19 + 23?", "42", ("add", {"x": 19, "y": 23}), "The sum is 42."),
    ("Population of Paris?", "2.1 million", ("lookup", {"city": "Paris"}), "Paris has about 2.1 million people."),
    ("Population of Atlantis?", "unknown", ("lookup", {"city": "Atlantis"}), "Atlantis does not exist, so unknown."),
    ("Population of Crashville?", "1000", ("lookup", {"city": "Crashville"}), "unreachable"),
    ("Population of Oslo?", "0.7 million", ("lookup", {"city": "Oslo"}), "Oslo: 0.7 million."),
]


def agent_model():
    def outputs(input, tools, tool_choice, config) -> ModelOutput:
        prompt = next(m.text for m in input if m.role == "user")
        for question, _, (fn, args), final in AGENT:
            if question == prompt:
                if input[-1].role == "tool":
                    return ModelOutput.from_content(MODEL, final)
                return ModelOutput.for_tool_call(MODEL, fn, args, content="Let me use a tool.")
        if "boom" in prompt:
            raise RuntimeError("model backend exploded")
        return ModelOutput.from_content(MODEL, "?")

    return get_model(MODEL, custom_outputs=outputs, memoize=False)


def agent_task(name: str = "tool_agent") -> Task:
    samples = [Sample(id=i + 1, input=q, target=t) for i, (q, t, _, _) in enumerate(AGENT)]
    samples.append(Sample(id=len(samples) + 1, input="boom: make the model fail", target="x"))
    return Task(dataset=samples, solver=[use_tools([add(), lookup()]), generate()], scorer=includes(),
                name=name)


# 5/6. Cancelled and killed runs (child process) ----------------------------------------------


@solver
def slow_generate(delay: float):
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        await asyncio.sleep(delay)
        return await generate(state)

    return solve


def slow_task(name: str, delay: float) -> Task:
    samples = [Sample(id=i + 1, input=f"Say {i + 1}", target=str(i + 1)) for i in range(40)]
    return Task(dataset=samples, solver=slow_generate(delay), scorer=match(), name=name)


def slow_model():
    def outputs(input, tools, tool_choice, config) -> ModelOutput:
        return ModelOutput.from_content(MODEL, _last_user_text(input).replace("Say ", "ANSWER: "))

    return get_model(MODEL, custom_outputs=outputs, memoize=False)


def child(kind: str, log_dir: str, fmt: str) -> None:
    # Interrupted by the parent: eval() returns no logs on SIGINT, so don't index the result.
    eval(slow_task(kind, 0.4), model=slow_model(), log_dir=log_dir, log_format=fmt,
         display="none", max_samples=1, log_buffer=2)


def _flushed_samples(log_dir: Path, fmt: str) -> int:
    for path in log_dir.glob(f"*.{fmt}"):
        try:
            if fmt == "json":
                return len(json.loads(path.read_text()).get("samples") or [])
            with zipfile.ZipFile(path) as archive:
                return sum(1 for n in archive.namelist() if n.startswith("samples/"))
        except (zipfile.BadZipFile, OSError, ValueError):
            return 0
    return 0


def interrupted_run(kind: str, sig: int, name: str) -> Path:
    fmt = name.rsplit(".", 1)[1]
    with tempfile.TemporaryDirectory() as tmp:
        log_dir = Path(tmp)
        process = subprocess.Popen([sys.executable, __file__, "--child", kind, tmp, fmt], cwd=REPO)
        deadline = time.monotonic() + 120
        while _flushed_samples(log_dir, fmt) < 6:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                raise SystemExit(f"{kind}: child never flushed samples")
            time.sleep(0.1)
        process.send_signal(sig)
        process.wait(timeout=60)
        time.sleep(0.2)
        (log,) = [p for p in log_dir.glob(f"*.{fmt}")]
        target = OUT / name
        shutil.copy(log, target)
        return target


# 7. Edited log -------------------------------------------------------------------------------


def edited_log(source: Path) -> Path:
    log = read_eval_log(str(source))
    # q04: the model said 2.25 for 2.5; a reviewer decides to accept "2.25" as close enough.
    edit_score(log, 4, "match", ScoreEdit(
        value="C",
        explanation="Reviewer accepted the answer.",
        provenance=ProvenanceData(author="alice", reason="rounding tolerance agreed in review"),
    ))
    # q08 twice, so the history holds two edits with provenance.
    edit_score(log, 8, "includes", ScoreEdit(
        value="P", provenance=ProvenanceData(author="bob", reason="partial credit for a city in Japan"),
    ))
    edit_score(log, 8, "includes", ScoreEdit(
        value="I", provenance=ProvenanceData(author="alice", reason="reverted: Kyoto is wrong"),
    ))
    target = OUT / "qa_edited.eval"
    write_eval_log(log, str(target))
    return target


# 8. Dict-valued scores and unscored NaN ----------------------------------------------------------


@scorer(metrics=[{"length": [mean()], "mentions_target": [mean()]}])
def shape():
    async def score(state: TaskState, target: Target) -> Score:
        text = state.output.completion
        return Score(value={"length": len(text), "mentions_target": float(target.text.lower() in text.lower())},
                     answer=text[:20])

    return score


@scorer(metrics=[accuracy()])
def strict_yes_no():
    async def score(state: TaskState, target: Target) -> Score:
        text = state.output.completion.strip().lower()
        if text not in ("yes", "no"):
            if not text:
                # Legacy style: the reason lives in metadata only.
                return Score(value=float("nan"), metadata={"unscored_reason": "no_response"})
            return Score.unscored(reason="invalid_response_format", answer=text,
                                  explanation="Expected a bare yes or no.")
        return Score(value="C" if text == target.text else "I", answer=text)

    return score


YES_NO = [
    ("Is the sky blue?", "yes", "yes"),
    ("Is fire cold?", "no", "Yes"),
    ("Do fish swim?", "yes", "Well, mostly they do."),
    ("Is 2 odd?", "no", "no"),
    ("Is ice hot?", "no", ""),
]


def dict_task() -> Task:
    samples = [Sample(id=f"yn{i + 1}", input=q, target=t) for i, (q, t, _) in enumerate(YES_NO)]
    return Task(dataset=samples, solver=generate(), scorer=[shape(), strict_yes_no()], name="dict_unscored")


def dict_model():
    return get_model(MODEL, custom_outputs=_keyed_outputs({q: [a] for q, _, a in YES_NO}), memoize=False)


# -------------------------------------------------------------------------------------------------


def _generate(name: str, logs: Path) -> None:
    stem, fmt = name.rsplit(".", 1)
    runs = {
        "qa_match": lambda: _run(qa_task(), qa_model(), logs, fmt),
        "mc_epochs": lambda: _run(mc_task(), mc_model(), logs, fmt),
        "dict_unscored": lambda: _run(dict_task(), dict_model(), logs, fmt),
        "model_graded": lambda: _run(graded_task(), graded_model(), logs, fmt),
        "tool_agent": lambda: _run(agent_task(), agent_model(), logs, fmt, fail_on_error=False),
        # fail_on_error left on: the first errored sample (Crashville) ends the run with status "error".
        "failed": lambda: _run(agent_task("failed_agent"), agent_model(), logs, fmt),
    }
    if stem in runs:
        _place(runs[stem](), name)
    elif stem == "qa_edited":
        edited_log(OUT / "qa_match.eval")
    elif stem == "cancelled":
        interrupted_run("cancelled", signal.SIGINT, name)
    elif stem == "killed":
        interrupted_run("killed", signal.SIGKILL, name)
    else:
        raise SystemExit(f"unknown fixture {name!r}; choose from: {', '.join(ALL)}")


ALL = ["qa_match.eval", "qa_match.json", "mc_epochs.eval", "mc_epochs.json", "dict_unscored.eval",
       "dict_unscored.json", "model_graded.eval", "tool_agent.eval", "qa_edited.eval",
       "cancelled.eval", "killed.eval", "killed.json", "failed.eval"]
DEMO_RUNS = ("qa_match.eval", "mc_epochs.eval", "model_graded.eval", "tool_agent.eval")


def main(names: list[str]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    DEMO.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name in names or ALL:
            _generate(name, Path(tmp))
    for name in DEMO_RUNS:
        if not names or name in names:
            shutil.copy(OUT / name, DEMO / name)
    for path in sorted(OUT.iterdir()):
        print(f"{path.stat().st_size:>8}  {path.relative_to(REPO)}")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        main(sys.argv[1:])
