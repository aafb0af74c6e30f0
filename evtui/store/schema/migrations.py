"""The index schema's versions: each version's DDL and data changes, applied in order by
`store.schema` (tracked in SQLite's `user_version` pragma). A new version adds its text here,
to MIGRATIONS, and raises SCHEMA_VERSION.

Every table later features need (score edits, scoring jobs, the grader cache) exists from
version 1, so those features add queries, not migrations.
"""

from __future__ import annotations

import json
import sqlite3

from evtui.store.review.schema import REVIEW_MIGRATION

__all__ = ["SCHEMA_VERSION", "MIGRATIONS", "WITHOUT_FOREIGN_KEYS", "REINDEXED_SCORES", "metadata_entries", "add_migration_functions"]

SCHEMA_VERSION = 12

_V1 = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,          -- absolute path of the run file (or run directory)
    format TEXT NOT NULL,
    run_key TEXT,                       -- the file's own id (Inspect eval_id, AG2 run_id)
    task TEXT,
    model TEXT,
    status TEXT NOT NULL,               -- started | success | cancelled | error
    created TEXT,
    started_at TEXT,
    completed_at TEXT,
    duration REAL,
    total_samples INTEGER,
    completed_samples INTEGER,
    input_tokens INTEGER,
    output_tokens INTEGER,
    total_tokens INTEGER,
    cost REAL,
    error TEXT,
    config TEXT NOT NULL DEFAULT '{}',  -- JSON: recorded scorers, reducers, solver params
    metadata TEXT NOT NULL DEFAULT '{}',
    -- what the file looked like when indexed: unchanged files are skipped
    file_size INTEGER,
    file_mtime_ns INTEGER,
    file_hash TEXT,
    missing INTEGER NOT NULL DEFAULT 0, -- the file disappeared; its data is kept
    indexed_at TEXT,
    sample_count INTEGER NOT NULL DEFAULT 0 -- samples rows in the index, kept by ingest
);

-- Small scalar columns come first and bulky JSON last: SQLite reads a row's columns in order,
-- so list/sort/filter scans never walk the overflow pages of long transcripts.
CREATE TABLE IF NOT EXISTS samples (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    sample_id TEXT NOT NULL,
    epoch INTEGER NOT NULL DEFAULT 1,
    id_sort TEXT NOT NULL DEFAULT '',   -- sample_id for natural sorting: integers zero-padded to 20
    input_tokens INTEGER,
    output_tokens INTEGER,
    total_tokens INTEGER,
    cost REAL,
    total_time REAL,
    working_time REAL,
    limit_type TEXT,
    completed INTEGER NOT NULL DEFAULT 1,
    content_hash BLOB,                  -- digest of the sample as read, to skip unchanged rows on re-ingest
    error TEXT,
    target TEXT NOT NULL DEFAULT '[]',  -- JSON list of str
    detail_ref TEXT,
    metadata TEXT NOT NULL DEFAULT '{}',
    input_text TEXT NOT NULL DEFAULT '',
    output_text TEXT NOT NULL DEFAULT '',
    choices TEXT,                       -- JSON list of str
    input TEXT,                         -- JSON: str or chat messages
    messages TEXT NOT NULL DEFAULT '[]',-- JSON chat transcript
    UNIQUE (run_id, sample_id, epoch)
);

-- One scorer's verdict on one sample. Recorded scores (source 'log', job_id 0) and scores made
-- by evtui jobs (source 'job') or people (source 'human') live side by side.
CREATE TABLE IF NOT EXISTS scores (
    id INTEGER PRIMARY KEY,
    sample_rowid INTEGER NOT NULL REFERENCES samples(id) ON DELETE CASCADE,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    scorer TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT 'log',
    job_id INTEGER NOT NULL DEFAULT 0,
    value TEXT,                         -- JSON value (NaN allowed)
    value_num REAL,                     -- value_to_float(value); NULL when unscored or not scalar
    answer TEXT,
    explanation TEXT,
    reason TEXT,
    metadata TEXT NOT NULL DEFAULT '{}',
    created TEXT,
    UNIQUE (sample_rowid, scorer, source, job_id)
);

-- Every change to a score, with provenance; rows are only ever added.
CREATE TABLE IF NOT EXISTS score_edits (
    id INTEGER PRIMARY KEY,
    score_id INTEGER NOT NULL REFERENCES scores(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,               -- order within the score's history
    value TEXT,
    answer TEXT,
    explanation TEXT,
    reason TEXT,
    metadata TEXT,
    author TEXT,
    edit_reason TEXT,
    timestamp TEXT,
    origin TEXT NOT NULL DEFAULT 'log'  -- 'log' (history in the file) or 'evtui' (made here)
);

-- Metrics per run: those recorded in the file (job_id 0) and those computed by evtui jobs.
CREATE TABLE IF NOT EXISTS run_results (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    job_id INTEGER NOT NULL DEFAULT 0,
    scorer TEXT NOT NULL,
    reducer TEXT,
    metric TEXT NOT NULL,
    value REAL,
    scored INTEGER,
    unscored INTEGER,
    params TEXT NOT NULL DEFAULT '{}',
    seq INTEGER NOT NULL DEFAULT 0      -- display order as recorded
);

-- A saved scoring configuration and its progress; resumable.
CREATE TABLE IF NOT EXISTS scoring_jobs (
    id INTEGER PRIMARY KEY,
    name TEXT,
    config TEXT NOT NULL,               -- JSON: scorers, reducers, metrics, subset, grader
    status TEXT NOT NULL DEFAULT 'queued', -- queued | running | done | cancelled | failed
    created TEXT,
    updated TEXT,
    total INTEGER NOT NULL DEFAULT 0,
    done INTEGER NOT NULL DEFAULT 0,
    errors INTEGER NOT NULL DEFAULT 0,
    grader_input_tokens INTEGER NOT NULL DEFAULT 0,
    grader_output_tokens INTEGER NOT NULL DEFAULT 0,
    grader_seconds REAL NOT NULL DEFAULT 0
);

-- Grader replies keyed by a hash of (base URL, model, full request); never holds a key.
CREATE TABLE IF NOT EXISTS grader_cache (
    key TEXT PRIMARY KEY,
    base_url TEXT NOT NULL,
    model TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    input_tokens INTEGER,
    output_tokens INTEGER,
    seconds REAL,
    created TEXT
);

-- Files that could not be read, with the reason, so the UI can list them.
CREATE TABLE IF NOT EXISTS ingest_failures (
    path TEXT PRIMARY KEY,
    error TEXT NOT NULL,
    file_size INTEGER,
    file_mtime_ns INTEGER,
    at TEXT
);

CREATE INDEX IF NOT EXISTS samples_run ON samples(run_id, id);
-- Keyset paging for the common sorts: (run, sort key, id) lets `(key, id) > (?, ?)` seek.
CREATE INDEX IF NOT EXISTS samples_run_idsort ON samples(run_id, id_sort, epoch, id);
CREATE INDEX IF NOT EXISTS samples_run_tokens ON samples(run_id, total_tokens, id);
-- (lookups by sample_rowid use the UNIQUE (sample_rowid, scorer, source, job_id) index)
CREATE INDEX IF NOT EXISTS scores_run_scorer ON scores(run_id, scorer, job_id);
CREATE INDEX IF NOT EXISTS score_edits_score ON score_edits(score_id, seq);
CREATE INDEX IF NOT EXISTS run_results_run ON run_results(run_id, job_id);

CREATE VIRTUAL TABLE IF NOT EXISTS samples_fts USING fts5(
    input_text, output_text, content='samples', content_rowid='id'
);

-- Keep the external-content FTS index in step with samples (one statement per line: migrate
-- splits the script on ';' at line ends). Inserts have no trigger: whoever inserts samples adds
-- their FTS rows in bulk (store/ingest/files.py does, per batch: 3x faster than a per-row trigger).
CREATE TRIGGER IF NOT EXISTS samples_fts_delete AFTER DELETE ON samples BEGIN INSERT INTO samples_fts(samples_fts, rowid, input_text, output_text) VALUES ('delete', old.id, old.input_text, old.output_text); END;
CREATE TRIGGER IF NOT EXISTS samples_fts_update AFTER UPDATE OF input_text, output_text ON samples BEGIN INSERT INTO samples_fts(samples_fts, rowid, input_text, output_text) VALUES ('delete', old.id, old.input_text, old.output_text); INSERT INTO samples_fts(rowid, input_text, output_text) VALUES (new.id, new.input_text, new.output_text); END;
"""

# Version 2: what lets a filter over a million samples answer in well under a second.
_V2 = """
-- The transcript and the structured input move out of the samples row. Lists, sorts, filters
-- and counts scan samples rows; with ~2 KB of JSON in each (stored in the row while it is under
-- 4 KB) a scan of a 1M-sample run read 2.8 GB, and 1.2 GB without it. The sample screen and
-- scorers that read the transcript join this table by rowid.
CREATE TABLE IF NOT EXISTS sample_bodies (
    sample_rowid INTEGER PRIMARY KEY REFERENCES samples(id) ON DELETE CASCADE,
    input TEXT,                         -- JSON: str or chat messages
    messages TEXT NOT NULL DEFAULT '[]' -- JSON chat transcript
);
INSERT INTO sample_bodies(sample_rowid, input, messages) SELECT id, input, messages FROM samples;
ALTER TABLE samples DROP COLUMN input;
ALTER TABLE samples DROP COLUMN messages;
-- A sample's effective score for a scorer in one seek, and filters on it without touching the
-- table: 'human' < 'job' < 'log' sorts in precedence order, and the latest job comes first.
CREATE INDEX IF NOT EXISTS scores_effective ON scores(sample_rowid, scorer, source, job_id DESC, value_num, value);
-- `error` and `limit` filters: few samples have either, so these partial indexes stay small
-- and spare a scan of every sample row.
CREATE INDEX IF NOT EXISTS samples_run_errored ON samples(run_id, id) WHERE error != '';
CREATE INDEX IF NOT EXISTS samples_run_limited ON samples(run_id, id) WHERE limit_type != ''
"""

def metadata_entries(metadata: str) -> str:
    """SQL: the top-level entries of the JSON object `metadata` (none when it is not a valid object)."""
    return (
        f"json_each(CASE WHEN NOT json_valid({metadata}) THEN '{{}}' "
        f"WHEN json_type({metadata}) = 'object' THEN {metadata} ELSE '{{}}' END)"
    )


# Version 3: filters that match few samples seek them instead of scanning the run.
_V3 = f"""
-- A score filter (`match == "X"`, `score > 0.9`) reads the scores that satisfy it from these
-- and looks their samples up by rowid, when few do (store/queries/paging.py decides).
CREATE INDEX IF NOT EXISTS scores_value ON scores(run_id, scorer, value);
CREATE INDEX IF NOT EXISTS scores_value_num ON scores(run_id, scorer, value_num);
-- Which runs and scorers have hand-reviewed scores (the run screen's reviewed metrics).
CREATE INDEX IF NOT EXISTS scores_human ON scores(run_id, scorer) WHERE source = 'human';
-- Each sample's top-level metadata entries, as json_each gives them (the same SQL values that
-- json_extract returns), so `metadata.<key>` filters seek instead of parsing every sample's
-- JSON (0.7 s of a 1.2 s scan of 1M samples). A repeated key keeps its first value, as
-- json_extract reads it. Inserts have no trigger (21 µs a sample, against 3 µs in bulk):
-- whoever inserts samples calls index_sample_metadata, as ingest does per batch. Updates and
-- deletes are kept by the trigger and the cascade.
CREATE TABLE IF NOT EXISTS sample_metadata (
    sample_rowid INTEGER NOT NULL REFERENCES samples(id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    run_id INTEGER NOT NULL,
    value,                              -- no type affinity: integers, reals and text stay as they are
    PRIMARY KEY (sample_rowid, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS sample_metadata_value ON sample_metadata(run_id, key, value);
INSERT OR IGNORE INTO sample_metadata(sample_rowid, key, run_id, value) SELECT s.id, j.key, s.run_id, j.value FROM samples s, {metadata_entries('s.metadata')} j;
CREATE TRIGGER IF NOT EXISTS samples_metadata_update AFTER UPDATE OF metadata ON samples WHEN new.metadata IS NOT old.metadata BEGIN DELETE FROM sample_metadata WHERE sample_rowid = old.id; INSERT OR IGNORE INTO sample_metadata(sample_rowid, key, run_id, value) SELECT new.id, j.key, new.run_id, j.value FROM {metadata_entries('new.metadata')} j; END
"""

# Version 4: a job's score without a value (its grader failed, say) never counts over a graded
# score of another source or job. store/queries/effective_scores.py EFFECTIVE_ORDER sorts on this same
# expression first (word for word, or SQLite stops using the index for the order); the
# precedence is otherwise human > latest job > log.
_V4 = """
DROP INDEX IF EXISTS scores_effective;
CREATE INDEX IF NOT EXISTS scores_effective ON scores(sample_rowid, scorer,
    (source = 'job' AND value_num IS NULL AND (value IS NULL OR value IN ('NaN', 'null'))),
    source, job_id DESC, value_num, value)
"""

# Version 5: review verdicts and queues (issue 15), kept in their own module.
# Version 6: a run's epoch count without a scan. `max(epoch)` decides how a run is grouped and
# reduced and was asked four times per groups view, each a scan of the run (0.06 s per million).
_V6 = """
CREATE INDEX IF NOT EXISTS samples_run_epoch ON samples(run_id, epoch)
"""

# Version 7: several runs from one file (a Harbor job's evals keys, an lm-eval results file's
# tasks without a samples file): runs are keyed by (path, part), part '' for a file's one run.
# SQLite cannot change a UNIQUE constraint in place, so the table is rebuilt (SQLite's
# "12 steps"), with foreign keys off: dropping the old table would otherwise cascade into
# every sample and score. Ids are copied, so every reference stays valid.
_RUNS_V7 = _V1[_V1.index("CREATE TABLE IF NOT EXISTS runs (") : _V1.index(");", _V1.index("CREATE TABLE IF NOT EXISTS runs ("))]
_RUN_COPY_COLUMNS = ", ".join(
    line.split()[0] for line in _RUNS_V7.splitlines()[1:] if line.strip() and not line.strip().startswith("--")
)
_V7 = (
    _RUNS_V7.replace("CREATE TABLE IF NOT EXISTS runs (", "CREATE TABLE runs_v7 (")
    .replace("path TEXT NOT NULL UNIQUE,", "path TEXT NOT NULL,         ")
    + ",\n    part TEXT NOT NULL DEFAULT '',     -- which run of the file: '' for its only (or main) run\n"
    "    UNIQUE (path, part)\n);\n"
    f"INSERT INTO runs_v7({_RUN_COPY_COLUMNS}) SELECT {_RUN_COPY_COLUMNS} FROM runs;\n"
    "DROP TABLE runs;\n"
    "ALTER TABLE runs_v7 RENAME TO runs;\n"
    # Formats that now read as several runs are read again at the next ingest (ids are kept).
    "UPDATE runs SET file_hash = NULL WHERE format IN ('harbor', 'lm_eval')\n"
)

# Version 8: one B-tree less to write per score (issue 14: every secondary index on scores cost
# ~0.1 s of re-scoring 100k samples). The UNIQUE key leads with (run_id, scorer, source, job_id),
# so the run-wide lookups of a scorer's job or log scores seek in it, and scores_run_scorer goes.
# The same rows are unique (a sample belongs to one run); lookups by sample seek scores_effective,
# which leads with (sample_rowid, scorer). SQLite cannot change a UNIQUE constraint in place: the
# table is rebuilt as in version 7 (ids copied, so score_edits stay valid) and its indexes remade.
_SCORES_V1 = _V1[_V1.index("CREATE TABLE IF NOT EXISTS scores (") : _V1.index("\n);", _V1.index("CREATE TABLE IF NOT EXISTS scores ("))]
_SCORE_COPY_COLUMNS = ", ".join(
    line.split()[0] for line in _SCORES_V1.splitlines()[1:-1] if line.strip() and not line.strip().startswith("--")
)  # every column line but the last (the UNIQUE constraint)
_V8 = (
    _SCORES_V1.replace("CREATE TABLE IF NOT EXISTS scores (", "CREATE TABLE scores_v8 (").replace(
        "UNIQUE (sample_rowid, scorer, source, job_id)", "UNIQUE (run_id, scorer, source, job_id, sample_rowid)"
    )
    + "\n);\n"
    f"INSERT INTO scores_v8({_SCORE_COPY_COLUMNS}) SELECT {_SCORE_COPY_COLUMNS} FROM scores;\n"
    "DROP TABLE scores;\n"
    "ALTER TABLE scores_v8 RENAME TO scores;\n"
    # Text values' numbers (scoring jobs once stored NULL where ingest stored 0.0) are made
    # Inspect's by version 9, which also makes the value indexes: here only the other two.
    + _V4.split(";\n")[1].strip() + ";\n"  # scores_effective as version 4 made it
    + "\n".join(line for line in _V3.splitlines() if line.startswith("CREATE INDEX IF NOT EXISTS scores_human"))
    + "\n"
)
WITHOUT_FOREIGN_KEYS = {7, 8}

# Version 9: the two indexes score filters seek (by value, by value_num) become one, a B-tree
# less per score written (0.07 s of re-scoring 100k samples, issue 14). Numbers seek its
# value_num; a string seeks (value_num, value), since a string's value_num is a function of it
# (Inspect's value_to_float, store/rows.value_num). That holds for every writer; rows written
# before it was the one function are made to agree here (evtui_value_num, registered by _migrate).
_V9 = """
DROP INDEX IF EXISTS scores_value;
DROP INDEX IF EXISTS scores_value_num;
UPDATE scores SET value_num = evtui_value_num(value) WHERE value LIKE '"%' AND value_num IS NOT evtui_value_num(value);
CREATE INDEX IF NOT EXISTS scores_by_value ON scores(run_id, scorer, value_num, value);
-- Harbor trials now index one metadata key (their times moved to the drill-down): read again at
-- the next ingest, so old and new jobs filter alike (ids are kept).
UPDATE runs SET file_hash = NULL WHERE format = 'harbor'
"""

# Version 10: the metrics of a run that records none (scoring/results/computed.py), kept with the
# run's content stamp they were computed for, so they are computed once however many screens and
# processes ask (store/computed_results.py). `claim` marks a computation in progress: another
# process waits for its row rather than computing the same numbers beside it.
_V10 = """
CREATE TABLE IF NOT EXISTS computed_results (
    run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    stamp TEXT,                         -- the run's content stamp the results are for (NULL: none yet)
    results TEXT NOT NULL DEFAULT '[]', -- JSON: the result records
    notes TEXT NOT NULL DEFAULT '[]',   -- JSON: [{"level", "text"}] how they were computed
    computed_at REAL,                   -- unix time
    cost REAL,                          -- seconds the computation took
    claim TEXT,                         -- host:pid computing them now (NULL: nobody)
    claim_stamp TEXT,
    claimed_at REAL
)
"""

# Version 11 (issue 30): sample ids sort naturally (`q2` before `q10`): every run of digits in
# id_sort is padded, not only an all-digit id's (evtui_id_sort, registered by _migrate; only mixed
# ids change). lm-eval 0.3 results files are one run now: read again at the next ingest, which
# drops the per-task runs they held.
_V11 = """
UPDATE samples SET id_sort = evtui_id_sort(sample_id) WHERE sample_id GLOB '*[0-9]*' AND sample_id GLOB '*[^0-9]*';
UPDATE runs SET file_hash = NULL WHERE format = 'lm_eval'
"""

# Version 12 (issue 27): figures derived from a run's samples and scores that the run screen,
# `evtui report` and `evtui compare` read every time (its integrity, each scorer's scale, its
# groups' metrics), kept beside its computed results with the content stamp they were computed
# for (store/computed_results.py `read_figures`/`store_figures`); `reviews` stamps those that read
# hand reviews too. A later migration that changes what these are computed from clears the table.
_V12 = """
CREATE TABLE IF NOT EXISTS derived_figures (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,                 -- what they are: 'integrity', 'scales', 'groups …'
    stamp TEXT NOT NULL,                -- the run's content stamp they were computed for
    reviews TEXT NOT NULL DEFAULT '',   -- the run's hand-review stamp, for figures that read reviews
    figures TEXT NOT NULL,              -- JSON
    cost REAL,                          -- seconds the computation took
    PRIMARY KEY (run_id, kind)
) WITHOUT ROWID;
-- A run's incomplete samples (few) for its integrity counts, as the errored and limited ones.
CREATE INDEX IF NOT EXISTS samples_run_incomplete ON samples(run_id, id) WHERE completed = 0
"""

MIGRATIONS: dict[int, str] = {
    1: _V1, 2: _V2, 3: _V3, 4: _V4, 5: REVIEW_MIGRATION, 6: _V6, 7: _V7, 8: _V8, 9: _V9, 10: _V10, 11: _V11, 12: _V12,
}
# Versions whose statements rebuild or re-index scores: the query planner's statistics are renewed.
REINDEXED_SCORES = {8, 9}


def add_migration_functions(conn: sqlite3.Connection, current: int) -> None:
    """Register the SQL functions the versions after `current` call: evtui_value_num (version 9)
    and evtui_id_sort (version 11)."""
    if current < 9:
        conn.create_function("evtui_value_num", 1, _json_string_value_num, deterministic=True)
    if current < 11:
        from evtui.store.ingest.rows import id_sort_key  # not at import, as in _json_string_value_num

        conn.create_function("evtui_id_sort", 1, id_sort_key, deterministic=True)


def _json_string_value_num(stored: str | None) -> float | None:
    """store/rows.value_num of a stored JSON string value (what `evtui_value_num` computes in SQL)."""
    from evtui.store.ingest.rows import value_num  # not at import: schema is imported by code that reads no scores

    try:
        value = json.loads(stored) if stored is not None else None
    except ValueError:
        return None
    return value_num(value) if isinstance(value, str) else None

