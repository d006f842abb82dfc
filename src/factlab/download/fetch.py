"""Fetch upstream files: a local mirror first, the URL second, sha256 checked either way.

Every verified file is also hard-linked (no extra disk) under `<raw_root>/.last-good/`, which is the first
source the next fetch tries: Snakemake deletes a dataset's folder before it reruns the download job (after a
manifest or code change), and without that copy a rerun whose mirror or network cannot supply a file would
lose files that were already verified. `.last-good/` is not an output of any rule and DVC ignores it.
"""

from __future__ import annotations

import logging
import shutil
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path

from tqdm import tqdm

from factlab.download.manifest import ManifestEntry, local_path
from factlab.errors import DownloadError
from factlab.io import atomic_path, sha256_file

log = logging.getLogger(__name__)


class _ChecksumMismatch(Exception):
    def __init__(self, actual: str) -> None:
        self.actual = actual


def place_verified(entry: ManifestEntry, target: Path, write: Callable[[Path], None]) -> str | None:
    """`write` a temporary file beside `target`; move it into place only if its sha256 is the manifest's.

    Returns None when placed, else the sha256 that was found (nothing written, nothing left behind)."""
    try:
        with atomic_path(target) as tmp:
            write(tmp)
            actual = sha256_file(tmp)
            if actual != entry.sha256:
                raise _ChecksumMismatch(actual)
    except _ChecksumMismatch as mismatch:
        return mismatch.actual
    return None


LAST_GOOD = ".last-good"


def last_good_path(raw_root: str | Path, entry: ManifestEntry) -> Path:
    return local_path(Path(raw_root) / LAST_GOOD, entry)


def keep_last_good(raw_root: str | Path, entry: ManifestEntry, path: Path) -> None:
    """Hard-link the verified `path` to its last-good place (a copy where links are not possible), atomically."""
    kept = last_good_path(raw_root, entry)
    if kept.is_file() and kept.stat().st_ino == path.stat().st_ino:
        return
    kept.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(kept) as staging:
        try:
            staging.unlink(missing_ok=True)
            staging.hardlink_to(path)
        except OSError:
            shutil.copyfile(path, staging)


def mirror_candidates(entry: ManifestEntry, mirror_dirs: Sequence[str | Path]) -> list[Path]:
    return [path for mirror in mirror_dirs if (path := Path(mirror) / entry.relpath).is_file()]


def fetch(
    entry: ManifestEntry,
    raw_root: str | Path,
    mirror_dirs: Sequence[str | Path],
    allow_network: bool,
    timeout_s: float = 60.0,
) -> Path:
    """Place `entry` at its local path, verified. Returns the path.

    An existing local file with the right hash is kept. Sources are tried in order (each mirror
    holding the file, then the URL when the network is allowed) until one matches the checksum: a
    corrupt mirror copy is reported and passed over. Nothing is written unless the checksum
    matches, so a failed fetch leaves no partial file behind.
    """
    target = local_path(raw_root, entry)
    if target.is_file() and sha256_file(target) == entry.sha256:
        return target
    failures = []
    kept = last_good_path(raw_root, entry)
    if kept.is_file():
        if place_verified(entry, target, lambda tmp: shutil.copyfile(kept, tmp)) is None:
            log.info("%s: restored from the last verified copy %s", entry.relpath, kept)
            return target
        log.warning("last verified copy %s no longer matches its checksum: trying the mirrors", kept)
    for source in mirror_candidates(entry, mirror_dirs):
        actual = place_verified(entry, target, lambda tmp, source=source: shutil.copyfile(source, tmp))
        if actual is None:
            return target
        failures.append(f"{source} has sha256 {actual}")
        log.warning(
            "mirror copy %s fails its checksum (sha256 %s, expected %s): trying the next source", source, actual, entry.sha256
        )
    if allow_network:

        def download(tmp: Path) -> None:
            try:
                with urllib.request.urlopen(entry.url, timeout=timeout_s) as response, open(tmp, "wb") as out:
                    shutil.copyfileobj(response, out)
            except OSError as error:
                raise DownloadError(f"could not download {entry.url}: {error}") from error

        actual = place_verified(entry, target, download)
        if actual is None:
            return target
        failures.append(f"{entry.url} has sha256 {actual}")
    if failures:
        raise DownloadError(f"checksum mismatch for {entry.relpath}: expected sha256 {entry.sha256}; {'; '.join(failures)}")
    searched = ", ".join(str(Path(m) / entry.relpath) for m in mirror_dirs) or "no mirror configured"
    raise DownloadError(
        f"file {entry.relpath} of dataset {entry.dataset!r} is missing: not in the mirror "
        f"(looked at {searched}) and network access is off (download.allow_network)"
    )


def fetch_dataset(
    entries: Sequence[ManifestEntry],
    raw_root: str | Path,
    mirror_dirs: Sequence[str | Path],
    allow_network: bool,
) -> list[Path]:
    paths = []
    for entry in tqdm(entries, desc=f"download {entries[0].dataset}", unit="file", disable=len(entries) < 20):
        paths.append(fetch(entry, raw_root, mirror_dirs, allow_network))
        keep_last_good(raw_root, entry, paths[-1])
    log.info("verified %d files of %s", len(paths), entries[0].dataset)
    return paths
