"""Write an lm-evaluation-harness 0.3 results file into tests/data/lm_eval_versions/0.3.0/ with the real lm-eval 0.3.0.

lm-eval 0.3 (the harness before the 0.4 rewrite) has no YAML tasks and no `--log_samples`: its
`main.py` runs `lm_eval.evaluator.simple_evaluate` and writes `json.dumps(results, indent=2)` to
`--output_path`. The PyPI wheel leaves main.py out, so this script does those two steps itself,
with lm-eval's own evaluator, metrics, stderr and results dict:

* evtui_capitals  a `MultipleChoiceTask` (lm-eval 0.3's own class: acc and acc_norm with stderr)
                  over scripts/lm_eval_tasks/capitals_test.jsonl (local data, no hub);
* evtui_ppl       a `PerplexityTask` (word_perplexity, byte_perplexity, bits_per_byte) over
                  scripts/lm_eval_tasks/ppl_test.jsonl.

The model is the same scripted LM as make_lm_eval_fixtures.py's (deterministic log-likelihoods),
registered in lm-eval 0.3's model registry and named on the "command line" as main.py would be.

    python3 -m venv /work/venvs/lmeval17-0.3.0
    /work/venvs/lmeval17-0.3.0/bin/pip install torch==2.13.0 lm-eval==0.3.0 requests \\
        transformers==4.36.2 'numpy<2' datasets==2.16.1 'pyarrow<16' 'huggingface_hub<0.24' 'fsspec<=2023.10.0'
    /work/venvs/lmeval17-0.3.0/bin/python scripts/make_lm_eval_v03_fixtures.py
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from make_lm_eval_fixtures import REPO, TASKS_DIR, scripted_loglikelihood, scripted_rolling  # noqa: E402


def _docs(name: str) -> list[dict]:
    return [json.loads(line) for line in (TASKS_DIR / name).read_text().splitlines() if line.strip()]


def register() -> None:
    import lm_eval.base
    import lm_eval.models
    import lm_eval.tasks

    class ScriptedLM(lm_eval.base.LM):
        def __init__(self, pretrained: str = "evtui/scripted", **kwargs) -> None:
            super().__init__()
            self.pretrained = pretrained

        def loglikelihood(self, requests):
            return [scripted_loglikelihood(context, continuation) for context, continuation in requests]

        def loglikelihood_rolling(self, requests):
            return [scripted_rolling(text) for (text,) in requests]

        def greedy_until(self, requests):
            return [" I do not know." for _ in requests]

    class Capitals(lm_eval.base.MultipleChoiceTask):
        VERSION = 0
        DATASET_PATH = None

        def download(self, *args, **kwargs):
            self.dataset = {"test": [{"query": f"The capital of {d['country']} is", "choices": d["choices"], "gold": d["label"]}
                                     for d in _docs("capitals_test.jsonl")]}

        def has_training_docs(self):
            return False

        def has_validation_docs(self):
            return False

        def has_test_docs(self):
            return True

        def test_docs(self):
            return self.dataset["test"]

        def doc_to_text(self, doc):
            return doc["query"]

    class Perplexity(lm_eval.base.PerplexityTask):
        VERSION = 1
        DATASET_PATH = None

        def download(self, *args, **kwargs):
            self.dataset = {"test": _docs("ppl_test.jsonl")}

        def has_validation_docs(self):
            return False

        def has_test_docs(self):
            return True

        def test_docs(self):
            return [d["text"] for d in self.dataset["test"]]

    lm_eval.models.MODEL_REGISTRY["evtui_scripted"] = ScriptedLM
    lm_eval.tasks.TASK_REGISTRY["evtui_capitals"] = Capitals
    lm_eval.tasks.TASK_REGISTRY["evtui_ppl"] = Perplexity


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "tests" / "data" / "lm_eval_versions" / "0.3.0" / "results.json")
    args = parser.parse_args()
    register()
    from lm_eval import evaluator

    results = evaluator.simple_evaluate(
        model="evtui_scripted",
        model_args="pretrained=evtui/scripted-tiny",
        tasks=["evtui_capitals", "evtui_ppl"],
        no_cache=True,
    )
    dumped = json.dumps(results, indent=2)  # main.py's own write
    print(evaluator.make_table(results))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(dumped)


if __name__ == "__main__":
    main()
