"""Sample pages: keyset seeks (forward, backward) and far-end offsets give exactly the sorted rows."""

import pytest

from evtui.store import queries_ui as Q
from evtui.store.schema import connect

from synthetic_index import build_index

PAGE = 37


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("pages") / "index.db"
    build_index(path)
    database = connect(path)
    yield database
    database.conn.close()


def reference(db, sort, descending):
    """The full sorted order computed in Python (NULLs first ascending, last descending)."""
    lines = Q.fetch_sample_lines(db, 1, ["match"], sort="id", limit=10_000)
    def key(line):
        if sort == "id":
            return (line.sort_key,)
        value = {"tokens": line.total_tokens, "score:match": (line.scores.get("match") or Q.ScoreCell(None, None, None)).value_num}[sort]
        return ((value is not None, value if value is not None else 0), line.rowid)
    ordered = sorted(lines, key=key, reverse=descending)
    return [line.rowid for line in ordered]


@pytest.mark.parametrize("sort", ["id", "tokens", "score:match"])
@pytest.mark.parametrize("descending", [False, True])
def test_keyset_forward_backward_and_far_end_agree_with_the_sort(db, sort, descending):
    expected = reference(db, sort, descending)
    total = Q.count_run_samples(db, 1)
    assert total == len(expected) == 500

    forward, previous = [], None
    for offset in range(0, total, PAGE):
        page = Q.fetch_sample_lines(db, 1, ["match"], sort=sort, descending=descending, limit=PAGE, offset=offset, after=previous)
        forward += [line.rowid for line in page]
        previous = page[-1]
    assert forward == expected

    # From the far end (no neighbour), then backwards by keyset from each page's first row.
    last_offset = (total - 1) // PAGE * PAGE
    page = Q.fetch_sample_lines(db, 1, ["match"], sort=sort, descending=descending, limit=PAGE, offset=last_offset, total=total)
    backward = [line.rowid for line in page]
    for offset in range(last_offset - PAGE, -1, -PAGE):
        page = Q.fetch_sample_lines(db, 1, ["match"], sort=sort, descending=descending, limit=PAGE, offset=offset, before=page[0])
        backward = [line.rowid for line in page] + backward
    assert backward == expected


def test_lines_carry_the_effective_score_and_answer(db):
    line = Q.fetch_sample_lines(db, 1, ["match"], limit=1)[0]
    assert line.sample_id == "1" and line.epoch == 1
    cell = line.scores["match"]
    assert cell.value in ('"C"', '"I"', '"P"') and cell.answer == "answer 1"
    assert Q.run_scorers(db, 1) == ["match"]
