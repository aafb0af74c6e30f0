"""`evtui score` as a user runs it: a real subprocess on copies of real logs."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).parent / "data"


def evtui(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evtui", *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def _runs(tmp_path: Path, *names: str) -> Path:
    runs = tmp_path / "logs"
    runs.mkdir()
    for name in names:
        source = DATA / "inspect" / name if (DATA / "inspect" / name).exists() else DATA / "ag2" / name
        shutil.copy(source, runs / name)
    return runs


def test_score_json_reproduces_recorded_metrics_per_run(tmp_path):
    runs = _runs(tmp_path, "qa_match.eval", "mc_epochs.eval")
    done = evtui("score", str(runs), "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    by_path = {Path(run["path"]).name: run for run in out["runs"]}
    assert set(by_path) == {"qa_match.eval", "mc_epochs.eval"}
    qa = {r["scorer"]: r for r in by_path["qa_match.eval"]["results"]}
    assert qa["match"]["metrics"] == {"accuracy": 0.5833333333333334, "stderr": 0.1486470975026408}
    assert qa["match"]["scored"] == 12 and qa["match"]["unscored"] == 0 and qa["match"]["reducer"] is None
    mc = {(r["scorer"], r["reducer"]): r["metrics"] for r in by_path["mc_epochs.eval"]["results"]}
    assert mc[("choice", "pass_at_2")]["accuracy"] == 0.7777777777777777
    assert (runs / ".evtui" / "index.db").is_file()  # indexed on the way


def test_score_with_specs_prints_a_readable_table(tmp_path):
    runs = _runs(tmp_path, "mc_epochs.eval")
    done = evtui("score", str(runs / "mc_epochs.eval"), "--scorer", "choice", "--scorer", "answer('letter')",
                 "--reducer", "pass_at_2", "--metric", "accuracy", "--db", str(tmp_path / "idx.db"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(str(runs / "mc_epochs.eval"))
    assert any(line.split()[:2] == ["choice", "pass_at_2"] and "accuracy 0.7778" in line for line in lines)
    assert any(line.split()[:2] == ["answer", "pass_at_2"] for line in lines)
    assert "job 1: done, 36/36 scored, 0 scorer errors" in done.stdout
    assert (tmp_path / "idx.db").is_file() and not (runs / ".evtui").exists()


def test_unknown_scorer_exits_2_and_lists_close_names(tmp_path):
    runs = _runs(tmp_path, "qa_match.eval")
    done = evtui("score", str(runs), "--scorer", "mach(numeric=True)")
    assert done.returncode == 2
    assert "unknown scorer 'mach'" in done.stderr and "Did you mean: match" in done.stderr
    assert done.stdout == ""


def test_bad_argument_exits_2_naming_the_parameter(tmp_path):
    runs = _runs(tmp_path, "qa_match.eval")
    done = evtui("score", str(runs), "--reducer", "pass_at(k='2')")
    assert done.returncode == 2 and "parameter 'k' expects an integer (int), got '2'" in done.stderr


def test_missing_path_exits_2(tmp_path):
    done = evtui("score", str(tmp_path / "nope"))
    assert done.returncode == 2 and "no such file or directory" in done.stderr


def test_plugin_file_scorers_are_usable_from_the_command_line(tmp_path):
    runs = _runs(tmp_path, "weather-schema-02.json")
    done = evtui("score", str(runs), "--plugin", str(DATA / "plugins" / "ag2_weather.py"),
                 "--scorer", "outcome", "--scorer", "tool_called('get_weather')", "--json")
    assert done.returncode == 0, done.stderr
    results = {r["scorer"]: r["metrics"] for r in json.loads(done.stdout)["runs"][0]["results"]}
    assert results["outcome"] == {"count:answered": 6, "count:tool_error": 1, "count:crashed": 1}
    assert results["tool_called[get_weather]"] == {"pass_rate": 0.625}


def test_broken_plugin_exits_2_naming_the_file(tmp_path):
    runs = _runs(tmp_path, "qa_match.eval")
    done = evtui("score", str(runs), "--plugin", str(DATA / "plugins" / "broken.py"))
    assert done.returncode == 2 and "broken.py (line 5)" in done.stderr


def test_saved_configuration_round_trip(tmp_path):
    runs = _runs(tmp_path, "qa_match.eval")
    saved = evtui("score", str(runs), "--scorer", "match(numeric=True)", "--metric", "mean", "--save-config", "numeric", "--json")
    assert saved.returncode == 0, saved.stderr
    assert (runs / ".evtui" / "configs" / "numeric.toml").is_file()
    again = evtui("score", str(runs), "--config", "numeric", "--json")
    assert again.returncode == 0, again.stderr
    first = json.loads(saved.stdout)["runs"][0]["results"]
    second = json.loads(again.stdout)["runs"][0]["results"]
    assert first == second and [r["scorer"] for r in second] == ["match"] and list(second[0]["metrics"]) == ["mean"]
    missing = evtui("score", str(runs), "--config", "nope")
    assert missing.returncode == 2 and "no saved configuration 'nope'" in missing.stderr and "numeric" in missing.stderr


def test_resume_a_job_by_id(tmp_path):
    runs = _runs(tmp_path, "qa_match.eval")
    first = evtui("score", str(runs), "--scorer", "includes", "--json")
    job_id = json.loads(first.stdout)["job_id"]
    again = evtui("score", str(runs), "--scorer", "includes", "--job", str(job_id), "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["job_id"] == job_id
    assert json.loads(again.stdout)["runs"] == json.loads(first.stdout)["runs"]
    alone = evtui("score", str(runs), "--job", str(job_id), "--json")  # its saved configuration
    assert alone.returncode == 0, alone.stderr
    assert json.loads(alone.stdout)["runs"] == json.loads(first.stdout)["runs"]
    unknown = evtui("score", str(runs), "--job", "99")
    assert unknown.returncode == 2 and "no scoring job 99" in unknown.stderr


def test_grader_flags_reach_model_graded_scorers(tmp_path):
    sys.path.insert(0, str(Path(__file__).parent))
    from grader_server import GraderServer

    runs = _runs(tmp_path, "model_graded.eval")
    with GraderServer() as server:
        server.reply("[Submission]: ", "Looks right.\nGRADE: C")
        done = evtui("score", str(runs), "--grader-url", server.base_url, "--grader-model", "judge-1", "--concurrency", "2", "--json")
        requests = list(server.requests)
    assert done.returncode == 0, done.stderr
    (result,) = json.loads(done.stdout)["runs"][0]["results"]
    assert result["scorer"] == "model_graded_qa" and result["metrics"]["accuracy"] == 1.0 and result["scored"] == 5
    assert requests and {r.body["model"] for r in requests} == {"judge-1"}
    assert "grader model from the job's grader settings" in json.dumps(json.loads(done.stdout)["runs"][0]["notes"])
