"""The workflow's plan: what each stage runs on, decided once from the config.

Which benchmarks each stage builds, which scorer scores which benchmark (whole or on a seeded sample, the ensemble
nested in its members' samples), which analyses run, and the engine settings every model job receives. The rule
files read one `Plan` (`PLAN` in workflow/rules/common.smk) instead of each other's names, so a rule file's meaning
does not depend on the files included before it, and the plan is tested without Snakemake (tests/test_workflow_plan.py).

A plan reads the config through `read`, never from a copy: the workflow passes a reader that records each key for
the rule file being parsed, so that the DVC stage generated from that file depends on exactly the keys its rules
were planned from (factlab.workflow.dvcyaml). An answer is worked out once (`remembered`; a dry run asks tens of
thousands of questions), and every later asking reads the keys it was worked out from again, so each rule file that
asks is recorded as reading them.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from factlab.data.adapters.scale_published import TRUE_SETS
from factlab.data.spec import BenchmarkSpec
from factlab.errors import ConfigError
from factlab.score.custom_scorers import CustomScorer, custom_scorers
from factlab.text.chunking import CHUNK_POLICIES

ConfigReader = Callable[[str], Any]
Answer = TypeVar("Answer")

# The parser's QAs of a benchmark (preprocess_qas), and the benchmarks with annotated QAs (qa_source: gold). A
# benchmark with gold QAs is never sampled: its QA decomposition (score_qa_decomposition) compares every example.
PARSED_QAS = "results/preprocess/{benchmark}/qas.parquet"
GOLD_QAS = {"qasem_consistency": "results/data/qasem_consistency_qas.parquet"}
# QASemConsistency's decomposition measured (factlab metaeval qa-decomposition): a benchmark with gold QAs scored
# three ways with score.qasem_consistency's model, aggregation and threshold.
QA_DECOMPOSITIONS = {
    "gold_qas": {"decomposition": "qas", "qa_source": "gold"},
    "parser_qas": {"decomposition": "qas", "qa_source": "parser"},
    "sentences": {"decomposition": "sentences", "qa_source": "parser"},
}
# Token-level localisation's gold: XSumFaith's spans (gold of the xsumfaith benchmark) and WiCE's unsupported tokens.
LOCALISATION_GOLD = {
    "xsumfaith": "results/data/xsumfaith_spans.parquet",
    "wice_tokens": "results/data/wice_tokens.parquet",
}
# The benchmark the checker's corrections and the error-type head are evaluated on (FRANK's annotated outputs).
FRANK = "frank"
CORRECTION_BENCHMARK = FRANK
SUMMEVAL = "summeval"
QA_DETECTION_BENCHMARK = "qasem_consistency_qas"
# The keys of score.summac_zs that name its NLI model rather than how SummaC reads it.
SUMMAC_MODEL_KEYS = ("model", "entailment_label", "contradiction_label")


@dataclass(frozen=True)
class ScorerEntry:
    """One scorer as the workflow runs it: the job that scores it (`score_<job>` in workflow/rules/score.smk, or the
    user's door), the `factlab score` command that job runs, its settings group in the config, and the preprocessed
    inputs it reads beside the benchmark's sentences ("triples": OpenIE triples; "qas": QASem QA pairs)."""

    name: str
    job: str
    command: str
    settings: str | None = None
    reads: tuple[str, ...] = ()


# factlab's scorers. Each has a rule of its own (its inputs differ: AlignScore's tuned chunk size, the NLI pairs
# SummaC-Conv shares with SummaC-ZS, the QAs), but for the baselines, whose one rule (score_baseline) takes the
# benchmark, its sentences and the entry's inputs: a baseline is added by its command and an entry here.
BUILT_IN_SCORERS = {
    entry.name: entry
    for entry in (
        ScorerEntry("alignscore", "alignscore", "alignscore", "score.alignscore"),
        ScorerEntry("summac_zs", "summac_zs", "summac-zs", "score.summac_zs"),
        ScorerEntry("summac_conv", "summac_conv", "summac-conv", "score.summac_conv"),
        ScorerEntry("scale", "scale", "scale", "score.scale"),
        ScorerEntry("qasem_consistency", "qasem_consistency", "qasem-consistency", "score.qasem_consistency", ("qas",)),
        ScorerEntry("embedding_cosine", "baseline", "embedding-cosine", "score.embedding_cosine"),
        ScorerEntry("rouge", "baseline", "rouge", "score.rouge"),
        ScorerEntry("bertscore_precision", "baseline", "bertscore-precision", "score.bertscore_precision"),
        ScorerEntry("openie_triples", "baseline", "openie-triples", "score.openie_triples", ("triples",)),
        ScorerEntry("ensemble", "ensemble", "ensemble", "score.ensemble"),
    )
}


def user_scorer_entry(scorer: CustomScorer) -> ScorerEntry:
    """A user's scorer (scorers.custom) or a published one (score.published) as an entry: its door is its job."""
    if scorer.door == "scores":
        return ScorerEntry(scorer.name, "import", "import")
    if scorer.door == "python":
        return ScorerEntry(scorer.name, "python", "python")
    if scorer.family == "alignscore":  # door model: an aligner, read as AlignScore reads factlab's
        return ScorerEntry(scorer.name, "aligner_model", "alignscore", "score.alignscore")
    return ScorerEntry(scorer.name, "nli_model", "summac-zs", "score.summac_zs")  # an NLI model, read as SummaC-ZS


def config_reader(config: Mapping[str, Any]) -> ConfigReader:
    """A reader of dotted keys ("score.device") of a plain config."""

    def read(key: str) -> Any:
        value: Any = config
        for part in key.split("."):
            value = value[part]
        return value

    return read


def reads_parser_qas(settings: Mapping[str, str]) -> bool:
    """Whether a QASemConsistency job with `settings` (decomposition, qa_source) reads the parser's QAs."""
    return settings["decomposition"] != "sentences" and settings["qa_source"] == "parser"


def sample_size(scorer: str, sample: Mapping[str, Any]) -> int:
    """The examples of the scorer's samples (`sample`: score.sample): its scorer_examples, else examples."""
    return (sample.get("scorer_examples") or {}).get(scorer, sample["examples"])


def hashable(value: Any) -> Any:
    """A question's argument as part of its memo key: a list of names as a tuple, a mapping as its sorted items."""
    if isinstance(value, Mapping):
        return tuple(sorted((key, hashable(item)) for key, item in value.items()))
    return tuple(map(hashable, value)) if isinstance(value, (list, tuple)) else value


def remembered(question: Callable[..., Answer]) -> Callable[..., Answer]:
    """A `Plan` question answered once per arguments. The config keys the first answer read are kept with it and read
    again through the plan's reader whenever it is asked (the workflow's reader records them for the asking rule
    file); a copy is returned, so a caller that changes its list changes no other caller's."""

    @functools.wraps(question)
    def ask(plan: Plan, *args: Any, **kwargs: Any) -> Answer:
        key = (question.__name__, *map(hashable, args), *sorted((name, hashable(v)) for name, v in kwargs.items()))
        found = plan.answers.get(key)
        if found is None:
            plan.reading.append(set())
            try:
                answer = question(plan, *args, **kwargs)
            finally:
                keys = plan.reading.pop()
            found = plan.answers[key] = (answer, tuple(sorted(keys)))
        for config_key in found[1]:
            plan.get(config_key)
        return copy.copy(found[0])

    return ask


@dataclass(frozen=True)
class EngineGroup:
    """The engine settings every model job receives (score.device, score.threads, score.engine.*), each read when asked."""

    read: ConfigReader

    @property
    def device(self) -> str:
        return self.read("score.device")

    @property
    def gpus(self) -> int:
        """GPUs a model job holds (its `gpu` resource): one on CUDA."""
        return int(self.device == "cuda")

    @property
    def threads(self) -> int:
        return self.read("score.threads")

    @property
    def precision(self) -> str:
        return self.read("score.engine.precision")

    @property
    def token_budget(self) -> int:
        return self.read("score.engine.token_budget")

    @property
    def max_batch_pairs(self) -> int:
        return self.read("score.engine.max_batch_pairs")

    @property
    def mem_mb(self) -> int:
        """The memory a scoring job asks a cluster for (its `mem_mb` resource)."""
        return self.read("score.mem_mb")


@dataclass(frozen=True)
class BootstrapGroup:
    """The resampling every meta-evaluation's intervals and tests share (metaeval.*), each read when asked."""

    read: ConfigReader

    @property
    def resamples(self) -> int:
        return self.read("metaeval.bootstrap_resamples")

    @property
    def confidence(self) -> float:
        return self.read("metaeval.confidence")

    @property
    def seed(self) -> int:
        return self.read("metaeval.seed")


@dataclass(frozen=True)
class Plan:
    """What the run builds, from the config `read` gives and the benchmark `specs` (built-in and custom).

    `localising_custom`: the user's scorers whose checked entries give per-sentence support or spans (their score
    files are read by factlab.score.custom_scorers.check_custom_scorers before any job starts)."""

    read: ConfigReader
    specs: Mapping[str, BenchmarkSpec]
    localising_custom: tuple[str, ...] = ()
    # `remembered` answers with the keys each read, and the key sets of the answers being worked out (innermost last)
    answers: dict[tuple[Any, ...], tuple[Any, tuple[str, ...]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    reading: list[set[str]] = field(default_factory=list, init=False, repr=False, compare=False)

    def get(self, key: str) -> Any:
        """A config key's value through `read`, noted for every answer being worked out."""
        for keys in self.reading:
            keys.add(key)
        return self.read(key)

    @property
    def engine(self) -> EngineGroup:
        return EngineGroup(self.get)

    @property
    def bootstrap(self) -> BootstrapGroup:
        return BootstrapGroup(self.get)

    # Benchmarks of each stage -------------------------------------------------------------------------------
    @property
    @remembered
    def custom_benchmarks(self) -> Mapping[str, Any]:
        return self.get("data.custom_benchmarks")

    @remembered
    def with_custom(self, names: Sequence[str]) -> list[str]:
        """`names` and every custom benchmark not among them: a --configfile with one custom benchmark is all a
        user writes for it to be built, preprocessed, scored by every scorer, meta-evaluated and reported."""
        return list(names) + [name for name in self.custom_benchmarks if name not in names]

    @property
    @remembered
    def selected(self) -> list[str]:
        """data.benchmarks (empty: every known one) and every custom benchmark."""
        selected = self.with_custom(self.get("data.benchmarks") or sorted(self.specs))
        unknown = sorted(set(selected) - set(self.specs))
        if unknown:
            raise ConfigError(f"params.yaml data.benchmarks names unknown benchmarks: {unknown}")
        return selected

    @property
    @remembered
    def benchmarks(self) -> list[str]:
        """The selected benchmarks (not tables)."""
        return [name for name in self.selected if self.specs[name].kind == "benchmark"]

    @property
    @remembered
    def tables(self) -> list[str]:
        return [name for name in self.selected if self.specs[name].kind == "table"]

    @property
    @remembered
    def downloads(self) -> list[str]:
        """Manifest datasets that the selected benchmarks read: only these are downloaded."""
        return sorted({dataset for name in self.selected for dataset in self.specs[name].datasets})

    @property
    @remembered
    def preprocess_benchmarks(self) -> list[str]:
        """preprocess.benchmarks; empty = every selected benchmark that is used for evaluation."""
        return self.with_custom(
            self.get("preprocess.benchmarks") or [name for name in self.benchmarks if self.specs[name].role == "evaluation"]
        )

    @property
    @remembered
    def max_examples(self) -> int | str:
        """preprocess.max_examples: the examples each benchmark keeps (a cap for quick runs), else all."""
        return self.get("preprocess.max_examples") or "all"

    @property
    @remembered
    def score_benchmarks(self) -> list[str]:
        """score.benchmarks; empty = every preprocessed benchmark."""
        return self.with_custom(self.get("score.benchmarks") or self.preprocess_benchmarks)

    @property
    @remembered
    def shards(self) -> int:
        """score.shards: the independent jobs each (benchmark, scorer) is scored in."""
        return self.get("score.shards")

    @property
    @remembered
    def tuning_benchmarks(self) -> list[str]:
        """The validation benchmarks AlignScore's chunk size and aggregation are tuned on: those preprocessed."""
        preprocessed = self.preprocess_benchmarks
        return [name for name in self.get("score.alignscore.tuning.benchmarks") if name in preprocessed]

    @property
    @remembered
    def ensemble_fit_benchmarks(self) -> list[str]:
        """The ensemble's fit data: those of its validation benchmarks that are scored."""
        scored = self.score_benchmarks
        return [name for name in self.get("score.ensemble.validation_benchmarks") if name in scored]

    @property
    @remembered
    def detection_validation(self) -> list[str]:
        """The scored validation benchmarks that choose detection thresholds."""
        scored = self.score_benchmarks
        return [name for name in self.get("metaeval.detection.validation_benchmarks") if name in scored]

    @property
    @remembered
    def checker_validation(self) -> list[str]:
        """The benchmarks whose validation (or dev) splits choose the checker folder's threshold, uncertain band and
        correction bar: the selected check.validation_benchmarks that AlignScore scores (whole, or a sample of)."""
        chosen = [name for name in self.get("check.validation_benchmarks") if name in self.score_benchmarks]
        return [name for name in chosen if self.score_files([name], ["alignscore"])]

    @property
    @remembered
    def triple_benchmarks(self) -> list[str]:
        """The benchmarks whose OpenIE triples a scoring job reads: only these are extracted."""
        return self.benchmarks_reading("triples")

    # QASemConsistency's QAs ---------------------------------------------------------------------------------
    @property
    @remembered
    def qasem_consistency_qa_settings(self) -> dict[str, str]:
        """score.qasem_consistency's decomposition and qa_source: which QAs its jobs read."""
        return {key: self.get(f"score.qasem_consistency.{key}") for key in ("decomposition", "qa_source")}

    @property
    @remembered
    def qasem_consistency_benchmarks(self) -> list[str]:
        """The benchmarks whose QAs a scoring job reads (QASemConsistency's)."""
        return self.benchmarks_reading("qas")

    @property
    @remembered
    def qa_decomposition_benchmarks(self) -> list[str]:
        """The benchmarks with gold QAs that QASemConsistency scores: its decomposition is measured on them."""
        scored = self.qasem_consistency_benchmarks
        return [name for name in GOLD_QAS if name in scored]

    @property
    @remembered
    def qa_decompositions_scored(self) -> list[str]:
        """The decompositions scored apart: one with score.qasem_consistency's own settings is that scorer's table."""
        own = self.qasem_consistency_qa_settings
        return [name for name, settings in QA_DECOMPOSITIONS.items() if {**own, **settings} != own]

    @property
    @remembered
    def parsed_qa_benchmarks(self) -> list[str]:
        """The benchmarks whose parser QAs a scoring job reads: only these are parsed."""
        reads = set(self.qasem_consistency_benchmarks if reads_parser_qas(self.qasem_consistency_qa_settings) else [])
        if any(reads_parser_qas(QA_DECOMPOSITIONS[name]) for name in self.qa_decompositions_scored):
            reads |= set(self.qa_decomposition_benchmarks)
        return sorted(reads)

    @remembered
    def qa_table(self, benchmark: str, settings: Mapping[str, str]) -> list[str]:
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

    # Scorers ------------------------------------------------------------------------------------------------
    @property
    @remembered
    def published_scorers(self) -> dict[str, CustomScorer]:
        """score.published: the per-example TRUE scores SCALE released of these metrics (results/data/true_published),
        entered through a user's `scores` door (rule export_published_scores writes the files), as published_<metric>.
        """
        return {
            f"published_{metric}": CustomScorer(
                name=f"published_{metric}",
                door="scores",
                scores={f"true_{name}": f"results/score/published/{metric}/true_{name}.jsonl" for name in TRUE_SETS.values()},
            )
            for metric in self.get("score.published")
        }

    @property
    @remembered
    def custom_scorers(self) -> dict[str, CustomScorer]:
        """scorers.custom: a researcher's scorers (factlab.score.custom_scorers)."""
        return custom_scorers(self.get("scorers.custom"), self.get("score.scorers") + list(self.published_scorers))

    @property
    @remembered
    def scorers(self) -> list[str]:
        """Every scorer of the run: score.scorers, the published ones (score.published), then the user's (scorers.custom)."""
        return self.get("score.scorers") + list(self.published_scorers) + list(self.custom_scorers)

    @remembered
    def scorer_entry(self, name: str) -> ScorerEntry:
        """The registry entry of one of the run's scorers (factlab's, a published one or the user's)."""
        if name in BUILT_IN_SCORERS:
            return BUILT_IN_SCORERS[name]
        users = {**self.published_scorers, **self.custom_scorers}
        if name not in users:
            raise ConfigError(f"no scorer {name!r}: the run's scorers are {self.scorers}")
        return user_scorer_entry(users[name])

    @remembered
    def scorers_run_by(self, job: str) -> list[str]:
        """The run's scorers whose jobs are `job`'s (e.g. "python": every user scorer of door python)."""
        return [name for name in self.scorers if self.scorer_entry(name).job == job]

    @remembered
    def benchmarks_reading(self, input_kind: str) -> list[str]:
        """The scored benchmarks some scorer of the run reads `input_kind` ("triples", "qas") of, in score order."""
        scored = self.score_benchmarks
        # only factlab's scorers read preprocessed inputs beside sentences: a user's scorer never changes what
        # preprocessing builds, and the preprocess stage does not depend on scorers.custom
        built_in = self.get("score.scorers")
        readers = [name for name in built_in if input_kind in BUILT_IN_SCORERS[name].reads]
        reading = {benchmark for name in readers for benchmark in self.scored_by(name, scored)}
        return [name for name in scored if name in reading]

    @remembered
    def sampled_benchmarks(self, scorer: str) -> list[str]:
        """The benchmarks score.sampled_benchmarks names for `scorer`: it scores a seeded sample of them."""
        return self.get("score.sampled_benchmarks").get(scorer) or []

    @remembered
    def scored_by(self, scorer: str, benchmarks: Sequence[str], sampled: bool | None = None) -> list[str]:
        """Those of `benchmarks` that `scorer` scores, in their order; `sampled`: True only those it scores a sample
        of, False only those it scores whole, None both.

        A built-in scorer scores every benchmark unless score.scorer_benchmarks names a non-empty list for it, and
        every custom benchmark whatever the lists; on the benchmarks score.sampled_benchmarks names for it, a
        seeded sample. A user's scorer scores what its entry gives (its score files' benchmarks, or its
        `benchmarks`), all of it: with `allow_missing`, the examples it leaves unscored make its tables partial, and
        they are then marked as scored on a subset (sampled)."""
        if scorer not in self.get("score.scorers") and (entry := {**self.published_scorers, **self.custom_scorers}.get(scorer)):
            return [name for name in entry.scored(benchmarks) if sampled is None or sampled == entry.allow_missing]
        chosen = self.with_custom(self.get("score.scorer_benchmarks").get(scorer) or benchmarks)
        if scorer == "ensemble":
            # the stack scores what every member scores, on the members' sample where one samples it
            # (ensemble_sample), but never its own fit data, and nothing when none of its fit data is scored
            fit = set(self.get("score.ensemble.validation_benchmarks"))
            fit_scored = bool(self.ensemble_fit_benchmarks)
            members = [self.scored_by(member, benchmarks) for member in self.get("score.ensemble.members")]
            return [
                name
                for name in benchmarks
                if name in chosen
                and fit_scored
                and name not in fit
                and all(name in scored for scored in members)
                and sampled in (None, self.ensemble_sample(name) is not None)
            ]
        on_sample = self.sampled_benchmarks(scorer)
        return [
            name
            for name in benchmarks
            if (name in chosen and sampled is not True) or (name in on_sample and sampled is not False)
        ]

    @remembered
    def ensemble_sample(self, benchmark: str) -> int | None:
        """The ensemble's sample of a benchmark where a member samples it: the smallest of the members' samples,
        which every member scored (samples of a benchmark nest, and the others score it whole); None where all
        score it whole."""
        sizes = [
            sample_size(member, self.get("score.sample"))
            for member in self.get("score.ensemble.members")
            if benchmark in self.sampled_benchmarks(member)
        ]
        return min(sizes) if sizes else None

    @remembered
    def sample_arguments(self, scorer: str, benchmark: str) -> str:
        """A (scorer, benchmark) job's sample: score.sample where the scorer samples the benchmark (of sample_size;
        the ensemble: ensemble_sample), else all (and no seed, so that changing the seed reruns only the sampled
        jobs)."""
        sample = self.get("score.sample")
        if scorer == "ensemble":
            size = self.ensemble_sample(benchmark)
        else:
            size = sample_size(scorer, sample) if benchmark in self.sampled_benchmarks(scorer) else None
        if size is not None:
            return f"--sample-examples {size} --sample-seed {sample['seed']}"
        return "--sample-examples all"

    def score_files(
        self, benchmarks: Sequence[str], scorers: Sequence[str] | None = None, sampled: bool | None = None
    ) -> list[str]:
        """results/score/<benchmark>/<scorer>.parquet of every scored pair of `benchmarks` x `scorers` (default:
        every scorer, factlab's and the user's); `sampled` as in scored_by."""
        scorers = self.scorers if scorers is None else scorers
        scored = {scorer: set(self.scored_by(scorer, benchmarks, sampled)) for scorer in scorers}
        return [f"results/score/{name}/{scorer}.parquet" for name in benchmarks for scorer in scorers if name in scored[scorer]]

    @property
    @remembered
    def chunk_policy(self) -> str:
        """score.alignscore.chunk_policy: how AlignScore's readers cut a source into chunks (factlab.text.chunking)."""
        policy = self.get("score.alignscore.chunk_policy")
        if policy not in CHUNK_POLICIES:
            raise ConfigError(
                f"params.yaml score.alignscore.chunk_policy: {policy!r} is not a chunk policy; choose one of "
                f"{list(CHUNK_POLICIES)}"
            )
        return policy

    @property
    @remembered
    def trained_aligner(self) -> bool:
        """Whether AlignScore reads factlab's trained aligner (else a hub id or folder)."""
        return self.get("score.alignscore.model") == "trained"

    @property
    @remembered
    def alignscore_runtime(self) -> str:
        """OpenVINO reads the trained aligner's ONNX graph on the CPU, as `factlab check` does (the checker's scores
        are the pipeline's); torch for a hub model or where score.alignscore.runtime says so (a GPU)."""
        return self.get("score.alignscore.runtime") if self.trained_aligner else "torch"

    @property
    @remembered
    def imported_scorers(self) -> dict[str, CustomScorer]:
        """The scorers of door `scores`: the user's files, and the published scores (score.published)."""
        scorers = {**self.published_scorers, **self.custom_scorers}
        return {name: scorer for name, scorer in scorers.items() if scorer.door == "scores"}

    @property
    @remembered
    def summac_zs_model(self) -> str:
        """SummaC-ZS's NLI model: "trained" (factlab's aligner's 3-way head), a hub id or a folder."""
        return self.get("score.summac_zs.model")

    @property
    @remembered
    def summac_zs_settings(self) -> str:
        """SummaC-ZS's reading of NLI (JSON), for its own jobs, a user's NLI model and the correction's judge."""
        settings = self.get("score.summac_zs")
        return json.dumps({key: value for key, value in settings.items() if key not in SUMMAC_MODEL_KEYS}, sort_keys=True)

    @remembered
    def alignscore_scores_whole(self, benchmark: str) -> bool:
        """Whether AlignScore scores all of `benchmark` (not a sample)."""
        return bool(self.score_files([benchmark], ["alignscore"], sampled=False))

    # Analyses -----------------------------------------------------------------------------------------------
    @property
    @remembered
    def leaderboard_benchmarks(self) -> list[str]:
        """Every scored benchmark but the validation ones."""
        validation = self.detection_validation
        return [name for name in self.score_benchmarks if name not in validation]

    @property
    @remembered
    def leaderboard_runs(self) -> bool:
        return bool(self.score_files(self.leaderboard_benchmarks, sampled=False))

    @property
    @remembered
    def decisions_benchmarks(self) -> list[str]:
        """Every benchmark AlignScore scores whole but the validation cuts that chose the checker's thresholds."""
        return [name for name in self.leaderboard_benchmarks if self.alignscore_scores_whole(name)]

    @property
    @remembered
    def decisions_runs(self) -> bool:
        """The checker's decisions need its folder, which exists only for the trained aligner."""
        return self.trained_aligner and bool(self.decisions_benchmarks)

    @property
    @remembered
    def calibration_gain_benchmarks(self) -> list[str]:
        """Every benchmark AlignScore scores whole, the validation cuts included: calibrating on a benchmark's
        validation split is judged on its test split, which chose nothing."""
        return [name for name in self.score_benchmarks if self.alignscore_scores_whole(name)]

    @property
    @remembered
    def calibration_gain_runs(self) -> bool:
        """Calibration starts from the checker folder, which exists only for the trained aligner."""
        return self.trained_aligner and bool(self.calibration_gain_benchmarks)

    @property
    @remembered
    def frank_scored(self) -> bool:
        return FRANK in self.score_benchmarks

    @property
    @remembered
    def summeval_scored(self) -> bool:
        return bool(self.score_files([SUMMEVAL], sampled=False)) and SUMMEVAL in self.score_benchmarks

    @property
    @remembered
    def localisation_scorers(self) -> list[str]:
        """metaeval.localisation.scorers that the run has, and the user's scorers that localise."""
        scorers = self.scorers
        chosen = [name for name in self.get("metaeval.localisation.scorers") if name in scorers]
        return chosen + list(self.localising_custom)

    @property
    @remembered
    def localisation_benchmarks(self) -> list[str]:
        scored = self.score_benchmarks
        scorers = self.localisation_scorers
        return [name for name in LOCALISATION_GOLD if name in scored and self.score_files([name], scorers)]

    @property
    @remembered
    def localisation_runs(self) -> bool:
        return bool(self.localisation_benchmarks)

    @property
    @remembered
    def qa_decomposition_runs(self) -> bool:
        return bool(self.qa_decomposition_benchmarks)

    @property
    @remembered
    def qa_detection_scorers(self) -> list[str]:
        """Every scorer of the gold QAs but QASemConsistency, whose own reading of them is the protocol table."""
        return [scorer for scorer in self.scorers if scorer != "qasem_consistency"]

    @property
    @remembered
    def qa_detection_benchmarks(self) -> list[str]:
        return [name for name in [QA_DETECTION_BENCHMARK] if name in self.score_benchmarks]

    @property
    @remembered
    def qa_detection_runs(self) -> bool:
        scored = self.score_files(self.qa_detection_benchmarks, self.qa_detection_scorers)
        return bool(scored) or self.qa_decomposition_runs

    @property
    @remembered
    def error_types_runs(self) -> bool:
        """The error-type head on FRANK's categories: the trained aligner's type head, AlignScore on all of FRANK."""
        return self.trained_aligner and self.get("aligner.train.type_head") and self.alignscore_scores_whole(FRANK)

    @property
    @remembered
    def correction_runs(self) -> bool:
        """The checker's corrections on FRANK's outputs: the trained aligner with a token head, on all of FRANK."""
        return self.trained_aligner and self.get("aligner.train.token_head") and self.alignscore_scores_whole(FRANK)

    @property
    @remembered
    def explanation_runs(self) -> bool:
        """The checker's explanations against QASemConsistency's gold QAs: the trained aligner with a token head."""
        return self.trained_aligner and self.get("aligner.train.token_head")
