"""Forget Snakemake's records of failed jobs, so that a resumed run reruns them (the Snakefile's `onerror`).

Snakemake 9.27 records a failed job as if it had finished (snakemake/snakemake#3808): its outputs' metadata
gets `incomplete: false` and the checksums of the inputs the job failed on, and then its outputs are removed.
Since Snakemake 9.18 a newer input whose checksum matches the recorded one is not an updated input, and a
missing output that no job downstream needs is not rebuilt. So when a job fails after its inputs changed
(the OOM killer, a lost cluster node, an exception), the next `snakemake` finds nothing to do and keeps the
artefacts downstream of it, built from the old inputs: measured on a two-rule workflow, where the next run
rebuilt nothing and the final file kept the old input's content. Deleting the failed job's records (what
`snakemake --cleanup-metadata` does, which cannot run while this run holds the lock) makes the next run
compare the inputs with the outputs again, and rerun the job and everything after it.
"""

from __future__ import annotations

import logging
from typing import Any

LOG = logging.getLogger(__name__)


def forget_failed_jobs(workflow: Any) -> list[str]:
    """Delete the metadata records of every output of the jobs that failed in this run; return their paths.

    `workflow` is the Snakefile's `workflow` object (its scheduler knows the failed jobs, after retries).
    """
    scheduler = workflow.scheduler
    failed = [] if scheduler is None else sorted(scheduler.failed, key=lambda job: str(job))
    forgotten = [str(output) for job in failed for output in job.output if workflow.persistence.cleanup_metadata(output)]
    if forgotten:
        LOG.warning(
            "forgot Snakemake's records of %d output(s) of %d failed job(s), so the next run rebuilds them: %s",
            len(forgotten),
            len(failed),
            ", ".join(forgotten),
        )
    return forgotten
