"""Download: mirror first, sha256 checked, atomic, clear errors, no network when mirrored."""

from __future__ import annotations

import dataclasses
import hashlib
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from factlab.download.fetch import fetch
from factlab.download.manifest import entries_for, load_manifest, local_path
from factlab.errors import DownloadError
from factlab.io import sha256_file

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def qags_entry(manifest):
    return next(e for e in entries_for(manifest, "qags") if e.url.endswith("mturk_xsum.jsonl"))


def test_project_manifest_matches_mirror_manifest(manifest, mirror):
    mirror_rows = {row.url: row for row in load_manifest(mirror / "MANIFEST.tsv")}
    for entry in manifest:
        assert mirror_rows[entry.url].sha256 == entry.sha256


def test_fetch_copies_from_mirror_without_network(qags_entry, mirror, tmp_path, monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("network used although the mirror has the file")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    path = fetch(qags_entry, tmp_path, [tmp_path / "absent", mirror], allow_network=True)
    assert path == local_path(tmp_path, qags_entry)
    assert sha256_file(path) == qags_entry.sha256
    assert hashlib.sha256(path.read_bytes()).hexdigest() == qags_entry.sha256


def test_missing_file_names_file_and_mirrors(qags_entry, tmp_path):
    with pytest.raises(DownloadError, match="mturk_xsum.jsonl.*missing.*allow_network"):
        fetch(qags_entry, tmp_path / "raw", [tmp_path / "empty_mirror"], allow_network=False)
    assert not (tmp_path / "raw").exists() or not any((tmp_path / "raw").rglob("*.jsonl"))


def test_checksum_mismatch_names_expected_and_actual(qags_entry, mirror, tmp_path):
    wrong = dataclasses.replace(qags_entry, sha256="0" * 64)
    actual = qags_entry.sha256
    with pytest.raises(DownloadError, match=f"expected sha256 {'0' * 64}; .*mturk_xsum.jsonl has sha256 {actual}"):
        fetch(wrong, tmp_path, [mirror], allow_network=False)
    # Nothing unverified is left behind, not even a temporary file.
    assert not any(p.is_file() for p in tmp_path.rglob("*"))


def test_a_corrupt_mirror_copy_falls_through_to_the_next_mirror(qags_entry, mirror, tmp_path, caplog):
    corrupt_mirror = tmp_path / "corrupt"
    (corrupt_mirror / qags_entry.relpath).parent.mkdir(parents=True)
    (corrupt_mirror / qags_entry.relpath).write_text("truncated upstream copy")
    path = fetch(qags_entry, tmp_path / "raw", [corrupt_mirror, mirror], allow_network=False)
    assert sha256_file(path) == qags_entry.sha256
    assert "fails its checksum" in caplog.text and str(corrupt_mirror) in caplog.text
    with pytest.raises(DownloadError, match="checksum mismatch.*corrupt"):  # no good copy anywhere: named
        fetch(qags_entry, tmp_path / "raw2", [corrupt_mirror], allow_network=False)
    assert not list((tmp_path / "raw2").rglob("*.jsonl")) and not list((tmp_path / "raw2").rglob("*.tmp"))


def test_corrupt_local_copy_is_replaced_and_good_copy_kept(qags_entry, mirror, tmp_path):
    target = local_path(tmp_path, qags_entry)
    target.parent.mkdir(parents=True)
    target.write_text("truncated")
    fetch(qags_entry, tmp_path, [mirror], allow_network=False)
    assert sha256_file(target) == qags_entry.sha256


def test_cli_exits_nonzero_with_message(tmp_path):
    manifest = tmp_path / "manifest.tsv"
    manifest.write_text(
        f"dataset\turl\tsha256\tbytes\ntiny\thttps://raw.githubusercontent.com/o/r/{'a' * 40}/missing.txt\t{'1' * 64}\t3\n"
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "factlab",
            "download",
            "tiny",
            "--manifest",
            str(manifest),
            "--download-dir",
            str(tmp_path / "raw"),
            "--mirror-dirs",
            str(tmp_path),
            "--allow-network",
            "no",
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert "missing.txt" in result.stderr and "tiny" in result.stderr


def test_artefacts_get_ordinary_permissions(tmp_path):
    from factlab.io import write_text

    os_umask = __import__("os").umask(0o022)
    try:
        write_text("x", tmp_path / "a.txt")
    finally:
        __import__("os").umask(os_umask)
    assert (tmp_path / "a.txt").stat().st_mode & 0o777 == 0o644


def test_a_killed_writers_temporary_is_swept_by_the_next_write(tmp_path):
    from factlab.io import write_text

    # What `kill -9` during a write leaves: atomic_path's temporary beside the target, never moved into place.
    stale = tmp_path / ".frank.parquet.k2j3h4.tmp"
    stale.write_bytes(b"half a parquet")
    other = tmp_path / ".summeval.parquet.x9.tmp"  # another target's temporary is not ours to remove
    other.write_bytes(b"x")
    write_text("done", tmp_path / "frank.parquet")
    assert not stale.exists() and other.exists()
    assert (tmp_path / "frank.parquet").read_text() == "done"
    assert ".*.tmp" in (ROOT / ".dvcignore").read_text().splitlines()  # and DVC never commits one


def test_a_rerun_without_mirror_or_network_restores_the_last_verified_files(qags_entry, mirror, tmp_path, caplog):
    """Snakemake deletes a dataset's folder before rerunning its download job; the verified files come back."""
    import shutil

    from factlab.download.fetch import fetch_dataset, last_good_path

    raw = tmp_path / "raw"
    [path] = fetch_dataset([qags_entry], raw, [mirror], allow_network=False)
    kept = last_good_path(raw, qags_entry)
    assert kept.stat().st_ino == path.stat().st_ino  # a hard link: no second copy on disk
    shutil.rmtree(raw / qags_entry.dataset)
    with caplog.at_level("INFO"):
        [restored] = fetch_dataset([qags_entry], raw, [], allow_network=False)
    assert sha256_file(restored) == qags_entry.sha256
    assert "restored from the last verified copy" in caplog.text
    shutil.rmtree(raw / qags_entry.dataset)
    kept.write_bytes(b"damaged")  # the only link left: a damaged last-good copy is passed over for the mirror
    [again] = fetch_dataset([qags_entry], raw, [mirror], allow_network=False)
    assert sha256_file(again) == qags_entry.sha256 and sha256_file(kept) == qags_entry.sha256
    shutil.rmtree(raw / qags_entry.dataset)
    kept.write_bytes(b"damaged")
    with pytest.raises(DownloadError, match="is missing"):
        fetch_dataset([qags_entry], raw, [], allow_network=False)
