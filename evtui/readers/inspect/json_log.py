"""Reader for Inspect AI `.json` logs: one EvalLog object whose samples are streamed.

Inspect writes the header keys (`version, status, eval, plan, results, stats, …`) before
`samples`, and `reductions` after them, always indented by 2 (`to_json_safe(indent=2)`).
That layout gives a fast path: the header is the text before `\n  "samples": [`, and each
sample ends at a line `    }` (a raw newline never occurs inside a JSON string), so samples are
cut out of the byte stream and parsed one at a time with orjson (json for NaN). Files in any
other layout are streamed with ijson (several times slower, same records). Either way a
multi-GB log never sits in memory.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import ijson

from evtui.readers.base import ReaderError, RunRead
from evtui.readers.inspect.legacy import LATEST_VERSION, legacy_scorer_name
from evtui.readers.inspect.sample_json import check_same_file, expand_sample_detail, loads_json, loads_sample_for_record
from evtui.readers.inspect.shape import InspectSample, checked_run_record, records
from evtui.readers.json_stream import NanTolerantStream, restore_fields, restore_specials
from evtui.readers.limits import MAX_MEMBER_BYTES, DepthLimitedStream, LimitError, mib, open_regular
from evtui.readers.inspect.common import sample_count_warning
from evtui.records import RunRecord
from evtui.score_values import sample_id_key

FORMAT = "inspect_json"
# `"eval"` and one of these: 0.3.16x logs written without a top-level `version` have the rest.
_HEADER_KEYS = (b'"version"', b'"status"', b'"plan"')
# One of the EvalSpec ids: logs before 0.3.1xx have no `eval_id`, every one has `task_id`/`run_id`.
_ID_KEYS = (b'"eval_id"', b'"run_id"', b'"task_id"')
_SAMPLES_MARKER = b'\n  "samples": ['
_FIRST_SAMPLE = b'\n    {\n      "'  # a sample at indent 4, its first key at indent 6
_SAMPLE_END = b"\n    }"
# What follows a sample's end: the next sample, or the end of the array. Searching for these
# longer needles is ~1.6x faster than for `_SAMPLE_END` alone (fewer partial matches).
_SAMPLE_END_NEXT = _SAMPLE_END + b",\n    {"
_SAMPLE_END_LAST = _SAMPLE_END + b"\n  ]"
_SEPARATORS = re.compile(rb"[\s,]*")
_HEADER_SCAN_LIMIT = 256 << 20  # a header bigger than this is read by the ijson path
_CHUNK = 4 << 20
# Every sample field a SampleRecord reads (ijson path: NaN sentinels are restored in these; the
# events, attachments and pools are left for load_sample_detail, which restores everything).
_RECORD_FIELDS = ("input", "target", "choices", "messages", "output", "scores", "metadata",
                         "model_usage", "total_time", "working_time", "error", "limit")
_BYTE_RANGE = re.compile(r"@\d+\+\d+")  # in a detail ref: not for people
_DETAIL_REF = re.compile(r"^samples\[(\d+)\](?:@(\d+)\+(\d+))?(?: id=(.*) epoch=(\d+))?$")


def sniff(path: Path, head: bytes) -> bool:
    """True if the file looks like an Inspect EvalLog JSON object."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return (text.startswith(b"{") and b'"eval"' in text and any(key in text for key in _HEADER_KEYS)
            and any(key in text for key in _ID_KEYS))


# --- shared -------------------------------------------------------------------------------------


def _open(path: Path) -> tuple[BinaryIO, os.stat_result]:
    try:
        handle = open_regular(path)
    except FileNotFoundError:
        raise ReaderError(str(path), "no such file (deleted before it could be read?)") from None
    except OSError as exc:
        raise ReaderError(str(path), f"cannot open: {exc.strerror or exc}") from exc
    stat = os.fstat(handle.fileno())
    if stat.st_size == 0:
        handle.close()
        raise ReaderError(str(path), "empty file (an Inspect .json log is one JSON object)")
    return handle, stat


def _json_error(path: Path, exc: Exception, where: str) -> ReaderError:
    if isinstance(exc, LimitError):
        return ReaderError(str(path), f"refused: {exc}", where=where)
    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return ReaderError(str(path), f"invalid or truncated JSON: {first_line}", where=where)


def _check_header(path: Path, header: Any) -> dict[str, Any]:
    if not isinstance(header, dict) or not isinstance(header.get("eval"), dict):
        raise ReaderError(str(path), "not an Inspect log: no 'eval' object in the JSON")
    version = header.get("version")
    if isinstance(version, int) and version > LATEST_VERSION:
        # Inspect's JSON reader refuses these too (its .eval reader does not check the version).
        raise ReaderError(str(path), f"Inspect log format version {version}: "
                          f"evtui reads .json logs of versions 1 and {LATEST_VERSION}")
    return header


def _sample_key(sample: dict[str, Any]) -> tuple[str, int]:
    return sample_id_key(sample.get("id")), sample.get("epoch") or 1


# --- fast path: Inspect's own indent=2 layout ---------------------------------------------------


def _find_samples(handle: BinaryIO) -> tuple[bytes, int] | None:
    """(header text, offset after `"samples": [`) when the file has Inspect's layout, else None."""
    handle.seek(0)
    if not handle.read(5) == b'{\n  "':
        return None
    handle.seek(0)
    buffer = bytearray()
    while len(buffer) < _HEADER_SCAN_LIMIT:
        chunk = handle.read(_CHUNK)
        if not chunk:
            return None  # no samples key: the ijson path reads the (small) file
        search_from = max(0, len(buffer) - len(_SAMPLES_MARKER))
        buffer += chunk
        at = buffer.find(_SAMPLES_MARKER, search_from)
        if at >= 0:
            after = at + len(_SAMPLES_MARKER)
            if len(buffer) < after + len(_FIRST_SAMPLE):
                buffer += handle.read(len(_FIRST_SAMPLE))
            following = bytes(buffer[after:after + len(_FIRST_SAMPLE)])
            if following != _FIRST_SAMPLE and not following.lstrip().startswith(b"]"):
                return None  # samples not laid out as Inspect writes them
            header_text = bytes(buffer[:at]).rstrip().rstrip(b",") + b"\n}"
            return header_text, at + len(_SAMPLES_MARKER)
    return None


def _sample_texts(path: Path, handle: BinaryIO, start: int) -> Iterator[tuple[int, bytes]]:
    """(file offset, JSON text) of each sample in the samples array starting at `start`."""
    handle.seek(start)
    buffer = bytearray()
    base = start  # file offset of buffer[0]
    position = search_from = 0

    def more() -> bool:
        chunk = handle.read(_CHUNK)
        buffer.extend(chunk)
        return bool(chunk)

    while True:
        separator_end = _SEPARATORS.match(buffer, position).end()
        if separator_end == len(buffer):
            if not more():
                raise ReaderError(str(path), "truncated JSON: the samples array does not end",
                                  where=f"byte {base + position}")
            continue
        opening = buffer[separator_end]
        if opening == 0x5D:  # "]": end of samples
            _check_tail(path, handle)
            return
        if opening != 0x7B:  # "{"
            raise ReaderError(str(path), "unexpected text in the samples array", where=f"byte {base + separator_end}")
        position = separator_end
        search_start = max(position, search_from)
        end = buffer.find(_SAMPLE_END_NEXT, search_start)
        # The last sample's end comes first (later "next" matches are in `reductions`).
        last = buffer.find(_SAMPLE_END_LAST, search_start, None if end < 0 else end + len(_SAMPLE_END_LAST))
        if last >= 0 and (end < 0 or last < end):
            end = last
        if end < 0:
            search_from = max(position, len(buffer) - len(_SAMPLE_END_NEXT))
            if len(buffer) - position > MAX_MEMBER_BYTES:
                raise ReaderError(str(path), f"refused: a sample longer than {mib(MAX_MEMBER_BYTES)}",
                                  where=f"byte {base + position}")
            if not more():
                raise ReaderError(str(path), "truncated JSON: the last sample does not end",
                                  where=f"byte {base + position}")
            continue
        end += len(_SAMPLE_END)
        yield base + position, bytes(buffer[position:end])
        position = search_from = end
        if position > _CHUNK:  # drop what was handed out
            del buffer[:position]
            base += position
            position = search_from = 0


_RESULTS_MARKER = b'\n  "results": {'
_RESULTS_END = b"\n  }"
_TAIL_LIMIT = 64 << 20


def _trailing_results(handle: BinaryIO) -> dict[str, Any] | None:
    """`results` written after `samples` (a log rewritten by other tools, hand-merged logs), found
    in the file's tail: in the indent=2 layout a key at column 2 is a top-level key."""
    size = os.fstat(handle.fileno()).st_size
    start = max(0, size - _TAIL_LIMIT)
    handle.seek(start)
    tail = handle.read()
    at = tail.rfind(_RESULTS_MARKER)
    if at < 0:
        return None
    value_start = at + len(_RESULTS_MARKER) - 1
    end = tail.find(_RESULTS_END, value_start)
    if end < 0:
        return None
    try:
        results = loads_json(tail[value_start:end + len(_RESULTS_END)])
    except ValueError:
        return None
    return results if isinstance(results, dict) else None


def _check_tail(path: Path, handle: BinaryIO) -> None:
    """Reductions follow the samples and are not needed, but a cut-off file must not pass."""
    handle.seek(max(0, os.fstat(handle.fileno()).st_size - 64))
    # In the indent=2 layout only the document's closing brace sits at column 0.
    if not handle.read().rstrip().endswith(b"\n}"):
        raise ReaderError(str(path), "truncated JSON: the log does not end after its samples")


def _parse_sample(path: Path, text: bytes, where: str) -> dict[str, Any]:
    try:
        sample = loads_sample_for_record(text)
    except ValueError as exc:
        raise _json_error(path, exc, where) from exc
    if not isinstance(sample, dict):
        raise ReaderError(str(path), "sample is not a JSON object", where=where)
    return sample


def _fast_samples(path: Path, handle: BinaryIO, start: int) -> Iterator[tuple[str, dict[str, Any]]]:
    for index, (offset, text) in enumerate(_sample_texts(path, handle, start)):
        sample = _parse_sample(path, text, f"samples[{index}]")
        sample_id, epoch = _sample_key(sample)
        yield f"samples[{index}]@{offset}+{len(text)} id={sample_id} epoch={epoch}", sample


# --- general path: ijson ------------------------------------------------------------------------


def _ijson_header(path: Path, handle: BinaryIO) -> dict[str, Any]:
    """Every top-level key except `samples` and `reductions`, stopping at `samples` when it can."""
    handle.seek(0)
    stream = NanTolerantStream(DepthLimitedStream(handle))
    header: dict[str, Any] = {}
    builder: ijson.ObjectBuilder | None = None
    key: str | None = None
    try:
        for prefix, event, value in ijson.parse(stream, use_float=True):
            if prefix != "":
                if builder is not None:
                    builder.event(event, value)
                continue
            if event == "start_map":
                continue
            if builder is not None and key is not None:
                header[key] = builder.value
            if event != "map_key":
                if event != "end_map":
                    raise ReaderError(str(path), "not an Inspect log: the top level is not a JSON object")
                break
            key = value
            if key == "samples" and "eval" in header and "results" in header:
                break  # Inspect's key order: the header is complete (reductions are not needed)
            builder = None if key in ("samples", "reductions") else ijson.ObjectBuilder()
    except (ijson.JSONError, LimitError) as exc:
        raise _json_error(path, exc, "header") from None
    return _check_header(path, restore_specials(header) if stream.replaced else header)


def _ijson_samples(path: Path, handle: BinaryIO, *, full: bool = False) -> Iterator[tuple[str, dict[str, Any]]]:
    handle.seek(0)
    stream = NanTolerantStream(DepthLimitedStream(handle))
    index = -1
    try:
        for index, sample in enumerate(ijson.items(stream, "samples.item", use_float=True)):
            if not isinstance(sample, dict):
                raise ReaderError(str(path), "sample is not a JSON object", where=f"samples[{index}]")
            if stream.replaced:
                # ijson reads ahead, so there is no telling which sample held the NaN.
                if full:
                    sample = restore_specials(sample)
                else:
                    restore_fields(sample, _RECORD_FIELDS)
            sample_id, epoch = _sample_key(sample)
            yield f"samples[{index}] id={sample_id} epoch={epoch}", sample
    except (ijson.JSONError, LimitError) as exc:
        raise _json_error(path, exc, f"after samples[{index}]") from None


# --- public -------------------------------------------------------------------------------------


def _header_and_samples(path: Path, handle: BinaryIO, *, full: bool = False
                        ) -> tuple[dict[str, Any], Iterator[tuple[str, dict[str, Any]]]]:
    layout = _find_samples(handle)
    if layout is not None:
        header_text, start = layout
        try:
            header = loads_json(header_text)
        except ValueError:
            pass  # looked like Inspect's layout but is not: let ijson decide
        else:
            if isinstance(header, dict) and "results" not in header:
                trailing = _trailing_results(handle)
                if trailing is not None:
                    header["results"] = trailing
            return _check_header(path, header), _fast_samples(path, handle, start)
    return _ijson_header(path, handle), _ijson_samples(path, handle, full=full)


def _iter_samples(path: Path, handle: BinaryIO, stat: os.stat_result, samples: Iterator[tuple[str, dict[str, Any]]],
                  warnings: list[str], legacy_scorer: str, run: RunRecord) -> Iterator[InspectSample]:
    read = 0
    name = str(path)
    try:
        for detail_ref, sample in samples:
            yield InspectSample(name, sample, _BYTE_RANGE.sub("", detail_ref), detail_ref, legacy_scorer)
            read += 1
        check_same_file(str(path), stat, warnings)
        fewer = sample_count_warning(str(path), run, read)
        if fewer:
            warnings.append(fewer)
    finally:
        handle.close()


def read(path: Path) -> RunRead:
    """Read an Inspect `.json` log: the run now, its samples streamed lazily."""
    path = Path(path)
    handle, stat = _open(path)
    try:
        header, samples = _header_and_samples(path, handle)
        run = checked_run_record(str(path), FORMAT, header, "header", default_status="started")
    except BaseException:
        handle.close()
        raise
    warnings: list[str] = []
    raw = _iter_samples(path, handle, stat, samples, warnings, legacy_scorer_name(header), run)
    return RunRead(run=run, samples=records(raw), warnings=warnings, raw_samples=raw)


def load_sample_detail(path: Path, detail_ref: str) -> dict[str, Any]:
    """The full sample at `detail_ref` (from a SampleRecord), with condensed events expanded.

    The ref holds the sample's byte range (fast path) or position, and its id/epoch. When the
    file was rewritten since (a running eval flushed), the sample is found again by id/epoch.
    """
    path = Path(path)
    match = _DETAIL_REF.match(detail_ref)
    if not match:
        raise ReaderError(str(path), f"not a sample locator: {detail_ref!r}")
    index = int(match.group(1))
    wanted = (match.group(4), int(match.group(5))) if match.group(4) is not None else None
    handle, _ = _open(path)
    with handle:
        if match.group(2) is not None:
            handle.seek(int(match.group(2)))
            text = handle.read(int(match.group(3)))
            try:
                sample = loads_json(text)
            except ValueError:
                sample = None
            if isinstance(sample, dict) and (wanted is None or _sample_key(sample) == wanted):
                return expand_sample_detail(sample)
        _, samples = _header_and_samples(path, handle, full=True)
        for position, (_, sample) in enumerate(samples):
            if (wanted is None and position == index) or _sample_key(sample) == wanted:
                return expand_sample_detail(sample)
    raise ReaderError(str(path), "sample not found in the log", where=detail_ref)
