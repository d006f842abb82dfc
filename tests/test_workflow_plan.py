"""The workflow's plan (factlab.workflow.plan) for params.yaml and every config/*.yaml, without Snakemake: the benchmarks
of each stage, the scorer x benchmark matrix with its samples and the ensemble nested in them, the analyses that run
and the engine settings, each against a value read off the config files by hand."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from snakemake.utils import update_config

from factlab.data.registry import all_specs
from factlab.errors import ConfigError
from factlab.workflow.plan import Plan, config_reader

ROOT = Path(__file__).resolve().parent.parent

# Every benchmark of role "evaluation" in the registry: what preprocess.benchmarks: [] preprocesses.
EVALUATION = [
    "frank", "qags_cnndm", "qags_xsum", "qasem_consistency", "qasem_consistency_qas", "summac_factcc",
    "summac_polytope", "summac_summeval", "summac_xsumfaith", "summeval", "true_begin", "true_dialfact", "true_frank",
    "true_paws", "true_q2", "true_qags_cnndm", "true_qags_xsum", "true_summeval", "wice_claims", "wice_tokens",
    "xsumfaith",
]  # fmt: skip
SUMMAC_CUTS = ["summac_factcc", "summac_summeval", "summac_xsumfaith"]
TRUE = ["true_begin", "true_dialfact", "true_frank", "true_paws", "true_q2", "true_qags_cnndm", "true_qags_xsum",
        "true_summeval"]  # fmt: skip
SMOKE = ["frank", "true_begin", "qasem_consistency", "summac_summeval", "xsumfaith", "summeval"]


def plan_of(*files: str, localising_custom: tuple[str, ...] = ()) -> Plan:
    """The plan of params.yaml with `files` merged over it, as Snakemake merges --configfile."""
    config: dict = {}
    for path in ("params.yaml", *files):
        update_config(config, yaml.safe_load((ROOT / path).read_text()))
    return Plan(config_reader(config), all_specs(config["data"]["custom_benchmarks"]), localising_custom)


def matrix(plan: Plan) -> dict[str, tuple[set[str], set[str]]]:
    """scorer -> (benchmarks it scores whole, benchmarks it scores a sample of)."""
    scored = plan.score_benchmarks
    return {
        scorer: (set(plan.scored_by(scorer, scored, sampled=False)), set(plan.scored_by(scorer, scored, sampled=True)))
        for scorer in plan.scorers
    }


def test_default_stages():
    plan = plan_of()
    assert plan.preprocess_benchmarks == EVALUATION
    assert plan.score_benchmarks == EVALUATION
    assert plan.tuning_benchmarks == ["summac_xsumfaith", "summac_polytope", "summac_factcc", "summac_summeval"]
    assert plan.detection_validation == plan.tuning_benchmarks
    assert plan.ensemble_fit_benchmarks == SUMMAC_CUTS
    assert plan.leaderboard_benchmarks == [name for name in EVALUATION if name not in plan.tuning_benchmarks]
    assert "wice_claims" not in plan.decisions_benchmarks  # AlignScore scores a sample of it
    assert plan.shards == 1 and plan.max_examples == "all"


def test_default_matrix():
    found = matrix(plan_of())
    costly_whole = {"qags_xsum", "qasem_consistency", "true_begin", "true_q2", "true_qags_xsum", *SUMMAC_CUTS}
    costly_sampled = set(EVALUATION) - costly_whole - {"summac_polytope"}
    cheap_sampled = {"true_dialfact", "true_paws", "wice_claims"}
    cheap_whole = set(EVALUATION) - cheap_sampled - {"summac_polytope"}
    ensemble_whole = cheap_whole - set(SUMMAC_CUTS)
    true_scored = set(TRUE)
    assert found == {
        "alignscore": (set(EVALUATION) - {"summac_polytope", "wice_claims"}, {"wice_claims"}),
        "summac_zs": (costly_whole, costly_sampled),
        "summac_conv": (costly_whole, costly_sampled),
        "scale": (costly_whole, costly_sampled),
        "qasem_consistency": ({"qasem_consistency"}, set(EVALUATION) - {"qasem_consistency", "summac_polytope"}),
        "embedding_cosine": (cheap_whole, cheap_sampled),
        "rouge": (set(EVALUATION), set()),
        "bertscore_precision": (cheap_whole, cheap_sampled),
        "openie_triples": (cheap_whole, cheap_sampled),
        "ensemble": (ensemble_whole, cheap_sampled),
        "published_summac_zs": (true_scored, set()),
        "published_summac_conv": (true_scored, set()),
        "published_unieval": (true_scored, set()),
        "published_bert_score_f": (true_scored, set()),
    }


def test_default_samples():
    plan = plan_of()
    assert plan.sample_arguments("qasem_consistency", "frank") == "--sample-examples 20 --sample-seed 2022"
    assert plan.sample_arguments("summac_zs", "frank") == "--sample-examples 200 --sample-seed 2022"
    assert plan.sample_arguments("summac_zs", "qags_xsum") == "--sample-examples all"
    # the ensemble on the smallest of its members' samples, where one samples the benchmark
    assert plan.ensemble_sample("true_paws") == 200
    assert plan.ensemble_sample("frank") is None
    assert plan.sample_arguments("ensemble", "wice_claims") == "--sample-examples 200 --sample-seed 2022"


def test_default_inputs_of_preprocessing():
    plan = plan_of()
    assert plan.triple_benchmarks == [name for name in EVALUATION if name != "summac_polytope"]
    # QASemConsistency reads the parser's QAs of everything it scores
    assert plan.parsed_qa_benchmarks == [name for name in EVALUATION if name != "summac_polytope"]
    assert plan.qa_decomposition_benchmarks == ["qasem_consistency"]
    # its own settings (qas from the parser) are its table; the other two decompositions are scored apart
    assert plan.qa_decompositions_scored == ["gold_qas", "sentences"]


def test_default_analyses():
    plan = plan_of()
    assert plan.localisation_benchmarks == ["xsumfaith", "wice_tokens"]
    assert plan.localisation_scorers == [
        "alignscore", "summac_zs", "scale", "qasem_consistency", "embedding_cosine", "rouge", "bertscore_precision",
    ]  # fmt: skip
    assert plan.qa_detection_benchmarks == ["qasem_consistency_qas"]
    assert plan.checker_validation == [  # news, claims with evidence, QA: their validation or dev splits
        "summac_factcc", "summac_summeval", "summac_xsumfaith", "frank", "wice_claims", "qasem_consistency",
    ]  # fmt: skip
    for analysis in ("leaderboard", "decisions", "calibration_gain", "localisation", "qa_decomposition", "qa_detection",
                     "error_types", "correction", "explanation"):  # fmt: skip
        assert getattr(plan, f"{analysis}_runs"), analysis
    assert plan.frank_scored and plan.summeval_scored


def test_default_engine():
    engine = plan_of().engine
    assert (engine.device, engine.gpus, engine.threads, engine.precision) == ("auto", 0, 1, "auto")
    assert plan_of().alignscore_runtime == "openvino"


def test_gpu_config():
    plan = plan_of("config/gpu.yaml")
    engine = plan.engine
    assert (engine.device, engine.gpus, engine.threads, engine.precision) == ("cuda", 1, 4, "bf16")
    assert (engine.token_budget, engine.max_batch_pairs) == (262144, 2048)
    assert plan.alignscore_runtime == "torch"
    assert matrix(plan) == matrix(plan_of())


@pytest.mark.parametrize(
    "config", ["config/aligner_2epochs.yaml", "config/aligner_qanom_qa.yaml", "config/qasem_trained_prior.yaml"]
)
def test_training_configs_plan_the_default_selection(config: str):
    plan, default = plan_of(config), plan_of()
    assert plan.preprocess_benchmarks == default.preprocess_benchmarks
    assert matrix(plan) == matrix(default)


def test_full_config_scores_everything_whole():
    plan = plan_of("config/full.yaml")
    found = matrix(plan)
    for scorer in ["alignscore", "summac_zs", "summac_conv", "scale", "qasem_consistency", "embedding_cosine", "rouge",
                   "bertscore_precision", "openie_triples"]:  # fmt: skip
        assert found[scorer] == (set(EVALUATION), set()), scorer
    assert found["ensemble"] == (set(EVALUATION) - set(SUMMAC_CUTS), set())


def test_smoke_config():
    plan = plan_of("config/smoke.yaml")
    assert plan.preprocess_benchmarks == SMOKE
    assert plan.score_benchmarks == SMOKE
    assert plan.max_examples == 20
    assert plan.tuning_benchmarks == plan.detection_validation == plan.ensemble_fit_benchmarks == ["summac_summeval"]
    short = {"qasem_consistency", "summac_summeval"}
    found = matrix(plan)
    assert found == {
        "alignscore": ({"frank", "qasem_consistency", "summac_summeval", "true_begin", "xsumfaith"}, set()),
        "summac_zs": (short, {"frank"}),
        "summac_conv": (short, {"frank"}),
        "scale": (short, {"xsumfaith"}),
        "qasem_consistency": ({"qasem_consistency"}, {"xsumfaith"}),
        "embedding_cosine": ({"summac_summeval"}, {"frank"}),
        "rouge": (set(SMOKE), set()),
        "bertscore_precision": ({"frank", "summac_summeval"}, set()),
        "openie_triples": ({"frank"}, set()),
        # every member scores FRANK (the cosine a sample of it) and the fit data, which the stack never scores
        "ensemble": (set(), {"frank"}),
        "published_summac_zs": ({"true_begin"}, set()),
        "published_summac_conv": ({"true_begin"}, set()),
        "published_unieval": ({"true_begin"}, set()),
        "published_bert_score_f": ({"true_begin"}, set()),
    }
    assert plan.sample_arguments("qasem_consistency", "xsumfaith") == "--sample-examples 8 --sample-seed 2022"
    assert plan.sample_arguments("ensemble", "frank") == "--sample-examples 12 --sample-seed 2022"
    assert plan.parsed_qa_benchmarks == ["qasem_consistency", "xsumfaith"]
    assert plan.localisation_benchmarks == ["xsumfaith"]
    assert plan.qa_detection_benchmarks == [] and plan.qa_detection_runs  # through the decomposition's gold QAs
    assert plan.triple_benchmarks == ["frank"]
    # only the selected benchmarks AlignScore scores whole choose the checker's decisions
    assert plan.checker_validation == ["summac_summeval", "frank", "qasem_consistency"]


@pytest.mark.parametrize("config", ["config/smoke_custom.yaml", "config/smoke_variant.yaml"])
def test_a_custom_benchmark_is_built_preprocessed_and_scored_by_every_scorer(config: str):
    plan = plan_of("config/smoke.yaml", config)
    assert "byo_qags_xsum" in plan.benchmarks
    assert plan.preprocess_benchmarks[-1] == "byo_qags_xsum" and "byo_qags_xsum" in plan.score_benchmarks
    for scorer in ["alignscore", "summac_zs", "scale", "qasem_consistency", "rouge", "bertscore_precision"]:
        assert "byo_qags_xsum" in plan.scored_by(scorer, plan.score_benchmarks, sampled=False), scorer
    assert "byo_qags_xsum" not in plan.scored_by("published_summac_zs", plan.score_benchmarks)


def test_user_scorers_are_planned_like_built_ins():
    plan = plan_of("config/smoke.yaml", "config/smoke_variant.yaml", localising_custom=("word_support",))
    assert plan.scorers[-3:] == ["word_support", "tiny_nli", "tiny_aligner"]
    assert plan.scored_by("word_support", plan.score_benchmarks) == plan.score_benchmarks
    assert plan.localisation_scorers[-1] == "word_support"
    assert plan.preprocess_benchmarks == ["frank", "true_begin", "qasem_consistency", "summac_summeval", "xsumfaith",
                                          "byo_qags_xsum"]  # fmt: skip


def test_an_unknown_benchmark_is_a_config_error():
    config: dict = yaml.safe_load((ROOT / "params.yaml").read_text())
    config["data"]["benchmarks"] = ["frank", "no_such_benchmark"]
    plan = Plan(config_reader(config), all_specs({}))
    with pytest.raises(ConfigError, match="no_such_benchmark"):
        _ = plan.benchmarks


def test_each_question_reads_its_keys_through_the_reader():
    config: dict = yaml.safe_load((ROOT / "params.yaml").read_text())
    read = config_reader(config)
    keys: list[str] = []
    plan = Plan(lambda key: keys.append(key) or read(key), all_specs({}))
    _ = plan.score_benchmarks
    assert set(keys) == {"score.benchmarks", "preprocess.benchmarks", "data.benchmarks", "data.custom_benchmarks"}
    keys.clear()
    _ = plan.engine.device
    assert keys == ["score.device"]


def test_an_answer_is_worked_out_once_and_reads_its_keys_again_each_time_it_is_asked():
    """The workflow's reader records the keys each rule file reads (dvc.yaml's params): a remembered answer must read
    again, through the reader, every key it was worked out from; and a caller changing its list changes no other's."""
    config: dict = yaml.safe_load((ROOT / "params.yaml").read_text())
    read = config_reader(config)
    keys: list[str] = []
    plan = Plan(lambda key: keys.append(key) or read(key), all_specs({}))
    first = plan.score_files(plan.score_benchmarks, ["alignscore"])
    worked_out = set(keys)
    assert {"score.benchmarks", "score.scorer_benchmarks", "score.sampled_benchmarks"} <= worked_out
    keys.clear()
    first.append("changed by this caller")
    again = plan.score_files(plan.score_benchmarks, ["alignscore"])
    assert set(keys) == worked_out  # every key again, none added
    assert "changed by this caller" not in again and again == first[:-1]
    assert again == [f"results/score/{name}/alignscore.parquet" for name in plan.scored_by("alignscore", plan.score_benchmarks)]


def test_bootstrap_settings():
    bootstrap = plan_of().bootstrap
    assert (bootstrap.resamples, bootstrap.confidence, bootstrap.seed) == (1000, 0.95, 2022)
    assert plan_of("config/smoke.yaml").bootstrap.resamples == 200
    assert plan_of().engine.mem_mb == 4000


def test_the_registry_names_every_scorer_and_its_command():
    from factlab.score.cli import COMMAND_MODULES
    from factlab.workflow.plan import BUILT_IN_SCORERS

    plan = plan_of()
    assert set(plan.read("score.scorers")) == set(BUILT_IN_SCORERS)
    for entry in BUILT_IN_SCORERS.values():
        assert entry.command in COMMAND_MODULES, entry.name
        assert entry.settings is not None and plan.read(entry.settings) is not None, entry.name
    assert plan.scorers_run_by("baseline") == ["embedding_cosine", "rouge", "bertscore_precision", "openie_triples"]
    assert plan.scorers_run_by("import") == [
        "published_summac_zs", "published_summac_conv", "published_unieval", "published_bert_score_f",
    ]  # fmt: skip


def test_a_users_scorers_are_registry_entries_of_their_doors():
    plan = plan_of("config/smoke.yaml", "config/smoke_variant.yaml")
    assert plan.scorers_run_by("python") == ["word_support"]
    assert plan.scorers_run_by("nli_model") == ["tiny_nli"]
    assert plan.scorer_entry("tiny_aligner").command == "alignscore"
    with pytest.raises(ConfigError, match="no scorer 'missing'"):
        plan.scorer_entry("missing")


def test_a_scorer_is_one_registry_entry(monkeypatch: pytest.MonkeyPatch):
    """A baseline added to the registry and to score.scorers is planned like the others: its jobs, its inputs."""
    from factlab.workflow import plan as plan_module

    entry = plan_module.ScorerEntry("rouge_triples", "baseline", "rouge", "score.rouge", ("triples",))
    monkeypatch.setitem(plan_module.BUILT_IN_SCORERS, entry.name, entry)
    config: dict = {}
    for path in ("params.yaml", "config/smoke.yaml"):
        update_config(config, yaml.safe_load((ROOT / path).read_text()))
    config["score"]["scorers"] = [*config["score"]["scorers"], "rouge_triples"]
    plan = Plan(config_reader(config), all_specs({}))
    assert plan.scorers_run_by("baseline")[-1] == "rouge_triples"
    assert plan.scored_by("rouge_triples", plan.score_benchmarks) == SMOKE
    # it reads triples: every benchmark it scores has them extracted, not only openie_triples' FRANK
    assert plan.triple_benchmarks == SMOKE
    assert "results/score/frank/rouge_triples.parquet" in plan.score_files(["frank"], sampled=False)
