"""Write lm-evaluation-harness `--log_samples` output into tests/data/lm_eval/ with the real lm-eval.

Runs lm-eval's own command line (`lm_eval --model ... --tasks ... --output_path ... --log_samples`)
on the local YAML tasks in scripts/lm_eval_tasks/ (local JSON data files, no hub access):

* evtui_arith     generate_until, 1-shot, filters `strict-match` and `flexible-extract`, exact_match
* evtui_capitals  multiple_choice, acc and acc_norm
* evtui_ppl       loglikelihood_rolling: word_perplexity, byte_perplexity, bits_per_byte
* evtui_suite     a group of evtui_arith and evtui_capitals (acc and exact_match aggregated)

No model weights can be downloaded here, so the model is `evtui_scripted`, an `lm_eval.api.model.LM`
registered by this script next to lm-eval's own `dummy`. Unlike `dummy` (random numbers, always
"lol") it answers deterministically: arithmetic it works out, written as "#### n" for some questions
and as prose for others (so the two filters disagree), one wrong; log-likelihoods from a hash of the
request. Everything else (requests, filters, metrics, groups, stderr, file writing) is lm-eval's.

lm-eval pulls torch, so it is not a test extra; run this in a throwaway venv:

    python3 -m venv /work/venvs/lmv-lmeval
    /work/venvs/lmv-lmeval/bin/pip install torch==2.13.0 lm-eval==0.4.13
    /work/venvs/lmv-lmeval/bin/python scripts/make_lm_eval_fixtures.py [--out tests/data/lm_eval]

Older releases (issue 17: users keep years of output) write other layouts; the same script runs
them, in a venv per release, and writes to tests/data/lm_eval_versions/<release>/ by default:

    python3 -m venv /work/venvs/lmeval17-0.4.0
    /work/venvs/lmeval17-0.4.0/bin/pip install torch==2.13.0 lm-eval==0.4.0
    /work/venvs/lmeval17-0.4.0/bin/python scripts/make_lm_eval_fixtures.py

lm-eval 0.4.0 and 0.4.1 load the `exact_match` metric from the Hugging Face Hub at import
(`evaluate.load("exact_match")`), which is out of reach here: give them the metrics/ folder of a
huggingface/evaluate checkout (not committed) with `--hf-metrics DIR`, and the script points that
one `evaluate.load` at the local copy of the same metric script.

The run's timestamped file names change every time; tests read whatever results*.json is there.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TASKS_DIR = REPO / "scripts" / "lm_eval_tasks"


# Brazil: the gold "Brasilia" has the highest log-likelihood (acc right) but not per character,
# where "Rio de Janeiro" wins (acc_norm wrong), so acc and acc_norm differ.
FIXED_LOGLIKELIHOODS = {"Brasilia": -3.0, "Rio de Janeiro": -4.0, "Sao Paulo": -6.0}


def _unit(text: str) -> float:
    """A deterministic number in [0, 1) from text."""
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) / 2**32


def scripted_loglikelihood(context: str, continuation: str) -> tuple[float, bool]:
    if continuation.strip() in FIXED_LOGLIKELIHOODS:
        return FIXED_LOGLIKELIHOODS[continuation.strip()], False
    # Right answers of the capitals task get a head start on 3 of 5 questions.
    bonus = 2.0 if continuation.strip() in {"Paris", "Tokyo", "Ottawa"} else 0.0
    return -4.0 * _unit(context + "|" + continuation) - 0.5 + bonus, _unit(continuation) > 0.5


def scripted_rolling(text: str) -> float:
    # About 2.6 nats per word, plus a little noise: a plausible perplexity.
    return -(2.6 * len(text.split())) - _unit(text)


def register_scripted_model() -> None:
    from lm_eval.api.model import LM
    from lm_eval.api.registry import register_model

    @register_model("evtui_scripted")
    class ScriptedLM(LM):
        def __init__(self, pretrained: str = "evtui/scripted", **kwargs) -> None:
            super().__init__()
            self.pretrained = pretrained

        @classmethod
        def create_from_arg_string(cls, arg_string, additional_config=None):
            from lm_eval.utils import simple_parse_args_string

            return cls(**simple_parse_args_string(arg_string))

        def loglikelihood(self, requests, disable_tqdm=False):
            return [scripted_loglikelihood(*request.args) for request in requests]

        def loglikelihood_rolling(self, requests, disable_tqdm=False):
            return [scripted_rolling(request.args[0]) for request in requests]

        def generate_until(self, requests, disable_tqdm=False):
            out = []
            for request in requests:
                question = request.args[0].rsplit("Q:", 1)[-1]
                found = re.search(r"(-?\d+)\s*([-+*])\s*(-?\d+)", question)
                if not found:
                    out.append(" I do not know.")
                    continue
                a, op, b = int(found[1]), found[2], int(found[3])
                value = {"+": a + b, "-": a - b, "*": a * b}[op]
                if a == 9:
                    value += 1  # one wrong answer under both filters
                if (a + b) % 3 == 0:
                    out.append(f" The result is {value}.")  # only flexible-extract finds it
                elif a == 12:
                    out.append(f" First {a}, then {b}: #### {value}")
                else:
                    out.append(f" {a} {op} {b} = {value}\n#### {value}")
            return out

    return None


def installed_release() -> str:
    from importlib.metadata import version

    return version("lm_eval")


def load_metrics_from(folder: Path) -> None:
    """`evaluate.load("<name>")` reads `<folder>/<name>/<name>.py` instead of the Hub."""
    import evaluate

    hub_load = evaluate.load

    def load(path, *args, **kwargs):
        local = folder / str(path)
        return hub_load(str(local) if local.is_dir() else path, *args, **kwargs)

    evaluate.load = load


def tasks_for_release(folder: Path) -> Path:
    """A copy of scripts/lm_eval_tasks/ that the installed release accepts: before 0.4.2 the
    regex filter has no `group_select` (flexible-extract then takes the first number, not the
    last), and a group's YAML has no `aggregate_metric_list` (groups average every metric)."""
    import inspect

    from lm_eval.filters.extraction import RegexFilter

    shutil.copytree(TASKS_DIR, folder, dirs_exist_ok=True)
    if "group_select" not in inspect.signature(RegexFilter.__init__).parameters:
        arith = folder / "evtui_arith.yaml"
        arith.write_text("".join(line for line in arith.read_text().splitlines(True) if "group_select" not in line))
    if importlib.util.find_spec("lm_eval.api.group") is None:  # GroupConfig came with 0.4.4
        suite = folder / "evtui_suite.yaml"
        kept, skipping = [], False
        for line in suite.read_text().splitlines(True):
            if not line.startswith((" ", "-")):
                skipping = line.startswith("aggregate_metric_list:")
            if not skipping:
                kept.append(line)
        suite.write_text("".join(kept))
    return folder


def default_out(release: str) -> Path:
    if release == "0.4.13":
        return REPO / "tests" / "data" / "lm_eval"
    return REPO / "tests" / "data" / "lm_eval_versions" / release


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="default: tests/data/lm_eval (0.4.13) or tests/data/lm_eval_versions/<release>")
    parser.add_argument("--hf-metrics", type=Path, help="metrics/ of a huggingface/evaluate checkout (lm-eval < 0.4.2)")
    args = parser.parse_args()
    release = installed_release()
    if args.hf_metrics is not None:
        load_metrics_from(args.hf_metrics.resolve())
    out = (args.out or default_out(release)).resolve()
    if out.exists():
        shutil.rmtree(out)
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    register_scripted_model()
    scratch = tempfile.TemporaryDirectory(prefix="evtui-lm-eval-tasks-")
    tasks_dir = tasks_for_release(Path(scratch.name))
    os.chdir(tasks_dir)  # the YAMLs name their data files relative to here
    import inspect

    import lm_eval.__main__
    from lm_eval.__main__ import cli_evaluate

    argv = [
        "lm_eval",
        "--model", "evtui_scripted",
        "--model_args", "pretrained=evtui/scripted-tiny",
        "--include_path", str(tasks_dir),
        "--tasks", "evtui_suite,evtui_ppl",
        "--output_path", str(out),
        "--log_samples",
    ]
    if '"--seed"' in inspect.getsource(lm_eval.__main__):  # 0.4.0 has no --seed
        argv += ["--seed", "1234"]
    print(f"lm-eval {release} -> {out}", file=sys.stderr)
    sys.argv = argv
    cli_evaluate()


if __name__ == "__main__":
    main()
