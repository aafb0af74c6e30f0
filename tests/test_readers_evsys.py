"""EvSys experiment directories (layout from scripts/make_evsys_fixtures.py, per formats.md)."""

from __future__ import annotations

import json
import math
import shutil
from itertools import groupby
from pathlib import Path

import pytest

from evtui.readers import evsys
from evtui.readers.base import ReaderError

EXPERIMENT = Path(__file__).parent / "data" / "evsys" / ".evsys" / "2026-11-20_14-03-12_prompt-ablation"
BASELINE_VAL = EXPERIMENT / "baseline__s0" / "logs" / "val" / "rollouts.jsonl"
RUNNING_TEST = EXPERIMENT / "cot__s1" / "logs" / "test" / "rollouts.jsonl"
ALL_ROLLOUTS = sorted(EXPERIMENT.glob("*/logs/*/rollouts.jsonl"))


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_sniff_recognises_rollouts_by_content() -> None:
    head = BASELINE_VAL.read_bytes()[:8192]
    assert evsys.sniff(BASELINE_VAL, head)
    assert evsys.sniff(Path("elsewhere.jsonl"), head)  # content, not the name
    assert not evsys.sniff(BASELINE_VAL, b'{"id": "q1", "output": "4"}\n')
    assert not evsys.sniff(BASELINE_VAL, b'{"ts": "x", "step": 1, "split": "val", "metrics": {}}\n')


def test_run_names_come_from_the_experiment_layout() -> None:
    run = evsys.read(BASELINE_VAL).run
    assert run.format == "evsys"
    assert run.task == "arith-mini/baseline__s0/val"
    assert run.run_key == "2026-11-20_14-03-12_prompt-ablation/baseline__s0/val"
    assert run.created == "2026-11-20T14:03:12"
    assert run.model == "qwen3-8b"  # from hyperparams.json
    assert run.metadata["experiment"] == "prompt-ablation"
    assert (run.metadata["arm"], run.metadata["seed"], run.metadata["split"]) == ("baseline", 0, "val")
    assert run.metadata["hyperparams"]["temperature"] == 0.7
    assert run.metadata["hypothesis"].startswith("baseline reaches")
    assert run.status == "success"


def test_last_metrics_line_gives_the_results() -> None:
    last = _rows(BASELINE_VAL.parent / "metrics.jsonl")[-1]
    run = evsys.read(BASELINE_VAL).run
    results = {r.metric: r for r in run.results}
    assert set(results) == {"mean_reward", "pass_rate", "pass@1", "pass@3", "pass^3"}
    for name, result in results.items():
        assert result.scorer == "reward"
        assert result.value == last["metrics"][name]
        assert result.scored == last["metrics"]["n_tasks"]
    assert run.completed_at == last["ts"]


def test_split_without_metrics_is_a_run_in_progress() -> None:
    run = evsys.read(RUNNING_TEST).run
    assert run.status == "started"
    assert run.results == []
    assert "conclusion" not in run.metadata


def test_rollouts_become_samples_with_epochs_in_file_order() -> None:
    rows = _rows(BASELINE_VAL)
    samples = list(evsys.read(BASELINE_VAL).samples)
    assert len(samples) == len(rows) == 15
    for task_id in {row["task_id"] for row in rows}:
        rewards_in_file = [row["reward"] for row in rows if row["task_id"] == task_id]
        mine = sorted((s for s in samples if s.sample_id == task_id), key=lambda s: s.epoch)
        assert [s.epoch for s in mine] == [1, 2, 3]
        assert [s.scores[0].value for s in mine] == rewards_in_file
    first = samples[0]
    assert first.sample_id == rows[0]["task_id"]
    assert first.input_text == rows[0]["instruction"]
    assert first.target == [rows[0]["expected"]]
    assert first.output_text == rows[0]["output"]
    assert first.messages == [
        {"role": "user", "content": rows[0]["instruction"]},
        {"role": "assistant", "content": rows[0]["output"]},
    ]
    assert first.scores[0].scorer == "reward"
    assert first.metadata["benchmark"] == "arith-mini"
    assert first.usage.input_tokens == rows[0]["metadata"]["usage"]["input_tokens"]
    assert first.usage.cost == rows[0]["metadata"]["usage"]["cost_usd"]
    assert first.detail_ref == "1"
    assert evsys.load_sample_detail(BASELINE_VAL, "1") == rows[0]


@pytest.mark.parametrize("path", ALL_ROLLOUTS, ids=lambda p: f"{p.parts[-4]}-{p.parts[-2]}")
def test_recorded_pass_at_k_is_reproduced_from_the_samples(path: Path) -> None:
    """EvSys reads each task's first k rollouts; epochs must preserve that order."""
    run_read = evsys.read(path)
    samples = sorted(run_read.samples, key=lambda s: (s.sample_id, s.epoch))
    task_rewards = [[s.scores[0].value for s in group] for _, group in groupby(samples, key=lambda s: s.sample_id)]
    recorded = {r.metric: r.value for r in run_read.run.results}
    computed = {
        "pass@1": sum(any(r >= 1.0 for r in rs[:1]) for rs in task_rewards) / len(task_rewards),
        "pass@3": sum(any(r >= 1.0 for r in rs[:3]) for rs in task_rewards) / len(task_rewards),
        "pass^3": sum(all(r >= 1.0 for r in rs[:3]) for rs in task_rewards) / len(task_rewards),
        "mean_reward": sum(sum(rs) / len(rs) for rs in task_rewards) / len(task_rewards),
    }
    for name, value in recorded.items():
        if name in computed:
            assert computed[name] == pytest.approx(value)


def test_bad_rollout_lines_are_reported_and_skipped(tmp_path: Path) -> None:
    target = tmp_path / ".evsys" / EXPERIMENT.name / "baseline__s0"
    shutil.copytree(EXPERIMENT / "baseline__s0", target)
    rollouts = target / "logs" / "val" / "rollouts.jsonl"
    lines = rollouts.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[2] = "{not json\n"
    lines.insert(4, json.dumps({"kind": "train", "task_id": "x", "reward": 1.0}) + "\n")
    lines.insert(5, json.dumps({"kind": "eval", "reward": 1.0}) + "\n")
    lines.append(lines[0][: len(lines[0]) // 2])  # a writer stopped mid-line
    rollouts.write_text("".join(lines), encoding="utf-8")
    run_read = evsys.read(rollouts)
    samples = list(run_read.samples)
    assert len(samples) == 14
    assert len(run_read.warnings) == 4
    assert f"{rollouts} (line 3): not valid JSON" in run_read.warnings[0]
    assert f"{rollouts} (line 6): not a rollout (no task_id); skipped" == run_read.warnings[1]
    assert "(line 18)" in run_read.warnings[2] and "cut off" in run_read.warnings[2]
    assert "1 rollout(s) of kind 'train'" in run_read.warnings[3]


def test_missing_reward_is_unscored(tmp_path: Path) -> None:
    path = tmp_path / "rollouts.jsonl"
    path.write_text(
        json.dumps({"kind": "eval", "task_id": "t", "instruction": "i", "expected": "e", "reward": None, "output": ""})
        + "\n",
        encoding="utf-8",
    )
    run_read = evsys.read(path)
    (sample,) = list(run_read.samples)
    assert math.isnan(sample.scores[0].value)
    assert run_read.run.task == tmp_path.name  # outside the EvSys layout: just the folder (split) name
    assert run_read.run.status == "started"


def test_unreadable_rollouts_file_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(ReaderError) as caught:
        evsys.read(tmp_path / "missing" / "rollouts.jsonl")
    assert "rollouts.jsonl" in str(caught.value)


def test_long_first_rollout_is_still_recognised(tmp_path: Path) -> None:
    row = {"kind": "eval", "task_id": "t", "instruction": "x" * 20000, "expected": "1", "reward": 1.0, "output": "1"}
    path = tmp_path / "rollouts.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    assert evsys.sniff(path, path.read_bytes()[:8192])
