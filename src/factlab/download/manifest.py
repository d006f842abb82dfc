"""The data manifest: every upstream file the pipeline uses, with its sha256."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from factlab.errors import DataError
from factlab.io import sha256_file

RAW_GITHUB_HOST = "raw.githubusercontent.com"
MANIFEST_COLUMNS = ("dataset", "url", "sha256", "bytes")


@dataclass(frozen=True)
class ManifestEntry:
    dataset: str
    url: str
    sha256: str
    bytes: int

    @property
    def relpath(self) -> Path:
        """Path in the raw.githubusercontent.com layout: OWNER/REPO/COMMIT/PATH."""
        return url_to_relpath(self.url)


def url_to_relpath(url: str) -> Path:
    parsed = urlparse(url)
    if parsed.netloc != RAW_GITHUB_HOST:
        # Other hosts keep their host name as the first component.
        return Path(parsed.netloc) / parsed.path.lstrip("/")
    return Path(parsed.path.lstrip("/"))


def load_manifest(path: str | Path) -> list[ManifestEntry]:
    entries: list[ManifestEntry] = []
    with open(path, newline="") as handle:
        reader = csv.DictReader(handle, delimiter="\t")
        missing = set(MANIFEST_COLUMNS) - set(reader.fieldnames or ())
        if missing:
            raise DataError(f"manifest lacks columns {sorted(missing)}", file=path, record="header")
        for line_no, row in enumerate(reader, start=2):
            for column in MANIFEST_COLUMNS:
                if not row.get(column):
                    raise DataError("empty manifest value", file=path, record=f"line {line_no}", field=column)
            if len(row["sha256"]) != 64:
                raise DataError("sha256 must have 64 hex digits", file=path, record=f"line {line_no}", field="sha256")
            entries.append(ManifestEntry(row["dataset"], row["url"], row["sha256"].lower(), int(row["bytes"])))
    return entries


def entries_for(entries: list[ManifestEntry], dataset: str) -> list[ManifestEntry]:
    selected = [entry for entry in entries if entry.dataset == dataset]
    if not selected:
        raise DataError(f"dataset {dataset!r} is not in the data manifest", field="dataset")
    return selected


class RawFiles:
    """Resolves upstream files of downloaded datasets to local paths.

    Adapters name a file by dataset and a unique suffix of its upstream path
    (e.g. `raw.path("frank", "data/human_annotations.json")`), never by a hard-coded URL.
    """

    def __init__(self, raw_root: str | Path, manifest: list[ManifestEntry], per_dataset: bool = True) -> None:
        """`per_dataset=False` reads a mirror directly (no `<dataset>/` level), as tests do."""
        self.raw_root = Path(raw_root)
        self.manifest = manifest
        self.per_dataset = per_dataset
        self._verified: set[Path] = set()

    def _local(self, entry: ManifestEntry) -> Path:
        return local_path(self.raw_root, entry) if self.per_dataset else self.raw_root / entry.relpath

    def entry(self, dataset: str, suffix: str) -> ManifestEntry:
        matches = [e for e in entries_for(self.manifest, dataset) if e.url.endswith("/" + suffix.lstrip("/"))]
        if len(matches) != 1:
            raise DataError(
                f"expected exactly one manifest file ending in {suffix!r}, found {len(matches)}",
                record=dataset,
            )
        return matches[0]

    def path(self, dataset: str, suffix: str) -> Path:
        entry = self.entry(dataset, suffix)
        local = self._local(entry)
        if not local.exists():
            raise DataError("raw file missing: run the download rule first", file=local, record=dataset)
        if local not in self._verified:  # a file changed after its download is never built on
            actual = sha256_file(local)
            if actual != entry.sha256:
                raise DataError(
                    f"sha256 {actual} differs from the manifest's {entry.sha256}: the file changed after its "
                    f"download; rebuild it with `snakemake --forcerun download_dataset`",
                    file=local,
                    record=dataset,
                )
            self._verified.add(local)
        return local

    def glob(self, dataset: str, middle: str) -> list[Path]:
        """All downloaded files of `dataset` whose URL contains `middle`, sorted by URL."""
        chosen = sorted((e for e in entries_for(self.manifest, dataset) if middle in e.url), key=lambda e: e.url)
        return [self._local(e) for e in chosen]


def local_path(raw_root: str | Path, entry: ManifestEntry) -> Path:
    return Path(raw_root) / entry.dataset / entry.relpath
