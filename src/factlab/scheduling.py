"""Snakemake's local scheduler without its job rate limiter, and with cores held for a waiting wide job (the
Snakefile's `onstart`).

**The rate limiter.**
Snakemake 9.27's rate limiter (`--max-jobs-per-timespan`, always set: the CLI's default is 100/1s) keeps the
scheduler re-planning while jobs wait for cores: every pass that finds ready jobs starts a timer for another
pass one timespan later, so every finished job starts one more self-renewing chain, which ends only at a pass
that finds no job ready. Each pass first stats every input of every waiting job (`update_input_sizes`), even
when no core is free. On 2 cores with hundreds of jobs waiting, the default run's Snakemake process had 156
threads (chains) 36 minutes in and used 22% of a core (py-spy: most of it in `job_selector` ->
`update_input_sizes` -> `os.stat`). A run's exit also waits for the last chain's timer.

The limiter paces submissions to a cluster's queue; on one machine the cores already bound how many jobs run,
and a pass after every finished job starts the next ones. So a local run drops it; a cluster run (SLURM,
Kubernetes: `workflow.local_exec` false) keeps it. A `--max-jobs-per-timespan` given for a local run is
therefore ignored, and the Snakefile says so in the run's log.

**Cores held for a waiting wide job.** Snakemake gives every core that frees to a ready job that fits and never
holds one back, so a ready 2-thread job of the highest priority (the aligner's training, `aligner.threads: 2`)
waits until both cores happen to be free at one pass: with hundreds of 1-thread jobs ready that takes minutes
(docs/experiments.md), on the critical path. Locally, a pass therefore offers the selector no job of lower
priority than a ready job that does not fit now but would once the running jobs of lower priority end: the
freed cores wait for it, for at most the rest of one lower-priority job. A job blocked by jobs of its own or
higher priority (the aligner beside the parser) holds nothing, so the other cores keep working. Only the order
changes, never what a job computes.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Any


def drop_local_job_rate_limit(workflow: Any) -> bool:
    """Remove the job rate limiter of a run on this machine; return whether it was removed.

    `workflow` is the Snakefile's `workflow` object; `onstart` runs after Snakemake built its scheduler and
    before the first pass.
    """
    scheduler = workflow.scheduler
    if not workflow.local_exec or scheduler is None or scheduler.job_rate_limiter is None:
        return False
    scheduler.job_rate_limiter = None
    return True


def cores(job: Any) -> int:
    return int(job.scheduler_resources.get("_cores", 1))


def jobs_to_offer(ready: Iterable[Any], running: Collection[Any], free_cores: int, total_cores: int) -> list[Any]:
    """The ready jobs a pass may start: all of them, or, where a ready job does not fit in `free_cores` but would
    once the running jobs of lower priority end, only those of its priority or higher (the highest such job
    decides)."""
    ready = list(ready)
    for waiting in sorted(ready, key=lambda job: job.priority, reverse=True):
        if cores(waiting) <= free_cores:
            continue
        kept_by_others = sum(cores(job) for job in running if job.priority >= waiting.priority)
        if kept_by_others + cores(waiting) <= total_cores:
            return [job for job in ready if job.priority >= waiting.priority]
    return ready


def hold_cores_for_waiting_jobs(workflow: Any) -> bool:
    """Make a local run's passes offer only `jobs_to_offer`; return whether it was installed (not on a cluster)."""
    scheduler = workflow.scheduler
    if not workflow.local_exec or scheduler is None:
        return False
    select: Callable[[Iterable[Any]], Any] = scheduler.job_selector
    total_cores = int(scheduler.global_resources["_cores"])

    def select_holding_cores(jobs: Iterable[Any]) -> Any:
        offered = jobs_to_offer(jobs, list(scheduler.running), int(scheduler.resources["_cores"]), total_cores)
        return select(offered) if offered else []

    scheduler.job_selector = select_holding_cores
    return True
