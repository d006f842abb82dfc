# Config validation, parameter access, benchmark selection and input functions shared by every stage.
import dataclasses
import json
import os
import sys
from pathlib import Path

from snakemake.utils import validate

from factlab.workflow.codedeps import command_digest
from factlab.workflow.config_keys import declaring_file, schema_key_problems
from factlab.data.adapters.custom import check_custom_benchmarks
from factlab.data.registry import all_specs
from factlab.download.manifest import load_manifest
from factlab.errors import ConfigError, FactlabError
from factlab.score.custom_scorers import check_custom_scorers, python_source
from factlab.workflow.plan import (
    BUILT_IN_SCORERS,
    CORRECTION_BENCHMARK,
    GOLD_QAS,
    LOCALISATION_GOLD,
    PARSED_QAS,
    QA_DECOMPOSITIONS,
    Plan,
    config_reader,
)

# One environment for every rule: the pinned project environment (`--sdm conda` users).
CONDA_ENV = "../../environment.yml"

# The two trainings are the critical path (every scoring job waits for the aligner, every QA-based one for the
# parser): they and every kind of job they need (downloads, data builds, the training mixture and its leakage
# check) run before anything else; AlignScore's chunk-size tuning, and the sentence splits it reads, next. Rule
# priorities, not Snakemake's --prioritize, which also adds its targets to the DAG: `snakemake
# results/data/x.parquet` would train both models. A priority is not inherited by a job's inputs: the sentence
# splits the tuning reads carry its priority, or a 2-second split left at 0 holds back the tuning and every
# AlignScore job behind it.
TRAINING_PATH_PRIORITY = 100
TUNING_PATH_PRIORITY = 50


def stop(message):
    """Stop the run while the workflow is parsed, before any job starts, with `message` as the console's last
    lines (exit status 1): Snakemake prints an exception raised here with a traceback frame after its
    message."""
    raise SystemExit(message)


def run_relative(path):
    """A path of this run (its Snakefile, a --configfile) relative to the working directory where it lies in it, not
    resolved (the smoke directory links config/ in): a copy of the run directory then names the same inputs.
    """
    relative = os.path.relpath(path)
    return str(path) if relative.startswith("..") else relative


# The config files in the order Snakemake merges them: params.yaml (`configfile:`), then each --configfile.
_cli_configfiles = [str(path) for path in workflow.overwrite_configfiles]
CONFIG_FILES = [
    run_relative(path)
    for path in [
        str(path) for path in workflow.configfiles if str(path) not in _cli_configfiles
    ]
    + _cli_configfiles
]
# A misspelt key or a bad name: the key, where, and the nearest valid one, not the schema validation's dump.
_key_problems = schema_key_problems(
    config, Path(workflow.basedir) / "workflow" / "schemas" / "params.schema.yaml"
)
if _key_problems:
    stop("\n".join(_key_problems))
validate(config, "../schemas/params.schema.yaml")

# Rule file name -> the dotted params.yaml keys read while parsing it: `python -m factlab.workflow.dvcyaml`
# writes them as each DVC stage's params (keys read here, in common.smk, concern every stage).
PARAM_KEYS = {}


def param(key):
    """The value of a dotted params.yaml key, e.g. param("metaeval.frank.subsets"). Rule files read
    parameters only through this (tests/test_dvcyaml.py checks), so the keys each stage reads are known: those
    read while its rule file is parsed (an input function's reads at job time are the file's to read too).
    """
    value = config
    for part in key.split("."):
        value = value[part]
    # Recorded for the rule file being parsed; an input function that a job runs records nothing.
    if workflow.included_stack:
        rule_file = Path(
            workflow.included_stack[-1].get_path_or_uri(secret_free=True)
        ).name
        PARAM_KEYS.setdefault(rule_file, set()).add(key)
    return value


MANIFEST = param("download.manifest")
SPECS = all_specs(param("data.custom_benchmarks"))
# A bad custom file stops the run here, before any job starts: nothing built is removed or marked stale. Its errors
# name the config file that declares the benchmark.
try:
    check_custom_benchmarks(
        param("data.custom_benchmarks"),
        ".snakemake/factlab/custom_checked.json",
        {
            name: declaring_file(CONFIG_FILES, ["data", "custom_benchmarks", name])
            for name in param("data.custom_benchmarks")
        },
    )
except FactlabError as error:
    stop(str(error))
# What the run builds (factlab.workflow.plan): the only name rule files share. Its questions read the config through
# `param`, so each rule file's DVC stage depends on the keys its own rules were planned from.
PLAN = Plan(param, SPECS)
# Manifest datasets that the selected benchmarks read: only these are downloaded.
_not_in_manifest = sorted(
    set(PLAN.downloads) - {entry.dataset for entry in load_manifest(MANIFEST)}
)
if _not_in_manifest:
    raise ConfigError(
        f"{MANIFEST} lacks datasets read by the selected benchmarks: {_not_in_manifest}"
    )
# The chunk policy, and a researcher's own scorers (scorers.custom, factlab.score.custom_scorers), each checked before
# any job starts: every bad score file, id, number or Python path at once. Planned without recording keys: only the
# stages that use the scorers depend on scorers.custom, so that adding one reruns nothing before the score stage.
_unrecorded = Plan(config_reader(config), SPECS)
try:
    _unrecorded.chunk_policy
    _custom_check = check_custom_scorers(
        _unrecorded.custom_scorers,
        _unrecorded.score_benchmarks,
        max_examples=_unrecorded.max_examples,
        cache=".snakemake/factlab/custom_scorers_checked.json",
    )
except FactlabError as error:
    stop(str(error))
for _warning in _custom_check.warnings:
    print(f"warning: {_warning}", file=sys.stderr)
PLAN = dataclasses.replace(PLAN, localising_custom=tuple(_custom_check.localising))
# Jobs that run one process per core: no library thread pools beside it.
ONE_THREAD = "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false"


wildcard_constraints:
    dataset="[A-Za-z0-9_.]+",
    name="[A-Za-z0-9_]+",


DOWNLOAD_DIR = "results/download"


def get_download_dirs(wildcards):
    return [f"{DOWNLOAD_DIR}/{dataset}" for dataset in SPECS[wildcards.name].datasets]


def code(stage, command=None):
    """The code input of the rules that run `factlab <stage> <command>`: the digest file of the source files it
    executes (its import closure; factlab.workflow.codedeps), rewritten only when their content changes, so that an
    edit reruns exactly the rules that run the edited code."""
    return command_digest(stage, command)


def get_local_files(wildcards):
    return list(SPECS[wildcards.name].local_files)


def custom_json(wildcards):
    spec = PLAN.custom_benchmarks.get(wildcards.name)
    return json.dumps({wildcards.name: spec} if spec else {})


# factlab's QASem parser: trained by train.smk, read by preprocess_qas and its metaeval rule.
QASEM_MODEL_DIR = "results/models/qasem_parser"
QASEM_MODEL = {
    "weights": f"{QASEM_MODEL_DIR}/model.safetensors",
    "config": f"{QASEM_MODEL_DIR}/config.json",
    "templates": f"{QASEM_MODEL_DIR}/templates.json",
    "noun_verbs": f"{QASEM_MODEL_DIR}/noun_verbs.json",
}

# factlab's alignment model: trained by train.smk, read by the score rules.
ALIGNER_DATA_DIR = "results/models/aligner_data"
ALIGNER_DIR = "results/models/aligner"
ALIGNER_MODEL = {
    "weights": f"{ALIGNER_DIR}/model.safetensors",
    "config": f"{ALIGNER_DIR}/aligner.json",
    "encoder_config": f"{ALIGNER_DIR}/encoder/config.json",
}
# The same network as an ONNX graph (train.smk's export_aligner_graph): what OpenVINO runs (score.alignscore.runtime).
ALIGNER_GRAPH = f"{ALIGNER_DIR}/model.onnx"


# SummaC-Conv's histogram head: fitted by score.smk (fit_summac_conv) on the NLI matrices of score.summac_zs's backbone.
SUMMAC_CONV_HEAD = "results/score/summac_conv_head/head.safetensors"
MPNET_DIR = "results/models/all-mpnet-base-v2"


def aligner_model_argument(input, configured):
    """The trained aligner's folder (from the input files), else the hub id / folder `configured` in params.yaml."""
    return str(Path(input.model[0]).parent) if input.model else configured


# Detection metaeval (metaeval.smk): each benchmark's breakdown groups, and the scores of the benchmarks with their
# validation sets'.
def detection_groups(benchmarks):
    """--groups: each benchmark's group columns (its spec's, e.g. WiCE's 3-way label), for breakdown rows."""
    return [
        f"{name}={','.join(SPECS[name].group_columns)}"
        for name in benchmarks
        if SPECS[name].group_columns
    ]


def detection_inputs(benchmarks, validation):
    names = sorted(set(benchmarks) | set(validation))
    return {
        "scores": PLAN.score_files(names, sampled=False),
        "sampled_scores": PLAN.score_files(names, sampled=True),
        "data": [f"results/data/{name}.parquet" for name in names],
    }


def python_scorer_file(target):
    """The source file of a `python` scorer's callable, so that its edits rerun the scorer's jobs: a file named as
    such, or a module's file inside the run's directory (an installed package's version is the user's to pin).
    """
    source = python_source(target)
    if source is None:
        return []
    named = target.partition(":")[0].endswith(".py")
    return [str(source)] if named or not run_relative(source).startswith("..") else []


# Score stage (score.smk): shards, AlignScore's tuning inputs, baselines' inputs.
def shard_files(wildcards, extension):
    """The shards of one (benchmark, scorer): the inputs of its merge."""
    return [
        f"results/score/{wildcards.benchmark}/shards/{wildcards.scorer}/{shard}.{extension}"
        for shard in range(PLAN.shards)
    ]


def tuning_files(pattern):
    """`pattern` for each tuning benchmark; an error only when a job needs the tuning (a DAG that scores nothing
    with AlignScore may preprocess no validation benchmark)."""
    benchmarks = PLAN.tuning_benchmarks
    if not benchmarks:
        raise ConfigError(
            "params.yaml score.alignscore.tuning.benchmarks: none of them is preprocessed (preprocess.benchmarks); "
            "AlignScore's chunk size cannot be tuned"
        )
    return expand(pattern, benchmark=benchmarks)


def baseline_inputs(wildcards):
    """A baseline's inputs: the benchmark, its sentences, the code it runs, triples for openie_triples, and the
    unpacked MPNet for bertscore_precision on it."""
    entry = BUILT_IN_SCORERS[wildcards.scorer]
    inputs = {
        "data": f"results/data/{wildcards.benchmark}.parquet",
        "sentences": f"results/preprocess/{wildcards.benchmark}/sentences.parquet",
        "code": code("score", entry.command),
    }
    if "triples" in entry.reads:
        inputs["triples"] = f"results/preprocess/{wildcards.benchmark}/triples.parquet"
    if (
        wildcards.scorer == "bertscore_precision"
        and param("score.bertscore_precision.model") == "mpnet"
    ):
        inputs["encoder"] = MPNET_DIR
    return inputs


# Report stage (report.smk).
def report_optional_arguments(wildcards, input):
    arguments = [f"--metrics {input.metrics}"] if input.metrics else []
    arguments += [f"--checker {input.checker}"] if input.checker else []
    arguments += [f"--corrections {input.corrections}"] if input.corrections else []
    return " ".join(arguments + ([f"--gold {input.gold}"] if input.gold else []))


def qasem_consistency_qas(wildcards):
    """The QA table of a score_qasem_consistency job (score.qasem_consistency's decomposition)."""
    return PLAN.qa_table(wildcards.benchmark, PLAN.qasem_consistency_qa_settings)


def qa_decomposition_qas(wildcards):
    """The QA table of one decomposition of score_qa_decomposition (score.smk)."""
    return PLAN.qa_table(
        wildcards.benchmark, QA_DECOMPOSITIONS[wildcards.decomposition]
    )
