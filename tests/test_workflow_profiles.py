"""The SLURM profile (workflow/profiles/slurm): its dry run plans sharded scoring jobs with cluster resources."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_slurm_profile_dry_run_plans_one_job_per_shard(tmp_path: Path) -> None:
    shards = tmp_path / "shards.yaml"
    shards.write_text("score:\n  shards: 3\n")
    snakemake = Path(sys.executable).with_name("snakemake")
    command = [str(snakemake), "-n", "--nolock", "--profile", "workflow/profiles/slurm", "--configfile", str(shards)]
    done = subprocess.run(
        [*command, "--", "results/score/true_frank/alignscore.parquet"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    counts = dict(re.findall(r"^(\w+)\s+(\d+)$", done.stdout, flags=re.MULTILINE))
    assert counts["score_alignscore"] == "3" and counts["merge_scores"] == "1"
    shard_jobs = re.findall(r"rule score_alignscore:.*?resources: ([^\n]+)", done.stdout, flags=re.DOTALL)
    assert len(shard_jobs) == 3
    assert all("slurm_partition=" in line and "mem_mb=4000" in line and "runtime=120" in line for line in shard_jobs)


def test_gpu_config_validates_and_reserves_a_gpu_for_training() -> None:
    """config/gpu.yaml merges over params.yaml (schema-checked) and the trainings ask for the GPU resource."""
    snakemake = Path(sys.executable).with_name("snakemake")
    command = [
        str(snakemake),
        "-n",
        "--nolock",
        "--configfile",
        "config/gpu.yaml",
        "--",
        "results/models/aligner/model.safetensors",
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    training = re.search(r"rule train_aligner:.*?resources: ([^\n]+)", done.stdout, flags=re.DOTALL)
    assert training and "gpu=1" in training.group(1)


def forced_dry_run(configfiles: tuple[str, ...], rules: list[str], targets: list[str]) -> str:
    """What `snakemake -n -p` prints for `targets` over `configfiles`, `rules` forced (a built tree plans them too)."""
    snakemake = Path(sys.executable).with_name("snakemake")
    options = ["--configfile", *configfiles] if configfiles else []
    done = subprocess.run(
        [str(snakemake), "-n", "-p", "--nolock", *options, "--forcerun", *rules, "--", *targets],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_two_epoch_recipe_changes_only_the_aligners_epochs() -> None:
    """config/aligner_2epochs.yaml merges over params.yaml (schema-checked); the training commands the dry run prints
    (forced, so a built tree plans them too) differ from the default's in the aligner's epochs alone."""
    targets = ["results/models/aligner/model.safetensors", "results/models/qasem_parser/model.safetensors"]

    def training_commands(*configfiles: str) -> dict[str, str]:
        printed = forced_dry_run(configfiles, ["train_aligner", "train_qasem_parser"], targets)
        command = r"^Shell command: (factlab train (?:aligner|qasem-parser)) (.+)$"
        return dict(re.findall(command, printed, flags=re.MULTILINE))

    default, longer = training_commands(), training_commands("config/aligner_2epochs.yaml")
    assert set(default) == set(longer) == {"factlab train aligner", "factlab train qasem-parser"}
    assert longer["factlab train qasem-parser"] == default["factlab train qasem-parser"]
    assert '"epochs": 1,' in default["factlab train aligner"]
    assert longer["factlab train aligner"] == default["factlab train aligner"].replace('"epochs": 1,', '"epochs": 2,')


def test_the_qa_statement_mixture_adds_only_qanom_qa_to_the_mixture() -> None:
    """config/aligner_qanom_qa.yaml merges into aligner.mixture.sources: the mixture's command (forced) reads one more
    corpus, qanom_qa, capped at 3,000 pairs; every other source keeps its size."""

    def mixture_command(*configfiles: str) -> str:
        printed = forced_dry_run(configfiles, ["build_training_mixture"], ["results/models/aligner_data/mixture.parquet"])
        found = re.search(r"^Shell command: .*factlab train aligner-mixture (.+)$", printed, flags=re.MULTILINE)
        assert found, printed[-2000:]
        return found.group(1)

    def sources(command: str) -> dict[str, int]:
        settings = re.search(r"--settings '([^']+)'", command)
        assert settings
        return json.loads(settings.group(1))["sources"]

    default, with_qas = mixture_command(), mixture_command("config/aligner_qanom_qa.yaml")
    assert "qanom_qa" not in default and "results/data/qanom_qa.parquet" in with_qas
    assert sources(with_qas) == {**sources(default), "qanom_qa": 3000}
    assert with_qas.replace(" results/data/qanom_qa.parquet", "").replace(', "qanom_qa": 3000', "") == default


def test_the_balanced_prior_reads_the_training_mixture_and_the_trained_one_changes_only_that_setting() -> None:
    """The default (class_prior balanced): the gold-QA scoring job (forced) reads the training mixture;
    config/qasem_trained_prior.yaml's command is the default's without it, passing class_prior trained."""
    target = ["results/score/qasem_consistency/qa_decomposition.gold_qas.parquet"]

    def scoring_command(*configfiles: str) -> str:
        printed = forced_dry_run(configfiles, ["score_qa_decomposition"], target)
        return re.findall(r"^Shell command: (factlab score qasem-consistency .+)$", printed, flags=re.MULTILINE)[0]

    balanced, trained = scoring_command(), scoring_command("config/qasem_trained_prior.yaml")
    assert "--training-mixture results/models/aligner_data/mixture.parquet" in balanced
    assert "--training-mixture none" in trained and '"class_prior": "trained"' in trained
    assert balanced.replace("results/models/aligner_data/mixture.parquet", "none").replace("balanced", "trained") == trained


def test_the_paper_readme_job_is_given_the_run_s_config_values() -> None:
    """A --config value reaches write_paper_main's command, which builds the README's DAG with it (test_paper_main)."""
    snakemake = Path(sys.executable).with_name("snakemake")
    override = ["--config", 'download={"manifest": "config/data_manifest.tsv"}']
    commands = []
    for given in ([], override):
        done = subprocess.run(
            [str(snakemake), "-n", "-p", "--nolock", *given, "--forcerun", "write_paper_main", "--", "paper/README.md"],
            cwd=ROOT, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        found = re.search(r"^Shell command: factlab paper main-tex .*$", done.stdout, flags=re.MULTILINE)
        assert found, done.stdout[-2000:]
        commands.append(found.group(0))
    plain, overridden = commands
    assert "--config-overrides '{}'" in plain
    assert """--config-overrides '{"download": {"manifest": "config/data_manifest.tsv"}}'""" in overridden


def dry_run_jobs(directory: Path, *targets: str) -> list[tuple[str, str]]:
    """(rule name, the job's dry-run text) of every job `snakemake -n` plans in a tree linked to this one."""
    for name in ("Snakefile", "workflow", "profiles", "src", "config", "resources", "params.yaml"):
        (directory / name).symlink_to(ROOT / name)
    snakemake = Path(sys.executable).with_name("snakemake")
    done = subprocess.run(
        [str(snakemake), "-n", "--nolock", *targets], cwd=directory, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    jobs = re.split(r"\n(?=(?:local)?rule \w+:\n)", done.stdout + done.stderr)
    return [(match.group(1), job) for job in jobs if (match := re.match(r"(?:local)?rule (\w+):", job))]


def test_the_trainings_and_their_inputs_run_first(tmp_path: Path) -> None:
    """From an empty results/: the trainings and every kind of job they need come first, the tuning next."""
    named = dry_run_jobs(tmp_path)
    first = {name for name, job in named if "priority: 100" in job}
    rest = {name for name, job in named if "priority: 100" not in job}
    assert {"train_qasem_parser", "train_aligner", "build_training_mixture", "check_training_leakage"} <= first
    assert first <= {"download_dataset", "build_benchmark", "train_qasem_parser", "build_training_mixture",
                     "check_training_leakage", "train_aligner"}  # fmt: skip
    assert not any(name.startswith(("preprocess_", "score_", "tabulate_")) for name in first)
    assert "download_dataset" in first and "preprocess_sentences" in rest
    # The chunk-size tuning gates every AlignScore and QASemConsistency job: it runs ahead of the scoring jobs.
    (tuning,) = [re.search(r"priority: (\w+)", job) for name, job in named if name == "tune_alignscore"]
    assert tuning and tuning.group(1) == "50"
    # ... and so does the export of the aligner's graph that it reads (score.alignscore.runtime: openvino)
    (graph,) = [re.search(r"priority: (\w+)", job) for name, job in named if name == "export_aligner_graph"]
    assert graph and graph.group(1) == "50"
    assert not any("priority:" in job for name, job in named if name.startswith("score_"))


def test_every_input_of_a_prioritized_job_is_made_at_its_priority_or_higher(tmp_path: Path) -> None:
    """A rule's priority is not inherited by the jobs making its inputs: in a run from empty, a short sentence split
    that the tuning reads would wait at priority 0 behind baseline scoring once the aligner is trained, and with it
    the tuning and every AlignScore job."""
    named = dry_run_jobs(tmp_path)

    def files(job: str, field: str) -> set[str]:
        line = re.search(rf"^\s*{field}: ([^\n]+)", job, flags=re.MULTILINE)
        return set(line.group(1).split(", ")) if line else set()

    def priority(job: str) -> int:
        found = re.search(r"priority: (\d+)", job)
        return int(found.group(1)) if found else 0

    maker = {path: (name, job) for name, job in named for path in files(job, "output")}
    prioritized = [(name, job) for name, job in named if priority(job) > 0]
    assert {"tune_alignscore", "train_aligner", "train_qasem_parser"} <= {name for name, _ in prioritized}
    (tuning,) = [job for name, job in named if name == "tune_alignscore"]
    assert {"build_benchmark", "preprocess_sentences", "train_aligner"} <= {
        maker[path][0] for path in files(tuning, "input") if path in maker
    }
    late = {
        (maker[path][0], name)
        for name, job in prioritized
        for path in files(job, "input")
        if path in maker and priority(maker[path][1]) < priority(job)
    }
    assert late == set()


def test_one_target_plans_only_what_it_needs(tmp_path: Path) -> None:
    """Scheduling the trainings first must not add them to every DAG (the profile's `prioritize:` once did:
    asking for one benchmark planned both trainings, about 100 CPU-minutes)."""
    named = dry_run_jobs(tmp_path, "results/data/qags_xsum.parquet")
    assert sorted(name for name, _ in named) == ["build_benchmark", "download_dataset"]


def test_a_shard_that_did_not_finish_reruns_alone(tmp_path: Path) -> None:
    """ROUGE on 10 real TRUE BEGIN examples in two shards: with shard 0 built and shard 1 not (as when shard 1's job
    failed or was killed: Snakemake removes a failed job's outputs, and the shards are temporary only once merged),
    the plan for the merged table is shard 1 and the merge, nothing else."""
    config = tmp_path / "shards.yaml"
    config.write_text(
        "download: {allow_network: false}\n"
        "data: {benchmarks: [true_begin]}\n"
        "preprocess: {benchmarks: [true_begin], max_examples: 10}\n"
        "score: {scorers: [rouge], shards: 2}\n"
    )
    for name in ("Snakefile", "workflow", "profiles", "src", "config", "resources", "params.yaml"):
        (tmp_path / name).symlink_to(ROOT / name)
    snakemake = [str(Path(sys.executable).with_name("snakemake")), "--cores", "1", "--configfile", str(config)]
    built = subprocess.run(
        [*snakemake, "--", "results/score/true_begin/shards/rouge/0.parquet"], cwd=tmp_path, capture_output=True, text=True
    )
    assert built.returncode == 0, built.stderr[-2000:]
    assert (tmp_path / "results/score/true_begin/shards/rouge/0.parquet").is_file()
    planned = subprocess.run(
        [*snakemake, "-n", "--", "results/score/true_begin/rouge.parquet"], cwd=tmp_path, capture_output=True, text=True
    )
    assert planned.returncode == 0, planned.stderr[-2000:]
    counts = dict(re.findall(r"^(\w+)\s+(\d+)$", planned.stdout, flags=re.MULTILINE))
    assert counts == {"merge_scores": "1", "score_baseline": "1", "total": "2"}
    (job,) = re.findall(r"rule score_baseline:.*?wildcards: ([^\n]+)", planned.stdout, flags=re.DOTALL)
    assert "shard=1" in job
