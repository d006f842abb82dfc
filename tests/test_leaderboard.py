"""The leaderboard: Holm's adjustment against statsmodels, the reference chosen on a frame worked by hand, AUCs against
scikit-learn on real pipeline scores, and the command and its paper table on real benchmark files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from simple_scores import word_share
from sklearn.metrics import roc_auc_score
from statsmodels.stats.multitest import multipletests

from factlab.cli import main
from factlab.metaeval.errors import StatisticsError
from factlab.metaeval.leaderboard import BUILTIN, PUBLISHED, USER, holm_adjust, leaderboard, reference_scorer, scorer_summary
from factlab.paper.scorer_tables_command import leaderboard_frame

FIXTURES = Path(__file__).parent / "fixtures" / "report"  # 22 real TRUE FRANK examples, AlignScore's pipeline scores


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_holm_matches_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = np.concatenate([rng.uniform(0, 0.2, 12), [0.0, 1.0, 0.01, 0.01]])  # ties, and both ends
    rng.shuffle(p)
    assert holm_adjust(p) == pytest.approx(multipletests(p, method="holm")[1], abs=1e-15)


def test_holm_leaves_untested_rows_out_of_the_count() -> None:
    p = np.array([0.04, np.nan, 0.01, 0.03, np.nan])
    adjusted = holm_adjust(p)
    assert np.isnan(adjusted[[1, 4]]).all()
    assert adjusted[[0, 2, 3]] == pytest.approx(multipletests([0.04, 0.01, 0.03], method="holm")[1])
    # by hand: 3 x 0.01 = 0.03; 2 x 0.03 = 0.06; 1 x 0.04 = 0.04, raised to 0.06 to stay monotone
    assert adjusted[[2, 3, 0]] == pytest.approx([0.03, 0.06, 0.06])
    assert holm_adjust([]).shape == (0,)
    with pytest.raises(StatisticsError):
        holm_adjust([0.5, 1.5])


def labelled(scores: list[float]) -> pd.DataFrame:
    """Four examples of two documents, each with a consistent (1) and an inconsistent (0) output."""
    return pd.DataFrame(
        {"example_id": ["e1", "e2", "e3", "e4"], "doc_id": ["a", "a", "b", "b"], "label": [1, 0, 1, 0], "score": scores}
    )


def test_the_reference_is_the_best_built_in_scorer_of_the_whole_benchmark() -> None:
    # AUCs by hand over the 4 (consistent, inconsistent) pairs: x 0.9>0.8, 0.9>0.1, 0.2<0.8, 0.2>0.1 -> 3/4;
    # y 0.1<0.9, 0.1<0.2, 0.8<0.9, 0.8>0.2 -> 1/4; the user's u and the sampled s order every pair -> 1.
    frames = {
        "x": {"b": labelled([0.9, 0.8, 0.2, 0.1])},
        "y": {"b": labelled([0.1, 0.9, 0.8, 0.2])},
        "u": {"b": labelled([0.9, 0.1, 0.8, 0.2])},
        "s": {"b": labelled([0.7, 0.3, 0.6, 0.4])},
    }
    table = leaderboard(frames, builtin={"x", "y", "s"}, sampled={("s", "b")}, resamples=200, confidence=0.95, seed=3).set_index(
        "scorer"
    )
    assert table["roc_auc"].to_dict() == pytest.approx({"s": 1.0, "u": 1.0, "x": 0.75, "y": 0.25})
    assert set(table["reference"]) == {"x"}
    assert table["kind"].to_dict() == {"s": BUILTIN, "u": USER, "x": BUILTIN, "y": BUILTIN}
    assert table.loc[["s", "u", "y"], "difference"].to_list() == pytest.approx([0.25, 0.25, -0.5])
    assert table.loc["x", ["difference", "p_value", "p_holm", "paired_test"]].isna().all()
    assert pd.isna(table.loc["x", "significant"])
    assert table.loc[["s", "u", "y"], "p_holm"].to_list() == pytest.approx(
        multipletests(table.loc[["s", "u", "y"], "p_value"], method="holm")[1]
    )
    assert table.loc["u", "paired_test"].startswith("paired document bootstrap")


def test_a_published_scorer_is_marked_and_never_the_reference() -> None:
    # p (published, AUC 1) beats x (built-in, 3/4) but the reference is the best built-in
    frames = {"x": {"b": labelled([0.9, 0.8, 0.2, 0.1])}, "p": {"b": labelled([0.9, 0.1, 0.8, 0.2])}}
    table = leaderboard(frames, builtin={"x"}, published={"p"}, sampled=set(), resamples=50, confidence=0.95, seed=3)
    assert table.set_index("scorer")["kind"].to_dict() == {"p": PUBLISHED, "x": BUILTIN}
    assert set(table["reference"]) == {"x"}


def test_ties_go_to_the_first_name_and_a_sampled_scorer_is_never_the_reference() -> None:
    assert reference_scorer({"b": 0.75, "a": 0.75, "c": np.nan}, builtin={"a", "b", "c"}, sampled=()) == "a"
    assert reference_scorer({"a": 0.75, "s": 0.9, "u": 1.0}, builtin={"a", "s"}, sampled={"s"}) == "a"
    # the only built-in scorer of the whole benchmark sees one label (its AUC is undefined): the sampled one, whose
    # AUC is, is still not taken, and nothing is compared
    frames = {
        "whole": {"b": labelled([0.9, np.nan, 0.2, np.nan])},
        "s": {"b": labelled([0.7, 0.3, 0.6, 0.4])},
    }
    table = leaderboard(frames, builtin={"whole", "s"}, sampled={("s", "b")}, resamples=50, confidence=0.95, seed=3)
    assert table["reference"].isna().all() and table["p_value"].isna().all()
    assert table.set_index("scorer").loc["whole", "n"] == 2


def write_benchmark(root: Path, name: str, data: pd.DataFrame, scores: dict[str, pd.DataFrame]) -> list[str]:
    """results/data/<name>.parquet and results/score/<name>/<scorer>.parquet under `root`; the score files' paths."""
    (root / "data").mkdir(exist_ok=True)
    (root / "score" / name).mkdir(parents=True)
    data.to_parquet(root / "data" / f"{name}.parquet")
    for scorer, table in scores.items():
        table.to_parquet(root / "score" / name / f"{scorer}.parquet")
    return [str(root / "score" / name / f"{scorer}.parquet") for scorer in scores]


def test_command_on_real_scores_matches_sklearn_and_statsmodels(tmp_path: Path) -> None:
    data = pd.read_parquet(FIXTURES / "true_frank_data.parquet")
    alignscore = pd.read_parquet(FIXTURES / "true_frank_alignscore.parquet")[["example_id", "score"]]
    words = data.assign(score=[word_share(s, o) for s, o in zip(data["source"], data["output"], strict=True)])
    documents = list(dict.fromkeys(data["doc_id"]))
    first = data[data["doc_id"].isin(documents[:3])]  # 12 examples, 3 documents, both labels
    second = data[~data["doc_id"].isin(documents[:3])]  # 10 examples, 2 documents, both labels in each
    sample = first.iloc[::2].assign(score=lambda rows: rows["label"].astype(float))  # a sample, scored perfectly

    def cut(table: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
        return table[table["example_id"].isin(rows["example_id"])][["example_id", "score"]]

    scores = write_benchmark(tmp_path, "frank_a", first, {"alignscore": cut(alignscore, first), "word_share": cut(words, first)})
    scores += write_benchmark(
        tmp_path, "frank_b", second, {"alignscore": cut(alignscore, second), "word_share": cut(words, second)}
    )
    sampled = [str(tmp_path / "score" / "frank_a" / "summac_zs.parquet")]
    sample[["example_id", "score"]].to_parquet(sampled[0])
    scores += write_benchmark(tmp_path, "tuning_cut", first, {"alignscore": cut(alignscore, first)})
    out, metrics = tmp_path / "leaderboard.csv", tmp_path / "metrics.json"
    command = ["metaeval", "leaderboard", "--scores", *scores, "--sampled-scores", *sampled]
    command += ["--data", *(str(path) for path in sorted((tmp_path / "data").glob("*.parquet")))]
    command += ["--builtin", "alignscore", "summac_zs", "--validation", "tuning_cut"]
    command += ["--resamples", "300", "--confidence", "0.95", "--seed", "2022", "--out", str(out), "--out-metrics", str(metrics)]
    assert main(command) == 0

    table = pd.read_csv(out).set_index(["benchmark", "scorer"])
    assert sorted(table.index) == [
        ("frank_a", "alignscore"),
        ("frank_a", "summac_zs"),
        ("frank_a", "word_share"),
        ("frank_b", "alignscore"),
        ("frank_b", "word_share"),
    ]  # the validation cut is not ranked
    expected = {}
    for name, rows in (("frank_a", first), ("frank_b", second)):
        for scorer, table_of in (("alignscore", alignscore), ("word_share", words)):
            joined = rows[["example_id", "label"]].merge(table_of[["example_id", "score"]], on="example_id")
            expected[name, scorer] = roc_auc_score(joined["label"], joined["score"])
    expected["frank_a", "summac_zs"] = 1.0  # the perfect scores of the sample
    for key, auc in expected.items():
        assert table.loc[key, "roc_auc"] == pytest.approx(auc, abs=1e-6), key  # the CSV keeps 6 significant digits
        assert table.loc[key, "roc_auc_low"] <= table.loc[key, "roc_auc"] <= table.loc[key, "roc_auc_high"]
    # the sampled scorer's AUC is the highest, but the reference is the best built-in scorer of the whole benchmark
    assert (table["reference"] == "alignscore").all()
    assert table.loc[("frank_a", "summac_zs"), "sampled"] and table.loc[("frank_a", "summac_zs"), "n"] == len(sample)
    on_sample = alignscore[alignscore["example_id"].isin(sample["example_id"])].merge(sample[["example_id", "label"]])
    assert table.loc[("frank_a", "summac_zs"), "difference"] == pytest.approx(
        1 - roc_auc_score(on_sample["label"], on_sample["score"])
    )
    user = [("frank_a", "word_share"), ("frank_b", "word_share")]
    assert table.loc[user, "kind"].eq("user").all()
    assert table.loc[user, "difference"].to_list() == pytest.approx(
        [expected[key] - expected[key[0], "alignscore"] for key in user]
    )
    compared = table.dropna(subset=["p_value"])
    assert len(compared) == 3
    assert compared["p_holm"].to_list() == pytest.approx(multipletests(compared["p_value"], method="holm")[1], abs=1e-6)
    assert compared["significant"].astype(bool).to_list() == list(compared["p_holm"] < 0.05)

    summary = json.loads(metrics.read_text())
    assert summary["alignscore"]["benchmarks"] == 2 and summary["alignscore"]["reference_on"] == ["frank_a", "frank_b"]
    mean = (expected["frank_a", "alignscore"] + expected["frank_b", "alignscore"]) / 2
    assert summary["alignscore"]["mean_roc_auc"] == pytest.approx(mean, abs=1e-4)
    assert summary["summac_zs"]["sampled_benchmarks"] == ["frank_a"] and summary["word_share"]["kind"] == "user"

    # the paper's table: by benchmark, then AUC; the reference and the sample marked, significance spelt out
    paper = leaderboard_frame(pd.read_csv(out))
    assert paper["scorer"].to_list()[:1] == ["summac_zs (sample)"]
    assert "alignscore (reference)" in paper["scorer"].to_list()
    for _, rows in paper.groupby("benchmark"):
        assert rows["AUC"].is_monotonic_decreasing
    reference_rows = paper[paper["scorer"].str.endswith("(reference)")]
    assert (reference_rows[["vs reference 95% CI", "p", "p Holm", "significant"]] == "").all().all()
    assert set(paper["significant"]) <= {"yes", "no", ""}


def test_summary_counts_benchmarks_with_an_auc_only() -> None:
    frames = {"x": {"b": labelled([0.9, 0.8, 0.2, 0.1]), "one_label": labelled([0.9, np.nan, 0.2, np.nan])}}
    table = leaderboard(frames, builtin={"x"}, sampled=set(), resamples=50, confidence=0.95, seed=1)
    row = scorer_summary(table).set_index("scorer").loc["x"]
    assert row["benchmarks"] == 1 and row["mean_roc_auc"] == pytest.approx(0.75) and row["reference_on"] == ["b"]
