"""Bad input: a clear error naming file/record/field, non-zero exit, no partial artefact,
earlier outputs untouched. Runs the real CLI the workflow runs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from factlab.download.manifest import entries_for, load_manifest
from factlab.io import sha256_file

FIXTURES = Path(__file__).parent / "fixtures"


def run_build(name: str, raw_dir: Path, out_dir: Path, manifest: Path, custom: dict | None = None):
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "factlab",
            "data",
            "build",
            name,
            "--manifest",
            str(manifest),
            "--download-dir",
            str(raw_dir),
            "--out",
            str(out_dir / f"{name}.parquet"),
            "--report",
            str(out_dir / "reports" / f"{name}.json"),
            "--custom-json",
            json.dumps(custom or {}),
        ],
        capture_output=True,
        text=True,
    )


@pytest.fixture()
def qags_raw(tmp_path, manifest, mirror):
    """A raw dir holding a private copy of the QAGS files, to be damaged by each test."""
    raw = tmp_path / "raw"
    for entry in entries_for(manifest, "qags"):
        target = raw / "qags" / entry.relpath
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(mirror / entry.relpath, target)
    return raw, next(raw.rglob("mturk_xsum.jsonl"))


@pytest.fixture()
def earlier_output(tmp_path):
    """A previously built artefact that a failed build must leave byte-for-byte intact."""
    out = tmp_path / "out"
    out.mkdir()
    previous = out / "qags_xsum.parquet"
    pd.DataFrame({"example_id": ["kept"]}).to_parquet(previous)
    return out, previous.read_bytes()


def assert_no_partial(out: Path, name: str, before: bytes | None) -> None:
    leftovers = [p.name for p in out.rglob("*") if p.is_file() and p.name.endswith(".tmp")]
    assert leftovers == []
    target = out / f"{name}.parquet"
    if before is None:
        assert not target.exists()
    else:
        assert target.read_bytes() == before
    assert not (out / "reports" / f"{name}.json").exists()


def test_good_build_writes_parquet_and_report(qags_raw, tmp_path, project_manifest_path):
    raw, _ = qags_raw
    out = tmp_path / "out"
    result = run_build("qags_xsum", raw, out, project_manifest_path)
    assert result.returncode == 0, result.stderr
    assert len(pd.read_parquet(out / "qags_xsum.parquet")) == 239
    assert json.loads((out / "reports" / "qags_xsum.json").read_text())["rows"] == 239


def manifest_pinning(changed: Path, project_manifest_path: Path, tmp_path: Path) -> Path:
    """A manifest whose sha256 for `changed` is its current content's: the damage is upstream's, as published,
    so the build gets past the checksum to the adapter's own checks."""
    original = next(e.sha256 for e in load_manifest(project_manifest_path) if str(changed).endswith(str(e.relpath)))
    manifest = tmp_path / "manifest.tsv"
    manifest.write_text(project_manifest_path.read_text().replace(original, sha256_file(changed)))
    return manifest


def test_a_file_changed_after_download_is_refused(qags_raw, earlier_output, project_manifest_path):
    raw, path = qags_raw
    path.write_text(path.read_text().replace("a", "b", 1))
    out, before = earlier_output
    result = run_build("qags_xsum", raw, out, project_manifest_path)
    assert result.returncode != 0
    assert "differs from the manifest's" in result.stderr and "mturk_xsum.jsonl" in result.stderr
    assert_no_partial(out, "qags_xsum", before)


def test_truncated_json_line(qags_raw, earlier_output, project_manifest_path, tmp_path):
    raw, path = qags_raw
    lines = path.read_text().splitlines()
    lines[9] = lines[9][: len(lines[9]) // 2]  # cut mid-record, as an interrupted upload upstream would
    path.write_text("\n".join(lines) + "\n")
    out, before = earlier_output
    result = run_build("qags_xsum", raw, out, manifest_pinning(path, project_manifest_path, tmp_path))
    assert result.returncode != 0
    assert "malformed JSON line" in result.stderr and "mturk_xsum.jsonl" in result.stderr and "line 10" in result.stderr
    assert_no_partial(out, "qags_xsum", before)


def test_missing_required_field(qags_raw, earlier_output, project_manifest_path, tmp_path):
    raw, path = qags_raw
    records = [json.loads(line) for line in path.read_text().splitlines()]
    del records[4]["article"]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    out, before = earlier_output
    result = run_build("qags_xsum", raw, out, manifest_pinning(path, project_manifest_path, tmp_path))
    assert result.returncode != 0
    assert "missing required field" in result.stderr and "line 5" in result.stderr and "'article'" in result.stderr
    assert_no_partial(out, "qags_xsum", before)


def byo_config(path: Path) -> dict:
    columns = {"example_id": "id", "source": "document", "output": "summary", "label": "faithful"}
    return {"mine": {"path": str(path), "columns": columns}}


def test_label_out_of_range(tmp_path, project_manifest_path):
    table = pd.read_csv(FIXTURES / "byo_qags_xsum_head.csv")
    table["faithful"] = table["faithful"].map({"yes": 1, "no": 0})
    table.loc[3, "faithful"] = 2
    bad = tmp_path / "mine.csv"
    table.to_csv(bad, index=False)
    out = tmp_path / "out"
    result = run_build("mine", tmp_path, out, project_manifest_path, byo_config(bad))
    assert result.returncode != 0
    # qx3 is the file's line 5 (the header is line 1); the upstream column is named, and the file
    assert "record line 5, field 'faithful': label '2' is not 0, 1 or null" in result.stderr and str(bad) in result.stderr
    assert_no_partial(out, "mine", None)


def test_duplicate_id(tmp_path, project_manifest_path):
    table = pd.read_csv(FIXTURES / "byo_qags_xsum_head.csv")
    table["faithful"] = table["faithful"].map({"yes": 1, "no": 0})
    table.loc[5, "id"] = table.loc[1, "id"]
    bad = tmp_path / "mine.csv"
    table.to_csv(bad, index=False)
    out = tmp_path / "out"
    result = run_build("mine", tmp_path, out, project_manifest_path, byo_config(bad))
    assert result.returncode != 0
    # qx1 is first on line 3 and again on line 7 (the header is line 1)
    assert "duplicate example_id 'qx1', first on line 3" in result.stderr and "record line 7" in result.stderr
    assert_no_partial(out, "mine", None)


def byo_qags(path: Path, **extra) -> dict:
    columns = {"example_id": "id", "source": "document", "output": "summary", "label": "faithful"}
    return {"mine": {"path": str(path), "columns": columns, **extra}}


def assert_one_line_error(result, *parts: str) -> None:
    """Exit 1 with one `factlab: error:` line naming every part, and no traceback."""
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("factlab: error:")]
    assert len(errors) == 1, result.stderr
    for part in parts:
        assert part in errors[0], errors[0]


def test_empty_custom_csv(tmp_path, project_manifest_path):
    empty = tmp_path / "mine.csv"
    empty.write_bytes(b"")
    out = tmp_path / "out"
    result = run_build("mine", tmp_path, out, project_manifest_path, byo_qags(empty))
    assert_one_line_error(result, "file is empty", str(empty))
    assert_no_partial(out, "mine", None)


@pytest.mark.parametrize("blank_lines", ["", "\n\n"])
def test_empty_custom_jsonl_has_no_records(tmp_path, project_manifest_path, blank_lines):
    empty = tmp_path / "mine.jsonl"
    empty.write_text(blank_lines)
    out = tmp_path / "out"
    result = run_build("mine", tmp_path, out, project_manifest_path, byo_qags(empty))
    assert_one_line_error(result, "file has no records", str(empty))
    assert "mapped column" not in result.stderr
    assert_no_partial(out, "mine", None)


@pytest.mark.parametrize(("suffix", "line"), [("csv", "line 2"), ("jsonl", "line 1")])
def test_custom_file_not_in_utf8(tmp_path, project_manifest_path, suffix, line):
    """The fixture saved as Windows-1252, as Excel does: its only non-ASCII text ("â£50,000", qx0) is on `line`."""
    text = (FIXTURES / f"byo_qags_xsum_head.{suffix}").read_text(encoding="utf-8")
    if suffix == "jsonl":  # the fixture escapes non-ASCII characters; write them out as a user's tool would
        text = "".join(json.dumps(json.loads(row), ensure_ascii=False) + "\n" for row in text.splitlines())
    bad = tmp_path / f"mine.{suffix}"
    bad.write_bytes(text.encode("cp1252"))
    out = tmp_path / "out"
    result = run_build("mine", tmp_path, out, project_manifest_path, byo_qags(bad))
    assert_one_line_error(result, "not valid UTF-8", str(bad), f"record {line}")
    assert_no_partial(out, "mine", None)


def test_label_map_turned_into_booleans_by_yaml(tmp_path, project_manifest_path):
    import yaml

    params = yaml.safe_load("label_map: {yes: 1, no: 0}")  # unquoted keys, as in a hand-written params.yaml
    out = tmp_path / "out"
    result = run_build("mine", tmp_path, out, project_manifest_path, byo_qags(FIXTURES / "byo_qags_xsum_head.csv", **params))
    assert_one_line_error(
        result, "label 'yes' is not in label_map", "YAML read the unquoted key yes as boolean True", "quote it", "record line 2"
    )
    assert_no_partial(out, "mine", None)
