"""factlab's Snakemake scheduler plugin (`--scheduler factlab`; profiles/default sets it): Snakemake's greedy
selector, offered only the jobs `factlab.workflow.scheduling.jobs_to_offer` lets start, so that freed cores wait for a
ready wide job of high priority. Snakemake finds it by its module name (snakemake-interface-scheduler-plugins)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from snakemake_interface_common.io import AnnotatedStringInterface
from snakemake_interface_scheduler_plugins.base import SchedulerBase
from snakemake_interface_scheduler_plugins.interfaces.jobs import JobSchedulerInterface
from snakemake_interface_scheduler_plugins.registry import SchedulerPluginRegistry

from factlab.workflow.scheduling import jobs_to_offer


class Scheduler(SchedulerBase):
    def __post_init__(self) -> None:
        greedy = SchedulerPluginRegistry().get_plugin("greedy")
        self.greedy = greedy.scheduler(self.dag, greedy.settings_cls(), self.logger)

    def select_jobs(
        self,
        selectable_jobs: Sequence[JobSchedulerInterface],
        remaining_jobs: Sequence[JobSchedulerInterface],
        available_resources: Mapping[str, int | str],
        input_sizes: dict[AnnotatedStringInterface, int],
    ) -> Sequence[JobSchedulerInterface] | None:
        # remaining_jobs are those not yet started: every other unfinished job of the run is running
        waiting = set(remaining_jobs)
        running = [job for job in self.dag.needrun_jobs() if job not in waiting and not self.dag.finished(job)]
        offered = jobs_to_offer(selectable_jobs, running, int(available_resources["_cores"]))
        if not offered:
            return []
        return self.greedy.select_jobs(offered, remaining_jobs, available_resources, input_sizes)
