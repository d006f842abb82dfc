"""score.scorer_benchmarks, read from the real workflow's dry runs: a scorer restricted to some benchmarks gets
score jobs for those only, and every consumer (SummaC-Conv's reuse of ZS pairs, the detection and FRANK tables,
localisation, the report pages, the pipeline-cost table) asks only for score files that exist, QA parsing runs
only where QASemConsistency reads the parser's QAs, and OpenIE extraction only where OpenIE triples scores."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
RESTRICTED = {
    "qasem_consistency": ["frank", "qasem_consistency"],
    "summac_zs": ["frank", "xsumfaith"],
    "openie_triples": ["frank", "summeval"],
}


def dry_run(tmp_path: Path, *configs: dict, check: bool = True) -> subprocess.CompletedProcess:
    files = []
    for index, overrides in enumerate(configs):
        path = tmp_path / f"override{index}.yaml"
        path.write_text(yaml.safe_dump(overrides))
        files.append(str(path))
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "-p", "--forceall", "--nolock", "--configfile", *files],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if check:
        assert done.returncode == 0, done.stderr[-2000:]
    return done


def jobs(output: str) -> list[tuple[str, str, str]]:
    """(rule, input line, shell command) of every job in a dry run's printout."""
    found = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", output):
        rule = re.match(r"(?:local)?rule (\w+):", block)
        if rule:
            inputs = re.search(r"^    input: (.*)$", block, flags=re.MULTILINE)
            shell = re.search(r"^Shell command: (.*)$", block, flags=re.MULTILINE)
            found.append((rule.group(1), inputs.group(1) if inputs else "", shell.group(1) if shell else ""))
    return found


def scored(found: list[tuple[str, str, str]], rule: str) -> set[str]:
    return {re.search(r"--benchmark (\w+)", shell).group(1) for name, _, shell in found if name == rule}


@pytest.mark.slow
def test_a_restricted_scorer_scores_and_is_read_only_where_named(tmp_path: Path) -> None:
    full = yaml.safe_load((ROOT / "config" / "full.yaml").read_text())  # no scorer restricted
    everything = jobs(dry_run(tmp_path, full).stdout)
    found = jobs(dry_run(tmp_path, full, {"score": {"scorer_benchmarks": RESTRICTED}}).stdout)
    all_benchmarks = scored(everything, "score_alignscore")
    assert len(all_benchmarks) > 10 and scored(found, "score_alignscore") == all_benchmarks
    assert scored(found, "score_qasem_consistency") == set(RESTRICTED["qasem_consistency"])
    assert scored(found, "score_summac_zs") == set(RESTRICTED["summac_zs"])
    # QA parsing follows QASemConsistency: only the benchmarks whose parser QAs it reads are parsed.
    assert scored(everything, "preprocess_qas") == all_benchmarks
    assert scored(found, "preprocess_qas") == set(RESTRICTED["qasem_consistency"])
    # Triples follow OpenIE triples, their one reader; every preprocessed benchmark still gets its report.
    assert scored(everything, "preprocess_triples") == all_benchmarks
    assert scored(found, "preprocess_triples") == set(RESTRICTED["openie_triples"])
    reports = {re.search(r"--sentences-report results/preprocess/(\w+)/", shell).group(1): shell
               for rule, _, shell in found if rule == "preprocess_report"}  # fmt: skip
    assert set(reports) == all_benchmarks
    for benchmark, shell in reports.items():
        assert ("--triples-report" in shell) == (benchmark in RESTRICTED["openie_triples"]), shell
    # SummaC-Conv still scores everything: with ZS's pairs where ZS scores the benchmark, its own elsewhere.
    conv = {re.search(r"--benchmark (\w+)", shell).group(1): shell for rule, _, shell in found if rule == "score_summac_conv"}
    assert set(conv) == all_benchmarks
    for benchmark, shell in conv.items():
        reused = f"--pairs-in results/score/{benchmark}/shards/summac_zs/0.pairs.parquet" in shell
        assert reused == (benchmark in RESTRICTED["summac_zs"]), shell
    # Consumers ask only for what is scored.
    unscored = {
        f"results/score/{benchmark}/{scorer}.parquet"
        for scorer, names in RESTRICTED.items()
        for benchmark in all_benchmarks - set(names)
    }
    for rule, inputs, _ in found:
        assert not unscored & set(inputs.split(", ")), rule
    detection = next(inputs for rule, inputs, _ in found if rule == "evaluate_detection").split(", ")
    assert "results/score/frank/qasem_consistency.parquet" in detection
    assert "results/score/summeval/alignscore.parquet" in detection
    pages = {shell for rule, _, shell in found if rule == "report_localise"}
    assert not any("--scorer qasem_consistency" in page and "--benchmark summeval" in page for page in pages)
    assert any("--scorer alignscore" in page and "--benchmark summeval" in page for page in pages)


@pytest.mark.slow
def test_an_unknown_benchmark_in_the_restriction_is_a_config_error(tmp_path: Path) -> None:
    done = dry_run(tmp_path, {"score": {"scorer_benchmarks": {"scale": ["frank", "no_such_benchmark"]}}}, check=False)
    assert done.returncode != 0
    assert "score.scorer_benchmarks names unknown benchmarks: ['no_such_benchmark']" in done.stdout + done.stderr


@pytest.mark.slow
def test_full_config_scores_every_benchmark_with_every_scorer(tmp_path: Path) -> None:
    """config/full.yaml over params.yaml lifts every restriction of the default: each scorer scores every benchmark."""
    full = yaml.safe_load((ROOT / "config" / "full.yaml").read_text())
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    assert set(full["score"]["scorer_benchmarks"]) == set(params["score"]["scorers"])
    found = jobs(dry_run(tmp_path, full).stdout)
    every = scored(found, "preprocess_sentences")  # score.benchmarks is empty: every preprocessed benchmark
    assert len(every) > 10
    for rule in ("score_alignscore", "score_summac_zs", "score_summac_conv", "score_scale", "score_qasem_consistency"):
        assert scored(found, rule) == every, rule
    baselines = [shell for rule, _, shell in found if rule == "score_baseline"]
    assert len(baselines) == 4 * len(every)
    assert scored(found, "score_ensemble") == every - set(params["score"]["ensemble"]["validation_benchmarks"])
    # QASemConsistency's reading of the gold QAs is the protocol table; its table of qasem_consistency_qas (each QA
    # read as an output and parsed for QAs of its own) is not a second qasem_consistency row of the QA detection.
    qa_detection = next(inputs for rule, inputs, _ in found if rule == "evaluate_qa_detection").split(", ")
    assert "results/score/qasem_consistency/qa_decomposition.gold_qas.parquet" in qa_detection
    assert "results/score/qasem_consistency_qas/alignscore.parquet" in qa_detection
    assert "results/score/qasem_consistency_qas/qasem_consistency.parquet" not in qa_detection


@pytest.mark.slow
def test_qa_detection_reads_no_benchmark_outside_the_selection(tmp_path: Path) -> None:
    """The smoke selection leaves qasem_consistency_qas out: the QA detection then scores nothing of it (it reads the
    scorer's gold-QA table only), so no job preprocesses or scores a benchmark outside score.benchmarks."""
    smoke = yaml.safe_load((ROOT / "config" / "smoke.yaml").read_text())
    assert "qasem_consistency_qas" not in smoke["preprocess"]["benchmarks"]
    found = jobs(dry_run(tmp_path, smoke).stdout)
    assert not [rule for rule, inputs, shell in found if "results/score/qasem_consistency_qas/" in inputs + shell]
    assert "qasem_consistency_qas" not in scored(found, "preprocess_sentences")
    qa_detection = next(inputs for rule, inputs, _ in found if rule == "evaluate_qa_detection").split(", ")
    assert "results/score/qasem_consistency/qa_decomposition.gold_qas.parquet" in qa_detection


@pytest.fixture(scope="module")
def default_jobs(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, str, str]]:
    """The jobs of the default configuration's dry run."""
    return jobs(dry_run(tmp_path_factory.mktemp("default"), {}).stdout)


@pytest.mark.slow
def test_the_ensemble_scores_what_its_members_score_but_never_its_fit_data(tmp_path: Path, default_jobs) -> None:
    params = yaml.safe_load((ROOT / "params.yaml").read_text())["score"]
    found = default_jobs
    fit_data = set(params["ensemble"]["validation_benchmarks"])
    every = scored(found, "preprocess_sentences")
    restricted, sampled = params["scorer_benchmarks"], params["sampled_benchmarks"]
    members_everywhere = set.intersection(
        *(set(restricted.get(member) or every) | set(sampled.get(member, [])) for member in params["ensemble"]["members"])
    )
    assert scored(found, "score_ensemble") == members_everywhere - fit_data and len(members_everywhere - fit_data) > 10
    # on the members' sample where one of them scores a sample (the others whole), else on every example
    member_sampled = {name for member in params["ensemble"]["members"] for name in sampled.get(member, [])}
    assert member_sampled & members_everywhere
    sample = f"--sample-examples {params['sample']['examples']} --sample-seed {params['sample']['seed']}"
    for benchmark in scored(found, "score_ensemble"):
        shell = shell_of(found, "score_ensemble", benchmark)
        assert (sample in shell) == (benchmark in member_sampled) != ("--sample-examples all" in shell), benchmark
    fitted = next(inputs for rule, inputs, _ in found if rule == "fit_ensemble").split(", ")
    for benchmark in fit_data:
        assert f"results/data/{benchmark}.parquet" in fitted
        assert all(f"results/score/{benchmark}/{member}.parquet" in fitted for member in params["ensemble"]["members"])
    assert not [inputs for rule, inputs, _ in found if rule == "score_ensemble" and any(f"/{b}/" in inputs for b in fit_data)]
    # without its fit data in the selection the ensemble scores nothing, and the rest of the DAG runs (AlignScore
    # tunes on the one validation cut selected, SummaC's Polytope, which the ensemble does not read)
    selection = ["frank", "true_begin", "summac_polytope"]
    unfitted = jobs(dry_run(tmp_path, {"preprocess": {"benchmarks": selection}}).stdout)
    assert scored(unfitted, "score_alignscore") == {"frank", "true_begin"}
    assert not [rule for rule, _, _ in unfitted if rule in ("fit_ensemble", "score_ensemble")]
    # a member that does not score the fit data is refused before anything runs
    done = dry_run(tmp_path, {"score": {"scorer_benchmarks": {"rouge": ["frank"]}}}, check=False)
    assert done.returncode != 0
    assert "ensemble member rouge does not score its fit benchmark summac_factcc" in done.stdout + done.stderr


@pytest.mark.slow
def test_detection_breaks_down_the_benchmarks_with_group_columns(default_jobs) -> None:
    """WiCE's 3-way label reaches the detection table's command (partially supported claims as their own rows); the
    TRUE table has no benchmark with group columns."""
    shells = {rule: shell for rule, _, shell in default_jobs if rule in ("evaluate_detection", "evaluate_true_detection")}
    assert re.search(r"--groups wice_claims=wice_label --resamples", shells["evaluate_detection"])
    assert re.search(r"--groups +--resamples", shells["evaluate_true_detection"])


def shell_of(found: list[tuple[str, str, str]], rule: str, benchmark: str) -> str:
    return next(shell for name, _, shell in found if name == rule and f"--benchmark {benchmark} " in shell)


@pytest.mark.slow
def test_the_default_gives_every_scorer_every_evaluation_benchmark_whole_or_on_its_seeded_sample(tmp_path: Path) -> None:
    """params.yaml: each model scorer and baseline meets every benchmark ROUGE scores (all of them), whole where
    score.scorer_benchmarks names it and on score.sample elsewhere (but the Polytope cut, a validation set only);
    QASemConsistency on its own sample size; OpenIE's triples and the parser's QAs are drawn for the sample only;
    FRANK's and SummEval's correlations take the sampled tables apart; the ensemble scores its members' sample."""
    params = yaml.safe_load((ROOT / "params.yaml").read_text())["score"]
    found = jobs(dry_run(tmp_path, {}).stdout)
    every = {re.search(r"--benchmark (\w+)", shell).group(1) for rule, _, shell in found
             if rule == "score_baseline" and "factlab score rouge " in shell}  # fmt: skip
    assert len(every) > 15
    sample = f"--sample-examples {params['sample']['examples']} --sample-seed {params['sample']['seed']}"
    for rule, scorer in (("score_alignscore", "alignscore"), ("score_summac_zs", "summac_zs"),
                         ("score_summac_conv", "summac_conv"), ("score_scale", "scale")):  # fmt: skip
        assert scored(found, rule) == every - {"summac_polytope"}, rule
        for benchmark in scored(found, rule):
            on_sample = benchmark in params["sampled_benchmarks"][scorer]
            assert (sample in shell_of(found, rule, benchmark)) == on_sample, (rule, benchmark)
            assert ("--sample-examples all" in shell_of(found, rule, benchmark)) != on_sample
    for scorer in ("bertscore_precision", "embedding_cosine", "openie_triples"):
        shells = {re.search(r"--benchmark (\w+)", shell).group(1): shell for rule, _, shell in found
                  if rule == "score_baseline" and f"factlab score {scorer.replace('_', '-')} " in shell}  # fmt: skip
        assert set(shells) == every - {"summac_polytope"}, scorer
        assert {name for name, shell in shells.items() if sample in shell} == {"true_dialfact", "true_paws", "wice_claims"}
    # QASemConsistency: its own benchmark whole (its QA decomposition compares every example), every other one on a
    # sample of its own size, the parser's QAs drawn for that sample alone
    qasem_sample = (
        f"--sample-examples {params['sample']['scorer_examples']['qasem_consistency']} --sample-seed {params['sample']['seed']}"
    )
    assert params["sample"]["scorer_examples"]["qasem_consistency"] != params["sample"]["examples"]
    for rule in ("score_qasem_consistency", "preprocess_qas"):
        assert scored(found, rule) == every - {"summac_polytope"}, rule
        for benchmark in scored(found, rule):
            assert (qasem_sample in shell_of(found, rule, benchmark)) == (benchmark != "qasem_consistency"), benchmark
    assert "--sample-examples all" in shell_of(found, "score_qasem_consistency", "qasem_consistency")
    # OpenIE's triples extracted for its sample alone where it scores one
    triples = {re.search(r"--benchmark (\w+)", shell).group(1): shell for rule, _, shell in found if rule == "preprocess_triples"}
    assert set(triples) == every - {"summac_polytope"}
    assert {name for name, shell in triples.items() if sample in shell} == {"true_dialfact", "true_paws", "wice_claims"}
    frank = next(shell for rule, _, shell in found if rule == "correlate_frank_scorers")
    full_scores, sampled_scores = re.search(r"--scores (.*?) --sampled-scores (.*?) --compare", frank).groups()
    assert "results/score/frank/alignscore.parquet" in full_scores.split()
    assert {"results/score/frank/summac_zs.parquet", "results/score/frank/scale.parquet"} <= set(sampled_scores.split())
    assert "summac_zs" not in full_scores
    summeval = next(shell for rule, _, shell in found if rule == "correlate_summeval_scorers")
    assert "results/score/summeval/summac_conv.parquet" in re.search(r"--sampled-scores (.*?) --tuning", summeval).group(1)
    # the stack scores the sample where BERTScore or the cosine scores one: its table is read as a sampled one
    assert scored(found, "score_ensemble") >= {"true_dialfact", "true_paws", "wice_claims"}
    detection = next(shell for rule, _, shell in found if rule == "evaluate_detection")
    assert "results/score/wice_claims/ensemble.parquet" in re.search(r"--sampled-scores (.*?) --", detection).group(1)


@pytest.mark.slow
def test_a_sampled_benchmark_with_gold_qas_is_a_config_error(tmp_path: Path) -> None:
    """QASemConsistency's decomposition of a benchmark with gold QAs compares every example (and reads the scorer's own
    table): the scorer never samples one."""
    overrides = {"score": {"scorer_benchmarks": {"qasem_consistency": ["frank"]},
                           "sampled_benchmarks": {"qasem_consistency": ["qasem_consistency", "xsumfaith"]}}}  # fmt: skip
    done = dry_run(tmp_path, overrides, check=False)
    assert done.returncode != 0
    message = "score.sampled_benchmarks.qasem_consistency names benchmarks with gold QAs"
    assert message in done.stdout + done.stderr and "['qasem_consistency']" in done.stdout + done.stderr


@pytest.mark.slow
def test_a_benchmark_both_whole_and_sampled_is_a_config_error(tmp_path: Path) -> None:
    done = dry_run(tmp_path, {"score": {"sampled_benchmarks": {"alignscore": ["frank", "wice_claims"]}}}, check=False)
    assert done.returncode != 0
    message = "score.sampled_benchmarks.alignscore names benchmarks it scores whole"
    assert message in done.stdout + done.stderr and "['frank']" in done.stdout + done.stderr
