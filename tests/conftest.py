"""Shared fixtures: the real data mirror and the project manifest."""

from __future__ import annotations

import os

# One BLAS thread per process: the statistics use small matrices, and on a loaded 2-core machine
# multithreaded BLAS is many times slower. Set before numpy is imported.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
from pathlib import Path

import pytest

from factlab.download.manifest import ManifestEntry, RawFiles, load_manifest

ROOT = Path(__file__).resolve().parents[1]
MANIFEST_PATH = ROOT / "config" / "data_manifest.tsv"


def find_mirror() -> Path:
    candidates = [os.environ.get("FACTLAB_MIRROR"), ROOT / "resources" / "mirror", ROOT.parent / "shared" / "mirror"]
    for candidate in candidates:
        if candidate and (Path(candidate) / "MANIFEST.tsv").is_file():
            return Path(candidate)
    # The loader tests check real counts: without the mirror they cannot run, and must not pass.
    raise RuntimeError("data mirror not found: set FACTLAB_MIRROR or link ../shared/mirror to resources/mirror")


@pytest.fixture(scope="session")
def mirror() -> Path:
    return find_mirror()


@pytest.fixture(scope="session")
def manifest() -> list[ManifestEntry]:
    return load_manifest(MANIFEST_PATH)


@pytest.fixture(scope="session")
def raw(mirror: Path, manifest: list[ManifestEntry]) -> RawFiles:
    """Upstream files read straight from the mirror (checksums are tested in test_download)."""
    return RawFiles(mirror, manifest, per_dataset=False)


@pytest.fixture(scope="session")
def project_manifest_path() -> Path:
    return MANIFEST_PATH


# Tests that read the data mirror (directly or through a fixture built on it) are marked `mirror`:
# `pytest -m "not mirror"` is the fast self-contained tier (no ../shared needed).
MIRROR_FIXTURES = {"mirror", "raw"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if MIRROR_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.mirror)
