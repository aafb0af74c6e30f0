"""Where the index lives: RUN_DIR/.evtui/index.db, or the user cache dir if RUN_DIR is read-only."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import platformdirs


def default_index_path(run_dir: str | Path) -> Path:
    """The index for `run_dir`; falls back to a per-directory file in the user cache dir."""
    run_dir = Path(run_dir).resolve()
    base = run_dir if run_dir.is_dir() else run_dir.parent
    local = base / ".evtui"
    if _writable(local):
        return local / "index.db"
    digest = hashlib.sha256(str(base).encode()).hexdigest()[:16]
    return Path(platformdirs.user_cache_dir("evtui")) / f"{base.name or 'root'}-{digest}" / "index.db"


def _writable(directory: Path) -> bool:
    if directory.exists():
        return os.access(directory, os.W_OK | os.X_OK)
    return os.access(directory.parent, os.W_OK | os.X_OK)
