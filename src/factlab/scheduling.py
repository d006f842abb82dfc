"""Run Snakemake's local scheduler without its job rate limiter (the Snakefile's `onstart`).

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
"""

from __future__ import annotations

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
