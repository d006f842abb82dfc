"""params.yaml is validated: the shipped configs pass, a typo in a key is an error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from factlab.preprocess.chunking import CHUNK_POLICIES

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = yaml.safe_load((ROOT / "workflow/schemas/params.schema.yaml").read_text())


def load(path: str) -> dict:
    return yaml.safe_load((ROOT / path).read_text())


def merged(base: dict, override: dict) -> dict:
    out = dict(base)
    for key, value in override.items():
        out[key] = merged(base[key], value) if isinstance(value, dict) and isinstance(base.get(key), dict) else value
    return out


def test_params_and_smoke_are_valid():
    jsonschema.validate(load("params.yaml"), SCHEMA)
    jsonschema.validate(merged(load("params.yaml"), load("config/smoke.yaml")), SCHEMA)


def test_typo_in_key_is_rejected():
    params = load("params.yaml")
    params["download"]["allow_netwrok"] = params["download"].pop("allow_network")
    with pytest.raises(jsonschema.ValidationError, match="allow_netwrok"):
        jsonschema.validate(params, SCHEMA)


def test_the_schema_allows_exactly_the_chunk_policies_the_code_knows():
    """The schema keeps its own enum so that a bad policy stops Snakemake before any job; this keeps it the code's."""
    alignscore = SCHEMA["properties"]["score"]["properties"]["alignscore"]["properties"]
    assert tuple(alignscore["chunk_policy"]["enum"]) == CHUNK_POLICIES


def test_snakemake_refuses_a_typo(tmp_path):
    bad = tmp_path / "typo.yaml"
    bad.write_text("data:\n  benchmark: [frank]\n")
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--configfile", str(bad)], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode != 0
    assert "benchmark" in (result.stdout + result.stderr)


def test_no_threshold_policy_is_a_schema_error_not_an_argparse_failure():
    params = load("params.yaml")
    params["metaeval"]["threshold_policies"] = []
    with pytest.raises(jsonschema.ValidationError, match="should be non-empty|is too short"):
        jsonschema.validate(params, SCHEMA)


def test_snakemake_names_an_unknown_benchmark_in_one_line(tmp_path):
    bad = tmp_path / "unknown.yaml"
    bad.write_text("data:\n  benchmarks: [frank, frnak]\n")
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--configfile", str(bad)], cwd=ROOT, capture_output=True, text=True
    )
    printed = result.stdout + result.stderr  # Snakemake prints parse errors on stdout
    assert result.returncode != 0
    assert "ConfigError" in printed and "data.benchmarks names unknown benchmarks: ['frnak']" in printed
    assert "Traceback" not in printed
