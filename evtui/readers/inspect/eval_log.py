"""Reader for Inspect AI `.eval` logs (a zip archive of JSON members, usually zstd-compressed).

The archive is opened once and read member by member from that one file handle: Inspect
replaces the whole file atomically on every flush, so an open handle keeps seeing one
consistent version. When the read ends the path is checked against the handle
(`check_same_file`): replaced → a warning, rewritten in place → an error.

`zipfile` cannot decompress zstd (method 93) before Python 3.14 and is slow to list 100k
members, so the central directory is read by `zip_directory` and members are decompressed
with `zstandard` / `zlib` directly.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import zstandard

from evtui.readers.base import ReaderError, RunRead
from evtui.readers.inspect.sample_json import check_same_file, expand_sample_detail, loads_json, loads_sample_for_record
from evtui.readers.inspect.shape import InspectSample, checked_run_record, checked_sample_record, records, sample_problem
from evtui.readers.limits import MAX_MEMBER_BYTES, LimitError, inflate_bounded, mib, open_regular
from evtui.readers.zip_directory import ZipDirectoryError, ZipMember, read_members
from evtui.readers.inspect.common import sample_count_warning
from evtui.records import RunRecord, SampleRecord
from evtui.score_values import sample_id_key

FORMAT = "inspect_eval"
ZIP_MAGIC = b"PK\x03\x04"
HEADER = "header.json"
START = "_journal/start.json"
SUMMARIES = "summaries.json"
JOURNAL_SUMMARIES = "_journal/summaries/"
SAMPLES = "samples/"
_INSPECT_MEMBERS = (START, HEADER, SUMMARIES, "reductions.json", SAMPLES, "_journal/")

_STORED, _DEFLATED, _ZSTD = 0, 8, 93
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # zipfile's structFileHeader
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def sniff(path: Path, head: bytes) -> bool:
    """True if the file is an Inspect `.eval` archive (zip whose members are Inspect's)."""
    if not head.startswith(ZIP_MAGIC):
        return False
    if len(head) >= _LOCAL_HEADER.size:
        name_length = _LOCAL_HEADER.unpack_from(head)[10]
        first_name = head[_LOCAL_HEADER.size:_LOCAL_HEADER.size + name_length].decode("utf-8", "replace")
        if first_name.startswith(_INSPECT_MEMBERS):
            return True
    try:  # some other writer ordered the members differently: ask the central directory
        with open_regular(path) as handle:
            names = {member.name for member in read_members(handle)}
    except (ZipDirectoryError, OSError):
        return False
    return HEADER in names or START in names


class _Archive:
    """An open `.eval` file: members indexed by name (a repeated name: the last entry wins)."""

    def __init__(self, path: Path | str, handle: BinaryIO | None = None, size: int | None = None) -> None:
        """`path` is opened here; or `handle` (a ranged-read file from an object store, `size`
        bytes long) is read, and `path` only names it."""
        self.path = path
        self.name = str(path)
        self.stat: os.stat_result | None = None
        if handle is not None:
            self.file: BinaryIO = handle
        else:
            try:
                self.file = open_regular(path)
            except FileNotFoundError:
                raise ReaderError(self.name, "no such file (deleted before it could be read?)") from None
            except OSError as exc:
                raise ReaderError(self.name, f"cannot open: {exc.strerror or exc}") from exc
        try:
            if handle is None:
                self.stat = os.fstat(self.file.fileno())
                size = self.stat.st_size
            if size == 0:
                raise ReaderError(self.name, "empty file (an Inspect .eval log is a zip archive)")
            try:
                entries = read_members(self.file)
            except (ZipDirectoryError, OSError) as exc:
                raise ReaderError(self.name, f"not a readable zip archive (truncated or corrupt?): {exc}") from exc
            self.members = {member.name: member for member in entries}
        except BaseException:
            self.file.close()
            raise

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> _Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def raw(self, name: str) -> bytes:
        """The decompressed bytes of one member."""
        info = self.members.get(name)
        if info is None:
            raise ReaderError(self.name, "member missing from the archive", where=name)
        size = max(info.size, info.compressed_size)
        if size > MAX_MEMBER_BYTES:  # refused before reading a byte of it
            raise ReaderError(self.name, f"refused: member expands to {mib(size)}, more than the "
                              f"{mib(MAX_MEMBER_BYTES)} a member may", where=name)
        self.file.seek(info.header_offset)
        local = self.file.read(_LOCAL_HEADER.size)
        if len(local) < _LOCAL_HEADER.size or not local.startswith(ZIP_MAGIC):
            raise ReaderError(self.name, "bad local file header (truncated or corrupt archive)", where=name)
        fields = _LOCAL_HEADER.unpack(local)
        self.file.seek(fields[10] + fields[11], os.SEEK_CUR)  # skip file name and extra field
        data = self.file.read(info.compressed_size)
        if len(data) < info.compressed_size:
            raise ReaderError(self.name, "member data is truncated", where=name)
        content = self._decompress(info, data)
        if len(content) != info.size or zlib.crc32(content) != info.crc:
            raise ReaderError(self.name, "member data is corrupt (size or CRC mismatch)", where=name)
        return content

    def _decompress(self, info: ZipMember, data: bytes) -> bytes:
        """Decompressed in chunks up to the member's declared size (and limits.MAX_MEMBER_BYTES),
        so a member that lies about its size, or a bomb, is refused in bounded memory."""
        method = info.method
        try:
            if method == _ZSTD:
                if not info.size:
                    return b""
                if not data.startswith(_ZSTD_MAGIC):
                    raise zstandard.ZstdError("data does not start with a zstd frame")
                # Large members are written as several frames: the reader reads across them.
                return inflate_bounded(data, "zstd", info.size)
            if method == _DEFLATED:
                return inflate_bounded(data, "deflate", info.size)
            if method == _STORED:
                return data
        except LimitError as exc:
            raise ReaderError(self.name, f"refused: {exc}", where=info.name) from None
        except (zstandard.ZstdError, zlib.error, ValueError) as exc:
            raise ReaderError(self.name, f"cannot decompress member: {exc}", where=info.name) from None
        raise ReaderError(self.name, f"unsupported zip compression method {method} "
                          "(expected zstd 93, deflate 8 or stored 0)", where=info.name)

    def json(self, name: str) -> Any:
        data = self.raw(name)
        try:
            return loads_json(data)
        except ValueError as exc:
            raise _json_error(self.name, exc, name) from None

    def json_object(self, name: str, *, for_record: bool = False) -> dict[str, Any]:
        if for_record:
            data = self.raw(name)
            try:
                value = loads_sample_for_record(data)
            except ValueError as exc:
                raise _json_error(self.name, exc, name) from None
        else:
            value = self.json(name)
        if not isinstance(value, dict):
            raise ReaderError(self.name, f"expected a JSON object, found {type(value).__name__}", where=name)
        return value


def _json_error(path: str, exc: ValueError, member: str) -> ReaderError:
    if isinstance(exc, LimitError):
        return ReaderError(path, f"refused: member is {exc}", where=member)
    first_line = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
    return ReaderError(path, f"member is not valid JSON: {first_line}", where=member)


def _journal_summaries(archive: _Archive) -> list[dict[str, Any]]:
    """Summaries of flushed samples: summaries.json, else the journal in flush order (last wins)."""
    if SUMMARIES in archive.members:
        names = [SUMMARIES]
    else:
        numbered = []
        for name in archive.members:
            if name.startswith(JOURNAL_SUMMARIES) and name.endswith(".json"):
                stem = name[len(JOURNAL_SUMMARIES):-len(".json")]
                if stem.isdigit():
                    numbered.append((int(stem), name))
        names = [name for _, name in sorted(numbered)]
    by_key: dict[tuple[str, int], dict[str, Any]] = {}
    for name in names:
        summaries = archive.json(name)
        if not isinstance(summaries, list):
            raise ReaderError(archive.name, "expected a JSON list of sample summaries", where=name)
        for summary in summaries:
            if isinstance(summary, dict):
                problem = sample_problem(summary)
                if problem:
                    raise ReaderError(archive.name, problem, where=name)
                by_key[(sample_id_key(summary.get("id")), summary.get("epoch") or 1)] = summary
    return list(by_key.values())


def _read_header(archive: _Archive) -> tuple[dict[str, Any], str]:
    if HEADER in archive.members:
        return archive.json_object(HEADER), "success"
    if START in archive.members:
        # Running or killed: no header.json yet, so no results and no stats.
        return archive.json_object(START), "started"
    raise ReaderError(archive.name, f"not an Inspect log: neither {HEADER} nor {START} in the archive")


def _sample_members(archive: _Archive, header: dict[str, Any]) -> list[str]:
    """Sample member names in Inspect's order: epoch, then id (int ids zero-padded)."""
    dataset_ids = ((header.get("eval") or {}).get("dataset") or {}).get("sample_ids") or []
    int_ids = {str(i) for i in dataset_ids if isinstance(i, int)}
    keyed = []
    guess_ints = not dataset_ids  # no id list in the header: digits are taken for int ids
    prefix, suffix = len(SAMPLES), -len(".json")
    for name in archive.members:
        if not (name.startswith(SAMPLES) and name.endswith(".json")):
            continue
        sample_id, sep, epoch = name[prefix:suffix].rpartition("_epoch_")
        if not sep or not epoch.isdigit():
            continue
        # The member name loses the id's type; the dataset's id list (or the digits) restores it.
        # Same key as sample_sort_key(): int ids compare zero-padded.
        is_int = sample_id in int_ids if not guess_ints else sample_id.isdigit()
        keyed.append((int(epoch), sample_id.zfill(20) if is_int else sample_id, name))
    keyed.sort()
    return [name for _, _, name in keyed]


def _iter_samples(archive: _Archive, members: list[str], warnings: list[str], run: RunRecord) -> Iterator[InspectSample]:
    """Each sample member parsed (bounded as _Archive reads it), in order; then the checks of
    the whole read. Unmapped: `shape.records` maps them, or ingest builds rows from them."""
    try:
        for name in members:
            yield InspectSample(archive.name, archive.json_object(name, for_record=True), name, name)
        if archive.stat is not None:  # a store's ranged reads are pinned to one version (If-Match) instead
            check_same_file(archive.name, archive.stat, warnings)
        fewer = sample_count_warning(archive.name, run, len(members))
        if fewer:
            warnings.append(fewer)
    finally:
        archive.close()


def read(path: Path) -> RunRead:
    """Read an Inspect `.eval` log: the run now, its samples lazily in Inspect's order."""
    return _read(_Archive(Path(path)))


def read_handle(name: str, handle: BinaryIO, size: int) -> RunRead:
    """read() for an open `.eval` (an object store's ranged-read file): the directory, then each
    member by its own range; `handle` is closed when the samples have been consumed."""
    return _read(_Archive(name, handle, size))


def _read(archive: _Archive) -> RunRead:
    path = archive.name
    try:
        header, default_status = _read_header(archive)
        member = HEADER if default_status == "success" else START
        # Without results (running, killed, or ended in error) the counts come from the summaries.
        logged = _journal_summaries(archive) if not header.get("results") else None
        run = checked_run_record(str(path), FORMAT, header, member, default_status=default_status,
                                 logged_samples=logged)
        members = _sample_members(archive, header)
    except BaseException:
        archive.close()
        raise
    warnings: list[str] = []
    raw = _iter_samples(archive, members, warnings, run)
    return RunRead(run=run, samples=records(raw), warnings=warnings, raw_samples=raw)


def read_summaries(path: Path) -> list[SampleRecord]:
    """Sample summaries only (thinned text, no messages): a quick look without reading samples."""
    with _Archive(Path(path)) as archive:
        return _summary_records(archive)


def _summary_records(archive: _Archive, summaries: list[dict[str, Any]] | None = None) -> list[SampleRecord]:
    return [checked_sample_record(archive.name, s, SUMMARIES,
                                  f"{SAMPLES}{s.get('id')}_epoch_{s.get('epoch') or 1}.json")
            for s in (_journal_summaries(archive) if summaries is None else summaries)]


def read_header_status(name: str, handle: BinaryIO, size: int) -> tuple[dict[str, Any], str]:
    """(header, status) of an open `.eval` (header.json, else the journal's start): the
    central directory and one small member, for deciding what a log covers without its samples."""
    archive = _Archive(name, handle, size)
    header, default_status = _read_header(archive)
    return header, header.get("status") or default_status


def read_handle_summaries(name: str, handle: BinaryIO, size: int) -> RunRead:
    """The run and its sample summaries from an open `.eval` (an object store's ranged-read
    file): the central directory, the header and the summaries members only; each sample's
    full record (its member, `detail_ref`) is read when it is opened. `handle` is closed by
    the time the samples have been consumed."""
    archive = _Archive(name, handle, size)
    try:
        header, default_status = _read_header(archive)
        member = HEADER if default_status == "success" else START
        summaries = _journal_summaries(archive)
        run = checked_run_record(name, FORMAT, header, member, default_status=default_status,
                                 logged_samples=None if header.get("results") else summaries)
        records = _summary_records(archive, summaries)
    finally:
        archive.close()
    return RunRead(run=run, samples=iter(records))


def load_sample_detail(path: Path, detail_ref: str) -> dict[str, Any]:
    """The full EvalSample stored in member `detail_ref`, with condensed events expanded."""
    with _Archive(Path(path)) as archive:
        return expand_sample_detail(archive.json_object(detail_ref))


def load_handle_sample_detail(name: str, handle: BinaryIO, size: int, detail_ref: str) -> dict[str, Any]:
    """load_sample_detail for an open `.eval` (ranged reads: the directory and that one member)."""
    with _Archive(name, handle, size) as archive:
        return expand_sample_detail(archive.json_object(detail_ref))
