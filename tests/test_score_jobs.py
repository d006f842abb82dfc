"""Scoring shards (factlab.score.jobs): a partition by source document whose merge is the unsharded table."""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

import pandas as pd
import pytest
from tiny_aligner import tiny_aligner

from factlab.cli import main
from factlab.errors import FactlabError
from factlab.models.engine import EngineSettings
from factlab.preprocess.benchmark import sentence_units
from factlab.sampling import sample_examples
from factlab.score.alignscore import AlignScoreSettings, score_benchmark
from factlab.score.jobs import merge_shards, shard_examples, shard_of

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def examples() -> pd.DataFrame:
    """Six real QAGS-XSum summaries; two documents have two outputs each (the second a real summary of another)."""
    frame = pd.read_csv(FIXTURES / "byo_qags_xsum_head.csv")
    first = pd.DataFrame(
        {"example_id": frame["id"], "doc_id": frame["id"], "source": frame["document"], "output": frame["summary"]}
    )
    second = first.head(2).assign(example_id=first["example_id"].head(2) + "-b", output=first["output"].iloc[2:4].to_numpy())
    return pd.concat([first, second], ignore_index=True)


def test_shards_partition_the_examples_and_keep_documents_together(examples: pd.DataFrame) -> None:
    shards = [shard_examples(examples, shard, 3) for shard in range(3)]
    ids = [set(frame["example_id"]) for frame in shards]
    assert sum(map(len, ids)) == len(examples) and set().union(*ids) == set(examples["example_id"])
    for frame in shards:  # every output of a document in the shard of that document
        for doc_id in frame["doc_id"]:
            assert set(examples.loc[examples["doc_id"] == doc_id, "example_id"]) <= set(frame["example_id"])
    # stable: a fixed hash (sha256), not Python's per-process salted hash()
    assert shard_of("doc-1", 7) == int("bb0e4f494437", 16) % 7  # sha256(b"doc-1")
    with pytest.raises(FactlabError, match="shard 3 of 3"):
        shard_examples(examples, 3, 3)


def test_a_sample_is_the_examples_whose_seeded_hash_sorts_first_whatever_their_order_and_shards(
    examples: pd.DataFrame,
) -> None:
    """score.sample on the real QAGS-XSum summaries: the size asked, nested, independent of row order and shards."""
    frame = examples
    ids = list(frame["example_id"])
    by_hash = sorted(ids, key=lambda example_id: hashlib.sha256(f"7:{example_id}".encode()).hexdigest())
    small, large = sample_examples(frame, 2, seed=7), sample_examples(frame, 4, seed=7)
    assert list(small["example_id"]) == sorted(by_hash[:2]) and list(large["example_id"]) == sorted(by_hash[:4])
    assert set(small["example_id"]) <= set(large["example_id"])  # nested: a larger sample keeps a smaller one's
    shuffled = sample_examples(frame.iloc[::-1], 4, seed=7)
    pd.testing.assert_frame_equal(shuffled, large)
    assert set(sample_examples(frame, 4, seed=8)["example_id"]) != set(large["example_id"])  # the seed matters
    assert len(sample_examples(frame, len(ids) + 5, seed=7)) == len(ids) == len(sample_examples(frame, None, seed=7))
    with pytest.raises(FactlabError, match="at least one example"):
        sample_examples(frame, 0, seed=7)


def test_a_job_samples_before_sharding_and_the_merge_keeps_the_sample_and_sums_what_it_left_out(
    examples: pd.DataFrame, tmp_path: Path
) -> None:
    """job_examples: the shards of a sampled job together are the unsharded job's sample (the sample is drawn from
    the benchmark, not from each shard), and their reports merge into the sample and the count of examples left out."""
    from factlab.score.commands import job_examples

    data = tmp_path / "data.parquet"
    examples.to_parquet(data)

    def job(shard: int, shards: int) -> tuple[pd.DataFrame, dict[str, int]]:
        arguments = argparse.Namespace(
            data=str(data), benchmark="fixture", max_examples=None, sample_examples=4, sample_seed=7,
            shard=shard, shards=shards, threads=1,
        )  # fmt: skip
        return job_examples(arguments)

    whole, whole_counts = job(0, 1)
    assert list(whole["example_id"]) == list(sample_examples(examples, 4, seed=7)["example_id"])
    assert whole_counts == {"examples_not_sampled": len(examples) - 4}
    parts = [job(shard, 3) for shard in range(3)]
    union = pd.concat([frame for frame, _ in parts]).sort_values("example_id")
    assert list(union["example_id"]) == list(whole["example_id"])
    assert sum(len(frame) > 0 for frame, _ in parts) > 1  # the sample spans several shards here
    reports = [
        {"benchmark": "b", "shard": shard, "shards": 3, "sample": {"examples": 4, "seed": 7}, "examples": len(frame), **counts}
        for shard, (frame, counts) in enumerate(parts)
    ]
    tables = [frame[["example_id"]].assign(score=0.5) for frame, _ in parts]
    _, report = merge_shards(tables, reports)
    assert report["sample"] == {"examples": 4, "seed": 7} and report["examples"] == 4
    assert report["examples_not_sampled"] == len(examples) - 4


def test_merged_shards_equal_the_unsharded_scores(examples: pd.DataFrame) -> None:
    scorer = tiny_aligner(4)
    sentences, _ = sentence_units(examples, "fixture")
    settings, engine = AlignScoreSettings(words_per_chunk=80), EngineSettings(progress=False)
    whole, whole_counts = score_benchmark(examples, sentences, scorer, settings, engine)
    parts = [score_benchmark(shard_examples(examples, shard, 3), sentences, scorer, settings, engine) for shard in range(3)]
    reports = [{"benchmark": "b", "shard": shard, "shards": 3, **counts} for shard, (_, counts) in enumerate(parts)]
    merged, report = merge_shards([table for table, _ in parts], reports)
    expected = whole.sort_values("example_id").reset_index(drop=True)
    pd.testing.assert_frame_equal(merged.drop(columns="sentences"), expected.drop(columns="sentences"), rtol=1e-6)
    assert report["shards"] == 3 and report["benchmark"] == "b" and "shard" not in report
    assert report["examples"] == len(examples) and report["pairs"] == whole_counts["pairs"]


def test_merge_refuses_an_example_in_two_shards(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = pd.DataFrame({"example_id": ["a", "b"], "score": [0.1, 0.2]})
    paths = []
    for shard in range(2):
        path = tmp_path / f"{shard}.parquet"
        table.to_parquet(path)
        (tmp_path / f"{shard}.json").write_text("{}")
        paths.append(str(path))
    out = tmp_path / "merged.parquet"
    reports = [str(tmp_path / f"{shard}.json") for shard in range(2)]
    command = [
        "score",
        "merge",
        "--scores",
        *paths,
        "--reports",
        *reports,
        "--out",
        str(out),
        "--report",
        str(tmp_path / "r.json"),
    ]
    assert main(command) == 1
    assert capsys.readouterr().err.strip() == "factlab: error: example 'a' is scored by two shards"
    assert not out.exists()
