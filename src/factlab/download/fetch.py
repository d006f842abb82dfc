"""Fetch upstream files: a local mirror first, the URL second, sha256 checked either way."""

from __future__ import annotations

import logging
import shutil
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from tqdm import tqdm

from factlab.download.manifest import ManifestEntry, local_path
from factlab.errors import DownloadError
from factlab.io import atomic_path, sha256_file

log = logging.getLogger(__name__)


def find_in_mirrors(entry: ManifestEntry, mirror_dirs: Sequence[str | Path]) -> Path | None:
    for mirror in mirror_dirs:
        candidate = Path(mirror) / entry.relpath
        if candidate.is_file():
            return candidate
    return None


def fetch(
    entry: ManifestEntry,
    raw_root: str | Path,
    mirror_dirs: Sequence[str | Path],
    allow_network: bool,
    timeout_s: float = 60.0,
) -> Path:
    """Place `entry` at its local path, verified. Returns the path.

    An existing local file with the right hash is kept. Nothing is written unless the
    checksum matches, so a failed fetch leaves no partial file behind.
    """
    target = local_path(raw_root, entry)
    if target.is_file() and sha256_file(target) == entry.sha256:
        return target
    source = find_in_mirrors(entry, mirror_dirs)
    with atomic_path(target) as tmp:
        if source is not None:
            shutil.copyfile(source, tmp)
            origin = str(source)
        elif allow_network:
            origin = entry.url
            try:
                with urllib.request.urlopen(entry.url, timeout=timeout_s) as response, open(tmp, "wb") as out:
                    shutil.copyfileobj(response, out)
            except OSError as error:
                raise DownloadError(f"could not download {entry.url}: {error}") from error
        else:
            searched = ", ".join(str(Path(m) / entry.relpath) for m in mirror_dirs) or "no mirror configured"
            raise DownloadError(
                f"file {entry.relpath} of dataset {entry.dataset!r} is missing: not in the mirror "
                f"(looked at {searched}) and network access is off (download.allow_network)"
            )
        actual = sha256_file(tmp)
        if actual != entry.sha256:
            raise DownloadError(
                f"checksum mismatch for {entry.relpath} (from {origin}): "
                f"expected sha256 {entry.sha256}, actual {actual}"
            )
    return target


def fetch_dataset(
    entries: Sequence[ManifestEntry],
    raw_root: str | Path,
    mirror_dirs: Sequence[str | Path],
    allow_network: bool,
) -> list[Path]:
    paths = []
    for entry in tqdm(entries, desc=f"download {entries[0].dataset}", unit="file", disable=len(entries) < 20):
        paths.append(fetch(entry, raw_root, mirror_dirs, allow_network))
    log.info("verified %d files of %s", len(paths), entries[0].dataset)
    return paths
