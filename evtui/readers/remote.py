"""Run directories in object stores: `s3://bucket/prefix`, `gs://…`, `az://…`, any fsspec URL.

Inspect writes its logs there with fsspec (s3fs, gcsfs, adlfs), so evtui reads them the same
way, with the credentials its users already have (AWS environment variables and profiles,
AWS_ENDPOINT_URL for S3-compatible stores, application default credentials for GCS). Nothing
here stores or prints a credential: URLs are shown without any user:password part, and a
failure is one line naming the URL and what to do.

A directory is listed by a delimited walk (one listing per folder: sizes, ETags, modification
times; working-state folders such as `.buffer/` and `*.checkpoints/` are not entered). Inspect
`.eval` logs are read by ranged requests: the zip's central directory, the header and the
sample summaries; a sample's full record (its transcript) is fetched when it is opened. The
rules of one logical run hold as on a local disk: a `<name>.shards/` prefix is one run unless a
finished merged log covers it (readers.inspect.shard_set), `.buffer/`, `*.checkpoints/`,
Scout's `scans/` and hidden prefixes are not runs, eval-set.json names the set.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, BinaryIO
from urllib.parse import urlsplit, urlunsplit

from evtui.readers.base import ReaderError, RunRead
from evtui.readers.inspect import eval_set, shard_set

_URL = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")
# Ranged reads: the zip's tail (central directory) is one request, each member needed another.
_BLOCK = 256 << 10
# Which package serves a protocol, for the "install it" line.
_PACKAGES = {"s3": "s3fs", "s3a": "s3fs", "gs": "gcsfs", "gcs": "gcsfs", "az": "adlfs", "abfs": "adlfs", "abfss": "adlfs"}
_SKIP_PARTS = {".buffer", ".evtui", "__pycache__"}
_LISTINGS = 16  # folder listings in flight at once
_INSPECT_JSON_LOG = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}.*\.json$")


def is_url(location: object) -> bool:
    """True for a URL evtui reads through fsspec (any scheme but file://)."""
    if not isinstance(location, str):
        return False
    match = _URL.match(location)
    return match is not None and match.group(1).lower() != "file"


def public_url(url: str) -> str:
    """`url` without a user:password part, a query or a fragment: safe to store, show and log."""
    parts = urlsplit(url)
    if not parts.netloc:  # memory:///path, file-like stores: no host to strip anything from
        return f"{parts.scheme}://{parts.path}".rstrip("/")
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", "")).rstrip("/")


class RemoteError(Exception):
    """A store that cannot be listed: the message is one line naming the URL and what to do."""


class StoreReadError(ReaderError):
    """A run the store failed to serve (denied, gone, replaced mid-read, unreachable): not the
    log's fault, so it is tried again at the next look even if the object is unchanged."""


def explain(url: str, exc: BaseException) -> str:
    """One line for a store failure: the URL, what went wrong, what to do. Never the credentials
    (botocore's and fsspec's messages name keys, buckets and endpoints, not secrets)."""
    name = type(exc).__name__
    text = " ".join(str(exc).split())[:200]
    if name in ("NoCredentialsError", "PartialCredentialsError", "CredentialRetrievalError", "DefaultCredentialsError"):
        return (f"{url}: no credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE "
                "(GCS: application default credentials)")
    if name in ("EndpointConnectionError", "ConnectTimeoutError", "ConnectionClosedError", "ReadTimeoutError",
                "ClientConnectorError", "ServerDisconnectedError") or isinstance(exc, (ConnectionError, TimeoutError)):
        return f"{url}: cannot reach the store ({text}): check AWS_ENDPOINT_URL (or the store's endpoint) and the network"
    if isinstance(exc, PermissionError) or "AccessDenied" in text or "Forbidden" in text or "403" in text:
        return (f"{url}: access denied: the credentials in use may not list or read it; check the bucket's policy "
                "or use another AWS_PROFILE")
    if isinstance(exc, FileNotFoundError) or "NoSuchBucket" in text:
        return f"{url}: no such bucket or prefix: check the URL"
    if name == "FileExpired" or "PreconditionFailed" in text or "412" in text:
        return f"{url}: changed while it was read; it is read again at the next run or poll"
    return f"{url}: cannot read the store: {name}: {text}"


def _filesystem(url: str) -> tuple[Any, str]:
    """(fsspec filesystem, path inside it) for `url`."""
    scheme = _URL.match(url).group(1).lower()  # type: ignore[union-attr]
    try:
        import fsspec
    except ImportError:
        raise RemoteError(f"{public_url(url)}: reading {scheme}:// needs fsspec: pip install 'evtui[s3]'") from None
    options: dict[str, Any] = {}
    if scheme in ("s3", "s3a"):
        # Fail in seconds on an unreachable endpoint, and keep botocore's retries few: s3fs
        # retries transient errors itself.
        options["config_kwargs"] = {"connect_timeout": 5, "read_timeout": 30,
                                    "retries": {"max_attempts": 3, "mode": "standard"}}
    try:
        fs, path = fsspec.core.url_to_fs(url, **options)
    except ImportError:
        package = _PACKAGES.get(scheme)
        install = "pip install 'evtui[s3]'" if package == "s3fs" else f"pip install {package}" if package else (
            f"install the fsspec implementation of {scheme}://")
        raise RemoteError(f"{public_url(url)}: reading {scheme}:// needs {package or 'a package'}: {install}") from None
    except ValueError as exc:
        raise RemoteError(f"{public_url(url)}: not a location fsspec can open: {exc}") from None
    return fs, path.rstrip("/")


@dataclass(frozen=True)
class RemoteFile:
    """One object as listed."""

    key: str  # path inside the filesystem (bucket/prefix/name)
    size: int
    mtime: float  # seconds
    etag: str | None


@dataclass
class RemoteRun:
    """A run found in a listing: one `.eval` object, or a shard set (several)."""

    url: str  # how the index names it: scheme://bucket/…/name.eval or …/name.shards
    format: str  # inspect_eval | inspect_shards
    files: list[RemoteFile]
    attempts: list[shard_set.Attempt] = field(default_factory=list)  # shard sets: current attempts
    manifest: RemoteFile | None = None  # the eval-set.json beside it, read when the run is

    def signature(self, samples: bool = False) -> tuple[int, int, str]:
        """(size, mtime_ns, digest of the ETags): what makes a re-read necessary. The digest
        also says whether the samples were read in full (`samples`) or as summaries."""
        size = sum(f.size for f in self.files)
        mtime_ns = max(int(f.mtime * 1e9) for f in self.files)
        tags = "\n".join(f"{f.key}\0{f.etag or ''}\0{f.size}" for f in self.files)
        kind = "etag+samples:" if samples else "etag:"
        return size, mtime_ns, kind + hashlib.blake2b(tags.encode(), digest_size=16).hexdigest()


@dataclass
class Listing:
    runs: list[RemoteRun]
    refused: list[tuple[str, str]]  # (url, why it is not read)


class RemoteStore:
    """A run directory in an object store, listed and read through fsspec."""

    def __init__(self, url: str) -> None:
        self.fs, self.root = _filesystem(url)
        self.url = self.url_of(self.root)
        self._manifests: dict[str, tuple[str | None, dict[str, Any] | None]] = {}

    def url_of(self, key: str) -> str:
        """The URL the index names an object by: fsspec's own form of it, without credentials."""
        return public_url(self.fs.unstrip_protocol(key))

    def key_of(self, url: str) -> str:
        return self.fs._strip_protocol(url)

    # --- listing ------------------------------------------------------------------------

    def list_files(self) -> list[RemoteFile]:
        """Every object under the root that may matter, by a delimited walk: one listing per folder
        (a page per 1,000 keys), several folders at a time, never entering `.buffer/`,
        `*.checkpoints/`, Scout's `scan_id=…/` or hidden folders, whose key counts grow with a run's
        age (Inspect's own walk skips them too). RemoteError when the root cannot be listed."""
        try:
            entries = self._ls(self.root)
        except FileNotFoundError:  # an empty or absent prefix: tell it from a wrong bucket
            try:
                if not self.fs.exists(self.root.split("/", 1)[0] or self.root):
                    raise FileNotFoundError(self.root) from None
            except Exception as exc:
                raise RemoteError(explain(self.url, exc)) from None
            return []
        except Exception as exc:  # the store's own errors: botocore, aiohttp, google-auth …
            raise RemoteError(explain(self.url, exc)) from None
        if len(entries) == 1 and entries[0].get("type") != "directory" and _same_key(entries[0]["name"], self.root):
            return [_remote_file(entries[0])]  # the URL names one object
        files: list[RemoteFile] = []
        folders: list[str] = []
        self._sort(entries, files, folders)
        with ThreadPoolExecutor(max_workers=_LISTINGS, thread_name_prefix="evtui-list") as pool:
            while folders:
                batch, folders = folders, []
                for listed in pool.map(self._ls_or_none, batch):
                    self._sort(listed, files, folders)
        return sorted(files, key=lambda f: f.key)

    def _ls(self, key: str) -> list[dict[str, Any]]:
        return self.fs.ls(key, detail=True, refresh=True)  # fresh at every look: fsspec caches listings

    def _ls_or_none(self, key: str) -> list[dict[str, Any]]:
        try:
            return self._ls(key)
        except FileNotFoundError:  # emptied between two listings
            return []
        except Exception as exc:
            raise RemoteError(explain(self.url, exc)) from None

    def _sort(self, entries: list[dict[str, Any]], files: list[RemoteFile], folders: list[str]) -> None:
        for info in entries:
            name = info["name"].rstrip("/")
            if info.get("type") == "directory":
                if not _skipped_folder(posixpath.basename(name)) and not _same_key(name, self.root):
                    folders.append(name)
            elif info.get("type", "file") == "file":
                files.append(_remote_file(info))

    def listing(self, files: list[RemoteFile] | None = None) -> Listing:
        """The runs under the root, as a local scan would find them (see the module docstring)."""
        files = self.list_files() if files is None else files
        runs: list[RemoteRun] = []
        refused: list[tuple[str, str]] = []
        shard_files: dict[str, list[RemoteFile]] = {}
        manifests: dict[str, RemoteFile] = {}
        plain: dict[str, RemoteFile] = {}
        prefix = self.root + "/"
        named_shard_set = shard_set.is_shards_dir(posixpath.basename(self.root))
        for f in files:
            relative = f.key[len(prefix):] if f.key.startswith(prefix) else posixpath.basename(f.key)
            if named_shard_set:  # the URL names a shard set: it is the one run (as a local folder is)
                relative = f"{posixpath.basename(self.root)}/{relative}"
                prefix_of_set = posixpath.dirname(self.root) + "/"
            parts = relative.split("/")
            shards_at = next((i for i, p in enumerate(parts[:-1]) if shard_set.is_shards_dir(p)), None)
            if any(_skipped_folder(p) for p in parts[: shards_at if shards_at is not None else -1]):
                continue
            name = parts[-1]
            if shards_at is not None:
                if len(parts) - shards_at == 3:  # <name>.shards/<k>/<file>: an attempt
                    shard_files.setdefault("/".join(parts[: shards_at + 1]), []).append(f)
                continue
            if name == eval_set.MANIFEST:
                manifests[posixpath.dirname(f.key)] = f
            elif name.startswith("."):
                continue
            elif name.endswith(".eval"):
                plain[f.key] = f
            elif _INSPECT_JSON_LOG.match(name):
                refused.append((self.url_of(f.key), "an Inspect .json log: evtui reads .eval logs from object "
                                "stores (inspect log convert --to eval makes one)"))
        for shards_rel, members in sorted(shard_files.items()):
            shards_key = f"{prefix_of_set if named_shard_set else prefix}{shards_rel}"
            attempts = shard_set.current_attempts(
                shard_set.Attempt(m.key.split("/")[-2], m.key.split("/")[-1], m.size, m.mtime, m.etag) for m in members)
            if not attempts or self._covered(shards_key, attempts, plain):
                continue
            by_name = {(m.key.split("/")[-2], m.key.split("/")[-1]): m for m in members}
            runs.append(RemoteRun(self.url_of(shards_key), shard_set.FORMAT,
                                  [by_name[(a.shard, a.name)] for a in attempts], attempts))
        runs += [RemoteRun(self.url_of(key), "inspect_eval", [f]) for key, f in plain.items()]
        for run in runs:
            run.manifest = manifests.get(posixpath.dirname(self.key_of(run.url)))
        runs.sort(key=lambda r: r.url)
        return Listing(runs, refused)

    def _covered(self, shards_key: str, attempts: list[shard_set.Attempt], plain: dict[str, RemoteFile]) -> bool:
        """Whether a finished merged log beside the shard set covers it (its header read by ranged requests)."""
        folder = posixpath.dirname(shards_key)
        present = [plain[f"{folder}/{n}"] for n in shard_set.merged_names(posixpath.basename(shards_key))
                   if f"{folder}/{n}" in plain]
        if not present:
            return False
        from evtui.readers.inspect.eval_log import read_header_status

        for merged in present:
            version = (merged.key, merged.etag, merged.size, merged.mtime)
            if version not in _merged_headers:  # read once per version, not at every look
                try:
                    with self.open(merged) as handle:
                        header, status = read_header_status(self.url_of(merged.key), handle, merged.size)
                except Exception:  # unreadable, or the store failed this read: the shards stay visible
                    return False
                if len(_merged_headers) > 1024:
                    _merged_headers.clear()
                _merged_headers[version] = ({"eval": {"shards": (header.get("eval") or {}).get("shards")}}, status)
            header, status = _merged_headers[version]
            if not shard_set.covered(status, header, merged.mtime, attempts):
                return False
        return True

    def _manifest(self, f: RemoteFile) -> dict[str, Any] | None:
        """eval-set.json, fetched once per version (ETag) however many runs it names."""
        cached = self._manifests.get(f.key)
        if cached is not None and cached[0] == f.etag:
            return cached[1]
        try:
            manifest = eval_set.parse(self.fs.cat_file(f.key))
        except Exception:
            manifest = None
        self._manifests[f.key] = (f.etag, manifest)
        return manifest

    # --- reading ------------------------------------------------------------------------

    def open(self, f: RemoteFile) -> BinaryIO:
        """A ranged-read file: small blocks, fetched as they are needed (never the whole object)."""
        return self.fs.open(f.key, "rb", block_size=_BLOCK, cache_type="bytes")

    def read(self, run: RemoteRun, samples: bool = False) -> list[RunRead]:
        """The run: its header and sample summaries (each sample's full record is read when it
        is opened); with `samples`, every sample member too (what re-scoring and exports need:
        a summary holds no output). Either way by ranged requests, member by member; the
        samples come back in memory (summaries are small; a full read is what was asked for)."""
        from evtui.readers.inspect import eval_log

        def read_one(f: RemoteFile, name: str) -> RunRead:
            try:
                handle = _Guarded(self.open(f))
                try:
                    if samples:
                        read = eval_log.read_handle(name, handle, f.size)
                        read.samples = iter(list(read.samples))
                        read.raw_samples = None  # drawn on by the list above
                        return read
                    return eval_log.read_handle_summaries(name, handle, f.size)
                finally:
                    handle.close()
            except ReaderError:
                raise
            except _StoreFault as fault:
                raise StoreReadError(name, explain(name, fault.cause).split(": ", 1)[1]) from None
            except Exception as exc:
                raise StoreReadError(name, explain(name, exc).split(": ", 1)[1]) from None

        if run.format == shard_set.FORMAT:
            files = {(f.key.split("/")[-2], f.key.split("/")[-1]): f for f in run.files}
            read = shard_set.combine(run.url, run.attempts,
                                     lambda a: read_one(files[(a.shard, a.name)], f"{run.url}/{a.relative}"))
        else:
            read = read_one(run.files[0], run.url)
        if run.manifest is not None:
            eval_set.annotate(read.run, self._manifest(run.manifest), self.url_of(run.manifest.key))
        read.run.metadata["samples_read"] = "full" if samples else "summaries"
        return [read]

    def load_sample_detail(self, fmt: str, url: str, detail_ref: str) -> dict[str, Any]:
        """A sample's full record, fetched now: the archive's directory and that member."""
        from evtui.readers.inspect import eval_log

        key = self.key_of(url)
        if fmt == shard_set.FORMAT:
            relative, detail_ref = shard_set.split_detail_ref(url, detail_ref)
            key, url = f"{key}/{relative}", f"{url}/{relative}"
        elif fmt != "inspect_eval":
            raise ReaderError(url, f"the {fmt} format is not read from object stores")
        try:
            info = self.fs.info(key)
            with self.fs.open(key, "rb", block_size=_BLOCK, cache_type="bytes") as raw:
                handle = _Guarded(raw)
                return eval_log.load_handle_sample_detail(url, handle, int(info.get("size") or 0), detail_ref)
        except ReaderError:
            raise
        except _StoreFault as fault:
            raise ReaderError(url, explain(url, fault.cause).split(": ", 1)[1]) from None
        except Exception as exc:
            raise ReaderError(url, explain(url, exc).split(": ", 1)[1]) from None


class _StoreFault(Exception):
    """A request of a ranged read failed (denied, object replaced, store gone): not an OSError,
    so the zip reader does not take it for a damaged archive."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


class _Guarded:
    """A ranged-read file whose store failures come out as _StoreFault."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    def read(self, size: int = -1) -> bytes:
        try:
            return self._handle.read(size)
        except Exception as exc:
            raise _StoreFault(exc) from None

    def seek(self, offset: int, whence: int = 0) -> int:
        try:
            return self._handle.seek(offset, whence)
        except Exception as exc:
            raise _StoreFault(exc) from None

    def tell(self) -> int:
        return self._handle.tell()

    def close(self) -> None:
        try:
            self._handle.close()
        except Exception:
            pass


def _same_key(a: str, b: str) -> bool:
    return a.strip("/") == b.strip("/")


def _remote_file(info: dict[str, Any]) -> RemoteFile:
    return RemoteFile(info["name"], int(info.get("size") or 0), _mtime(info), _etag(info))


def _skipped_folder(name: str) -> bool:
    # Scout's scans/ hold scan_id=… folders; a folder merely named scans may hold runs.
    return name in _SKIP_PARTS or name.startswith(".") or name.endswith(".checkpoints") or name.startswith("scan_id=")


def _mtime(info: dict[str, Any]) -> float:
    value = (info.get("LastModified") or info.get("mtime") or info.get("last_modified") or info.get("updated")
             or info.get("created"))
    if hasattr(value, "timestamp"):
        return float(value.timestamp())
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        from datetime import datetime

        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return 0.0
    return 0.0


def _etag(info: dict[str, Any]) -> str | None:
    value = info.get("ETag") or info.get("etag") or info.get("md5Hash")  # S3, Azure, GCS
    return str(value).strip('"') if value else None


_stores: dict[str, RemoteStore] = {}
# (key, etag, size, mtime) of a merged log -> (its shards ledger, status): what decides coverage.
_merged_headers: dict[tuple[str, str | None, int, float], tuple[dict[str, Any], str]] = {}


def canonical_url(url: str) -> str:
    """`url` as the index names it (fsspec's form, without credentials): `s3://bucket/prefix`."""
    try:
        fs, path = _filesystem(url)
        return public_url(fs.unstrip_protocol(path))
    except RemoteError:  # no client for it installed: said when it is listed
        return public_url(url)


def store_for(url: str) -> RemoteStore:
    """The store of the run directory `url` lies in (cached per scheme and bucket)."""
    parts = urlsplit(public_url(url))
    key = f"{parts.scheme}://{parts.netloc}"
    if key not in _stores:
        _stores[key] = RemoteStore(key)
    return _stores[key]


def load_sample_detail(fmt: str, url: str, detail_ref: str) -> dict[str, Any]:
    """The full record of a sample of a run indexed from an object store."""
    try:
        store = store_for(url)
    except RemoteError as exc:
        raise ReaderError(url, str(exc).split(": ", 1)[-1]) from None
    return store.load_sample_detail(fmt, url, detail_ref)

