"""What a rerun keeps, run for real: a throwaway project (the workflow and sources linked, its own
params) builds one small benchmark with Snakemake, then
- changing where files come from (download.allow_network, download.mirror_dirs) leaves nothing to do:
  the manifest's sha256 pins the content (before, both were rule params and reran every download);
- a bad edit to a custom benchmark is refused while the workflow is parsed, naming every bad record, before any
  job runs: the good parquet is still there and the plan afterwards is the plan before."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from factlab.io import sha256_file

ROOT = Path(__file__).resolve().parents[1]
FIXTURE_JSONL = ROOT / "tests" / "fixtures" / "byo_qags_xsum_head.jsonl"  # 6 QAGS-XSum records
LINKED = ("Snakefile", "workflow", "src", "config")


def run_tool(project: Path, module: str, *args: str, bin_first: Path | None = None) -> subprocess.CompletedProcess:
    # The rules call the `factlab` script installed beside this interpreter (or one in `bin_first`).
    path = [str(bin_first)] if bin_first else []
    env = {**os.environ, "PATH": os.pathsep.join([*path, str(Path(sys.executable).parent), os.environ["PATH"]])}
    return subprocess.run([sys.executable, "-m", module, *args], cwd=project, capture_output=True, text=True, env=env)


def snakemake(project: Path, *args: str, bin_first: Path | None = None) -> subprocess.CompletedProcess:
    return run_tool(project, "snakemake", "--cores", "1", *args, bin_first=bin_first)


def write_params(project: Path, mirror: Path, **download: object) -> None:
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["download"].update({"mirror_dirs": [str(mirror)], "allow_network": False, **download})
    params["data"] = {
        "benchmarks": ["qags_xsum", "mine"],
        "custom_benchmarks": {
            "mine": {
                "path": "mine.jsonl",
                "columns": {"example_id": "id", "source": "document", "output": "summary", "label": "faithful"},
                "label_map": {"yes": 1, "no": 0},
            }
        },
    }
    (project / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))


@pytest.fixture(scope="module")
def project(tmp_path_factory, mirror) -> Path:
    project = tmp_path_factory.mktemp("project")
    for name in LINKED:
        (project / name).symlink_to(ROOT / name)
    shutil.copy(FIXTURE_JSONL, project / "mine.jsonl")
    write_params(project, mirror)
    built = snakemake(project, "results/data/qags_xsum.parquet", "results/data/mine.parquet")
    assert built.returncode == 0, built.stderr[-3000:]
    return project


@pytest.mark.slow
def test_changing_where_files_come_from_reruns_nothing(project, mirror, tmp_path):
    other_mirror = tmp_path / "empty_mirror"
    other_mirror.mkdir()
    write_params(project, mirror, allow_network=True, mirror_dirs=[str(other_mirror), str(mirror)])
    dry = snakemake(project, "-n", "results/data/qags_xsum.parquet")
    write_params(project, mirror)
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert "Nothing to be done" in dry.stdout + dry.stderr, dry.stdout[-3000:]


def plan(dry_run: subprocess.CompletedProcess) -> str:
    """What a dry run plans: its output after the banner (which has the date and a run id)."""
    return dry_run.stdout.split("Building DAG of jobs...")[-1]


@pytest.mark.slow
def test_a_bad_edit_is_refused_before_any_job_and_keeps_the_good_build(project):
    good = project / "results" / "data" / "mine.parquet"
    good_sha = sha256_file(good)
    planned = snakemake(project, "-n", "results/data/qags_xsum.parquet", "results/data/mine.parquet")
    records = [json.loads(line) for line in (project / "mine.jsonl").read_text().splitlines()]
    records[1]["faithful"] = "maybe"  # not in label_map
    records[3]["summary"] = " "
    original = (project / "mine.jsonl").read_text()
    (project / "mine.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records))
    try:
        failed = snakemake(project, "results/data/mine.parquet")
    finally:
        (project / "mine.jsonl").write_text(original)
    assert failed.returncode != 0
    assert sha256_file(good) == good_sha  # no job ran: nothing was removed
    message = failed.stderr
    assert "record line 2, field 'faithful': label 'maybe' is not in label_map" in message, message[-3000:]
    assert "record line 4, field 'summary': output is empty (whitespace only)" in message
    assert 'e.g. label_map: {"maybe": null, "no": 0, "yes": 1}' in message  # a label_map for every label, as YAML
    after = snakemake(project, "-n", "results/data/qags_xsum.parquet", "results/data/mine.parquet")
    assert after.returncode == 0 and plan(after) == plan(planned)  # the same plan as before the bad edit


def dvc(project: Path, *args: str) -> subprocess.CompletedProcess:
    return run_tool(project, "dvc", *args)


@pytest.mark.slow
def test_fresh_clone_pulls_and_rebuilds_nothing(project, tmp_path):
    """README's sharing recipe on the data stage: `dvc push` from a run; on a fresh clone `dvc pull`,
    `dvc status -q` (the pulled content is the locked one), `snakemake --touch` (pulled files get fresh,
    arbitrary mtimes, which Snakemake would read as stale inputs); then nothing is left to do."""
    targets = ("results/data/qags_xsum.parquet", "results/data/mine.parquet")
    store = tmp_path / "store"
    built = snakemake(project, *targets)  # an earlier test may have left a target failed and removed
    assert built.returncode == 0, built.stderr[-2000:]
    generated = run_tool(project, "factlab.workflow.dvcyaml")
    assert generated.returncode == 0, generated.stderr[-2000:]
    for command in (
        ("init", "--no-scm", "--quiet"),
        ("remote", "add", "-d", "store", str(store)),
        ("commit", "--force", "download", "data"),
        ("push", "download", "data"),
    ):
        done = dvc(project, *command)
        assert done.returncode == 0, (command, done.stderr[-2000:])

    clone = tmp_path / "clone"  # what git gives a team member: sources, params, dvc.yaml / dvc.lock, no results/
    clone.mkdir()
    for name in LINKED:
        (clone / name).symlink_to(ROOT / name)
    for name in ("params.yaml", "dvc.yaml", "dvc.lock", "mine.jsonl"):
        shutil.copy(project / name, clone / name)
    (clone / ".dvc").mkdir()
    shutil.copy(project / ".dvc" / "config", clone / ".dvc" / "config")
    stale = snakemake(clone, "-n", *targets)
    assert "Nothing to be done" not in stale.stdout  # nothing pulled yet: everything would be built
    for command in (("pull", "download", "data"), ("status", "--quiet", "download", "data")):
        done = dvc(clone, *command)
        assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
    untouched = snakemake(clone, "-n", *targets)
    assert "Nothing to be done" not in untouched.stdout  # the mtimes problem the touch solves
    touched = snakemake(clone, "--touch", *targets)
    assert touched.returncode == 0, touched.stderr[-2000:]
    dry = snakemake(clone, "-n", *targets)
    assert "Nothing to be done" in dry.stdout + dry.stderr, dry.stdout[-3000:]
    for target in targets:
        assert sha256_file(clone / target) == sha256_file(project / target)


@pytest.mark.slow
def test_a_job_killed_after_its_input_changed_is_rebuilt_by_the_documented_recovery(project, tmp_path):
    """A job killed while Snakemake lives on (the OOM killer, a lost node) after its input changed: Snakemake
    9.27 records it as finished from that input and removes its output (snakemake/snakemake#3808), so the next
    run has nothing to do and the sentences downstream keep the old summary. docs/reproducibility.md's recovery,
    `--force` on the killed job's outputs and then a plain run, rebuilds the data and the sentences."""
    target = "results/preprocess/mine/sentences.parquet"
    built = snakemake(project, target)
    assert built.returncode == 0, built.stderr[-2000:]
    original = (project / "mine.jsonl").read_text()
    records = [json.loads(line) for line in original.splitlines()]
    added = "The van was found burnt out on Tuesday."
    records[0]["summary"] = f"{records[0]['summary']} {added}"
    killer = tmp_path / "killer"  # a `factlab` that dies as the OOM killer's victim does
    killer.mkdir()
    (killer / "factlab").write_text("#!/bin/sh\nkill -9 $$\n")
    (killer / "factlab").chmod(0o755)
    (project / "mine.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records))
    try:
        killed = snakemake(project, target, bin_first=killer)
        assert killed.returncode != 0
        assert "Error in rule build_benchmark" in killed.stdout + killed.stderr, killed.stderr[-2000:]
        plain = snakemake(project, "-n", target)
        assert "Nothing to be done" in plain.stdout + plain.stderr, plain.stdout[-3000:]  # Snakemake's fault
        forced = snakemake(project, "--force", "results/data/mine.parquet", "results/data/reports/mine.json")
        assert forced.returncode == 0, forced.stderr[-2000:]
        resumed = snakemake(project, target)
        assert resumed.returncode == 0, resumed.stderr[-2000:]
        sentences = pd.read_parquet(project / target)
        assert added in " ".join(sentences.loc[sentences["side"] == "output", "text"])
    finally:
        (project / "mine.jsonl").write_text(original)
        assert snakemake(project, target).returncode == 0


def _fixture_records() -> list[dict]:
    return [json.loads(line) for line in FIXTURE_JSONL.read_text().splitlines()]


def _jsonl(records: list) -> bytes:
    return "".join(json.dumps(record) + "\n" for record in records).encode()


def _with(index: int, **changes: object) -> bytes:
    records = _fixture_records()
    records[index].update(changes)
    return _jsonl(records)


def _csv(text: str) -> bytes:
    return text.encode()


MAPPED = {"example_id": "id", "source": "document", "output": "summary", "label": "faithful"}
# (name, file suffix, file bytes, extra config, a fragment or pattern the error must show): each tried as a new user
# would. Success cases (null labels, CRLF, a 60,000-word source, a Chinese output) are the build tests'.
BAD_INPUTS = [
    ("empty_file", "csv", b"", {}, "file is empty"),
    ("header_only", "csv", b"id,document,summary,faithful\n", {}, "file has no records"),
    (
        "no_source_column",
        "jsonl",
        _jsonl([{"id": "a", "text": "x", "summary": "y", "faithful": "yes"}]),
        {},
        r"mapped column 'document' is not in",
    ),
    ("empty_output", "jsonl", _with(2, summary=""), {}, r"output is empty.*record line 3, field 'summary'"),
    ("whitespace_output", "jsonl", _with(1, summary=" \t "), {}, "output is empty (whitespace only)"),
    ("null_output", "jsonl", _with(4, summary=None), {}, r"output is empty.*record line 5, field 'summary'"),
    ("yes_no_without_map", "jsonl", _jsonl(_fixture_records()), {"label_map": None}, 'e.g. label_map: {"no": 0, "yes": 1}'),
    (
        "label_2",
        "jsonl",
        _with(3, faithful=2),
        {"label_map": None},
        "record line 4, field 'faithful': label 2 is not 0, 1 or null",
    ),
    ("nan_label", "csv", _csv('id,document,summary,faithful\na,"A text.","A text.",NaN\n'), {"label_map": None}, "'NaN'"),
    (
        "nan_label_jsonl",
        "jsonl",
        _jsonl([{**record, "faithful": float("nan") if i == 2 else 1} for i, record in enumerate(_fixture_records())]),
        {"label_map": None},
        "record line 3, field 'faithful': label NaN is not 0, 1 or null",
    ),
    ("not_utf8", "csv", b"id,document,summary,faithful\na,caf\xe9 text,x,yes\n", {}, "not valid UTF-8: byte 0xe9"),
    (
        "duplicate_ids",
        "jsonl",
        _with(3, id="qx0"),
        {},
        "duplicate example_id 'qx0', first on line 1 (file duplicate_ids.jsonl, record line 4, field 'id')",
    ),
    ("json_array_in_jsonl", "jsonl", json.dumps(_fixture_records()).encode() + b"\n", {}, "name it .json"),
    (
        "truncated_json_line",
        "jsonl",
        _jsonl(_fixture_records())[:-40],
        {},
        r"malformed JSON line: Unterminated string starting at column \d+ \(file .*, record line 6\)",
    ),
    ("list_as_output", "jsonl", _with(0, summary=["a", "b"]), {}, "output is not text but list"),
    (
        "mixed_extra_column",
        "jsonl",
        _jsonl([{**record, "extra": 3 if i == 0 else "three"} for i, record in enumerate(_fixture_records())]),
        {},
        "mixes number",
    ),
    ("missing_path", "jsonl", None, {}, "input file not found"),
    ("glob_without_match", "jsonl", None, {"path": "nowhere/*.jsonl"}, "no file matches the pattern"),
    (
        "misspelt_key",
        "jsonl",
        _jsonl(_fixture_records()),
        {"colums": MAPPED},
        "data.custom_benchmarks.misspelt_key: unknown key 'colums'; the nearest valid one is 'columns'",
    ),
    (
        "unquoted_yaml_booleans",
        "jsonl",
        _jsonl(_fixture_records()),
        {"label_map": {True: 1, False: 0}},
        "YAML read the unquoted key",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize(("case", "suffix", "content", "extra", "message"), BAD_INPUTS, ids=[case[0] for case in BAD_INPUTS])
def test_a_bad_custom_file_stops_the_run_and_changes_no_plan(project, case, suffix, content, extra, message):
    """A new custom benchmark with a bad file: the run stops before any job with the message, the good custom
    benchmark's build is untouched, and the plan of the default target is the plan before."""
    good = project / "results" / "data" / "mine.parquet"
    good_sha = sha256_file(good)
    targets = ["results/data/qags_xsum.parquet", "results/data/mine.parquet"]
    before = snakemake(project, "-n", *targets)
    path = project / f"{case}.{suffix}"
    if content is not None:
        path.write_bytes(content)
    spec = {"path": path.name, "columns": MAPPED, "label_map": {"yes": 1, "no": 0}, **extra}
    spec = {key: value for key, value in spec.items() if value is not None}
    if "colums" in spec:
        del spec["columns"]
    configfile = project / f"{case}.yaml"
    configfile.write_text(yaml.safe_dump({"data": {"custom_benchmarks": {case: spec}}}))
    failed = snakemake(project, "-n", *targets, "--configfile", configfile.name)  # --configfile takes several files
    assert failed.returncode != 0
    shown = failed.stderr + failed.stdout
    assert message in shown or re.search(message, shown), shown[-3000:]
    assert sha256_file(good) == good_sha
    after = snakemake(project, "-n", *targets)
    assert after.returncode == 0 and plan(after) == plan(before)
