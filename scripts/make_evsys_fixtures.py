"""Write an EvSys experiment directory into tests/data/evsys/.evsys/ for the EvSys reader's tests.

EvSys (`ev-sys/evsys-sdk`) is not on PyPI, so this cannot run the real SDK. It writes the layout
and record shapes exactly as /work/shared/reference/formats.md (sections 6 and 8) describes them:

    .evsys/<YYYY-MM-DD_HH-MM-SS>_<experiment>/experiment.md
        <arm>[__s<seed>]/logs/{hypothesis.md, conclusion.md, hyperparams.json, artifacts.json,
                               <split>/{rollouts.jsonl, metrics.jsonl}}

    rollouts.jsonl: {kind: "eval", task_id, instruction, expected, reward, output, metadata, benchmark}
    metrics.jsonl:  {ts, step, split, metrics: {n_tasks, mean_reward, pass_rate, pass@1, pass@3, pass^3}}

Metric values are computed with EvSys' documented definitions (reward >= 1.0 passes; pass@k looks
at each task's first k rollouts in order; mean_reward is the macro mean over tasks), so tests can
check evtui's EvSys metrics against the numbers recorded here. Per-rollout `metadata.usage` keys
are this script's choice (the reference does not fix them). Output is deterministic.

    /work/venv/bin/python scripts/make_evsys_fixtures.py [--out tests/data/evsys]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXPERIMENT = "2026-11-20_14-03-12_prompt-ablation"
BENCHMARK = "arith-mini"
NUM_SAMPLES = 3
PASS_THRESHOLD = 1.0

TASKS = [
    ("add-17-25", "What is 17 + 25?", "42"),
    ("mul-6-7", "What is 6 * 7?", "42"),
    ("sub-100-58", "What is 100 - 58?", "42"),
    ("div-84-2", "What is 84 / 2?", "42"),
    ("pow-2-5", "What is 2 ** 5?", "32"),
]
# arm dir -> (per-split success probability, splits that have finished (have metrics))
ARMS = {
    "baseline__s0": ({"val": 0.5, "test": 0.45}, ("val", "test")),
    "baseline__s1": ({"val": 0.55, "test": 0.5}, ("val", "test")),
    "cot__s0": ({"val": 0.8, "test": 0.75}, ("val", "test")),
    # Still running: test rollouts are being written and no metrics line exists yet.
    "cot__s1": ({"val": 0.8, "test": 0.7}, ("val",)),
}


def rollouts_for(arm: str, split: str, p_success: float) -> list[dict]:
    rng = random.Random(f"{arm}/{split}")
    rows = []
    for sample in range(NUM_SAMPLES):
        for task_id, instruction, expected in TASKS:
            right = rng.random() < p_success
            partial = not right and rng.random() < 0.3
            output = expected if right else str(int(expected) + rng.randint(1, 9))
            reward = 1.0 if right else (0.5 if partial else 0.0)
            rows.append(
                {
                    "kind": "eval",
                    "task_id": task_id,
                    "instruction": instruction,
                    "expected": expected,
                    "reward": reward,
                    "output": f"The answer is {output}.",
                    "metadata": {
                        "sample": sample,
                        "toolkit": "calculator" if task_id.startswith(("mul", "pow")) else "none",
                        "usage": {
                            "input_tokens": 30 + len(instruction),
                            "output_tokens": 6 + rng.randint(0, 20),
                            "cost_usd": round(0.00001 * (40 + rng.randint(0, 20)), 6),
                            "duration_sec": round(0.4 + rng.random(), 3),
                        },
                    },
                    "benchmark": BENCHMARK,
                }
            )
    return rows


def task_rewards(rows: list[dict]) -> list[list[float]]:
    """Regroup rollouts by task_id, keeping file order within each task (EvSys' input to metrics)."""
    grouped: dict[str, list[float]] = {}
    for row in rows:
        grouped.setdefault(row["task_id"], []).append(row["reward"])
    return list(grouped.values())


def metrics(rewards: list[list[float]]) -> dict[str, float]:
    tasks = [rs for rs in rewards if rs]
    samples = [r for rs in tasks for r in rs]
    passes = lambda r: r >= PASS_THRESHOLD  # noqa: E731
    return {
        "n_tasks": len(tasks),
        "mean_reward": sum(sum(rs) / len(rs) for rs in tasks) / len(tasks) if tasks else 0.0,
        "pass_rate": sum(map(passes, samples)) / len(samples) if samples else 0.0,
        "pass@1": sum(any(map(passes, rs[:1])) for rs in tasks) / len(tasks),
        "pass@3": sum(any(map(passes, rs[:3])) for rs in tasks) / len(tasks),
        "pass^3": sum(all(map(passes, rs[:3])) for rs in tasks) / len(tasks),
    }


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def make(out: Path) -> Path:
    root = out / ".evsys" / EXPERIMENT
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    (root / "experiment.md").write_text(
        "# prompt-ablation\n\nDoes chain-of-thought prompting help on arith-mini?\n", encoding="utf-8"
    )
    for arm_dir, (p_by_split, finished) in ARMS.items():
        arm, _, seed = arm_dir.partition("__s")
        logs = root / arm_dir / "logs"
        logs.mkdir(parents=True)
        (logs / "hypothesis.md").write_text(f"{arm} reaches pass@3 >= 0.8.\n", encoding="utf-8")
        if len(finished) == len(p_by_split):
            (logs / "conclusion.md").write_text(f"{arm} (seed {seed}) finished.\n", encoding="utf-8")
        hyper = {"model": "qwen3-8b", "prompt": arm, "seed": int(seed), "temperature": 0.7, "num_samples": NUM_SAMPLES}
        (logs / "hyperparams.json").write_text(json.dumps(hyper, indent=2) + "\n", encoding="utf-8")
        (logs / "artifacts.json").write_text(json.dumps({"checkpoint": None, "plots": []}) + "\n", encoding="utf-8")
        for split, p_success in p_by_split.items():
            split_dir = logs / split
            split_dir.mkdir()
            rows = rollouts_for(arm_dir, split, p_success)
            write_jsonl(split_dir / "rollouts.jsonl", rows)
            if split in finished:
                # An early partial evaluation, then the final one: readers take the last line.
                first_pass = task_rewards(rows[: len(TASKS)])
                write_jsonl(
                    split_dir / "metrics.jsonl",
                    [
                        {"ts": "2026-11-20T14:05:00Z", "step": 0, "split": split, "metrics": metrics(first_pass)},
                        {
                            "ts": "2026-11-20T14:09:30Z",
                            "step": 1,
                            "split": split,
                            "metrics": metrics(task_rewards(rows)),
                        },
                    ],
                )
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "tests" / "data" / "evsys")
    args = parser.parse_args()
    print(f"wrote {make(args.out)}")


if __name__ == "__main__":
    main()
