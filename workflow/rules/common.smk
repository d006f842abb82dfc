# Config validation, parameter access, benchmark selection and input functions shared by every stage.
import json
import os
import sys
from pathlib import Path

from snakemake.utils import validate

from factlab.workflow.codedeps import command_code
from factlab.workflow.config_keys import declaring_file, schema_key_problems
from factlab.data.adapters.custom import check_custom_benchmarks
from factlab.data.registry import all_specs
from factlab.download.manifest import load_manifest
from factlab.errors import ConfigError, FactlabError
from factlab.data.adapters.scale_published import TRUE_SETS
from factlab.score.custom_scorers import (
    CustomScorer,
    check_custom_scorers,
    custom_scorers as parse_custom_scorers,
    python_source,
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


def with_custom(names):
    """`names` and every custom benchmark not among them: a --configfile with one custom benchmark is all a user
    writes for it to be built, preprocessed, scored by every scorer, meta-evaluated and reported.
    """
    return list(names) + [name for name in CUSTOM_BENCHMARKS if name not in names]


MANIFEST = param("download.manifest")
CUSTOM_BENCHMARKS = param("data.custom_benchmarks")
SPECS = all_specs(CUSTOM_BENCHMARKS)
# A bad custom file stops the run here, before any job starts: nothing built is removed or marked stale. Its errors
# name the config file that declares the benchmark.
try:
    check_custom_benchmarks(
        CUSTOM_BENCHMARKS,
        ".snakemake/factlab/custom_checked.json",
        {
            name: declaring_file(CONFIG_FILES, ["data", "custom_benchmarks", name])
            for name in CUSTOM_BENCHMARKS
        },
    )
except FactlabError as error:
    stop(str(error))
# A custom benchmark is always built, preprocessed and scored, whatever the lists name (with_custom).
SELECTED = with_custom(param("data.benchmarks") or sorted(SPECS))
_unknown = sorted(set(SELECTED) - set(SPECS))
if _unknown:
    raise ConfigError(
        f"params.yaml data.benchmarks names unknown benchmarks: {_unknown}"
    )
BENCHMARKS = [name for name in SELECTED if SPECS[name].kind == "benchmark"]
TABLES = [name for name in SELECTED if SPECS[name].kind == "table"]
# Manifest datasets that the selected benchmarks read: only these are downloaded.
DOWNLOADS = sorted({dataset for name in SELECTED for dataset in SPECS[name].datasets})
_not_in_manifest = sorted(
    set(DOWNLOADS) - {entry.dataset for entry in load_manifest(MANIFEST)}
)
if _not_in_manifest:
    raise ConfigError(
        f"{MANIFEST} lacks datasets read by the selected benchmarks: {_not_in_manifest}"
    )


wildcard_constraints:
    dataset="[A-Za-z0-9_.]+",
    name="[A-Za-z0-9_]+",


DOWNLOAD_DIR = "results/download"


def get_download_dirs(wildcards):
    return [f"{DOWNLOAD_DIR}/{dataset}" for dataset in SPECS[wildcards.name].datasets]


def code(stage, command=None):
    """The source files `factlab <stage> <command>` executes (its import closure): a rule's code input,
    so that editing a module reruns exactly the rules that run it."""
    return command_code(stage, command)


def get_local_files(wildcards):
    return list(SPECS[wildcards.name].local_files)


def custom_json(wildcards):
    spec = CUSTOM_BENCHMARKS.get(wildcards.name)
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


# Detection metaeval (metaeval.smk): the scored benchmarks and the validation sets that tune thresholds.
def detection_validation(scored):
    return [
        name
        for name in param("metaeval.detection.validation_benchmarks")
        if name in scored
    ]


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
        "scores": score_files(names, sampled=False),
        "sampled_scores": score_files(names, sampled=True),
        "data": [f"results/data/{name}.parquet" for name in names],
    }


# Selection: which benchmarks each stage builds, as functions of params.yaml. A rule file calls them while it is
# parsed (so that its DVC stage depends on the keys they read) and keeps what it uses; an input function here
# reads only this file's names and params.yaml. No rule file reads a name that a later one defines.
def preprocess_benchmarks():
    """preprocess.benchmarks; empty = every selected benchmark that is used for evaluation."""
    return with_custom(
        param("preprocess.benchmarks")
        or [name for name in BENCHMARKS if SPECS[name].role == "evaluation"]
    )


def score_benchmarks():
    """score.benchmarks; empty = every preprocessed benchmark."""
    return with_custom(param("score.benchmarks") or preprocess_benchmarks())


def tuning_benchmarks():
    """The validation benchmarks AlignScore's chunk size and aggregation are tuned on: those preprocessed."""
    preprocessed = preprocess_benchmarks()
    return [
        name
        for name in param("score.alignscore.tuning.benchmarks")
        if name in preprocessed
    ]


def triple_benchmarks():
    """The benchmarks whose OpenIE triples a scoring job reads: only these are extracted."""
    if "openie_triples" not in param("score.scorers"):
        return []
    return scored_by("openie_triples", score_benchmarks())


def qasem_consistency_qa_settings():
    """score.qasem_consistency's decomposition and qa_source: which QAs its jobs read."""
    return {
        key: param(f"score.qasem_consistency.{key}")
        for key in ("decomposition", "qa_source")
    }


def qasem_consistency_benchmarks():
    if "qasem_consistency" not in param("score.scorers"):
        return []
    return scored_by("qasem_consistency", score_benchmarks())


def qa_decomposition_benchmarks():
    """The benchmarks with gold QAs that QASemConsistency scores: its decomposition is measured on them."""
    scored = qasem_consistency_benchmarks()
    return [name for name in GOLD_QAS if name in scored]


def qa_decompositions_scored():
    """The decompositions scored apart: one with score.qasem_consistency's own settings is that scorer's table."""
    own = qasem_consistency_qa_settings()
    return [
        name
        for name, settings in QA_DECOMPOSITIONS.items()
        if {**own, **settings} != own
    ]


def parsed_qa_benchmarks():
    """The benchmarks whose parser QAs a scoring job reads: only these are parsed."""
    reads = set(
        qasem_consistency_benchmarks()
        if reads_parser_qas(qasem_consistency_qa_settings())
        else []
    )
    if any(
        reads_parser_qas(QA_DECOMPOSITIONS[decomposition])
        for decomposition in qa_decompositions_scored()
    ):
        reads |= set(qa_decomposition_benchmarks())
    return sorted(reads)


def ensemble_fit_benchmarks():
    """The ensemble's fit data: those of its validation benchmarks that are scored."""
    scored = score_benchmarks()
    return [
        name for name in param("score.ensemble.validation_benchmarks") if name in scored
    ]


# Which scorer scores which benchmark: every scored benchmark, unless score.scorer_benchmarks names a
# non-empty list for the scorer (the default keeps the costliest scorers to fewer benchmarks; config/full.yaml: all),
# and every custom benchmark whatever the lists (with_custom);
# and, on the benchmarks score.sampled_benchmarks names for it, a seeded sample (score.sample: sample_size).
def sampled_benchmarks(scorer):
    return param("score.sampled_benchmarks").get(scorer) or []


def published_scorers():
    """score.published: the per-example TRUE scores SCALE released of these metrics (results/data/true_published),
    entered through a user's `scores` door (rule export_published_scores writes the files), as published_<metric>.
    """
    return {
        f"published_{metric}": CustomScorer(
            name=f"published_{metric}",
            door="scores",
            scores={
                f"true_{name}": f"results/score/published/{metric}/true_{name}.jsonl"
                for name in TRUE_SETS.values()
            },
        )
        for metric in param("score.published")
    }


def custom_scorers():
    """scorers.custom (a researcher's scorers: factlab.score.custom_scorers), read only by the stages that use them
    (score, metaeval, report, paper), so that adding one reruns nothing before the score stage.
    """
    try:
        return parse_custom_scorers(
            param("scorers.custom"), param("score.scorers") + list(published_scorers())
        )
    except ConfigError as error:
        stop(str(error))


def python_scorer_file(target):
    """The source file of a `python` scorer's callable, so that its edits rerun the scorer's jobs: a file named as
    such, or a module's file inside the run's directory (an installed package's version is the user's to pin).
    """
    source = python_source(target)
    if source is None:
        return []
    named = target.partition(":")[0].endswith(".py")
    return [str(source)] if named or not run_relative(source).startswith("..") else []


def scorer_names():
    """Every scorer of the run: score.scorers, the published ones (score.published), then the user's (scorers.custom)."""
    return param("score.scorers") + list(published_scorers()) + list(custom_scorers())


def scored_by(scorer, benchmarks, sampled=None):
    """Those of `benchmarks` that `scorer` scores, in their order; `sampled`: True only those it scores a sample of,
    False only those it scores whole, None both. A user's scorer scores what its entry gives (its score files'
    benchmarks, or its `benchmarks`), all of it: with `allow_missing`, the examples it leaves unscored make its tables
    partial, and they are then marked as scored on a subset (sampled)."""
    if scorer not in param("score.scorers") and (
        entry := {**published_scorers(), **custom_scorers()}.get(scorer)
    ):
        names = entry.scored(benchmarks)
        partial = entry.allow_missing
        return [name for name in names if sampled is None or sampled == partial]
    chosen = with_custom(param("score.scorer_benchmarks").get(scorer) or benchmarks)
    on_sample = sampled_benchmarks(scorer)
    names = [
        name
        for name in benchmarks
        if (name in chosen and sampled is not True)
        or (name in on_sample and sampled is not False)
    ]
    if scorer == "ensemble":
        # the stack scores what every member scores, on the members' sample where one samples it (ensemble_sample),
        # but never its own fit data, and nothing when none of its fit data is scored (ensemble_fit_benchmarks)
        fit = set(param("score.ensemble.validation_benchmarks"))
        fit_scored = bool(ensemble_fit_benchmarks())
        members = [
            scored_by(member, benchmarks) for member in param("score.ensemble.members")
        ]
        names = [
            name
            for name in benchmarks
            if name in chosen
            and fit_scored
            and name not in fit
            and all(name in scored for scored in members)
            and sampled in (None, ensemble_sample(name) is not None)
        ]
    return names


def sample_size(scorer, sample):
    """The examples of the scorer's samples (`sample`: score.sample): its scorer_examples, else examples."""
    return (sample.get("scorer_examples") or {}).get(scorer, sample["examples"])


def ensemble_sample(benchmark):
    """The ensemble's sample of a benchmark where a member samples it: the smallest of the members' samples, which
    every member scored (samples of a benchmark nest, and the others score it whole); None where all score it
    whole."""
    sizes = [
        sample_size(member, param("score.sample"))
        for member in param("score.ensemble.members")
        if benchmark in sampled_benchmarks(member)
    ]
    return min(sizes) if sizes else None


def sample_arguments(scorer, benchmark):
    """A (scorer, benchmark) job's sample: score.sample where the scorer samples the benchmark (of sample_size; the
    ensemble: ensemble_sample), else all (and no seed, so that changing the seed reruns only the sampled jobs). Read
    by jobs; preprocess.smk (OpenIE's triples, the parser's QAs) and score.smk, whose jobs take samples, read
    score.sample and score.sampled_benchmarks while parsed, so that their DVC stages depend on them.
    """
    sample = param("score.sample")
    size = (
        ensemble_sample(benchmark)
        if scorer == "ensemble"
        else (
            sample_size(scorer, sample)
            if benchmark in sampled_benchmarks(scorer)
            else None
        )
    )
    if size is not None:
        return f"--sample-examples {size} --sample-seed {sample['seed']}"
    return "--sample-examples all"


def score_files(benchmarks, scorers=None, sampled=None):
    """results/score/<benchmark>/<scorer>.parquet of every scored pair of `benchmarks` x `scorers` (default: every
    scorer, factlab's and the user's); `sampled` as in scored_by."""
    scorers = scorer_names() if scorers is None else scorers
    return [
        f"results/score/{name}/{scorer}.parquet"
        for name in benchmarks
        for scorer in scorers
        if name in scored_by(scorer, benchmarks, sampled)
    ]


# Score stage (score.smk): shards, AlignScore's tuning inputs, baselines' inputs.
def shard_files(wildcards, extension):
    """The shards of one (benchmark, scorer): the inputs of its merge."""
    return [
        f"results/score/{wildcards.benchmark}/shards/{wildcards.scorer}/{shard}.{extension}"
        for shard in range(param("score.shards"))
    ]


def tuning_files(pattern):
    """`pattern` for each tuning benchmark; an error only when a job needs the tuning (a DAG that scores nothing
    with AlignScore may preprocess no validation benchmark)."""
    benchmarks = tuning_benchmarks()
    if not benchmarks:
        raise ConfigError(
            "params.yaml score.alignscore.tuning.benchmarks: none of them is preprocessed (preprocess.benchmarks); "
            "AlignScore's chunk size cannot be tuned"
        )
    return expand(pattern, benchmark=benchmarks)


def baseline_inputs(wildcards):
    """A baseline's inputs: the benchmark, its sentences, the code it runs, triples for openie_triples, and the
    unpacked MPNet for bertscore_precision on it."""
    inputs = {
        "data": f"results/data/{wildcards.benchmark}.parquet",
        "sentences": f"results/preprocess/{wildcards.benchmark}/sentences.parquet",
        "code": code("score", wildcards.scorer.replace("_", "-")),
    }
    if wildcards.scorer == "openie_triples":
        inputs["triples"] = f"results/preprocess/{wildcards.benchmark}/triples.parquet"
    if (
        wildcards.scorer == "bertscore_precision"
        and param("score.bertscore_precision.model") == "mpnet"
    ):
        inputs["encoder"] = MPNET_DIR
    return inputs


# Checker stage (checker.smk): the checker's corrections are evaluated on FRANK's outputs when the trained aligner
# with a token head scores all of them; the report's FRANK page shows them.
CORRECTION_BENCHMARK = "frank"


def correction_run():
    return (
        param("score.alignscore.model") == "trained"
        and param("aligner.train.token_head")
        and bool(score_files([CORRECTION_BENCHMARK], ["alignscore"], sampled=False))
    )


# The checker's explanations are measured against QASemConsistency's gold QAs when its aligner has a token head.
def explanation_run():
    return param("score.alignscore.model") == "trained" and param(
        "aligner.train.token_head"
    )


# Report stage (report.smk).
def report_optional_arguments(wildcards, input):
    arguments = [f"--metrics {input.metrics}"] if input.metrics else []
    arguments += [f"--checker {input.checker}"] if input.checker else []
    arguments += [f"--corrections {input.corrections}"] if input.corrections else []
    return " ".join(arguments + ([f"--gold {input.gold}"] if input.gold else []))


# The parser's QAs of a benchmark (preprocess_qas), and the benchmarks with annotated QAs (qa_source: gold). A
# benchmark with gold QAs is never sampled: its QA decomposition (score_qa_decomposition) compares every example.
PARSED_QAS = "results/preprocess/{benchmark}/qas.parquet"
GOLD_QAS = {"qasem_consistency": "results/data/qasem_consistency_qas.parquet"}
# QASemConsistency's decomposition measured (factlab metaeval qa-decomposition): a benchmark with gold QAs
# scored three ways with score.qasem_consistency's model, aggregation and threshold.
QA_DECOMPOSITIONS = {
    "gold_qas": {"decomposition": "qas", "qa_source": "gold"},
    "parser_qas": {"decomposition": "qas", "qa_source": "parser"},
    "sentences": {"decomposition": "sentences", "qa_source": "parser"},
}


def reads_parser_qas(settings):
    """Whether a QASemConsistency job with `settings` (decomposition, qa_source) reads the parser's QAs."""
    return (
        settings["decomposition"] != "sentences" and settings["qa_source"] == "parser"
    )


def qasem_consistency_qa_table(benchmark, settings):
    """The QA table a QASemConsistency job with `settings` (decomposition, qa_source) reads: none
    (decomposition sentences), the parser's, or gold."""
    if settings["decomposition"] == "sentences":
        return []
    if reads_parser_qas(settings):
        return [PARSED_QAS.format(benchmark=benchmark)]
    if benchmark not in GOLD_QAS:
        raise ConfigError(
            f"params.yaml score.qasem_consistency.qa_source is gold, but benchmark {benchmark!r} "
            f"has no gold QAs (only {sorted(GOLD_QAS)})"
        )
    return [GOLD_QAS[benchmark]]


def qasem_consistency_qas(wildcards):
    """The QA table of a score_qasem_consistency job (score.qasem_consistency's decomposition)."""
    return qasem_consistency_qa_table(
        wildcards.benchmark, qasem_consistency_qa_settings()
    )


def qa_decomposition_qas(wildcards):
    """The QA table of one decomposition of score_qa_decomposition (score.smk)."""
    return qasem_consistency_qa_table(
        wildcards.benchmark, QA_DECOMPOSITIONS[wildcards.decomposition]
    )
