"""One scorer's effective score for every sample of a run, read as packed arrays for the
comparison (store/queries/compare.py run_scores): no Python object per row.

The effective score is the filter language's (store/queries/effective_scores.py EFFECTIVE_ORDER): a
human's, then the latest job's, then the log's, a job's score without a value never over one
with a value. A run scored by one source and job has at most one row per sample (the scores
table's UNIQUE (sample_rowid, scorer, source, job_id)), read in sample_rowid order from either
index that starts (sample_rowid, scorer). With several, the scores_effective index holds them
in EFFECTIVE_ORDER after (sample_rowid, scorer), so one range scan of it meets each sample's
scores best first and the first row per sample counts (without that index they are sorted).

Each row becomes one character (`0`, `1`, `x` another number, `d` a dict, `n` no number) in
one group_concat; only when there are `x` rows are their values written out as numbers, with
quote(), which SQLite writes with as many digits as the double needs to read back the same (a
plain REAL-to-text keeps 15 and rounds). Binary scores, the common case, cost one byte a sample.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evtui.store.queries.effective_scores import EFFECTIVE_ORDER

__all__ = ["EffectiveColumn", "effective_column", "SampleRange", "sample_range", "sample_key_texts", "same_sample_keys",
           "sample_ids_at"]  # fmt: skip

# A simple CASE on value_num first: the common 0/1 rows take one comparison each.
_CODE = (
    "CASE value_num WHEN 0 THEN '0' WHEN 1 THEN '1' ELSE "
    "CASE WHEN value_num IS NOT NULL THEN 'x' WHEN substr(value, 1, 1) = '{' THEN 'd' ELSE 'n' END END"
)
_OTHER = "CASE WHEN value_num NOT IN (0, 1) THEN quote(value_num) END"  # NULL rows are skipped by group_concat
_WHERE = "WHERE sc.sample_rowid BETWEEN ? AND ? AND sc.scorer = ?"
_CODE_VALUES = np.full(256, math.nan)  # a code's value; `x` rows are filled from their numbers
_CODE_VALUES[ord("0")], _CODE_VALUES[ord("1")] = 0.0, 1.0


@dataclass(frozen=True)
class EffectiveColumn:
    """Per sample position (rowid − low): the effective value (NaN: unscored or not a number)."""

    values: np.ndarray  # float64
    present: np.ndarray | None  # bool: the sample has a score; None when every sample has one
    dict_valued: int  # effective scores whose value is a JSON object


def _numbers(text: str | None, count: int, dtype: type = float) -> np.ndarray:
    if not count:
        return np.zeros(0, dtype=dtype)
    parsed = np.fromstring(text, sep=",", dtype=dtype)  # type: ignore[arg-type]
    if len(parsed) != count:
        raise ValueError(f"expected {count} numbers from the index, read {len(parsed)}")
    return parsed


def _rows_sql(conn: sqlite3.Connection, columns: str, one_layer: bool) -> str:
    """The scorer's score rows of a rowid range, each sample's effective one first.

    One layer: at most one row a sample, so sample_rowid order is enough, and any index
    starting (sample_rowid, scorer) gives it without a sort. Several: the scores_effective
    index's own order is EFFECTIVE_ORDER (an ORDER BY on a range of it still sorts each sample's
    rows: 4× slower); an index without it is sorted explicitly."""
    if one_layer:
        return f"SELECT {columns} FROM scores sc {_WHERE} ORDER BY sc.sample_rowid"
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'scores_effective'").fetchone():
        return f"SELECT {columns} FROM scores sc INDEXED BY scores_effective {_WHERE}"
    return f"SELECT {columns} FROM scores sc {_WHERE} ORDER BY sc.sample_rowid, {EFFECTIVE_ORDER}"


def effective_column(conn: sqlite3.Connection, scorer: str, low: int, high: int, *, one_layer: bool) -> EffectiveColumn:
    """The effective `scorer` score of the samples with rowids low..high (one run's, contiguous).
    `one_layer`: the run has scores of this scorer from one source and job only, so a sample has
    at most one row and the rows' rowids are only read when some samples have none."""
    size = high - low + 1
    params = (low, high, scorer)
    if one_layer:
        sql = f"SELECT group_concat(code, '') FROM ({_rows_sql(conn, f'{_CODE} AS code', True)})"
        (codes_text,) = conn.execute(sql, params).fetchone()
        offsets_text = None
    else:
        codes_text, offsets_text = conn.execute(
            f"SELECT group_concat(code, ''), group_concat(position) FROM "
            f"({_rows_sql(conn, f'{_CODE} AS code, sc.sample_rowid - {int(low)} AS position', False)})",
            params,
        ).fetchone()
    if not codes_text:
        return EffectiveColumn(np.full(size, math.nan), np.zeros(size, dtype=bool), 0)
    codes = np.frombuffer(codes_text.encode("ascii"), dtype=np.uint8)
    rows = len(codes)
    row_values = _CODE_VALUES[codes]
    counts = np.bincount(codes, minlength=256)
    others = int(counts[ord("x")])
    if others:  # a second scan, only for scores other than 0 and 1, in the same order
        (others_text,) = conn.execute(
            f"SELECT group_concat(number) FROM ({_rows_sql(conn, f'{_OTHER} AS number', one_layer)})", params
        ).fetchone()
        row_values[codes == ord("x")] = _numbers(others_text, others)
    if one_layer and rows == size:
        return EffectiveColumn(row_values, None, int(counts[ord("d")]))
    if offsets_text is None:
        (offsets_text,) = conn.execute(
            f"SELECT group_concat(position) FROM ({_rows_sql(conn, f'sc.sample_rowid - {int(low)} AS position', True)})", params
        ).fetchone()
    offsets = _numbers(offsets_text, rows, np.int64)
    first = np.ones(rows, dtype=bool)  # the best row of each sample comes first (see _rows_sql)
    first[1:] = offsets[1:] != offsets[:-1]
    values = np.full(size, math.nan)
    present = np.zeros(size, dtype=bool)
    values[offsets[first]] = row_values[first]
    present[offsets[first]] = True
    dict_valued = int(np.count_nonzero(codes[first] == ord("d")))
    return EffectiveColumn(values, None if present.all() else present, dict_valued)


@dataclass(frozen=True)
class SampleRange:
    """A run whose samples are exactly the rowids low..high (no other run's rows, no gaps)."""

    low: int
    high: int
    single_epoch: bool  # every epoch is 1

    @property
    def count(self) -> int:
        return self.high - self.low + 1


def sample_range(conn: sqlite3.Connection, run_id: int) -> SampleRange | None:
    """The run's samples as one rowid range, or None when they are not one range of their own
    (other runs' rows, or gaps, inside) or there are none: the caller reads row by row then.
    The bounds and the epochs' range are index seeks; the count one pass over the run's index."""

    def one(sql: str) -> int | None:
        return conn.execute(sql, (run_id,)).fetchone()[0]

    low, high = one("SELECT min(id) FROM samples WHERE run_id = ?"), one("SELECT max(id) FROM samples WHERE run_id = ?")
    if low is None or one("SELECT count(*) FROM samples INDEXED BY samples_run_epoch WHERE run_id = ?") != high - low + 1:
        return None
    single = one("SELECT min(epoch) FROM samples WHERE run_id = ?") == 1 and one("SELECT max(epoch) FROM samples WHERE run_id = ?") == 1
    return SampleRange(low, high, single)


def sample_key_texts(conn: sqlite3.Connection, samples: SampleRange, separator: str) -> tuple[str, str | None]:
    """The range's sample ids in rowid order joined by `separator`, and its epochs comma-joined
    (None when every epoch is 1): one read of the table's rows, no index lookup per row."""
    return conn.execute(
        f"SELECT group_concat(sample_id, ?), {'NULL' if samples.single_epoch else 'group_concat(epoch)'} "
        "FROM samples WHERE id BETWEEN ? AND ?",
        (separator, samples.low, samples.high),
    ).fetchone()


def same_sample_keys(conn: sqlite3.Connection, a: SampleRange, b: SampleRange) -> bool:
    """Whether two runs hold the same (sample id, epoch) at each position of their ranges: one
    scan of A's rows, each joined to B's row at the same offset by rowid (consecutive rowids, so
    SQLite steps to the next row rather than searching). Half the cost of reading both runs' ids."""
    if a.count != b.count:
        return False
    (matched,) = conn.execute(
        "SELECT count(*) FROM samples a JOIN samples b ON b.id = a.id + ? "
        "WHERE a.id BETWEEN ? AND ? AND b.sample_id = a.sample_id AND b.epoch = a.epoch",
        (b.low - a.low, a.low, a.high),
    ).fetchone()
    return matched == a.count


def sample_ids_at(conn: sqlite3.Connection, rowids: Sequence[int]) -> list[str]:
    """The sample ids of these sample rowids, in the order given (a few thousand, or a run whose
    ids hold the separator its joined read uses)."""
    import json

    found = dict(conn.execute(
        "SELECT id, sample_id FROM samples WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(list(rowids)),)))  # fmt: skip
    return [found[rowid] for rowid in rowids]
