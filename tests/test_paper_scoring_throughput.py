"""Every scorer's throughput (factlab.paper.scoring_throughput_command) from real Snakemake `benchmark:` files of a default run
and real FRANK summaries, each number worked here by hand; the rule's inputs are every scoring job of the DAG."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from factlab.cli import main
from factlab.data.adapters.frank import adapt_frank

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "benchmarks" / "score"  # from a default run: alignscore frank.0 took 2514.67 s


def words(text: str) -> int:
    return len(re.findall(r"\S+", text))


@pytest.fixture(scope="module")
def frank(raw) -> pd.DataFrame:
    return adapt_frank(raw).frame


def write_job(tmp_path: Path, scorer: str, frame: pd.DataFrame, report: dict) -> tuple[Path, Path]:
    scores = tmp_path / "results" / "score" / "frank" / f"{scorer}.parquet"
    scores.parent.mkdir(parents=True, exist_ok=True)
    frame[["example_id"]].assign(score=0.5).to_parquet(scores)
    report_path = scores.parent / "reports" / f"{scorer}.json"
    report_path.parent.mkdir(exist_ok=True)
    report_path.write_text(json.dumps({"scorer": scorer, "benchmark": "frank", "examples": len(frame), **report}))
    return report_path, scores


def run(tmp_path: Path, benchmarks: list[Path], jobs: list[tuple[Path, Path]], data: Path) -> list[str]:
    out = tmp_path / "out"
    return ["paper", "scoring-throughput-table", "--benchmarks", *map(str, benchmarks),
            "--reports", *(str(report) for report, _ in jobs), "--scores", *(str(scores) for _, scores in jobs),
            "--data", str(data), "--out-csv", f"{out}/jobs.csv", "--out-md", f"{out}/t.md",
            "--out-tex", f"{out}/t.tex"]  # fmt: skip


@pytest.fixture()
def tree(tmp_path, frank) -> dict:
    """AlignScore on every FRANK summary (the default run's benchmark file) and ROUGE on the first 100 in two shards."""
    data = tmp_path / "results" / "data" / "frank.parquet"
    data.parent.mkdir(parents=True)
    frank.to_parquet(data)
    benchmarks = tmp_path / "benchmarks" / "score"
    (benchmarks / "alignscore").mkdir(parents=True)
    shutil.copy(FIXTURES / "alignscore" / "frank.0.tsv", benchmarks / "alignscore" / "frank.0.tsv")
    (benchmarks / "rouge").mkdir()
    for shard, (wall, cpu, rss) in enumerate([(3.5, 3.0, 280.0), (4.5, 4.0, 300.0)]):
        (benchmarks / "rouge" / f"frank.{shard}.tsv").write_text(f"s\th:m:s\tmax_rss\tcpu_time\n{wall}\t-\t{rss}\t{cpu}\n")
    jobs = [
        # as the merge writes it: the counts and seconds summed over shards, the rate recomputed from them (24,900 / 600 s)
        write_job(
            tmp_path,
            "alignscore",
            frank,
            {"pairs": 30000, "distinct_pairs_scored": 24900, "score_seconds": 600.0, "pairs_per_s": 41.5},
        ),
        write_job(tmp_path, "rouge", frank.head(100), {}),
    ]
    files = [benchmarks / "alignscore" / "frank.0.tsv", *sorted((benchmarks / "rouge").glob("*.tsv"))]
    return {"data": data, "benchmarks": files, "jobs": jobs}


def test_rows_and_rates_are_worked_by_hand(tmp_path, frank, tree) -> None:
    assert main(run(tmp_path, tree["benchmarks"], tree["jobs"], tree["data"])) == 0
    rows = pd.read_csv(tmp_path / "out" / "jobs.csv").set_index("scorer")
    all_words = sum(words(source) + words(output) for source, output in zip(frank["source"], frank["output"], strict=True))
    head = frank.head(100)
    head_words = sum(words(source) + words(output) for source, output in zip(head["source"], head["output"], strict=True))
    alignscore, rouge = rows.loc["alignscore"], rows.loc["rouge"]
    assert (alignscore["jobs"], alignscore["examples"], alignscore["words"]) == (1, 2246, all_words)
    assert alignscore["wall s"] == 2514.67 and alignscore["CPU s"] == 1108.67 and alignscore["peak RSS MB"] == 2100.04
    assert alignscore["words/s"] == pytest.approx(all_words / 2514.67, rel=1e-5)
    assert alignscore["pairs/s"] == pytest.approx(30000 / 2514.67, rel=1e-5)
    assert alignscore["engine pairs/s"] == pytest.approx(41.5)
    # two shards: their wall and CPU seconds summed, the larger peak memory
    assert (rouge["jobs"], rouge["examples"], rouge["words"]) == (2, 100, head_words)
    assert (rouge["wall s"], rouge["CPU s"], rouge["peak RSS MB"]) == (8.0, 7.0, 300.0)
    assert rouge["examples/s"] == pytest.approx(100 / 8.0) and pd.isna(rouge["pairs/s"]) and pd.isna(rouge["engine pairs/s"])
    table = (tmp_path / "out" / "t.md").read_text()
    assert table.splitlines()[0].startswith("| scorer | benchmarks | jobs | examples | words | model pairs |")
    assert "| 30000 |" in table  # a count, not 30000.000
    assert "tab:scoring-throughput" in (tmp_path / "out" / "t.tex").read_text()


def test_counts_that_disagree_are_one_line_errors_and_write_nothing(tmp_path, frank, tree, capsys) -> None:
    report, scores = tree["jobs"][1]
    report.write_text(json.dumps({"scorer": "rouge", "benchmark": "frank", "examples": 99}))
    assert main(run(tmp_path, tree["benchmarks"], tree["jobs"], tree["data"])) != 0
    error = capsys.readouterr().err
    assert str(report) in error and "the report counts 99 examples, the scores 100" in error
    assert not (tmp_path / "out").exists()
    # a job whose benchmark file is given without its report
    assert main(run(tmp_path, tree["benchmarks"], tree["jobs"][:1], tree["data"])) != 0
    assert "benchmark files of jobs without a report (--reports): [('rouge', 'frank')]" in capsys.readouterr().err
    # a scored example the benchmark's data does not hold
    frank.head(10).to_parquet(tree["data"])
    assert main(run(tmp_path, tree["benchmarks"][:1], tree["jobs"][:1], tree["data"])) != 0
    assert "2236 scored example(s) are not in the benchmark's data" in capsys.readouterr().err
