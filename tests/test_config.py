"""params.yaml is validated: the shipped configs pass, a typo in a key is an error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

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


def test_a_bad_chunk_policy_stops_snakemake_before_any_job(tmp_path):
    """The policies are listed once (factlab.text.chunking); the plan checks the configured one while the workflow is parsed."""
    bad = tmp_path / "policy.yaml"
    bad.write_text("score:\n  alignscore:\n    chunk_policy: evenly\n")
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--configfile", str(bad)], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode != 0
    assert "score.alignscore.chunk_policy: 'evenly' is not a chunk policy; choose one of ['reference', 'even']" in (
        result.stdout + result.stderr
    )


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
