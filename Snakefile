# factlab: download -> data -> preprocess -> train -> score -> metaeval -> paper (and report: HTML pages of the scores)
from snakemake.logging import logger
from snakemake.utils import min_version

from factlab.failed_jobs import mark_after_failed_jobs_incomplete
from factlab.scheduling import drop_local_job_rate_limit, hold_cores_for_waiting_jobs

min_version("9.0")


configfile: "params.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/download.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/preprocess.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/score.smk"
include: "workflow/rules/metaeval.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/checker.smk"
include: "workflow/rules/paper.smk"


# On one machine, Snakemake re-plans only when a job finishes, not also on its rate limiter's timers, and holds
# freed cores for a waiting job of higher priority that needs more of them (factlab.scheduling).
onstart:
    if drop_local_job_rate_limit(workflow):
        logger.info(
            "factlab: a local run, so no job rate limit (--max-jobs-per-timespan paces cluster runs)"
        )
    if hold_cores_for_waiting_jobs(workflow):
        logger.info(
            "factlab: freed cores wait for a ready job of higher priority that needs more of them"
        )


# What was built from a failed job's old outputs must not pass for up to date (factlab.failed_jobs).
onerror:
    mark_after_failed_jobs_incomplete(workflow)


rule all:
    default_target: True
    input:
        rules.data.input,
        rules.preprocess.input,
        rules.qas.input,
        rules.train.input,
        rules.score.input,
        rules.metaeval.input,
        rules.paper.input,
        rules.report.input,
        rules.checker.input,
