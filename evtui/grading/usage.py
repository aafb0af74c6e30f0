"""What grading cost, as kept in each score's metadata and summed per job.

Every score a grader produced carries `metadata["grader_usage"]`:

    {"input_tokens": int, "output_tokens": int, "seconds": float, "calls": int, "cached": int}

`calls` counts grader requests the score needed (panel members, re-asks); `cached` how many of
those were answered from the cache — their tokens and seconds are what the reply cost when it
was first fetched. A job's totals are `job_usage(metadatas)`; the fresh spend is the part with
`cached == 0`, reported separately as `fresh_*`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

USAGE_KEY = "grader_usage"
_FIELDS = ("input_tokens", "output_tokens", "seconds", "calls", "cached")


def reply_usage(reply: Any | None) -> dict[str, Any]:
    """The usage of one grader call (`reply` a GraderReply, or None for a call that failed)."""
    if reply is None:
        return {"input_tokens": 0, "output_tokens": 0, "seconds": 0.0, "calls": 1, "cached": 0}
    return {
        "input_tokens": reply.input_tokens or 0,
        "output_tokens": reply.output_tokens or 0,
        "seconds": reply.seconds,
        "calls": 1,
        "cached": 1 if reply.cached else 0,
    }


def sum_usage(usages: Iterable[dict[str, Any] | None]) -> dict[str, Any]:
    """Field-wise sum of usage dicts (missing fields count 0)."""
    total: dict[str, Any] = {"input_tokens": 0, "output_tokens": 0, "seconds": 0.0, "calls": 0, "cached": 0}
    for usage in usages:
        for name in _FIELDS:
            value = (usage or {}).get(name)
            if isinstance(value, int | float) and not isinstance(value, bool):
                total[name] += value
    return total


def job_usage(metadatas: Iterable[dict[str, Any] | None]) -> dict[str, Any]:
    """Totals over the scores of a job (their metadata dicts), plus the spend not served from cache."""
    usages = [m.get(USAGE_KEY) for m in metadatas if isinstance(m, dict) and isinstance(m.get(USAGE_KEY), dict)]
    total = sum_usage(usages)
    fresh = sum_usage(u for u in usages if not u.get("cached"))
    total.update(
        fresh_input_tokens=fresh["input_tokens"], fresh_output_tokens=fresh["output_tokens"], fresh_seconds=fresh["seconds"]
    )
    return total
