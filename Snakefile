# factlab: download -> data -> preprocess -> train -> score -> metaeval -> paper (and report: HTML pages of the scores)
from snakemake.utils import min_version

# the Snakemake release the tests run (pinned in pyproject.toml)
min_version("9.27.1")


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
