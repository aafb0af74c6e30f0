"""A real Inspect AI eval in a child process whose samples finish only when the test says so.

Each sample's solver waits for a gate file `<gates>/<sample id>` (or `<gates>/all`), so a test
decides what is in flight and what has completed, with no timing assumptions. The child writes
its sample buffer under `<data_home>` (XDG_DATA_HOME), never into the user's own data dir.

    proc = start_gated_eval(log_dir, data_home, gates, samples=4, max_samples=2)
    release(gates, 1)            # sample 1 may finish
    release(gates)               # all may finish
    wait_until(lambda: ..., "what we wait for")

Run as a script: python tests/live_eval.py LOG_DIR GATES FORMAT SAMPLES MAX_SAMPLES LOG_BUFFER
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def start_gated_eval(
    log_dir: Path,
    data_home: Path,
    gates: Path,
    *,
    fmt: str = "eval",
    samples: int = 4,
    max_samples: int = 2,
    log_buffer: int = 1,
) -> subprocess.Popen:
    gates.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, XDG_DATA_HOME=str(data_home), INSPECT_LOG_LEVEL="warning")
    args = [sys.executable, __file__, str(log_dir), str(gates), fmt, str(samples), str(max_samples), str(log_buffer)]
    return subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def release(gates: Path, sample_id: int | None = None) -> None:
    (gates / ("all" if sample_id is None else str(sample_id))).touch()


def wait_until(predicate: Callable[[], T], what: str, timeout: float = 60.0, proc: subprocess.Popen | None = None) -> T:
    """Poll `predicate` until it returns something truthy; fail naming `what` after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if proc is not None and proc.poll() is not None and proc.returncode != 0:
            output = proc.stdout.read() if proc.stdout else ""
            output = output.decode(errors="replace") if isinstance(output, bytes) else output
            raise AssertionError(f"eval process failed ({proc.returncode}) while waiting for {what}:\n{output}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=30)
    if proc.stdout:
        proc.stdout.close()


def _main(log_dir: str, gates: str, fmt: str, samples: int, max_samples: int, log_buffer: int) -> None:
    import asyncio

    import inspect_ai.model._model as inspect_model
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, get_model
    from inspect_ai.scorer import match
    from inspect_ai.solver import Generate, TaskState, solver

    # mockllm counts tokens with tiktoken, which downloads a vocabulary: not possible offline.
    inspect_model.count_text_tokens = lambda text: max(1, len(text.split()))
    gate_dir = Path(gates)

    @solver
    def gated_generate():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            while not ((gate_dir / str(state.sample_id)).exists() or (gate_dir / "all").exists()):
                await asyncio.sleep(0.05)
            return await generate(state)

        return solve

    def outputs(input, tools, tool_choice, config) -> ModelOutput:
        text = next((m.text for m in reversed(input) if m.role == "user"), "")
        return ModelOutput.from_content("mockllm/model", text.replace("Say ", "ANSWER: "))

    dataset = [Sample(id=i, input=f"Say {i}", target=str(i)) for i in range(1, samples + 1)]
    task = Task(dataset=dataset, solver=gated_generate(), scorer=match(), name="gated")
    model = get_model("mockllm/model", custom_outputs=outputs, memoize=False)
    eval(task, model=model, log_dir=log_dir, log_format=fmt, display="none",
         max_samples=max_samples, log_buffer=log_buffer)


if __name__ == "__main__":
    a = sys.argv[1:]
    _main(a[0], a[1], a[2], int(a[3]), int(a[4]), int(a[5]))
