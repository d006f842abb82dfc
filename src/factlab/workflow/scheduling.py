"""Which ready jobs a scheduling pass may start, so that freed cores wait for a ready wide job of high priority.

Snakemake gives every core that frees to a ready job that fits and never holds one back, so a ready 2-thread
job of the highest priority (the aligner's training, `aligner.threads: 2`) waits until both cores happen to be
free at one pass: with hundreds of 1-thread jobs ready, that takes minutes, on the critical path. A pass
therefore offers no job of lower priority than a ready job that does not fit now but would once the running
jobs of lower priority end: the freed cores wait for it, for at most the rest of one lower-priority job. A job
blocked by jobs of its own or higher priority (the aligner beside the parser) holds nothing, so the other cores
keep working. Only the order changes, never what a job computes.

Snakemake runs this through its scheduler-plugin interface (`snakemake_scheduler_plugin_factlab`, chosen by
`scheduler: factlab` in profiles/default), which then picks among the offered jobs with Snakemake's own greedy
selector.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol


class ScheduledJob(Protocol):
    @property
    def priority(self) -> int: ...

    @property
    def scheduler_resources(self) -> Mapping[str, int | str]: ...


def cores(job: ScheduledJob) -> int:
    return int(job.scheduler_resources.get("_cores", 1))


def jobs_to_offer(ready: Iterable[Any], running: Iterable[ScheduledJob], free_cores: int) -> list[Any]:
    """The ready jobs a pass may start: all of them, or, where a ready job does not fit in `free_cores` but would
    once the running jobs of lower priority end, only those of its priority or higher (the highest such job
    decides)."""
    ready, running = list(ready), list(running)
    for waiting in sorted(ready, key=lambda job: job.priority, reverse=True):
        if cores(waiting) <= free_cores:
            continue
        freed_by_lower = sum(cores(job) for job in running if job.priority < waiting.priority)
        if free_cores + freed_by_lower >= cores(waiting):
            return [job for job in ready if job.priority >= waiting.priority]
    return ready
