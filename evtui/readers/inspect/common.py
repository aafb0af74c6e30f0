"""Inspect AI log dicts (EvalLog header, EvalSample) → evtui records, shared by both readers.

Works on plain parsed JSON (no inspect_ai import): the field names follow inspect_ai 0.3.285
(`log/_log.py`). Records are built unvalidated (`build`, a lean `model_construct`): the input
shape is known, and validating every field of 100k samples would dominate ingest time.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel

from evtui.readers.inspect.legacy import SCORER_PLACEHOLDER, upgrade_header
from evtui.records import ResultRecord, RunRecord, SampleRecord, ScoreEditRecord, ScoreRecord, Usage
from evtui.score_values import sample_id_key

M = TypeVar("M", bound=BaseModel)
# Inspect's edit sentinel: a field an edit did not change.
UNCHANGED = "UNCHANGED"
_FAST_BUILD: dict[type, int] = {}  # model class -> field count, for classes build() may fill directly


def build(cls: type[M], fields: dict[str, Any]) -> M:
    """`cls.model_construct(**fields)` without its per-field Python loop (several times faster).

    Sound only when `fields` names every field (else pydantic fills defaults) and the model has
    no post-init hook, private attributes or extras; anything else goes through model_construct.
    """
    count = _FAST_BUILD.get(cls)
    if count is None:
        simple = not (cls.__pydantic_post_init__ or cls.__private_attributes__
                      or cls.model_config.get("extra") == "allow")
        count = _FAST_BUILD[cls] = len(cls.__pydantic_fields__) if simple else -1
    if len(fields) != count:
        return cls.model_construct(**fields)
    record = cls.__new__(cls)
    _set = object.__setattr__
    _set(record, "__dict__", fields)
    _set(record, "__pydantic_fields_set__", set(fields))
    _set(record, "__pydantic_extra__", None)
    _set(record, "__pydantic_private__", None)
    return record


def sample_sort_key(sample_id: Any, epoch: int) -> tuple[int, str]:
    """Inspect's sample order (`log/_log.py::sort_samples`): epoch, then id (ints zero-padded)."""
    return (epoch, sample_id if isinstance(sample_id, str) else str(sample_id).zfill(20))


# --- run ------------------------------------------------------------------------------------------


def _seconds_between(start: str | None, end: str | None) -> float | None:
    if not start or not end:
        return None
    try:
        return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()
    except ValueError:
        return None


def _whole(value: Any) -> int | None:
    """A count as Inspect reads it: pydantic takes "12" for 12 (some writers quote numbers)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _real(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _add(total: Any, value: Any) -> Any:
    return total if value is None else value if total is None else total + value


def usage_totals(model_usage: dict[str, Any] | None) -> tuple[int | None, int | None, int | None, float | None]:
    """(input, output, total tokens, cost) summed over Inspect's per-model ModelUsage dicts."""
    input_tokens = output_tokens = total_tokens = cost = None
    for usage in (model_usage or {}).values():
        if isinstance(usage, dict):
            input_tokens = _add(input_tokens, _whole(usage.get("input_tokens")))
            output_tokens = _add(output_tokens, _whole(usage.get("output_tokens")))
            total_tokens = _add(total_tokens, _whole(usage.get("total_tokens")))
            cost = _add(cost, _real(usage.get("total_cost")))
    return input_tokens, output_tokens, total_tokens, cost


def usage_from_model_usage(model_usage: dict[str, Any] | None, *, total_time: float | None = None,
                           working_time: float | None = None) -> Usage:
    """Sum Inspect's per-model ModelUsage dicts (tokens and total_cost) into one Usage."""
    input_tokens, output_tokens, total_tokens, cost = usage_totals(model_usage)
    return build(Usage, {"input_tokens": input_tokens, "output_tokens": output_tokens,
                         "total_tokens": total_tokens, "cost": cost, "total_time": total_time,
                         "working_time": working_time})


def _run_usage(stats: dict[str, Any], logged_samples: list[dict[str, Any]] | None,
               duration: float | None) -> Usage:
    if stats.get("model_usage") or not logged_samples:
        return usage_from_model_usage(stats.get("model_usage"), total_time=duration)
    # No stats yet (running or killed): add up what the flushed samples used.
    per_sample: dict[str, Any] = {}
    for index, summary in enumerate(logged_samples):
        for model, usage in (summary.get("model_usage") or {}).items():
            per_sample[f"{index}:{model}"] = usage
    return usage_from_model_usage(per_sample, total_time=duration)


def _headline_first(scores: list[Any], headline: Any) -> list[Any]:
    """The EvalScores with the headline's first and, in it, the headline metric first: evtui's
    headline is the first recorded scorer × reducer (Inspect's default), so a task's declared
    `headline_metric` (or the log's resolved `results.headline`) is put there. Inspect's matching:
    each field given narrows the scores (`metric` to those carrying it); unset ones fall back."""
    if not isinstance(headline, dict) or not scores:
        return scores
    wanted = [s for s in scores if isinstance(s, dict)
              and (headline.get("scorer") is None or s.get("scorer") == headline["scorer"])
              and (headline.get("score") is None or s.get("name") == headline["score"])
              and (headline.get("reducer") is None or s.get("reducer") == headline["reducer"])
              and (headline.get("metric") is None or headline["metric"] in (s.get("metrics") or {}))]
    if not wanted:
        return scores
    first = wanted[0]
    metric = headline.get("metric")
    if metric is not None and isinstance(first.get("metrics"), dict):
        metrics = first["metrics"]
        first = {**first, "metrics": {metric: metrics[metric], **{k: v for k, v in metrics.items() if k != metric}}}
    return [first] + [s for s in scores if s is not wanted[0]]


def _results(results: dict[str, Any] | None, headline: Any = None) -> list[ResultRecord]:
    records: list[ResultRecord] = []
    for eval_score in _headline_first((results or {}).get("scores") or [], headline):
        if not isinstance(eval_score, dict):
            continue
        for key, metric in (eval_score.get("metrics") or {}).items():
            params = dict(metric.get("params") or {})
            if metric.get("group"):
                # grouped()/ci() expand into keys like "math" or "lower"; keep which metric made them.
                params["group"] = metric["group"]
            value = metric.get("value") if isinstance(metric, dict) else None
            records.append(build(ResultRecord, dict(
                scorer=eval_score.get("name") or eval_score.get("scorer") or "",
                reducer=eval_score.get("reducer"),
                metric=key,
                value=_real(value),
                scored=_whole(eval_score.get("scored_samples")),
                unscored=_whole(eval_score.get("unscored_samples")),
                params=params,
            )))
    return records


def _model_roles(roles: Any) -> dict[str, str | list[str]]:
    """{role: "provider/model"} or {role: [...]} for a role bound to a list (a panel)."""
    if not isinstance(roles, dict):
        return {}

    def name(config: Any) -> str | None:
        return config.get("model") if isinstance(config, dict) else config if isinstance(config, str) else None

    bound: dict[str, str | list[str]] = {}
    for role, config in roles.items():
        if isinstance(config, list):
            names = [n for n in map(name, config) if n]
            if names:
                bound[str(role)] = names
        elif name(config):
            bound[str(role)] = name(config)  # type: ignore[assignment]
    return bound


def _config(eval_spec: dict[str, Any], plan: dict[str, Any] | None, results: dict[str, Any] | None) -> dict[str, Any]:
    eval_config = eval_spec.get("config") or {}
    config: dict[str, Any] = {
        "scorers": eval_spec.get("scorers") or [],
        "epochs": eval_config.get("epochs"),
        "epochs_reducer": eval_config.get("epochs_reducer"),
        "plan_steps": [
            {"solver": step.get("solver"), "params": step.get("params") or {}}
            for step in (plan or {}).get("steps") or []
        ],
        "task_args": eval_spec.get("task_args") or {},
        "fail_on_error": eval_config.get("fail_on_error"),
        "score_on_error": eval_config.get("score_on_error"),
        # eval(model_roles=...): the model (or panel) each role was bound to, e.g. the grader.
        "model_roles": _model_roles(eval_spec.get("model_roles")),
    }
    if eval_spec.get("scorers_inferred"):
        config["scorers_inferred"] = True  # an older log: `scorers` rebuilt from its results
    if eval_spec.get("metrics") is not None:
        config["metrics"] = eval_spec["metrics"]
    if results:
        # Which scorer each EvalScore came from (dict-valued scores: name = key, scorer = scorer).
        config["result_scores"] = [
            {"name": s.get("name"), "scorer": s.get("scorer"), "reducer": s.get("reducer"),
             "params": s.get("params") or {}}
            for s in results.get("scores") or []
        ]
        if results.get("headline"):
            config["headline"] = results["headline"]
    if isinstance(eval_spec.get("headline_metric"), dict):
        config["headline_metric"] = eval_spec["headline_metric"]  # Task(headline_metric=...), 0.3.2xx
    for key in ("message_limit", "token_limit", "time_limit", "working_limit", "cost_limit"):
        if eval_config.get(key) is not None:
            config[key] = eval_config[key]
    return config


def run_record(path: str, fmt: str, header: dict[str, Any], *, default_status: str = "started",
               logged_samples: list[dict[str, Any]] | None = None) -> RunRecord:
    """Map an EvalLog header (or a `_journal/start.json` LogStart) to a RunRecord.

    `logged_samples` are the sample summaries known without reading samples; they fill
    the counts of a run that has no results yet (still running, or killed). Headers of older
    Inspect releases are brought to today's shape first (`inspect_legacy`).
    """
    header = upgrade_header(header)
    eval_spec = header.get("eval") or {}
    stats = header.get("stats") or {}
    results = header.get("results")
    started = stats.get("started_at") or None
    completed = stats.get("completed_at") or None
    dataset = eval_spec.get("dataset") or {}
    epochs = _whole((eval_spec.get("config") or {}).get("epochs")) or 1
    if results:
        total, done = _whole(results.get("total_samples")), _whole(results.get("completed_samples"))
    else:
        # The selection (sample_id=, a shard's slice) when the header lists it, else the dataset.
        selected = dataset.get("sample_ids")
        samples = len(selected) if isinstance(selected, list) and selected else _whole(dataset.get("samples"))
        total = samples * epochs if samples is not None else None
        done = None if logged_samples is None else sum(1 for s in logged_samples if not s.get("error"))
    duration = _seconds_between(started, completed)
    error = header.get("error")
    metadata = {
        key: value for key, value in (
            ("run_id", eval_spec.get("run_id")),
            ("eval_set_id", eval_spec.get("eval_set_id")),
            ("task_id", eval_spec.get("task_id")),
            ("task_version", eval_spec.get("task_version")),
            ("task_file", eval_spec.get("task_file")),
            ("dataset", {k: dataset.get(k) for k in ("name", "location", "samples") if k in dataset}),
            ("tags", header.get("tags") or eval_spec.get("tags")),
            ("eval_metadata", header.get("metadata") or eval_spec.get("metadata")),
            ("invalidated", header.get("invalidated") or None),
            ("log_updates", header.get("log_updates")),
            ("inspect_version", (eval_spec.get("packages") or {}).get("inspect_ai")),
            ("task_description", eval_spec.get("task_description")),
            # Samples the log resolved when a drain or graceful cancel abandoned queued ones (0.3.26x)
            ("logged_samples", _whole((results or {}).get("logged_samples"))),
        ) if value not in (None, {}, [])
    }
    return build(RunRecord, dict(
        path=path,
        format=fmt,
        run_key=eval_spec.get("eval_id"),
        task=eval_spec.get("task"),
        model=eval_spec.get("model"),
        status=header.get("status") or default_status,
        created=eval_spec.get("created"),
        started_at=started,
        completed_at=completed,
        duration=duration,
        total_samples=total,
        completed_samples=done,
        usage=_run_usage(stats, logged_samples, duration),
        results=_results(results, (results or {}).get("headline") or eval_spec.get("headline_metric")),
        config=_config(eval_spec, header.get("plan"), results),
        metadata=metadata,
        error=error.get("message") if isinstance(error, dict) else None,
    ))


def sample_count_warning(path: str, run: RunRecord, read: int) -> str | None:
    """A log whose recorded results count more samples than it holds (samples stripped, a drain
    or cancel that abandoned queued ones): the recorded numbers stand, the samples are fewer."""
    if not run.results or not isinstance(run.total_samples, int) or read >= run.total_samples:
        return None
    logged = run.metadata.get("logged_samples")
    why = f" (the log resolved {logged}: the rest were abandoned)" if isinstance(logged, int) and logged == read else ""
    return (f"{path}: holds {read} of the {run.total_samples} samples its results count (total_samples){why}; "
            "the recorded numbers are as recorded, figures from the samples cover fewer")


# --- samples -------------------------------------------------------------------------------------


def message_text(message: dict[str, Any]) -> str:
    """ChatMessage.text: the str content, or its text parts joined by newlines."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content
                         if isinstance(part, dict) and part.get("type") == "text")
    return ""


def input_text(sample_input: Any) -> str:
    if isinstance(sample_input, str):
        return sample_input
    if isinstance(sample_input, list):
        for message in reversed(sample_input):
            if isinstance(message, dict) and message.get("role") == "user":
                return message_text(message)
    return ""


def _edit_field(value: Any) -> Any:
    return None if value == UNCHANGED else value


def _history(history: list[dict[str, Any]] | None) -> list[ScoreEditRecord]:
    # None in an edit means "unchanged by this edit" (Inspect's UNCHANGED sentinel).
    records = []
    for edit in history or []:
        provenance = edit.get("provenance") or {}
        metadata = _edit_field(edit.get("metadata"))
        records.append(build(ScoreEditRecord, dict(
            value=_edit_field(edit.get("value")),
            answer=_edit_field(edit.get("answer")),
            explanation=_edit_field(edit.get("explanation")),
            reason=_edit_field(edit.get("reason")),
            metadata=metadata if isinstance(metadata, dict) else None,
            author=provenance.get("author"),
            edit_reason=provenance.get("reason"),
            timestamp=provenance.get("timestamp"),
        )))
    return records


def score_reason(score: dict[str, Any], metadata: dict[str, Any]) -> Any:
    """The score's reason; an older log's `metadata.unscored_reason` (Inspect's legacy shim on load)."""
    reason = score.get("reason")
    if reason is None and isinstance(metadata.get("unscored_reason"), str):
        reason = metadata["unscored_reason"]
    return reason


def score_record(name: str, score: dict[str, Any]) -> ScoreRecord:
    metadata = score.get("metadata") or {}
    reason = score_reason(score, metadata)
    return build(ScoreRecord, dict(
        scorer=name,
        value=score.get("value"),
        answer=score.get("answer"),
        explanation=score.get("explanation"),
        reason=reason,
        metadata=metadata,
        history=_history(score.get("history")),
        source="log",
    ))


def output_completion(output: Any) -> str:
    """ModelOutput.completion; logs before 0.3.1xx do not write it, and Inspect (on read, and
    for an empty one) takes the text of `choices[0].message`, str content or text parts."""
    if not isinstance(output, dict):
        return ""
    completion = output.get("completion")
    if completion:
        return completion
    choices = output.get("choices")
    if choices and isinstance(choices[0], dict) and isinstance(choices[0].get("message"), dict):
        return message_text(choices[0]["message"])
    return ""


def _as_str(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def target_texts(target: Any) -> list[str]:
    """Sample.target as a list of texts (Inspect's str or list of str; anything else as JSON)."""
    if target is None:
        return []
    if isinstance(target, list):
        return [_as_str(t) for t in target]
    return [_as_str(target)]


def sample_record(sample: dict[str, Any], detail_ref: str | None,
                  legacy_scorer: str = SCORER_PLACEHOLDER) -> SampleRecord:
    """Map an EvalSample (or EvalSampleSummary) dict to a SampleRecord.

    `legacy_scorer` names the single `score` of a version-1 sample (`legacy_scorer_name`)."""
    target_list = target_texts(sample.get("target"))
    output = sample.get("output")
    error = sample.get("error")
    limit = sample.get("limit")
    sample_input = sample.get("input")
    scores = sample.get("scores")
    if scores is None and isinstance(sample.get("score"), dict):
        scores = {legacy_scorer: sample["score"]}
    return build(SampleRecord, dict(
        sample_id=sample_id_key(sample.get("id")),  # as Inspect reads it: 1.0 and True are 1
        epoch=sample.get("epoch") or 1,
        input_text=input_text(sample_input),
        input=sample_input,
        target=target_list,
        choices=sample.get("choices"),
        output_text=output_completion(output),
        messages=sample.get("messages") or [],
        metadata=sample.get("metadata") or {},
        usage=usage_from_model_usage(sample.get("model_usage"), total_time=sample.get("total_time"),
                                     working_time=sample.get("working_time")),
        # Full samples hold EvalError dicts and EvalSampleLimit dicts; summaries hold plain strings.
        error=(error.get("message") if isinstance(error, dict) else error) or None,
        limit=(limit.get("type") if isinstance(limit, dict) else limit) or None,
        completed=sample.get("completed", True),
        scores=[score_record(name, score) for name, score in (scores or {}).items()
                if isinstance(score, dict)],
        detail_ref=detail_ref,
    ))
