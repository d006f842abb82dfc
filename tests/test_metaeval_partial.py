"""Partial correlation: the FRANK variant against FRANK's own recipe (on FRANK's real data), the
ranked variant against pingouin.partial_corr and statsmodels OLS."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pingouin as pg
import pytest
import statsmodels.api as sm
from scipy import stats
from sklearn.linear_model import LinearRegression
from sklearn.preprocessing import OneHotEncoder

from factlab.metaeval import StatisticsError, dropna_pairs, partial_correlation, residualize
from factlab.metaeval.partial import residual_dimensions


@pytest.fixture(scope="module")
def confounded() -> pd.DataFrame:
    """Scores with strong system and dataset effects, as in FRANK (systems differ in mean quality)."""
    rng = np.random.default_rng(11)
    n = 150
    system = rng.choice(["bart", "pgn", "bus", "s2s"], n)
    dataset = rng.choice(["cnndm", "bbc"], n)
    effect = pd.Series(system).map({"bart": 1.0, "pgn": -0.5, "bus": 0.2, "s2s": -1.5}).to_numpy()
    human = rng.normal(size=n) + effect + 0.5 * (dataset == "bbc")
    metric = 0.3 * human + rng.normal(size=n) + 2 * effect
    return pd.DataFrame({"metric": metric, "human": human, "system": system, "dataset": dataset})


def test_partial_correlation_worked_by_hand():
    # Groups a, b. x = 1 2 3 | 5 6 10 minus group means 2, 7: −1 0 1 | −2 −1 3;
    # y = 1 3 2 | 4 6 5 minus group means 2, 5: −1 1 0 | −1 1 0.
    # Σ x·y = 1 + 0 + 0 + 2 − 1 + 0 = 2, Σ x² = 16, Σ y² = 4 -> r = 2/√64 = 1/4.
    x, y, group = [1, 2, 3, 5, 6, 10], [1, 3, 2, 4, 6, 5], [["a", "a", "a", "b", "b", "b"]]
    frank = partial_correlation(x, y, group, variant="frank")
    ranked = partial_correlation(x, y, group, variant="ranked")
    assert frank.r == pytest.approx(0.25) and ranked.r == pytest.approx(0.25)
    # p of the correlation t-test in closed form, with x = r: df 4 -> P(|T| <= t) = x(3 − x²)/2,
    # so FRANK's p (n − 2 = 4 df) = 1 − (1/4)(3 − 1/16)/2 = 81/128.
    assert (frank.df, frank.n_confounder_params, frank.p) == (4, 1, pytest.approx(81 / 128, rel=1e-12))
    # df 3 (n − 2 − k, k = 1) -> P(|T| <= t) = (2/π)(atan u + u/(1 + u²)) with u = r/√(1 − r²).
    u = 0.25 / math.sqrt(1 - 0.25**2)
    assert (ranked.df, ranked.p) == (3, pytest.approx(1 - 2 / math.pi * (math.atan(u) + u / (1 + u * u)), rel=1e-12))
    # Ranked Spearman: ranks 1..6 and 1 3 2 4 6 5 minus group means 2, 5: −1 0 1 | −1 0 1 and −1 1 0 | −1 1 0:
    # r = 2/√(4·4) = 1/2; u = 1/√3, so p = 1 − (2/π)(π/6 + √3/4) = 2/3 − √3/(2π).
    spearman = partial_correlation(x, y, group, method="spearman", variant="ranked")
    assert (spearman.r, spearman.p) == pytest.approx((0.5, 2 / 3 - math.sqrt(3) / (2 * math.pi)), rel=1e-12)


def test_frank_variant_is_scipy_on_group_mean_residuals(confounded):
    frame = confounded
    residual = {c: frame[c] - frame.groupby("system")[c].transform("mean") for c in ("metric", "human")}
    pearson = partial_correlation(frame.metric, frame.human, [frame.system], variant="frank")
    spearman = partial_correlation(frame.metric, frame.human, [frame.system], method="spearman", variant="frank")
    expected_p = stats.pearsonr(residual["metric"], residual["human"])
    expected_s = stats.spearmanr(residual["metric"], residual["human"])
    assert pearson.r == pytest.approx(expected_p.statistic, abs=1e-12)
    assert pearson.p == pytest.approx(expected_p.pvalue, rel=1e-9)
    assert spearman.r == pytest.approx(expected_s.statistic, abs=1e-12)
    assert spearman.p == pytest.approx(expected_s.pvalue, rel=1e-9)
    assert (pearson.df, pearson.n_confounder_params) == (148, 3)


def test_residualize_equals_group_mean_subtraction(confounded):
    frame = confounded
    expected = frame.metric - frame.groupby("system").metric.transform("mean")
    np.testing.assert_allclose(residualize(frame.metric, [frame.system]), expected, atol=1e-12)


def _dummies(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    return pd.get_dummies(frame[columns], drop_first=True).astype(float)


@pytest.mark.parametrize("confounders", [["system"], ["system", "dataset"]])
@pytest.mark.parametrize("method", ["pearson", "spearman"])
def test_ranked_variant_matches_pingouin(confounded, confounders, method):
    dummies = _dummies(confounded, confounders)
    data = pd.concat([confounded[["metric", "human"]], dummies], axis=1)
    expected = pg.partial_corr(data, x="metric", y="human", covar=list(dummies.columns), method=method)
    result = partial_correlation(
        confounded.metric, confounded.human, [confounded[c] for c in confounders], method=method, variant="ranked"
    )
    assert result.r == pytest.approx(float(expected["r"].iloc[0]), abs=1e-9)
    assert result.p == pytest.approx(float(expected["p_val"].iloc[0]), rel=1e-6)
    assert result.n_confounder_params == dummies.shape[1]
    assert result.df == len(confounded) - 2 - dummies.shape[1]


def test_ranked_pearson_p_equals_statsmodels_coefficient_test(confounded):
    # The partial-correlation t-test is the t-test of x's coefficient in OLS(y ~ 1 + x + dummies).
    dummies = _dummies(confounded, ["system", "dataset"])
    design = sm.add_constant(pd.concat([confounded[["metric"]], dummies], axis=1))
    fit = sm.OLS(confounded.human, design).fit()
    result = partial_correlation(confounded.metric, confounded.human, [confounded.system, confounded.dataset], variant="ranked")
    assert result.p == pytest.approx(float(fit.pvalues["metric"]), rel=1e-8)


def test_frank_and_ranked_differ_only_where_documented(confounded):
    args = (confounded.metric, confounded.human, [confounded.system])
    frank = partial_correlation(*args, variant="frank")
    ranked = partial_correlation(*args, variant="ranked")
    assert frank.r == pytest.approx(ranked.r)  # same coefficient for Pearson
    assert frank.p < ranked.p  # n−2 df and no penalty for k: FRANK's p is smaller
    frank_s = partial_correlation(*args, method="spearman", variant="frank")
    ranked_s = partial_correlation(*args, method="spearman", variant="ranked")
    assert frank_s.r != pytest.approx(ranked_s.r)  # linear residuals then ranks vs ranks then residuals


def test_collinear_confounders_count_rank_not_columns(confounded):
    # A dataset column implied by the system (as in FRANK) adds no parameters.
    dataset = confounded.system.isin(["bart", "pgn"]).map({True: "cnndm", False: "bbc"})
    with_dataset = partial_correlation(confounded.metric, confounded.human, [confounded.system, dataset], variant="ranked")
    system_only = partial_correlation(confounded.metric, confounded.human, [confounded.system], variant="ranked")
    assert with_dataset.n_confounder_params == system_only.n_confounder_params == 3
    assert with_dataset.p == pytest.approx(system_only.p)


def test_degenerate_partial_inputs_raise(confounded):
    system = confounded.system
    effect = system.map({"bart": 1.0, "pgn": 2.0, "bus": 3.0, "s2s": 4.0})
    with pytest.raises(StatisticsError, match="constant within every confounder level"):
        partial_correlation(effect, confounded.human, [system], variant="frank")
    with pytest.raises(StatisticsError, match="sequence of 1-D arrays"):
        partial_correlation(confounded.metric, confounded.human, system.tolist(), variant="frank")
    with pytest.raises(StatisticsError, match="missing"):
        partial_correlation(confounded.metric, confounded.human, [system.where(system != "bart")], variant="ranked")
    with pytest.raises(StatisticsError, match="length mismatch"):
        partial_correlation(confounded.metric, confounded.human, [system[:-1]], variant="ranked")
    with pytest.raises(StatisticsError, match="unknown partial-correlation variant"):
        partial_correlation(confounded.metric, confounded.human, [system], variant="fisher")  # type: ignore[arg-type]
    with pytest.raises(StatisticsError, match="too small"):
        partial_correlation([1.0, 2.0, 4.0], [2.0, 1.0, 3.0], [["a", "a", "b"]], variant="ranked")
    with pytest.raises(TypeError):
        partial_correlation(confounded.metric, confounded.human, [system])  # type: ignore[call-arg]  # variant must be named


@pytest.fixture(scope="module")
def frank_data(raw) -> pd.DataFrame:
    human = pd.DataFrame(json.loads(raw.path("frank", "data/human_annotations.json").read_text()))
    metrics = pd.DataFrame(json.loads(raw.path("frank", "data/baseline_factuality_metrics_outputs.json").read_text()))
    columns = ["hash", "model_name", "FactCC", "BertScore P Art", "Dep Entail"]
    return human.merge(metrics[columns], on=["hash", "model_name"], validate="one_to_one")


def _frank_reference(frame: pd.DataFrame, metric: str) -> tuple[float, float, float, float, int]:
    """FRANK's evaluate.py recipe: drop nulls, OneHotEncoder + LinearRegression residuals, scipy on residuals."""
    mask = frame[metric].notna() & frame["Factuality"].notna()
    x, y = frame[metric][mask], frame["Factuality"][mask]
    q = OneHotEncoder(handle_unknown="ignore").fit_transform(np.array(frame[mask]["model_name"]).reshape(-1, 1))
    x = x - LinearRegression().fit(q, x).predict(q)
    y = y - LinearRegression().fit(q, y).predict(q)
    pr, pp = stats.pearsonr(x, y)
    sr, sp = stats.spearmanr(x, y)
    return pr, pp, sr, sp, len(x)


@pytest.mark.parametrize("metric", ["FactCC", "BertScore P Art", "Dep Entail"])
def test_frank_variant_reproduces_frank_code_on_frank_data(frank_data, metric):
    assert len(frank_data) == 2246 and frank_data["model_name"].nunique() == 9
    kept = dropna_pairs(frank_data[metric], frank_data["Factuality"], frank_data["model_name"])
    metric_scores, human, system = kept.arrays
    pr, pp, sr, sp, n = _frank_reference(frank_data, metric)
    assert kept.n_kept == n
    assert kept.n_dropped == {"FactCC": 0, "BertScore P Art": 0, "Dep Entail": 83}[metric]
    pearson = partial_correlation(metric_scores, human, [system], variant="frank")
    spearman = partial_correlation(metric_scores, human, [system], method="spearman", variant="frank")
    assert (pearson.r, pearson.p) == pytest.approx((pr, pp), rel=1e-7)
    assert (spearman.r, spearman.p) == pytest.approx((sr, sp), rel=1e-7)
    assert pearson.n_confounder_params == 8


def test_residual_dimensions_count_what_the_systems_means_leave() -> None:
    """Worked by hand: 5 values of 3 systems leave 5 - 3 = 2 dimensions, and the residuals of 3 generic vectors then
    have a singular correlation matrix (numpy's determinant ~0), while 6 values of 3 systems (3 dimensions) do not."""
    systems = np.array(["a", "a", "b", "b", "c"])
    assert residual_dimensions([systems], 5) == 2 and residual_dimensions([np.array([], dtype=str)], 0) == 0
    rng = np.random.default_rng(0)
    for labels, expected in ((systems, 2), (np.array(["a", "a", "b", "b", "c", "c"]), 3)):
        assert residual_dimensions([labels], len(labels)) == expected
        residuals = [residualize(rng.normal(size=len(labels)), [labels]) for _ in range(3)]
        determinant = np.linalg.det(np.corrcoef(residuals))
        assert (abs(determinant) < 1e-10) == (expected < 3)
