"""factlab's scorers on SummEval, FRANK's protocol: real SummEval summaries and SummaC's SummEval cut as tuning data,
checked against scipy on residuals computed here with pandas."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from simple_scores import word_share

from factlab.cli import main
from factlab.data.adapters.summac import adapt_summac
from factlab.data.adapters.summeval import adapt_summeval
from factlab.sampling import sample_examples


@pytest.fixture(scope="module")
def inputs(raw, tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("summeval")
    summeval = adapt_summeval(raw).frame
    cut = adapt_summac(raw, "summeval").frame
    paths = {"benchmark": folder / "summeval.parquet", "tuning": folder / "summac_summeval.parquet"}
    summeval.to_parquet(paths["benchmark"])
    cut.to_parquet(paths["tuning"])
    scores = {
        "overlap": [word_share(s, o) for s, o in zip(summeval["source"], summeval["output"], strict=True)],
        "brevity": [1 / len(output.split()) for output in summeval["output"]],
    }
    for name, values in scores.items():
        path = folder / "score" / "summeval" / f"{name}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        summeval[["example_id"]].assign(score=values).to_parquet(path)
        paths[name] = path
    return {"folder": folder, "paths": paths, "summeval": summeval.assign(**scores)}


def command(paths: dict, folder: Path) -> list[str]:
    return ["metaeval", "summeval-scorers", "--benchmark", str(paths["benchmark"]),
            "--scores", str(paths["overlap"]), str(paths["brevity"]), "--tuning", str(paths["tuning"]),
            "--variant", "frank", "--williams-variant", "two_sided", "--resamples", "50", "--confidence", "0.9",
            "--seed", "1", "--out-correlations", str(folder / "correlations.csv"),
            "--out-williams", str(folder / "williams.csv"), "--out-metrics", str(folder / "metrics.json")]  # fmt: skip


def residuals(frame: pd.DataFrame, column: str) -> pd.Series:
    """The column minus its system's mean: the residual of OLS on the system's dummies."""
    return frame[column] - frame.groupby("system")[column].transform("mean")


def test_partial_correlations_on_all_and_on_the_summaries_tuning_never_saw(inputs) -> None:
    folder = inputs["folder"]
    assert main(command(inputs["paths"], folder)) == 0
    table = pd.read_csv(folder / "correlations.csv").set_index(["subset", "metric"])
    summeval = inputs["summeval"]
    # SummaC's cut names its articles (cnndm_id) and systems: SummEval's example ids, worked out here independently.
    cut = pd.read_parquet(inputs["paths"]["tuning"])
    cut_ids = set("summeval-" + cut["cnndm_id"] + "-" + cut["system"])
    assert len(cut_ids) == 100 and cut_ids <= set(summeval["example_id"])
    held_out = summeval[~summeval["example_id"].isin(cut_ids)]
    # the text rule also finds 4 summaries of other systems identical to a cut summary
    assert table.loc[("held_out", "factlab overlap"), "n"] == len(held_out) - 4 == 1496
    for subset, part in (("all", summeval), ("held_out", None)):
        if part is None:
            part = summeval[~summeval["example_id"].isin(cut_ids)]
            identical = (
                part["output"]
                .str.lower()
                .str.replace(r"[^0-9a-z]+", "", regex=True)
                .isin(cut["output"].str.lower().str.replace(r"[^0-9a-z]+", "", regex=True))
            )
            part = part[~identical]
        human = residuals(part, "human_score")
        for name in ("overlap", "brevity"):
            row = table.loc[(subset, f"factlab {name}")]
            assert row["n"] == len(part)
            assert row["pearson"] == pytest.approx(stats.pearsonr(residuals(part, name), human).statistic, abs=1e-10)
            # Tied ratings (means of three) leave tied residuals whose last bits differ between least squares and
            # group means, so a few ranks break differently: the Spearman agrees to 1e-3, not to the last bit.
            assert row["spearman"] == pytest.approx(stats.spearmanr(residuals(part, name), human).statistic, abs=1e-3)
            assert row["pearson_ci_low"] < row["pearson"] < row["pearson_ci_high"]
    williams = pd.read_csv(folder / "williams.csv").set_index("subset")
    assert sorted(williams.index) == ["all", "held_out"]
    on_all = williams.loc["all"]
    expected_r23 = stats.pearsonr(residuals(summeval, "overlap"), residuals(summeval, "brevity")).statistic
    assert abs(on_all["r23"]) == pytest.approx(abs(expected_r23), abs=1e-10)
    assert 0 < on_all["p"] < 1
    metrics = json.loads((folder / "metrics.json").read_text())
    assert metrics["held_out"]["summaries"] == 1496 and metrics["all"]["documents"] == 100
    best = max(("overlap", "brevity"), key=lambda name: table.loc[("held_out", f"factlab {name}"), "pearson"])
    assert metrics["held_out"]["best_scorer"] == best


def test_a_summary_that_is_not_summeval_or_has_no_rating_is_named(inputs, tmp_path, capsys) -> None:
    paths = dict(inputs["paths"])
    stray = tmp_path / "score" / "summeval" / "overlap.parquet"
    stray.parent.mkdir(parents=True)
    pd.DataFrame({"example_id": ["frank-1"], "score": [0.5]}).to_parquet(stray)
    assert main(command({**paths, "overlap": stray}, tmp_path)) != 0
    assert "overlap: 1 scored examples are not in the benchmark, e.g. 'frank-1'" in capsys.readouterr().err
    unrated = inputs["summeval"].drop(columns=["overlap", "brevity"])
    unrated.loc[5, "human_score"] = np.nan
    unrated.to_parquet(tmp_path / "summeval.parquet")
    assert main(command({**paths, "benchmark": tmp_path / "summeval.parquet"}, tmp_path)) != 0
    error = capsys.readouterr().err
    assert str(tmp_path / "summeval.parquet") in error and unrated.loc[5, "example_id"] in error and "human_score" in error
    assert not (tmp_path / "correlations.csv").exists()


def test_no_held_out_summary_is_an_error_and_writes_nothing(inputs, tmp_path, capsys) -> None:
    """Tuning data holding every SummEval summary leaves nothing to report on the held-out subset: a one-line error."""
    paths = {**inputs["paths"], "tuning": inputs["paths"]["benchmark"]}
    assert main(command(paths, tmp_path)) != 0
    assert "0 scored article(s) in subset held_out (0 summaries; 1600 scored summaries are tuning examples)" in (
        capsys.readouterr().err
    )
    assert not list(tmp_path.glob("*.csv"))


def test_a_scorer_constant_within_each_system_is_left_out_and_named(inputs, tmp_path) -> None:
    """One score per system (its mean overlap) varies over SummEval, but nothing of it is left once each system's mean
    is removed: it is left out of both subsets and named, and the other scorers' rows are those of the run without it."""
    summeval = inputs["summeval"]
    # each system's mean overlap, with float noise far below the partial correlation's tolerance: distinct values
    # within each system, yet nothing left once the system's mean is removed
    noise = np.arange(len(summeval)) * 1e-14
    per_system = summeval[["example_id"]].assign(score=summeval.groupby("system")["overlap"].transform("mean") + noise)
    assert per_system["score"].nunique() == len(summeval)
    path = tmp_path / "per_system.parquet"
    per_system.to_parquet(path)
    arguments = command(inputs["paths"], tmp_path)
    arguments.insert(arguments.index("--tuning"), str(path))
    assert main(arguments) == 0
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["constant_scorers_left_out"] == ["factlab per_system"]
    table = pd.read_csv(tmp_path / "correlations.csv")
    assert sorted(set(table["metric"])) == ["factlab brevity", "factlab overlap"]
    overlap = table.set_index(["subset", "metric"]).loc[("all", "factlab overlap"), "pearson"]
    human = residuals(summeval, "human_score")
    assert overlap == pytest.approx(stats.pearsonr(residuals(summeval, "overlap"), human).statistic, abs=1e-10)


def test_a_sampled_scorer_is_correlated_on_its_sample_and_the_counts_stay_the_full_scorers(inputs, tmp_path) -> None:
    """An oracle-like scorer (brevity plus a hundredth of the experts' rating, so that it beats word overlap) on a
    seeded sample of 300 summaries (score.sample): its partial correlation is scipy's Pearson of the residuals on those summaries
    (each system's mean taken over the sample), yet the subset counts and the best scorer are word overlap's, the
    full scorer's."""
    summeval = inputs["summeval"].assign(oracle=lambda frame: frame["brevity"] + 0.01 * frame["human_score"])
    sample = sample_examples(summeval, 300, seed=2022)
    sampled = inputs["folder"] / "score" / "summeval" / "oracle_sample.parquet"
    sample[["example_id"]].merge(summeval[["example_id", "oracle"]]).rename(columns={"oracle": "score"}).to_parquet(sampled)
    arguments = command(inputs["paths"], tmp_path)
    arguments[arguments.index("--scores") + 1 : arguments.index("--tuning")] = [
        str(inputs["paths"]["overlap"]), "--sampled-scores", str(sampled)
    ]  # fmt: skip
    assert main(arguments) == 0
    table = pd.read_csv(tmp_path / "correlations.csv").set_index(["subset", "metric"])
    row = table.loc[("all", "factlab oracle_sample")]
    part = summeval[summeval["example_id"].isin(sample["example_id"])]
    assert row["n"] == 300 and bool(row["sampled"]) and not bool(table.loc[("all", "factlab overlap"), "sampled"])
    expected = stats.pearsonr(residuals(part, "oracle"), residuals(part, "human_score")).statistic
    assert row["pearson"] == pytest.approx(expected, abs=1e-10)
    assert row["pearson"] > table.loc[("all", "factlab overlap"), "pearson"]  # else the test could not tell
    williams = pd.read_csv(tmp_path / "williams.csv")
    assert (williams.loc[williams["subset"] == "all", "n"] == 300).all()
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["all"]["summaries"] == 1600 and metrics["all"]["best_scorer"] == "overlap"
    assert metrics["all"]["sampled_scorers_n"] == {"oracle_sample": 300}
