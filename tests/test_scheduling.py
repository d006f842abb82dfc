"""factlab's scheduler plugin (`--scheduler factlab`, profiles/default) on a workflow run by Snakemake: a ready
2-thread job of high priority gets the cores that 1-thread jobs of low priority free, not only the pair that
happens to free at once (Snakemake's greedy selector, the plugin's fallback, starts it last); and
`factlab.workflow.scheduling.jobs_to_offer` holds back only lower-priority jobs, and only when that frees enough cores."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from snakemake_interface_scheduler_plugins.registry import SchedulerPluginRegistry

import factlab
from factlab.workflow.scheduling import jobs_to_offer


def run_snakemake(directory: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """`snakemake --forceall` with `options` in `directory`, this checkout's factlab importable; it must succeed."""
    env = {**os.environ, "PYTHONPATH": str(Path(factlab.__file__).parents[1])}
    env.pop("SNAKEMAKE_PROFILE", None)  # a developer's profile could change the cores or the scheduler
    command = [sys.executable, "-m", "snakemake", "--forceall", *options]
    run = subprocess.run(command, cwd=directory, capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    return run


SMALL_JOBS = 8

# The aligner's situation: `gate` (the parser) ends while 1-thread jobs of low priority keep a core busy, then
# `wide` (the 2-thread training) is ready. The small jobs start half a second apart, so no two end together.
WIDE_SNAKEFILE = f"""
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
    run_snakemake(directory, "--cores", "2", "--quiet", "--scheduler", "factlab" if hold else "greedy")
    started = {path.name: int(path.read_text()) for path in (directory / "started").iterdir()}
    return sum(1 for name, at in started.items() if name.startswith("small") and at > started["wide"])


def test_a_waiting_wide_job_of_high_priority_gets_the_freed_cores(tmp_path: Path) -> None:
    (tmp_path / "Snakefile").write_text(WIDE_SNAKEFILE)
    # Snakemake's greedy selector: each freed core goes to the next small job, so the wide one waits for them all
    assert small_jobs_started_after_wide(tmp_path, hold=False) <= 1
    # held: the core freed by the gate waits for the running small job to end, then the wide job takes both
    assert small_jobs_started_after_wide(tmp_path, hold=True) >= SMALL_JOBS - 3


def job(priority: int, threads: int) -> SimpleNamespace:
    return SimpleNamespace(priority=priority, scheduler_resources={"_cores": threads})


def test_only_lower_priority_jobs_are_held_back_and_only_when_that_frees_enough() -> None:
    aligner, parser, small, other_small = job(100, 2), job(100, 1), job(0, 1), job(0, 1)
    # the parser has ended, a small job runs: the aligner would fit once it ends, so no small job starts meanwhile
    # (the aligner itself is offered; the selector starts it once the cores are free)
    assert jobs_to_offer([aligner, other_small], [small], free_cores=1) == [aligner]
    # the aligner beside the parser: waiting would not free its cores, so the small jobs use the free one
    assert jobs_to_offer([aligner, other_small], [parser], free_cores=1) == [aligner, other_small]
    # a job of the same priority that fits is still offered while the cores are held
    assert jobs_to_offer([aligner, parser, other_small], [small], free_cores=1) == [aligner, parser]
    # nothing waits for more cores than are free: everything is offered
    assert jobs_to_offer([aligner, other_small], [], free_cores=2) == [aligner, other_small]


def test_snakemake_finds_the_plugin_and_a_cluster_run_holds_no_cores() -> None:
    assert "factlab" in SchedulerPluginRegistry().plugins
    aligner, small = job(100, 2), job(0, 1)
    # a cluster's free cores are unbounded (Snakemake gives the selector sys.maxsize): the wide job always fits
    assert jobs_to_offer([aligner, small], [job(0, 1)], free_cores=sys.maxsize) == [aligner, small]
