"""`factlab metaeval calibration-gain`: the checker's global threshold against one calibrated on a validation sample.

Thresholds and balanced accuracies against scikit-learn (a brute-force search over every observed score with
sklearn.metrics.balanced_accuracy_score), a case worked by hand, and the command on the real rows of
tests/fixtures/decisions (the smoke run's checker card and AlignScore tables of FRANK, 15 validation and 5 test
outputs, and TRUE's BEGIN, a test split alone)."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import balanced_accuracy_score

from factlab.errors import DataError, FactlabError
from factlab.metaeval.analyses.calibration_gain_command import run_calibration_gain
from factlab.metaeval.decisions import CALIBRATION_GAIN_COLUMNS, calibration_gain, stratified_draw
from factlab.metaeval.errors import StatisticsError

FIXTURES = Path(__file__).parent / "fixtures" / "decisions"


def sklearn_threshold(labels: np.ndarray, scores: np.ndarray) -> float:
    """The observed score whose `score >= t` maximises sklearn's balanced accuracy, the lowest among ties."""
    candidates = sorted(set(scores.tolist()))
    accuracies = [balanced_accuracy_score(labels, (scores >= t).astype(int)) for t in candidates]
    return candidates[int(np.argmax(accuracies))]


def sklearn_accuracy(labels: np.ndarray, scores: np.ndarray, threshold: float) -> float:
    return float(balanced_accuracy_score(labels, (scores >= threshold).astype(int)))


def test_calibration_gain_worked_by_hand() -> None:
    """Validation: 0.5 separates the classes. Test at the global 0.65: one consistent output of two passes and both
    inconsistent ones fail (BAcc 0.75); at 0.5 the 0.6 inconsistent output passes too (0.5): a loss of 0.25."""
    row = calibration_gain(
        [0, 0, 1, 1],
        [0.1, 0.4, 0.5, 0.9],
        [0, 1, 0, 1],
        [0.2, 0.45, 0.6, 0.7],
        0.65,
        sample=100,
        draws=10,
        rng=np.random.default_rng(0),
    )
    assert list(row) == list(CALIBRATION_GAIN_COLUMNS)
    assert (row["n_validation"], row["n_test"], row["calibration_examples"], row["draws"]) == (4, 4, 4, 1)
    assert row["threshold_calibrated_median"] == row["threshold_validation"] == 0.5
    assert row["balanced_accuracy_global"] == pytest.approx(0.75)
    assert row["balanced_accuracy_calibrated"] == pytest.approx(0.5) == row["balanced_accuracy_validation"]
    assert (row["gain"], row["gain_low"], row["gain_high"]) == pytest.approx((-0.25, -0.25, -0.25))
    assert row["share_of_draws_better"] == 0.0


def test_stratified_draw_keeps_the_class_shares_and_its_seed() -> None:
    labels = np.array([1] * 30 + [0] * 70)
    drawn = stratified_draw(labels, 10, np.random.default_rng(3))
    assert len(set(drawn.tolist())) == 10 and (labels[drawn] == 1).sum() == 3
    assert np.array_equal(drawn, stratified_draw(labels, 10, np.random.default_rng(3)))
    rare = np.array([1] * 99 + [0])  # 0.1 inconsistent expected: still one, so a threshold can be tuned
    assert (rare[stratified_draw(rare, 10, np.random.default_rng(0))] == 0).sum() == 1


def test_each_draw_is_judged_as_sklearn_judges_it() -> None:
    """On real validation-like scores (FRANK's smoke AlignScore scores, both splits, as one pool): every draw's
    threshold is sklearn's optimum on the drawn examples, and the row's numbers are the mean, quantiles and share
    of sklearn's balanced accuracies of those thresholds on the test outputs."""
    rng = np.random.default_rng(11)
    scores = pd.read_parquet(FIXTURES / "score" / "frank" / "alignscore.parquet")["score"].to_numpy()
    labels = pd.read_parquet(FIXTURES / "data" / "frank.parquet")["label"].astype(int).to_numpy()
    validation, test = np.arange(0, 20, 2), np.arange(1, 20, 2)  # 10 and 10, both classes in each
    assert set(labels[validation]) == set(labels[test]) == {0, 1}
    row = calibration_gain(
        labels[validation],
        scores[validation],
        labels[test],
        scores[test],
        0.41,
        sample=6,
        draws=40,
        rng=np.random.default_rng(11),
    )
    accuracies = []
    for _ in range(40):
        drawn = stratified_draw(labels[validation], 6, rng)
        threshold = sklearn_threshold(labels[validation][drawn], scores[validation][drawn])
        accuracies.append(sklearn_accuracy(labels[test], scores[test], threshold))
    accuracies = np.array(accuracies)
    global_accuracy = sklearn_accuracy(labels[test], scores[test], 0.41)
    assert row["balanced_accuracy_global"] == pytest.approx(global_accuracy)
    assert row["balanced_accuracy_calibrated"] == pytest.approx(accuracies.mean())
    assert (row["balanced_accuracy_calibrated_low"], row["balanced_accuracy_calibrated_high"]) == pytest.approx(
        tuple(np.quantile(accuracies, [0.025, 0.975]))
    )
    assert row["gain"] == pytest.approx(accuracies.mean() - global_accuracy)
    assert row["share_of_draws_better"] == pytest.approx((accuracies > global_accuracy).mean())
    whole = sklearn_threshold(labels[validation], scores[validation])
    assert row["threshold_validation"] == whole
    assert row["balanced_accuracy_validation"] == pytest.approx(sklearn_accuracy(labels[test], scores[test], whole))


def test_calibration_gain_needs_both_classes_and_a_sample() -> None:
    with pytest.raises(StatisticsError):
        calibration_gain([1, 1], [0.2, 0.3], [0, 1], [0.1, 0.9], 0.5, sample=10, draws=5, rng=np.random.default_rng(0))
    with pytest.raises(StatisticsError, match="at least 2"):
        calibration_gain([0, 1], [0.2, 0.3], [0, 1], [0.1, 0.9], 0.5, sample=1, draws=5, rng=np.random.default_rng(0))


def command_inputs(root: Path, benchmarks: tuple[str, ...] = ("frank", "true_begin")) -> dict:
    shutil.copytree(FIXTURES, root / "inputs")
    return {
        "checker": str(root / "inputs" / "checker"),
        "scores": [str(root / "inputs" / "score" / name / "alignscore.parquet") for name in benchmarks],
        "data": [str(root / "inputs" / "data" / f"{name}.parquet") for name in benchmarks],
    }


def run(inputs: dict, out: Path, **settings) -> tuple[pd.DataFrame, dict]:
    arguments = {"validation": ["frank"], "sample": 10, "draws": 50, "seed": 2022, "confidence": 0.95, **settings}
    out.mkdir(parents=True, exist_ok=True)
    run_calibration_gain(
        argparse.Namespace(**inputs, **arguments, out=str(out / "gain.csv"), out_metrics=str(out / "metrics.json"))
    )
    return pd.read_csv(out / "gain.csv"), json.loads((out / "metrics.json").read_text())


def test_command_on_real_rows(tmp_path: Path) -> None:
    inputs = command_inputs(tmp_path)
    table, metrics = run(inputs, tmp_path / "a")
    assert table["benchmark"].tolist() == ["frank"]  # BEGIN has a test split alone
    assert metrics["not_measured"] == {"true_begin": "its validation split has no scored output labelled either way"}
    row = table.iloc[0]
    assert bool(row["tuned_global_threshold"]) and row["n_unscored"] == 0
    assert (row["n_validation"], row["n_test"], row["calibration_examples"], row["draws"]) == (15, 5, 10, 50)
    data = pd.read_parquet(tmp_path / "inputs" / "data" / "frank.parquet")
    scores = pd.read_parquet(tmp_path / "inputs" / "score" / "frank" / "alignscore.parquet")
    joined = data.merge(scores[["example_id", "score"]], on="example_id")
    validation, test = joined[joined["split"] == "validation"], joined[joined["split"] == "test"]
    y_test, s_test = test["label"].astype(int).to_numpy(), test["score"].to_numpy()
    threshold = json.loads((tmp_path / "inputs" / "checker" / "checker.json").read_text())["threshold"]
    assert row["threshold_global"] == pytest.approx(threshold)
    assert row["balanced_accuracy_global"] == pytest.approx(sklearn_accuracy(y_test, s_test, threshold))
    whole = sklearn_threshold(validation["label"].astype(int).to_numpy(), validation["score"].to_numpy())
    assert row["balanced_accuracy_validation"] == pytest.approx(sklearn_accuracy(y_test, s_test, whole), abs=1e-6)
    assert metrics["benchmarks"]["frank"]["gain"] == pytest.approx(row["gain"], abs=1e-6)
    assert metrics["threshold_validation_range"]["low_benchmark"] == "frank"
    assert metrics["threshold_validation_range"]["high"] == pytest.approx(whole, abs=1e-4)  # headline: 4 decimals
    # seeded per benchmark: the same numbers again, and with FRANK measured alone
    again, _ = run(command_inputs(tmp_path / "alone", ("frank",)), tmp_path / "b")
    assert again.equals(table)


def test_command_errors(tmp_path: Path) -> None:
    inputs = command_inputs(tmp_path)
    with pytest.raises(FactlabError, match="--sample must be at least 2"):
        run(inputs, tmp_path / "a", sample=1)
    renamed = Path(inputs["scores"][0]).with_name("rouge.parquet")
    shutil.copy(inputs["scores"][0], renamed)
    with pytest.raises(FactlabError, match="a rouge score table"):
        run({**inputs, "scores": [str(renamed)]}, tmp_path / "b")
    stray = pd.read_parquet(inputs["scores"][0])
    stray.loc[0, "example_id"] = "not-in-frank"
    stray.to_parquet(inputs["scores"][0])
    with pytest.raises(DataError, match="not in the benchmark"):
        run(inputs, tmp_path / "c")
    assert not (tmp_path / "c" / "gain.csv").exists()


def test_an_unscored_output_is_counted_and_left_out(tmp_path: Path) -> None:
    inputs = command_inputs(tmp_path, ("frank",))
    scores = pd.read_parquet(inputs["scores"][0])
    data = pd.read_parquet(inputs["data"][0]).set_index("example_id")
    test_id = next(eid for eid in scores["example_id"] if data.loc[eid, "split"] == "test")
    scores.loc[scores["example_id"] == test_id, "score"] = np.nan
    scores.to_parquet(inputs["scores"][0])
    row = run(inputs, tmp_path / "a")[0].iloc[0]
    assert (row["n_unscored"], row["n_validation"], row["n_test"]) == (1, 15, 4)
