"""File helpers: atomic writes (no partial artefact ever), hashing, JSON."""

from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas is imported where a table is written: command-line help imports this module
    import pandas as pd


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside `path`; move it into place only if the block succeeds.

    On error the temporary file is removed and an existing `path` is left untouched.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    # A writer killed mid-write (kill -9, the OOM killer) leaves its temporary behind: sweep it, so
    # stale halves never pile up in (DVC-tracked) output folders. Each target has one writer at a time.
    for stale in target.parent.glob(f".{glob.escape(target.name)}.*.tmp"):
        stale.unlink(missing_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        # mkstemp creates 0600 files; give the artefact the permissions a plain open() would.
        os.chmod(tmp, 0o666 & ~_current_umask())
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()


@contextlib.contextmanager
def atomic_folder(path: str | Path) -> Iterator[Path]:
    """Yield a temporary folder beside `path`; it replaces `path` only if the block succeeds (a model folder is never
    left half-written). On error the temporary folder is removed and an existing `path` is left untouched.

    The folder and what it holds get the permissions plain mkdir() and open() would give them under the user's umask
    (mkdtemp makes the folder 0700, and copies and writers may keep 0600): a shared model folder is readable."""
    import shutil

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        yield staging
        _plain_permissions(staging)
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        if staging.exists():
            shutil.rmtree(staging)


def _plain_permissions(folder: Path) -> None:
    """Folders 0777, executables 0777 and other files 0666, less the umask, throughout `folder`."""
    umask = _current_umask()
    os.chmod(folder, 0o777 & ~umask)
    for root, folders, files in os.walk(folder):
        for name in folders + files:
            item = os.path.join(root, name)
            if os.path.islink(item):  # a link's target is not the folder's to change
                continue
            mode = os.stat(item).st_mode
            plain = 0o777 if name in folders or mode & 0o111 else 0o666
            os.chmod(item, plain & ~umask)


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_parquet(frame: pd.DataFrame, path: str | Path) -> None:
    with atomic_path(path) as tmp:
        frame.to_parquet(tmp, index=False)


def write_json(obj: Any, path: str | Path) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")


def write_text(text: str, path: str | Path) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def sha256_file(path: str | Path, chunk_bytes: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(chunk_bytes):
            digest.update(chunk)
    return digest.hexdigest()
