"""factlab.scheduling on a workflow run by Snakemake: with the Snakefile's `onstart` hook, a local run re-plans
once per finished job; without it, Snakemake's rate-limiter timers add passes while jobs wait for the core (the
first test fails with the hook removed: its `drop` case then counts more than one pass per job)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import factlab
from factlab.scheduling import drop_local_job_rate_limit

JOBS = 3

SNAKEFILE = f"""
from factlab.scheduling import drop_local_job_rate_limit

if config.get("drop"):
    onstart:
        drop_local_job_rate_limit(workflow)

rule all:
    input: expand("out/{{i}}.txt", i=range({JOBS}))

rule job:
    output: "out/{{i}}.txt"
    shell: "sleep 2; touch {{output}}"
"""


def scheduling_passes(directory: Path, drop: bool) -> int:
    """The scheduler's passes that found ready jobs (Snakemake's --verbose 'Ready jobs' lines) in one run."""
    env = {**os.environ, "PYTHONPATH": str(Path(factlab.__file__).parents[1])}
    env.pop("SNAKEMAKE_PROFILE", None)  # a developer's profile could change the cores or hide the lines counted
    command = [sys.executable, "-m", "snakemake", "--cores", "1", "--max-jobs-per-timespan", "100/1s", "--verbose", "--forceall"]
    run = subprocess.run(
        command + (["--config", "drop=1"] if drop else []),
        cwd=directory,
        capture_output=True,
        text=True,
        env=env,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return len(re.findall(r"^Ready jobs", run.stderr, flags=re.MULTILINE))


def test_a_local_run_replans_once_per_finished_job_not_on_timers(tmp_path: Path) -> None:
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    # three 2-second jobs on one core: with the limiter's 1-second timers, passes while two, then one, wait
    assert scheduling_passes(tmp_path, drop=False) > JOBS + 1
    # without them: the first pass, then one after each finished job (the last one readies rule `all`)
    assert scheduling_passes(tmp_path, drop=True) == JOBS + 1


def test_a_cluster_run_keeps_its_rate_limit() -> None:
    limiter = object()
    cluster = SimpleNamespace(local_exec=False, scheduler=SimpleNamespace(job_rate_limiter=limiter))
    assert not drop_local_job_rate_limit(cluster)
    assert cluster.scheduler.job_rate_limiter is limiter
    local = SimpleNamespace(local_exec=True, scheduler=SimpleNamespace(job_rate_limiter=limiter))
    assert drop_local_job_rate_limit(local)
    assert local.scheduler.job_rate_limiter is None
