"""The pipeline-cost table (factlab.paper.pipeline_cost_command) from real Snakemake `benchmark:` files, and the
rule's inputs: every benchmarked job of the default DAG, and no job that only the table would need."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from factlab.errors import DataError
from factlab.paper.pipeline_cost_command import pipeline_cost, read_benchmark

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "benchmarks"  # `benchmark:` files of a few jobs of one default run
FILES = sorted(str(path) for path in FIXTURES.rglob("*.tsv"))


def test_one_job_is_read_with_its_stage_and_rule():
    job = read_benchmark(FIXTURES / "train" / "train_aligner.tsv")
    # The file's own row: s 3358.34, max_rss 7176.20, cpu_time 4757.06.
    assert (job["stage"], job["rule"]) == ("train", "train_aligner")
    assert (job["wall_s"], job["max_rss_mb"], job["cpu_s"]) == (3358.34, 7176.20, 4757.06)


def test_rules_and_stages_are_summed_by_hand():
    frame = pipeline_cost(FILES).set_index(["stage", "rule"])
    # alignscore: frank.0 2514.67 s (cpu 1108.67, rss 2100.04) + true_begin.0 19.22 s (cpu 15.54, rss 1172.71)
    alignscore = frame.loc[("score", "alignscore")]
    assert alignscore["jobs"] == 2
    assert alignscore["wall s (sum)"] == pytest.approx(2514.67 + 19.22)
    assert alignscore["CPU s (sum)"] == pytest.approx(1108.67 + 15.54)
    assert alignscore["longest job s"] == pytest.approx(2514.67)
    assert alignscore["peak RSS MB"] == pytest.approx(2100.04)
    score = frame.loc[("score", "(stage)")]
    summac = frame.loc[("score", "summac_zs")]
    assert score["jobs"] == 3
    assert score["wall s (sum)"] == pytest.approx(2514.67 + 19.22 + summac["wall s (sum)"])
    total = frame.loc[("(all)", "(all)")]
    assert total["jobs"] == 4
    assert total["peak RSS MB"] == pytest.approx(7176.20)  # train_aligner's


def test_elapsed_time_counts_the_seconds_when_at_least_one_job_ran(tmp_path):
    # Each file's modification time is set to its job's end (Snakemake writes it when the job ends):
    # train 1000 s ending at t=1000 (runs 0-1000); two score jobs of 100 s and 300 s ending at t=1500 and
    # t=1400 (runs 1400-1500 and 1100-1400); then a pause, as between a stopped run and its resumption,
    # and a report job of 50 s ending at t=5000 (runs 4950-5000).
    jobs = {
        "train/train_aligner.tsv": (1000.0, 1000),
        "score/alignscore/a.0.tsv": (100.0, 1500),
        "score/alignscore/b.0.tsv": (300.0, 1400),
        "score/report_localise/a.tsv": (50.0, 5000),
    }
    paths = []
    for name, (wall, end) in jobs.items():
        path = tmp_path / "benchmarks" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"s\th:m:s\tmax_rss\tcpu_time\n{wall}\t-\t1.0\t{wall}\n")
        os.utime(path, (end, end))
        paths.append(str(path))
    frame = pipeline_cost(paths).set_index(["stage", "rule"])["elapsed s"]
    assert frame[("train", "train_aligner")] == pytest.approx(1000.0)
    assert frame[("score", "alignscore")] == pytest.approx(400.0)  # 1100-1500: the two jobs touch at t=1400
    assert frame[("score", "(stage)")] == pytest.approx(400.0 + 50.0)  # the pause 1500-4950 is not counted
    # 0-1000, 1100-1500, 4950-5000: neither the idle 1000-1100 nor the pause, and not the summed 1450 s.
    assert frame[("(all)", "(all)")] == pytest.approx(1000.0 + 400.0 + 50.0)


def test_overlapping_jobs_count_once():
    # Nested and overlapping intervals, worked by hand: 0-10, 2-5 (inside), 8-12, 20-21 -> 12 + 1 = 13 s.
    from factlab.paper.pipeline_cost_command import busy_seconds

    assert busy_seconds([0, 2, 8, 20], [10, 5, 12, 21]) == pytest.approx(13.0)
    assert busy_seconds([5], [5]) == 0.0


def test_a_file_outside_benchmarks_or_without_its_columns_is_a_one_line_error(tmp_path):
    with pytest.raises(DataError, match="benchmarks/<stage>/<rule>"):
        read_benchmark(tmp_path / "x.tsv")
    bad = tmp_path / "benchmarks" / "score" / "rule.tsv"
    bad.parent.mkdir(parents=True)
    bad.write_text("s\th:m:s\n1.0\t0:00:01\n")
    with pytest.raises(DataError, match="field 'max_rss'"):
        read_benchmark(bad)
    with pytest.raises(DataError, match="no benchmark file"):
        pipeline_cost([])


@pytest.fixture(scope="module")
def dag():
    from factlab.workflow.dvcyaml import load_workflow

    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        return load_workflow(ROOT / "Snakefile").dag
    finally:
        os.chdir(cwd)


def test_the_table_reads_every_benchmarked_job_and_adds_none(dag):
    (cost,) = [job for job in dag.jobs if job.rule.name == "tabulate_pipeline_cost"]
    benchmarked = {str(job.benchmark): job for job in dag.jobs if job.benchmark}
    read = {str(path) for path in cost.input if str(path).startswith("benchmarks/")}
    assert read == set(benchmarked), "COST_BENCHMARKS (workflow/rules/paper.smk) differs from the DAG's benchmark: files"
    # Every job whose benchmark the table reads is also needed by another job: the table adds no work.
    for path in read:
        consumers = {job.rule.name for job in dag.depending[benchmarked[path]]}
        assert consumers - {"tabulate_pipeline_cost", "tabulate_scoring_throughput"}, f"{path}: only the cost tables need it"


def test_the_throughput_table_reads_every_scoring_job_and_adds_none(dag):
    """tabulate_scoring_throughput reads the benchmark file, merged report and score table of every (scorer,
    benchmark) the DAG scores, and each of those jobs is needed by something besides the two run-cost tables."""
    (table,) = [job for job in dag.jobs if job.rule.name == "tabulate_scoring_throughput"]
    scoring = [job for job in dag.jobs if job.benchmark and str(job.benchmark).startswith("benchmarks/score/")]
    sharded = {str(job.benchmark) for job in scoring if "shard" in job.wildcards.keys()}
    read = {str(path) for path in table.input if str(path).startswith("benchmarks/")}
    assert read == sharded and read
    merges = {job for job in dag.jobs if job.rule.name == "merge_scores"}
    merged = {str(path) for job in merges for path in job.output}
    inputs = {str(path) for path in table.input if str(path).startswith("results/score/")}
    assert inputs == merged  # every merged table and report, nothing else of the score stage
    for job in merges:
        consumers = {other.rule.name for other in dag.depending[job]}
        assert consumers - {"tabulate_scoring_throughput"}, f"{job}: only the throughput table needs it"
    for job in scoring:
        if str(job.benchmark) in read:
            consumers = {other.rule.name for other in dag.depending[job]}
            assert consumers - {"tabulate_pipeline_cost", "tabulate_scoring_throughput"}, f"{job}: only the cost tables"
