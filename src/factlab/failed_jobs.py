"""After a failed job, make the next run rebuild what was built from its old output (the Snakefile's `onerror`).

Snakemake 9.27 records a failed job as if it had finished (snakemake/snakemake#3808): its outputs' metadata
gets `incomplete: false` with the parameters and input checksums the job failed with, and then its outputs
are removed. The next run sees a missing output that no job needs (the artefacts after it are there), a
newer input whose checksum matches the record (not an updated input) and unchanged parameters: it finds
nothing to do and keeps the artefacts after the job, built from the old input. A missing record does not
help: Snakemake 9.27 only warns about it. Measured on a two-rule workflow and on factlab's own
(tests/test_failed_jobs.py, tests/test_workflow_rerun.py).

The fix: mark every output after a failed job incomplete (Snakemake's own marker, set when a job starts).
`snakemake --rerun-incomplete`, the README's resume recipe, then reruns those jobs, which need the failed
job's output, so it reruns too; a run without the flag stops and names the files. At worst a job whose
inputs had not changed reruns; a stale artefact is never kept.
"""

from __future__ import annotations

import logging
import os
from typing import Any

LOG = logging.getLogger(__name__)


def failed_jobs(workflow: Any) -> list[Any]:
    """The jobs of this run that failed: for good, or once with a retry not yet run when the run stopped."""
    if workflow.scheduler is None:  # the DAG failed before any job ran
        return []
    dag = workflow.dag
    retried = [job for job in dag.jobs if job.attempt > 1 and not dag.finished(job)]
    return sorted(set(workflow.scheduler.failed) | set(retried), key=str)


def mark_after_failed_jobs_incomplete(workflow: Any) -> list[str]:
    """Mark the existing outputs of every job after a failed one incomplete; return their paths.

    `workflow` is the Snakefile's `workflow` object. An error is logged, not raised: this runs while
    Snakemake reports the failure that matters.
    """
    marked: list[str] = []
    try:
        failed = failed_jobs(workflow)
        # Snakemake's own traversal of the jobs reading a job's outputs, at any depth
        after = [job for job in workflow.dag.bfs(workflow.dag.depending, *failed) if job not in failed]
        for job in after:
            existing = [str(output) for output in job.output if os.path.exists(output)]
            if existing:
                workflow.persistence.started(job)
                marked.extend(existing)
    except Exception as error:  # noqa: BLE001 (the run has failed already; say what to do by hand)
        LOG.error("could not mark the outputs after the failed jobs incomplete (%s): rerun them with --forcerun", error)
    if marked:
        LOG.warning(
            "%d output(s) after the failed job(s) were built from their old outputs and are marked incomplete; "
            "resume with snakemake --rerun-incomplete: %s",
            len(marked),
            ", ".join(marked),
        )
    return marked
