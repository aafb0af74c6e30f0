"""Hand review of scores: a person's new value for a score, saved with provenance.

How a human edit is stored (decided here, relied on by filters and queries):

* The score being reviewed (recorded `log`, an evtui `job`'s, or an earlier human one) is never
  changed. The edit goes to the sample's `source='human'` row for that scorer (job_id 0), created
  on the first edit; the filter language, the samples list and `sample_epochs` already rank a
  human score above a job's and the log's, so the reviewed value becomes the effective one
  everywhere while `match@log` still reads what the file says.
* Every edit appends a row to `score_edits` (origin 'evtui', author, edit_reason, UTC timestamp,
  increasing seq) and sets the human row's current value. When the human row is created its
  history starts, as Inspect's does, with the original it replaced (seq 0, no author), so the
  human row's history alone reads "original → edit → edit…". Nothing is updated in place except
  the human row's current value, and that value is always the last history entry.
* Re-indexing a changed file rewrites only `log` rows; human rows and their history survive.
"""

from __future__ import annotations

import getpass
import json
import math
import os
import subprocess
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from evtui.store.queries.runs import Db, conn_of, run_locator_sql
from evtui.store.ingest.rows import dump_value, value_num

__all__ = [
    "LETTER_GRADES", "HumanEdit", "parse_score_value", "default_author", "reviewer_name", "add_human_edit", "reviews_by_base",
    "ensure_human_score", "append_edit", "now_utc", "BASE_COLUMNS",
]

# Inspect's letter grades: correct, incorrect, partially correct, no answer.
LETTER_GRADES = ("C", "I", "P", "N")


@dataclass(frozen=True)
class HumanEdit:
    """What add_human_edit wrote: the human score row and the history entry appended to it."""

    score_id: int  # the sample's source='human' score for the scorer
    seq: int
    value: Any
    created: bool  # True when this edit created the human score row


def parse_score_value(text: str) -> str | int | float | dict | list:
    """A value typed by a person: C/I/P/N (any case), a number, or a JSON object/list.

    Raises ValueError with a message fit to show under the input.
    """
    stripped = text.strip()
    if not stripped:
        raise ValueError("enter C, I, P, N or a number")
    if stripped.upper() in LETTER_GRADES:
        return stripped.upper()
    if stripped[0] in "{[":
        try:
            parsed = json.loads(stripped)
        except json.JSONDecodeError as error:
            raise ValueError(f"not valid JSON: {error.msg}") from None
        return parsed
    try:
        number: int | float = int(stripped)
    except ValueError:
        try:
            number = float(stripped)
        except ValueError:
            raise ValueError(f"{stripped!r} is not C, I, P, N or a number") from None
    if isinstance(number, float) and not math.isfinite(number):
        raise ValueError("the value must be a finite number")
    return number


def reviewer_name(explicit: str | None = None) -> str:
    """Who is reviewing: `--reviewer`, else $EVTUI_REVIEWER, else `git config user.name`, else the login."""
    if explicit and explicit.strip():
        return explicit.strip()
    env = os.environ.get("EVTUI_REVIEWER", "").strip()
    if env:
        return env
    try:
        git = subprocess.run(["git", "config", "user.name"], capture_output=True, text=True, timeout=5)
        if git.returncode == 0 and git.stdout.strip():
            return git.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "unknown"


def default_author(explicit: str | None = None) -> str:
    """Who edits a score when no name is given: the reviewer rule, as for review verdicts."""
    return reviewer_name(explicit)


def now_utc() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# The columns of the score a human score is made from, in the order ensure_human_score reads them.
BASE_COLUMNS = "sample_rowid, run_id, scorer, source, value, answer, explanation, reason, metadata, created"


def ensure_human_score(conn: Any, base: tuple[Any, ...], timestamp: str) -> tuple[int, bool]:
    """The sample's human score for the scorer of `base` (a BASE_COLUMNS row), created from
    `base` with its history started by the original (seq 0, no author), as Inspect's is.
    Call inside a transaction. Returns (score id, created)."""
    sample_rowid, run_id, scorer = base[0], base[1], base[2]
    human = conn.execute(
        "SELECT id FROM scores WHERE sample_rowid = ? AND scorer = ? AND source = 'human' AND job_id = 0",
        (sample_rowid, scorer),
    ).fetchone()
    if human is not None:
        return human[0], False
    human_id = conn.execute(
        "INSERT INTO scores (sample_rowid, run_id, scorer, source, job_id, value, value_num, answer, "
        "explanation, reason, metadata, created) VALUES (?, ?, ?, 'human', 0, ?, ?, ?, ?, ?, ?, ?)",
        (sample_rowid, run_id, scorer, base[4], None, base[5], base[6], base[7], base[8], timestamp),
    ).lastrowid
    conn.execute(
        "INSERT INTO score_edits (score_id, seq, value, answer, explanation, reason, metadata, "
        "author, edit_reason, timestamp, origin) VALUES (?, 0, ?, ?, ?, ?, ?, NULL, NULL, ?, 'evtui')",
        (human_id, base[4], base[5], base[6], base[7], base[8], base[9]),
    )
    return human_id, True


def append_edit(conn: Any, human_id: int, value_text: str | None, author: str, reason: str | None,
                timestamp: str, metadata: str | None = None) -> tuple[int, int]:
    """Append one entry to a human score's history (inside a transaction): (edit id, seq)."""
    seq = conn.execute("SELECT IFNULL(max(seq), -1) + 1 FROM score_edits WHERE score_id = ?", (human_id,)).fetchone()[0]
    edit_id = conn.execute(
        "INSERT INTO score_edits (score_id, seq, value, answer, explanation, reason, metadata, author, "
        "edit_reason, timestamp, origin) VALUES (?, ?, ?, NULL, NULL, NULL, ?, ?, ?, ?, 'evtui')",
        (human_id, seq, value_text, metadata, author, reason, timestamp),
    ).lastrowid
    return edit_id, seq


def add_human_edit(
    db: Db,
    score_id: int,
    value: Any,
    *,
    reason: str | None,
    author: str | None = None,
    timestamp: str | None = None,
) -> HumanEdit:
    """Record a person's `value` for the score `score_id` (any source), in one transaction.

    The sample's human score for that scorer is created from the reviewed score on the first
    edit (answer, explanation and metadata carried over, as Inspect's edit_score keeps them) and
    its current value set; the edit is appended to its history. Raises LookupError if the score
    does not exist.
    """
    conn = conn_of(db)
    author = author or default_author()
    timestamp = timestamp or now_utc()
    reason = reason.strip() if reason and reason.strip() else None
    conn.execute("BEGIN IMMEDIATE")
    try:
        base = conn.execute(f"SELECT {BASE_COLUMNS} FROM scores WHERE id = ?", (score_id,)).fetchone()
        if base is None:
            raise LookupError(f"no score with id {score_id}")
        human_id, created = ensure_human_score(conn, base, timestamp)
        value_text = dump_value(value)
        edit_id, seq = append_edit(conn, human_id, value_text, author, reason, timestamp)
        conn.execute(
            "UPDATE scores SET value = ?, value_num = ?, reason = ?, created = ? WHERE id = ?",
            (value_text, value_num(value), reason, timestamp, human_id),
        )
        # The review policy (store/review/policy.py) counts a direct edit as an adjudication.
        conn.execute(
            "INSERT INTO review_verdicts (run_path, scorer, sample_id, epoch, reviewer, kind, value, value_before, "
            f"note, time, edit_id) SELECT {run_locator_sql('r')}, ?, s.sample_id, s.epoch, ?, 'edit', ?, ?, ?, ?, ? "
            "FROM samples s JOIN runs r ON r.id = s.run_id WHERE s.id = ?",
            (base[2], author, value_text, base[4], reason, timestamp, edit_id, base[0]),
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return HumanEdit(human_id, seq, value, created)


def reviews_by_base(db: Db, run_id: int) -> dict[int, dict[str, int]]:
    """How many of each scorer's scores a person reviewed in a run, per job whose scores they
    stand over: {0 (recorded) or job id: {scorer: samples reviewed}}. Empty when nobody has."""
    conn = conn_of(db)
    out: dict[int, dict[str, int]] = {}
    # The human scores' partial index: the scores' key would walk every score of the run to find
    # none (0.05 s at 1M samples, on every look at a run nobody reviewed).
    for job_id, scorer, count in conn.execute(
        "SELECT b.job_id, h.scorer, count(*) FROM scores h INDEXED BY scores_human "
        "JOIN scores b ON b.sample_rowid = h.sample_rowid AND b.scorer = h.scorer AND b.source != 'human' "
        "WHERE h.run_id = ? AND h.source = 'human' GROUP BY b.job_id, h.scorer ORDER BY b.job_id, h.scorer",
        (run_id,),
    ):
        out.setdefault(job_id, {})[scorer] = count
    return out
