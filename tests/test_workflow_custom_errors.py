"""What a user sees when a custom benchmark in their `--configfile` is wrong, from a real `snakemake -n` in a throwaway
copy of the workflow (the sources linked, params.yaml copied): the run stops while the workflow is parsed, and its
last line is the user's error, with no traceback frame after it; a misspelt key or a bad name is one line naming
the key and the nearest valid one; a hint about the config names the file that declares the benchmark."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from factlab.workflow.config_keys import declaring_file, schema_key_problems

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "workflow" / "schemas" / "params.schema.yaml"
FIXTURE_JSONL = ROOT / "tests" / "fixtures" / "byo_qags_xsum_head.jsonl"  # 6 QAGS-XSum records, ids qx0-qx5
COLUMNS = {"example_id": "id", "source": "document", "output": "summary", "label": "faithful"}
SPEC = {"path": "mine.jsonl", "columns": COLUMNS, "label_map": {"yes": 1, "no": 0}}


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    project = tmp_path_factory.mktemp("project")
    for name in ("Snakefile", "workflow", "src", "config"):
        (project / name).symlink_to(ROOT / name)
    shutil.copy(ROOT / "params.yaml", project / "params.yaml")
    records = [json.loads(line) for line in FIXTURE_JSONL.read_text().splitlines()]
    records[2]["summary"] = ""
    records[3]["id"], records[4]["id"] = "qx0", "qx1"  # two repeated ids
    (project / "mine.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records))
    return project


def dry_run(project: Path, benchmarks: dict, configfile: str = "my_bench.yaml") -> tuple[int, list[str]]:
    """`snakemake -n --configfile <configfile>` declaring `benchmarks`: its exit status and its non-empty output lines,
    stdout and stderr as a console interleaves them."""
    (project / configfile).write_text(yaml.safe_dump({"data": {"custom_benchmarks": benchmarks}}))
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--configfile", configfile],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )
    return done.returncode, [line for line in done.stdout.splitlines() if line.strip()]


def assert_stops_with(code: int, lines: list[str], last: str) -> None:
    """Exit status 1, `last` the last line (`...` in it stands for any text), no traceback anywhere."""
    assert code == 1, lines[-20:]
    start, _, end = last.partition("...")
    assert lines[-1] == last if not end else (lines[-1].startswith(start) and lines[-1].endswith(end)), lines[-20:]
    assert not any(line.lstrip().startswith('File "') or "Traceback" in line for line in lines), lines[-20:]


@pytest.mark.slow
def test_bad_records_are_all_listed_and_the_summary_is_the_last_line(project):
    code, lines = dry_run(project, {"mine": SPEC})
    listed = [
        "  record line 3, field 'summary': output is empty",
        "  record line 4, field 'id': duplicate example_id 'qx0', first on line 1",
        "  record line 5, field 'id': duplicate example_id 'qx1', first on line 2",
    ]
    assert lines[-5:-1] == ["custom benchmark 'mine':", *listed]
    assert_stops_with(code, lines, "custom benchmark 'mine': 3 bad record(s)...output is empty (file mine.jsonl)")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "spec", "message"),
    [
        (
            "mine",
            {"path": "mine.jsonl", "colums": COLUMNS},
            "data.custom_benchmarks.mine: unknown key 'colums'; the nearest valid one is 'columns'",
        ),
        (
            "mine",
            {"path": "mine.jsonl", "columns": {**COLUMNS, "ouptut": "summary"}},
            "data.custom_benchmarks.mine.columns: unknown key 'ouptut'; the nearest valid one is 'output'",
        ),
        (
            "my-bench",
            SPEC,
            "data.custom_benchmarks: name 'my-bench' may hold letters, digits and _ only; the nearest valid one is 'my_bench'",
        ),
    ],
    ids=["misspelt_key", "misspelt_column", "bad_name"],
)
def test_a_misspelt_key_or_a_bad_name_is_one_line(project, name, spec, message):
    code, lines = dry_run(project, {name: spec})
    assert_stops_with(code, lines, message)
    assert len([line for line in lines if "is extended by additional config" not in line]) == 1, lines  # nothing else


@pytest.mark.slow
def test_the_unquoted_boolean_hint_names_the_users_config_file(project):
    records = [json.loads(line) for line in FIXTURE_JSONL.read_text().splitlines()]
    (project / "good.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records))
    spec = {**SPEC, "path": "good.jsonl", "label_map": {True: 1, False: 0}}  # `{yes: 1, no: 0}` as YAML reads it
    code, lines = dry_run(project, {"booleans": spec}, configfile="booleans.yaml")
    assert code == 1
    hints = [line for line in lines if "YAML read the unquoted key" in line]
    assert hints and all("quote it in booleans.yaml" in line for line in hints), lines[-10:]
    assert not any("params.yaml" in line for line in hints)
    suggested = [line.split("e.g. ", 1)[1] for line in lines if "e.g. label_map" in line]
    assert [yaml.safe_load(line) for line in suggested] == [{"label_map": {"no": 0, "yes": 1}}]


def test_key_problems_name_the_key_and_the_nearest_valid_one():
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    assert schema_key_problems(params, SCHEMA) == []
    params["data"]["custom_benchmarks"] = {"mine": {"path": "x.csv", "colums": {}, "label_mpa": {}}, "b c": SPEC}
    params["score"]["scorer_benchmarks"]["alignscor"] = []
    params["metaeval"]["localisaton"] = params["metaeval"].pop("localisation")
    assert schema_key_problems(params, SCHEMA) == [
        "data.custom_benchmarks.mine: unknown key 'colums'; the nearest valid one is 'columns'",
        "data.custom_benchmarks.mine: unknown key 'label_mpa'; the nearest valid one is 'label_map'",
        "data.custom_benchmarks: name 'b c' may hold letters, digits and _ only; the nearest valid one is 'b_c'",
        "metaeval: unknown key 'localisaton'; the nearest valid one is 'localisation'",
        "score.scorer_benchmarks: unknown name 'alignscor'; the nearest valid one is 'alignscore'",
    ]


def test_the_declaring_file_is_the_last_that_sets_the_key(tmp_path):
    files = []
    for name, content in (
        ("params.yaml", {"data": {"custom_benchmarks": {}}}),
        ("a.yaml", {"data": {"custom_benchmarks": {"mine": SPEC}}}),
        ("b.yaml", {"score": {"shards": 2}}),
    ):
        (tmp_path / name).write_text(yaml.safe_dump(content))
        files.append(str(tmp_path / name))
    assert declaring_file(files, ["data", "custom_benchmarks", "mine"]) == files[1]
    assert declaring_file(files, ["data", "custom_benchmarks", "other"]) is None  # set by --config, say
