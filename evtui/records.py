"""Normalised records every reader produces and the store ingests.

These are the contract between readers/, store/ and scoring/: a reader turns a run file into
one RunRecord and a stream of SampleRecords (each carrying the scores recorded in the file).
JSON-ish fields hold plain JSON values (dict/list/str/number/bool/None; floats may be NaN).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

RunStatus = Literal["started", "success", "cancelled", "error"]
ScoreSource = Literal["log", "job", "human"]


class _Record(BaseModel):
    # Validators are built on first use, not at import: building all six costs 45 ms of every
    # command's start, and most commands (`score`, `report`, `compare`) validate none.
    model_config = ConfigDict(defer_build=True)


class Usage(_Record):
    """Token, cost and time accounting; None means the file does not say."""

    model_config = ConfigDict(extra="forbid")

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cost: float | None = None
    total_time: float | None = None  # seconds, wall clock
    working_time: float | None = None  # seconds, excluding waits


class ScoreEditRecord(_Record):
    """One entry of a score's edit history, with provenance when the file records it."""

    value: Any = None
    answer: str | None = None
    explanation: str | None = None
    reason: str | None = None
    metadata: dict[str, Any] | None = None
    author: str | None = None
    edit_reason: str | None = None
    timestamp: str | None = None


class ScoreRecord(_Record):
    """One scorer's verdict on one sample (one epoch) as recorded in a run file."""

    scorer: str
    value: Any  # str | int | float | bool | list | dict; NaN = unscored
    answer: str | None = None
    explanation: str | None = None
    reason: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    history: list[ScoreEditRecord] = Field(default_factory=list)
    source: ScoreSource = "log"


class SampleRecord(_Record):
    """One (run, sample id, epoch)."""

    sample_id: str  # always text; Inspect int ids become "1"
    epoch: int = 1
    input_text: str = ""  # the prompt as plain text (last user message for chat inputs)
    input: Any = None  # original input: str or list of chat messages
    target: list[str] = Field(default_factory=list)
    choices: list[str] | None = None
    output_text: str = ""  # the final completion / reply
    messages: list[dict[str, Any]] = Field(default_factory=list)  # chat transcript (role, content, tool_calls, …)
    metadata: dict[str, Any] = Field(default_factory=dict)
    usage: Usage = Field(default_factory=Usage)
    error: str | None = None
    limit: str | None = None  # the limit that stopped the sample (token, time, message, …)
    completed: bool = True
    scores: list[ScoreRecord] = Field(default_factory=list)
    # Where the full sample (events, attachments) lives in the source file, for lazy loading.
    detail_ref: str | None = None


class ResultRecord(_Record):
    """One headline metric recorded in a run: scorer × reducer × metric → value."""

    scorer: str  # the EvalScore name (scorer name, or the dict key for dict-valued scores)
    reducer: str | None = None
    metric: str
    value: float | None = None
    scored: int | None = None
    unscored: int | None = None
    params: dict[str, Any] = Field(default_factory=dict)


class RunRecord(_Record):
    """One run file: task, model, status and what the file says about its results."""

    path: str
    format: str  # reader name: inspect_eval, inspect_json, ag2, evsys, jsonl
    run_key: str | None = None  # the file's own run id (Inspect eval_id, AG2 run_id, …)
    task: str | None = None
    model: str | None = None
    status: RunStatus = "success"
    created: str | None = None  # ISO-8601
    started_at: str | None = None
    completed_at: str | None = None
    duration: float | None = None  # seconds
    total_samples: int | None = None
    completed_samples: int | None = None
    usage: Usage = Field(default_factory=Usage)
    results: list[ResultRecord] = Field(default_factory=list)
    # Scoring configuration recorded in the run: scorers (name, options, metrics), reducers,
    # solver params (e.g. multiple_choice.multiple_correct). Free-form, reader-specific keys.
    config: dict[str, Any] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
