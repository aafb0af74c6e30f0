"""Per-sample ingest cost of lm-eval and verifiers output against an Inspect log of as many samples.

    /work/venv/bin/python bench/lm_eval_ingest_bench.py [--quick]

Files (cached in bench/out/, gitignored):
  * lm-eval: a `samples_evtui_capitals_<ts>.jsonl` of N lines cloned from the lm-eval-written
    fixture (doc ids renumbered), with the fixture's results file beside it (n-samples patched);
  * lm-eval 0.4.0: the same task as lm-eval 0.4.0 – 0.4.2 wrote it, one `indent=2` JSON array
    `<model_args>_evtui_capitals.jsonl` of N items cloned from the 0.4.0 fixture, its results.json beside it;
  * verifiers: a `results.jsonl` of N rollouts cloned from the vf-eval-written fixture (example ids
    renumbered, 3 rollouts each) with its metadata.json;
  * Inspect: ingest_bench.py's N-sample .eval, cloned from an Inspect-written seed.

Each is ingested by `python -m evtui ingest FILE --db fresh.db --json` in its own subprocess,
`--repeat` times (3), the run of least CPU time counting; wall, CPU (user+sys) and peak RSS come
from os.wait4 (ingest_bench.measure_child). The figure to read is
CPU µs per sample. Target: lm-eval and verifiers at the same per-sample cost as Inspect, read
as at most 5% dearer (the Inspect ingest's CPU time varied by ±4% over five runs here). The Inspect
log's samples carry 2 scores and the verifiers fixture's rollouts 5 (reward + 4 functions), and
each score is a row; "verifiers, 2 scores" keeps one function so the two compare like for like.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
import ingest_bench  # noqa: E402  (its log builder and child measurement)

REPO = BENCH.parent
OUT = BENCH / "out"
LM_EVAL = REPO / "tests" / "data" / "lm_eval" / "evtui__scripted-tiny"
LM_EVAL_040 = REPO / "tests" / "data" / "lm_eval_versions" / "0.4.0"
VF_RUN = next((REPO / "tests" / "data" / "verifiers" / "evals").glob("*/*"))
PY = sys.executable


def build_lm_eval(n: int) -> Path:
    """N lines of the multiple-choice task (2 scores a line, acc and acc_norm, as the Inspect
    log's samples have 2), doc ids renumbered; lm-eval's results file beside it."""
    results = next(LM_EVAL.glob("results_*.json"))
    ts = results.name[len("results_"):-len(".json")]
    folder = OUT / f"lm_eval-{n}" / LM_EVAL.name
    samples = folder / f"samples_evtui_capitals_{ts}.jsonl"
    if samples.exists():
        return samples
    folder.mkdir(parents=True, exist_ok=True)
    doc = json.loads(results.read_text())
    doc["n-samples"]["evtui_capitals"] = {"original": n, "effective": n}
    (folder / results.name).write_text(json.dumps(doc))
    seed = [json.loads(line) for line in (LM_EVAL / samples.name).read_text().splitlines()]
    with open(samples, "w") as f:
        for doc_id in range(n):
            f.write(json.dumps(dict(seed[doc_id % len(seed)], doc_id=doc_id)) + "\n")
    return samples


def build_lm_eval_array(n: int) -> Path:
    """N items of the multiple-choice task as lm-eval 0.4.0 wrote them (json.dumps(indent=2) of
    the list, as its __main__ does), doc ids renumbered; its results.json beside it."""
    name = "pretrained__evtui__scripted-tiny_evtui_capitals.jsonl"
    folder = OUT / f"lm_eval_040-{n}"
    samples = folder / name
    if samples.exists():
        return samples
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(LM_EVAL_040 / "results.json", folder / "results.json")
    seed = json.loads((LM_EVAL_040 / name).read_text())
    tmp = samples.with_suffix(".tmp")
    tmp.write_text(json.dumps([dict(seed[i % len(seed)], doc_id=i) for i in range(n)], indent=2))
    tmp.rename(samples)
    return samples


def build_verifiers(n: int, *, only_correct: bool = False) -> Path:
    """`only_correct`: each rollout keeps one reward function, so it has 2 scores (reward and
    correct_answer) as the Inspect log's samples do; the fixture's rollouts have 5."""
    tag = "-2scores" if only_correct else ""
    folder = OUT / f"verifiers-{n}{tag}" / "evals" / VF_RUN.parent.name / VF_RUN.name
    results = folder / "results.jsonl"
    if results.exists():
        return results
    folder.mkdir(parents=True, exist_ok=True)
    seed = [json.loads(line) for line in (VF_RUN / "results.jsonl").read_text().splitlines()]
    metadata = json.loads((VF_RUN / "metadata.json").read_text())
    metadata["num_examples"] = n // 3
    (folder / "metadata.json").write_text(json.dumps(metadata))
    with open(results, "w") as f:
        for i in range(n):
            line = dict(seed[i % len(seed)], example_id=i // 3)
            if only_correct:
                for name in [k for k in line["metrics"] if k != "correct_answer"]:
                    line.pop(name, None)
                line["metrics"] = {"correct_answer": line["metrics"]["correct_answer"]}
            f.write(json.dumps(line) + "\n")
    return results


def measure(path: Path, repeat: int) -> dict:
    """The run of least CPU time of `repeat` (other processes on a shared machine only add)."""
    runs = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            result = ingest_bench.measure_child(
                [PY, "-m", "evtui", "ingest", str(path), "--db", str(Path(tmp) / "index.db"), "--json"]
            )
        result["samples"] = json.loads(result["stdout"])["runs"][0]["samples"]
        runs.append(result)
    return min(runs, key=lambda r: r["cpu"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="10k samples instead of 100k")
    parser.add_argument("--repeat", type=int, default=3, help="ingests per file; the least CPU time counts")
    args = parser.parse_args()
    n = 10_000 if args.quick else 100_000
    print(f"building {n:,}-sample files (cached in bench/out/) ...", flush=True)
    files = {
        "inspect .eval": ingest_bench.build_log(n, "eval"),
        "lm-eval samples": build_lm_eval(n),
        "lm-eval 0.4.0 array": build_lm_eval_array(n),
        "verifiers results": build_verifiers(n),
        "verifiers, 2 scores": build_verifiers(n, only_correct=True),
    }
    rows = {}
    for name, path in files.items():
        r = measure(path, args.repeat)
        assert r["samples"] == n, (name, r["samples"])
        rows[name] = r
        print(
            f"  {name:19} {path.stat().st_size / 1e6:7.0f} MB   wall {r['wall']:6.2f} s   cpu {r['cpu']:6.2f} s   "
            f"{r['cpu'] / n * 1e6:6.0f} µs cpu/sample   peak RSS {r['rss_mb']:5.0f} MB",
            flush=True,
        )
    base = rows["inspect .eval"]["cpu"]
    print("\ntargets (cpu per sample, vs Inspect):")
    for name in ("lm-eval samples", "lm-eval 0.4.0 array", "verifiers results", "verifiers, 2 scores"):
        ratio = rows[name]["cpu"] / base
        print(f"  {'PASS' if ratio <= 1.05 else 'MISS'}  {name}: {ratio:.2f}x Inspect's per-sample cost (target <= 1.05x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
