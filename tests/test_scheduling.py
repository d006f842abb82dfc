"""factlab.scheduling on a workflow run by Snakemake: with the Snakefile's `onstart` hook, a local run re-plans
once per finished job; without it, Snakemake's rate-limiter timers add passes while jobs wait for the core (the
first test fails with the hook removed: its `drop` case then counts more than one pass per job); and a ready
2-thread job of high priority gets the cores that 1-thread jobs of low priority free, not only the pair that
happens to free at once."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import factlab
from factlab.scheduling import drop_local_job_rate_limit, hold_cores_for_waiting_jobs, jobs_to_offer

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


def run_snakemake(directory: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """`snakemake --forceall` with `options` in `directory`, this checkout's factlab importable; it must succeed."""
    env = {**os.environ, "PYTHONPATH": str(Path(factlab.__file__).parents[1])}
    env.pop("SNAKEMAKE_PROFILE", None)  # a developer's profile could change the cores or hide the lines counted
    command = [sys.executable, "-m", "snakemake", "--forceall", *options]
    run = subprocess.run(command, cwd=directory, capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    return run


def scheduling_passes(directory: Path, drop: bool) -> int:
    """The scheduler's passes that found ready jobs (Snakemake's --verbose 'Ready jobs' lines) in one run."""
    options = ["--cores", "1", "--max-jobs-per-timespan", "100/1s", "--verbose"] + (["--config", "drop=1"] if drop else [])
    run = run_snakemake(directory, *options)
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


SMALL_JOBS = 8

# The aligner's situation: `gate` (the parser) ends while 1-thread jobs of low priority keep a core busy, then
# `wide` (the 2-thread training) is ready. The small jobs start half a second apart, so no two end together.
WIDE_SNAKEFILE = f"""
from factlab.scheduling import hold_cores_for_waiting_jobs

if config.get("hold"):
    onstart:
        hold_cores_for_waiting_jobs(workflow)

rule all:
    input: "wide.txt", expand("small/{{i}}.txt", i=range({SMALL_JOBS}))

rule gate:
    output: "gate.txt"
    priority: 100
    shell: "sleep 1.5; touch {{output}}"

rule wide:
    input: "gate.txt"
    output: "wide.txt"
    priority: 100
    threads: 2
    shell: "mkdir -p started; date +%s%N > started/wide; sleep 0.5; touch {{output}}"

rule small:
    output: "small/{{i}}.txt"
    shell: "mkdir -p started; date +%s%N > started/small{{wildcards.i}}; sleep 1; touch {{output}}"
"""


def small_jobs_started_after_wide(directory: Path, hold: bool) -> int:
    run_snakemake(directory, "--cores", "2", "--quiet", *(["--config", "hold=1"] if hold else []))
    started = {path.name: int(path.read_text()) for path in (directory / "started").iterdir()}
    return sum(1 for name, at in started.items() if name.startswith("small") and at > started["wide"])


def test_a_waiting_wide_job_of_high_priority_gets_the_freed_cores(tmp_path: Path) -> None:
    (tmp_path / "Snakefile").write_text(WIDE_SNAKEFILE)
    # Snakemake's own scheduler: each freed core goes to the next small job, so the wide one waits for them all
    assert small_jobs_started_after_wide(tmp_path, hold=False) <= 1
    # held: the core freed by the gate waits for the running small job to end, then the wide job takes both
    assert small_jobs_started_after_wide(tmp_path, hold=True) >= SMALL_JOBS - 3


def job(priority: int, threads: int) -> SimpleNamespace:
    return SimpleNamespace(priority=priority, scheduler_resources={"_cores": threads})


def test_only_lower_priority_jobs_are_held_back_and_only_when_that_frees_enough() -> None:
    aligner, parser, small, other_small = job(100, 2), job(100, 1), job(0, 1), job(0, 1)
    # the parser has ended, a small job runs: the aligner would fit once it ends, so no small job starts meanwhile
    # (the aligner itself is offered; the selector starts it once the cores are free)
    assert jobs_to_offer([aligner, other_small], [small], free_cores=1, total_cores=2) == [aligner]
    # the aligner beside the parser: waiting would not free its cores, so the small jobs use the free one
    assert jobs_to_offer([aligner, other_small], [parser], free_cores=1, total_cores=2) == [aligner, other_small]
    # a job of the same priority that fits is still offered while the cores are held
    assert jobs_to_offer([aligner, parser, other_small], [small], free_cores=1, total_cores=2) == [aligner, parser]
    # nothing waits for more cores than are free: everything is offered
    assert jobs_to_offer([aligner, other_small], [], free_cores=2, total_cores=2) == [aligner, other_small]


def test_a_cluster_run_holds_no_cores() -> None:
    scheduler = SimpleNamespace(job_selector=len, global_resources={"_cores": 2}, resources={"_cores": 2}, running=set())
    assert not hold_cores_for_waiting_jobs(SimpleNamespace(local_exec=False, scheduler=scheduler))
    assert scheduler.job_selector is len
    assert hold_cores_for_waiting_jobs(SimpleNamespace(local_exec=True, scheduler=scheduler))
    assert scheduler.job_selector is not len
