"""Find run files under a directory and pick the reader for each by its content.

`find_run_files` walks a run directory and yields the files worth reading: every file in a
data-looking format (`.eval`, `.json`, `.jsonl`) that is not one of the frameworks' own
bookkeeping files. Content decides the format (`detect_format` asks each reader's `sniff`
with the file's first bytes); the extension only breaks ties. A data-looking file that no
reader recognises is reported by `read_run` as "not a run file in any known format"; files
of other types (.txt, .png, .md, …) are never yielded, so they are ignored silently. A
Harbor job or Terminal-Bench run folder yields its one run file; its other files and trial
folders belong to that run.

Run files are hostile: only regular files are opened, never blocking (a named pipe is refused
by `run_file_signature` and `read_run` with the reason); a symlink is followed only when it
leads to a place inside the run directory; and whatever goes wrong inside a reader, MemoryError
and RecursionError included, comes out of `read_run` and its sample stream as a ReaderError
naming the file.
"""

from __future__ import annotations

import errno
import importlib
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import TypeVar

from evtui.readers.base import ReaderError, RunRead
from evtui.readers.limits import file_kind, open_regular

_Item = TypeVar("_Item")

HEAD_BYTES = 8192
_MODULES = {
    "inspect_eval": "evtui.readers.inspect.eval_log",
    "inspect_json": "evtui.readers.inspect.json_log",
    "ag2": "evtui.readers.ag2.runs",
    "evsys": "evtui.readers.evsys",
    "jsonl": "evtui.readers.jsonl",
    "harbor": "evtui.readers.harbor.jobs",
    "terminal_bench": "evtui.readers.terminal_bench",
    "lm_eval": "evtui.readers.lm_eval.results",
    "verifiers": "evtui.readers.verifiers.results",
}
# Which extensions each format is written with: the tiebreak when several readers claim a file.
_EXTENSIONS = {
    "inspect_eval": (".eval",),
    "inspect_json": (".json",),
    "ag2": (".json",),
    "evsys": (".jsonl",),
    "jsonl": (".jsonl", ".ndjson"),
    "harbor": (".json",),
    "terminal_bench": (".json",),
    "lm_eval": (".json", ".jsonl"),
    "verifiers": (".jsonl",),
}
# Formats whose run is a folder: their `run_folder_file(folder, filenames)` names the run file;
# the folder's other files and its subfolders (trials) are part of that run, not runs.
_RUN_FOLDER_FORMATS = ("harbor", "terminal_bench")
DATA_SUFFIXES = (".eval", ".json", ".jsonl", ".ndjson")
# Folders that hold a framework's working state, not finished runs.
_SKIP_DIRS = {".evtui", ".buffer", "__pycache__", "node_modules", ".git"}
_SKIP_DIR_SUFFIXES = (".checkpoints", ".shards")  # a .shards folder is a run of its own (see _shard_set_run)
# Inspect's log-directory manifests; eval-set.json names the eval set its logs belong to.
_SKIP_FILES = {"logs.json", "listing.json", "eval-set.json"}
# Folder-shaped runs read by a reader of their own (not sniffed from a file's head).
_FOLDER_FORMATS = {"inspect_shards": "evtui.readers.inspect.shard_set"}
_EVSYS_ROLLOUTS = "rollouts.jsonl"
_EVSYS_LOG_FILES = {"hyperparams.json", "artifacts.json"}
_VERIFIERS_RESULTS, _VERIFIERS_METADATA = "results.jsonl", "metadata.json"  # vf-eval -s output
_VERIFIERS_TRACES = "traces.jsonl"  # verifiers 0.4's vf-eval; its config is configs/resolved/eval.json
# lm-eval's samples_<task>_<ts>.jsonl and results_<ts>.json read each other (numbers; which samples exist).
_LM_EVAL_FILE = re.compile(r"^(samples_.+\.jsonl|results_.+\.json)$")


def _load_readers() -> tuple[dict[str, ModuleType], dict[str, str]]:
    readers: dict[str, ModuleType] = {}
    unavailable: dict[str, str] = {}
    for name, module_name in _MODULES.items():
        try:
            readers[name] = importlib.import_module(module_name)
        except Exception as exc:  # one broken or missing reader must not stop the others
            unavailable[name] = f"{type(exc).__name__}: {exc}"
    return readers, unavailable


# Reader name -> module (sniff/read/load_sample_detail); UNAVAILABLE says why a reader is missing.
READERS, UNAVAILABLE = _load_readers()


def find_run_files(root: Path, refused: list[tuple[Path, str]] | None = None) -> Iterator[Path]:
    """Every file under `root` that may be a run, in a stable (sorted) order.

    Skips evtui's own `.evtui/`, Inspect's `.buffer/`, `*.checkpoints/`, `*.shards/` and
    `.inspect_tmp_*.writing` files, the `logs.json`/`listing.json` manifests, and hidden
    folders except `.evsys`. Inside an EvSys experiment only the `rollouts.jsonl` files are
    runs; their metrics and hyperparameters are read alongside them.

    Symlinked folders are not entered. A symlinked file is yielded only when it resolves to a
    place inside `root`; one that leads out of the run directory is not followed, and is added
    to `refused` (path, reason) when a list is given, for the caller to report. So are files and
    folders whose names are not valid UTF-8 (no index or screen could name them). A symlink loop
    or a named pipe is yielded: opening it fails with its reason (see run_file_signature).
    """
    root = Path(root)
    if root.is_file() or folder_format(root) is not None:  # a shard set named itself is its one run
        yield root
        return
    inside = os.path.realpath(root)
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        for name in [d for d in dirnames if not _utf8(d) or os.path.islink(here / d)]:
            dirnames.remove(name)  # os.walk would not enter a linked folder either: say why where it matters
            problem = _NOT_UTF8 if not _utf8(name) else _folder_link_problem(here, name, inside)
            if refused is not None and problem is not None and not _skip_dir(name):
                refused.append((here / name, problem))
        shard_sets = [here / d for d in sorted(dirnames) if _shard_set_run(here, d)]
        dirnames[:] = sorted(d for d in dirnames if not _skip_dir(d) and not _scout_scans(here, d))
        in_evsys = ".evsys" in here.absolute().parts
        run_file = None if in_evsys else _run_folder_file(here, filenames)
        if run_file is not None:
            dirnames[:] = []
            yield run_file
            continue
        yield from shard_sets
        for name in sorted(filenames):
            if in_evsys:
                wanted = name == _EVSYS_ROLLOUTS
            else:
                wanted = (
                    _is_candidate(name)
                    and not _evsys_side_file(here, name, filenames)
                    and not _verifiers_side_file(name, filenames)
                    and not _verifiers_config_file(here, name)
                )
            if not wanted:
                continue
            path = here / name
            outside = _link_out_of(path, inside) if _utf8(name) else _NOT_UTF8
            if outside is not None:
                if refused is not None:
                    refused.append((path, outside))
                continue
            yield path


_NOT_UTF8 = "the name is not valid UTF-8: not read"


def _utf8(name: str) -> bool:
    """False for a name os.walk decoded with surrogate escapes (bytes that are not UTF-8)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _link_out_of(path: Path, inside: str) -> str | None:
    """Why the symlink `path` is not followed (it leads out of `inside`), or None."""
    if not os.path.islink(path):
        return None
    target = os.path.realpath(path)
    if os.path.commonpath([target, inside]) == inside:
        return None
    return f"a link out of the run directory (to {target}); not followed"


def _folder_link_problem(parent: Path, name: str, inside: str) -> str | None:
    """Why a linked folder's runs are not listed, when the user would wonder: it loops, leads
    nowhere or out of the run directory (a link to another folder inside is simply not walked twice)."""
    link = parent / name
    try:
        target = Path(link).resolve(strict=True)
    except (OSError, RuntimeError):
        return "a symbolic link that loops or leads nowhere; not followed"
    if Path(parent).resolve().is_relative_to(target):
        return f"a symbolic link loop (to {target}); not followed"
    if not target.is_relative_to(inside):
        return f"a link out of the run directory (to {target}); not followed"
    return None


def _skip_dir(name: str) -> bool:
    if name in _SKIP_DIRS or name.endswith(_SKIP_DIR_SUFFIXES):
        return True
    return name.startswith(".") and name != ".evsys"


def _shard_set_run(here: Path, name: str) -> bool:
    """A `<name>.shards` folder that is a run: no finished merged log beside it covers it."""
    from evtui.readers.inspect import shard_set

    if not shard_set.is_shards_dir(name) or os.path.islink(here / name):
        return False
    folder = here / name
    return bool(shard_set.current_attempts(shard_set.list_local(folder))) and not shard_set.covered_locally(folder)


def _scout_scans(here: Path, name: str) -> bool:
    """Inspect Scout's `scans/` (scan_id=… folders of scanner results): not runs."""
    if name.startswith("scan_id="):
        return True
    if name != "scans":
        return False
    try:
        return any(e.startswith("scan_id=") or e == "_scan.json" for e in os.listdir(here / name))
    except OSError:
        return False


def folder_files(path: Path) -> list[Path]:
    """The files a folder-shaped run is read from (a shard set: each shard's current attempt;
    other run folders: every file in them), sorted."""
    if folder_format(path) == "inspect_shards":
        from evtui.readers.inspect import shard_set

        return sorted(path / a.shard / a.name for a in shard_set.current_attempts(shard_set.list_local(path)))
    return sorted(p for p in path.rglob("*") if p.is_file())


def folder_format(path: Path) -> str | None:
    """The format of a folder-shaped run (a shard set), or None."""
    from evtui.readers.inspect import shard_set

    return "inspect_shards" if shard_set.is_shards_dir(Path(path).name) and Path(path).is_dir() else None


def _is_candidate(name: str) -> bool:
    if name in _SKIP_FILES or name.startswith("."):
        return False  # hidden files include Inspect's `.inspect_tmp_*.writing` partial writes
    return name.lower().endswith(DATA_SUFFIXES)


def _run_folder_file(folder: Path, filenames: list[str]) -> Path | None:
    """The run file of a Harbor job or Terminal-Bench run folder, or None for other folders."""
    for name in _RUN_FOLDER_FORMATS:
        module = READERS.get(name)
        try:
            found = module.run_folder_file(folder, filenames) if module is not None else None
        except Exception:  # an odd folder is simply not a run folder
            found = None
        if found is not None:
            return found
    return None


# Which .json/.jsonl files are not lm-eval < 0.4.3 files, by (path, inode, head size): the
# answer is read from the file's first 512 bytes, and the watcher asks about every run file at
# every poll (an Inspect .json log, a plain JSONL run). A head shorter than 512 bytes is asked
# again as the file grows.
_NOT_LEGACY_LM_EVAL: set[tuple[str, int, int]] = set()
_NOT_LEGACY_LIMIT = 100_000


def companion_files(path: Path, st: os.stat_result | None = None) -> list[Path]:
    """Files beside a run file that its reader reads too, so a change to one of them is a change
    to the run (EvSys: the split's metrics.jsonl, appended to without touching the rollouts;
    a Harbor job: its config, lock and each trial's result.json; a Terminal-Bench run: its
    run_metadata.json and tb.lock; verifiers: metadata.json; lm-eval: a task's results file, the
    results file's samples files)."""
    if path.name == _EVSYS_ROLLOUTS:
        return [path.parent / "metrics.jsonl"]
    if path.name == _VERIFIERS_RESULTS:
        return [path.parent / _VERIFIERS_METADATA]
    if path.name == _VERIFIERS_TRACES:
        return [path.parent / "configs" / "resolved" / "eval.json"]
    if _LM_EVAL_FILE.match(path.name) and "lm_eval" in READERS:
        return READERS["lm_eval"].companions(path)
    if path.suffix in (".json", ".jsonl") and "lm_eval" in READERS:  # lm-eval < 0.4.3: results.json + arrays
        key = (str(path), st.st_ino, min(st.st_size, 512)) if st is not None else None
        if key is None or key not in _NOT_LEGACY_LM_EVAL:
            found = READERS["lm_eval"].legacy_companions(path)
            if found is not None:
                return found
            if key is not None:
                if len(_NOT_LEGACY_LM_EVAL) >= _NOT_LEGACY_LIMIT:
                    _NOT_LEGACY_LM_EVAL.clear()
                _NOT_LEGACY_LM_EVAL.add(key)
    for name in _RUN_FOLDER_FORMATS:
        module = READERS.get(name)
        if module is not None and path.name == module.RUN_FILE_NAME:
            return module.companion_files(path)
    return []


def run_file_signature(path: Path) -> tuple[int, int, int]:
    """(size, mtime_ns, inode) of a run file taken together with its companion files (sizes
    summed, the latest mtime), so that index and watcher see a companion's change alike.
    Raises OSError when the run file itself cannot be stat'ed or is not a regular file (opening
    a named pipe would block until something writes to it)."""
    st = os.stat(path)
    if stat.S_ISDIR(st.st_mode) and folder_format(path) == "inspect_shards":
        from evtui.readers.inspect import shard_set

        size, mtime_ns = shard_set.signature(Path(path))  # the current attempts it is read from
        return size, mtime_ns, st.st_ino
    if not stat.S_ISREG(st.st_mode):
        raise OSError(errno.EINVAL, f"not a regular file ({file_kind(st.st_mode)})", str(path))
    size, mtime_ns = st.st_size, st.st_mtime_ns
    for companion in companion_files(Path(path), st):
        try:
            companion_stat = os.stat(companion)
        except OSError:
            continue  # not written yet
        size += companion_stat.st_size
        mtime_ns = max(mtime_ns, companion_stat.st_mtime_ns)
    return size, mtime_ns, st.st_ino


def _evsys_side_file(here: Path, name: str, siblings: list[str]) -> bool:
    """An EvSys experiment copied out of `.evsys/`: its metrics and settings are not runs."""
    if name == "metrics.jsonl":
        return _EVSYS_ROLLOUTS in siblings
    return name in _EVSYS_LOG_FILES and here.name == "logs"


def _verifiers_side_file(name: str, siblings: list[str]) -> bool:
    """vf-eval's metadata.json (its headline numbers) is read as part of the results.jsonl beside it."""
    return name == _VERIFIERS_METADATA and _VERIFIERS_RESULTS in siblings


def _verifiers_config_file(here: Path, name: str) -> bool:
    """verifiers 0.4's configs/resolved/<cli>.json is read as part of the traces.jsonl two levels up."""
    return (
        name.endswith(".json")
        and here.name == "resolved"
        and here.parent.name == "configs"
        and (here.parent.parent / _VERIFIERS_TRACES).is_file()
    )


def detect_format(path: Path) -> str | None:
    """The reader name for `path` (a key of READERS), or None if no reader recognises it."""
    path = Path(path)
    if (folder := folder_format(path)) is not None:
        return folder
    head = _head(path)
    if not head.strip():
        return None
    claims = [name for name, module in READERS.items() if _sniff(module, path, head)]
    if len(claims) > 1:
        by_extension = [n for n in claims if path.name.lower().endswith(_EXTENSIONS[n])]
        claims = by_extension or claims
    return claims[0] if claims else None


def read_run(path: Path) -> RunRead:
    """Read one run file with the reader its content calls for; ReaderError names the file.
    The file's first run when it holds several (see read_runs)."""
    return read_runs(path)[0]


def read_runs(path: Path) -> list[RunRead]:
    """Every run of one file, each with its `part` ('' for a file's one or main run): a reader
    whose files may hold several runs has `read_parts(path)`; the others `read(path)`."""
    path = Path(path)
    fmt = detect_format(path)
    if fmt is None:
        head = _head(path)
        if head.strip() == b"":
            raise ReaderError(str(path), "empty file: not a run file in any known format")
        from evtui.readers import jsonl
        from evtui.readers.limits import MAX_LINE_BYTES, mib

        line = jsonl.oversized_line(path, head)
        if line is not None:  # what the file is cannot be told without reading that line
            raise ReaderError(str(path), f"line {line} is larger than {mib(MAX_LINE_BYTES)}; "
                              "not read as a run file")
        raise ReaderError(str(path), "not a run file in any known format")
    module = _folder_module(fmt) if fmt in _FOLDER_FORMATS else _module(fmt, path)
    try:
        reads = module.read_parts(path) if hasattr(module, "read_parts") else [module.read(path)]
    except Exception as exc:
        raise _contained(path, fmt, exc) from None
    if fmt in _EVAL_SET_FORMATS:
        from evtui.readers.inspect import eval_set

        manifest = eval_set.local_manifest(path.parent)
        for read in reads:
            eval_set.annotate(read.run, manifest, str(path.parent / eval_set.MANIFEST))
    for read in reads:
        read.samples = _contained_samples(path, fmt, read.samples)
        if read.raw_samples is not None:
            read.raw_samples = _contained_samples(path, fmt, read.raw_samples)
    return reads


# Formats an Inspect eval set writes: their eval-set.json names the set they belong to.
_EVAL_SET_FORMATS = ("inspect_eval", "inspect_json", "inspect_shards")


def _contained(path: Path, fmt: str, exc: Exception, after: int | None = None) -> ReaderError:
    """Any fault of a reader as a ReaderError naming the file (a ReaderError passes as it is)."""
    if isinstance(exc, ReaderError):
        return exc
    where = f"after sample {after}" if after else None
    if isinstance(exc, MemoryError):
        return ReaderError(str(path), f"ran out of memory reading it as {fmt}", where=where)
    if isinstance(exc, RecursionError):
        return ReaderError(str(path), f"cannot read as {fmt}: nested too deeply", where=where)
    if isinstance(exc, (OSError, ValueError)):
        problem = str(exc) or type(exc).__name__
    else:  # a reader bug: say what broke
        problem = f"{type(exc).__name__}: {exc}"
    return ReaderError(str(path), f"cannot read as {fmt}: {' '.join(problem.split())[:300]}", where=where)


def _contained_samples(path: Path, fmt: str, samples: Iterator[_Item]) -> Iterator[_Item]:
    """The reader's sample stream (or raw sample stream), with any fault while streaming turned
    into a ReaderError."""
    count = 0
    try:
        for sample in samples:
            count += 1
            yield sample
    except Exception as exc:
        raise _contained(path, fmt, exc, after=count) from None
    finally:
        close = getattr(samples, "close", None)
        if close is not None:
            close()


def load_sample_detail(format: str, path: Path | str, detail_ref: str, part: str = "") -> dict:
    """The full raw sample record for the drill-down view, via the reader that indexed it;
    `part` names the run of the file it belongs to (readers with `read_parts` check it)."""
    if isinstance(path, str) and "://" in path:
        from evtui.readers import remote

        if remote.is_url(path):  # a run indexed from an object store: the sample is fetched now
            return remote.load_sample_detail(format, path, detail_ref)
    path = Path(path)
    if format in _FOLDER_FORMATS:
        return _folder_module(format).load_sample_detail(path, detail_ref)
    if format not in _MODULES:
        raise ReaderError(str(path), f"unknown format {format!r}")
    _check_regular(path)
    module = _module(format, path)
    if part:
        return module.load_sample_detail(path, detail_ref, part=part)
    return module.load_sample_detail(path, detail_ref)


def _folder_module(fmt: str) -> ModuleType:
    return importlib.import_module(_FOLDER_FORMATS[fmt])


def _module(fmt: str, path: Path) -> ModuleType:
    if fmt not in READERS:
        raise ReaderError(str(path), f"the {fmt} reader is not available: {UNAVAILABLE.get(fmt)}")
    return READERS[fmt]


def _sniff(module: ModuleType, path: Path, head: bytes) -> bool:
    try:
        return bool(module.sniff(path, head))
    except MemoryError:  # not "unknown format": say what happened
        raise ReaderError(str(path), "ran out of memory recognising its format") from None
    except Exception:  # a sniffer that trips over odd bytes has simply not recognised them
        return False


def _check_regular(path: Path) -> os.stat_result:
    try:
        info = path.stat()
    except FileNotFoundError:
        raise ReaderError(str(path), "no such file") from None
    except OSError as exc:
        raise ReaderError(str(path), f"cannot open: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        # Opening a FIFO or device would block or stream forever.
        raise ReaderError(str(path), f"not a regular file ({file_kind(info.st_mode)})")
    return info


def _head(path: Path) -> bytes:
    _check_regular(path)
    try:
        with open_regular(path) as f:  # checked again on the open file: it may have been swapped
            return f.read(HEAD_BYTES)
    except FileNotFoundError:
        raise ReaderError(str(path), "no such file (deleted while being read?)") from None
    except OSError as exc:
        raise ReaderError(str(path), f"cannot open: {exc.strerror or exc}") from None
