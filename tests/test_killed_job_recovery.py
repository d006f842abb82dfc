"""The recovery docs/reproducibility.md gives for a job killed while Snakemake lives on (the OOM killer, a lost
node) after its input or its parameter changed, on a two-rule workflow: Snakemake 9.27 records such a job as
finished from what it failed with (snakemake/snakemake#3808), so a plain rerun finds nothing to do and keeps the
file after it built from the old input; `--force` on the killed job's outputs, then a plain run, rebuilds both.
The middle assertion fails once Snakemake fixes the fault, and the docs' recovery note can then go."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

SNAKEFILE = """
rule all:
    input: "final.txt"

rule first:
    input: "input.txt"
    output: "middle.txt"
    params: level=config.get("level", 1)
    shell: "test -z \\"${{KILL:-}}\\" || kill -9 $$; (cat {input}; echo {params.level}) > {output}"

rule second:
    input: "middle.txt"
    output: "final.txt"
    shell: "cat {input} > {output}"
"""


def snakemake(directory: Path, *args: str, kill: bool = False) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("KILL", None)
    if kill:
        env["KILL"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "1", *args], cwd=directory, capture_output=True, text=True, env=env
    )


@pytest.fixture
def built(tmp_path: Path) -> Path:
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    (tmp_path / "input.txt").write_text("1\n")
    assert snakemake(tmp_path).returncode == 0
    assert (tmp_path / "final.txt").read_text() == "1\n1\n"
    return tmp_path


@pytest.mark.parametrize("change", ["input", "parameter"])
def test_the_file_after_a_killed_job_is_rebuilt_by_the_documented_recovery(built: Path, change: str) -> None:
    config = ("--config", "level=5") if change == "parameter" else ()
    if change == "input":
        time.sleep(1.1)  # a newer mtime on file systems with 1-second timestamps
        (built / "input.txt").write_text("2\n")
    killed = snakemake(built, *config, kill=True)
    assert killed.returncode != 0 and "Error in rule first" in killed.stderr
    plain = snakemake(built, "-n", *config)
    assert "Nothing to be done" in plain.stdout + plain.stderr  # Snakemake's fault: final.txt passes for up to date
    forced = snakemake(built, "--force", "middle.txt", *config)
    assert forced.returncode == 0, forced.stderr[-2000:]
    rebuilt = snakemake(built, *config)
    assert rebuilt.returncode == 0, rebuilt.stderr[-2000:]
    expected = "2\n1\n" if change == "input" else "1\n5\n"
    assert (built / "final.txt").read_text() == expected
