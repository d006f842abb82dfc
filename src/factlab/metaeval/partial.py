"""Partial correlation controlling for categorical confounders (e.g. the summarisation system).

Both scores are regressed by ordinary least squares on an intercept plus the one-hot dummies of
every confounder, and the residuals are correlated. For a single categorical confounder the
residual is exactly "score minus the mean of its confounder level". Several confounders (e.g.
system and dataset) are stacked; collinear dummies are fine (least squares projects onto their
span), and `k` = rank of the design matrix minus the intercept counts the parameters used.

Two named variants (methods.md §2), chosen with `variant=`:

* ``"frank"`` — FRANK's evaluate.py (Pagnoni et al., 2021): residualise the *raw* scores, then
  call plain scipy `pearsonr` / `spearmanr` on the residuals. p-values therefore use n−2 df and
  ignore the k fitted confounder parameters (anti-conservative), and FRANK's "partial Spearman"
  is the Spearman correlation of *linearly* residualised raw scores, not a rank partial
  correlation.
* ``"ranked"`` — the textbook partial correlation: for Spearman, rank both scores first (average
  ranks) and residualise the ranks; for Pearson, residualise the raw scores (the coefficient then
  equals FRANK's). The p-value is the t-test with df = n − 2 − k, as pingouin.partial_corr and the
  coefficient t-test of statsmodels OLS(y ~ x + dummies) give.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from factlab.metaeval.errors import StatisticsError
from factlab.metaeval.inputs import (
    FloatArray,
    as_category_vector,
    as_float_vector,
    paired_vectors,
    require_min_n,
    require_same_length,
)
from factlab.metaeval.variants import PARTIAL_VARIANTS, PartialVariant

PartialMethod = Literal["pearson", "spearman"]

# Residuals smaller than this (relative to the score scale) count as zero: the score is then
# fully explained by the confounders and the partial correlation is undefined.
_CONSTANT_TOLERANCE = 1e-10


@dataclass(frozen=True)
class PartialCorrelation:
    """A partial correlation: coefficient, p-value, n, and the choices that produced it.

    `df` is the t-test degrees of freedom actually used (n−2 for "frank", n−2−k for "ranked");
    `n_confounder_params` is k, the number of non-intercept parameters the confounders took.
    """

    r: float
    p: float
    n: int
    method: PartialMethod
    variant: PartialVariant
    df: int
    n_confounder_params: int


@dataclass(frozen=True)
class ConfounderDesign:
    """The least-squares design for a set of categorical confounders: intercept + all one-hot dummies."""

    matrix: FloatArray
    rank: int

    @property
    def n_params(self) -> int:
        """k: parameters beyond the intercept (rank − 1), i.e. the df the confounders consume."""
        return self.rank - 1


def confounder_design(confounders: Sequence[ArrayLike], n: int) -> ConfounderDesign:
    """Build the design matrix (intercept + one-hot dummies of each confounder) for `n` rows.

    `confounders` is a sequence of 1-D categorical arrays, e.g. ``[system]`` or
    ``[system, dataset]``; a bare 1-D array of labels is rejected because it is ambiguous.
    """
    if isinstance(confounders, (str, bytes)) or not hasattr(confounders, "__iter__"):
        raise StatisticsError("confounders must be a sequence of arrays, e.g. [system]")
    columns = list(confounders)
    if not columns:
        raise StatisticsError("partial correlation needs at least one confounder array")
    if any(np.ndim(column) == 0 for column in columns):
        raise StatisticsError("confounders must be a sequence of 1-D arrays, e.g. [system], not one array of labels")
    blocks = [np.ones((n, 1))]
    for index, column in enumerate(columns):
        values = as_category_vector(column, f"confounder {index}")
        require_same_length(scores=np.empty(n), **{f"confounder_{index}": values})
        _, codes = np.unique(values.astype(str), return_inverse=True)
        blocks.append(np.eye(codes.max() + 1)[codes])
    matrix = np.hstack(blocks)
    return ConfounderDesign(matrix=matrix, rank=int(np.linalg.matrix_rank(matrix)))


def residualize(values: ArrayLike, confounders: Sequence[ArrayLike]) -> FloatArray:
    """OLS residuals of `values` on intercept + one-hot confounder dummies.

    For one categorical confounder this is `value − mean(values in its level)`, i.e. FRANK's
    OneHotEncoder + LinearRegression residuals.
    """
    ys = as_float_vector(values, "values")
    design = confounder_design(confounders, len(ys))
    return _residuals(ys, design)


def _residuals(values: FloatArray, design: ConfounderDesign) -> FloatArray:
    coefficients, *_ = np.linalg.lstsq(design.matrix, values, rcond=None)
    residuals: FloatArray = values - design.matrix @ coefficients
    return residuals


def _constant_residuals(residuals: FloatArray, raw: FloatArray) -> bool:
    scale = max(1.0, float(np.max(np.abs(raw)))) if len(raw) else 1.0
    return bool(np.all(np.abs(residuals) <= _CONSTANT_TOLERANCE * scale))


def _require_residual_variation(residuals: FloatArray, raw: FloatArray, name: str) -> None:
    if _constant_residuals(residuals, raw):
        raise StatisticsError(f"{name} is constant within every confounder level: the partial correlation is undefined")


def residual_dimensions(confounders: Sequence[ArrayLike], n: int) -> int:
    """The dimensions left to `n` values once each confounder level's mean is removed (n − the design's rank): a
    partial correlation of their residuals needs 2 (in 1 every correlation is ±1), a Williams test, which correlates
    three residual vectors, 3 (its correlation matrix is singular in fewer)."""
    return n - confounder_design(confounders, n).rank if n else 0


def varies_within_confounders(values: ArrayLike, confounders: Sequence[ArrayLike]) -> bool:
    """Whether `values` keep any variation once each confounder level's mean is removed: False where a partial
    correlation of them would raise (the same residuals and tolerance)."""
    ys = as_float_vector(values, "values")
    return not _constant_residuals(_residuals(ys, confounder_design(confounders, len(ys))), ys)


def _t_test_p(r: float, df: int) -> float:
    if abs(r) >= 1.0:
        return 0.0
    t = r * np.sqrt(df / (1.0 - r * r))
    return float(2.0 * stats.t.sf(abs(t), df))


def partial_correlation(
    x: ArrayLike,
    y: ArrayLike,
    confounders: Sequence[ArrayLike],
    *,
    method: PartialMethod = "pearson",
    variant: PartialVariant,
) -> PartialCorrelation:
    """Partial Pearson or Spearman correlation of `x` and `y` given categorical `confounders`.

    `variant` has no default on purpose: tables must say whether they reproduce FRANK
    (``"frank"``) or use the principled test (``"ranked"``); see the module docstring.
    """
    if variant not in PARTIAL_VARIANTS:
        raise StatisticsError(f"unknown partial-correlation variant {variant!r}; choose one of {PARTIAL_VARIANTS}")
    if method not in ("pearson", "spearman"):
        raise StatisticsError(f"partial correlation supports 'pearson' and 'spearman', not {method!r}")
    xs, ys = paired_vectors(x, y)
    n = len(xs)
    design = confounder_design(confounders, n)
    k = design.n_params
    if variant == "ranked" and method == "spearman":
        xs, ys = stats.rankdata(xs), stats.rankdata(ys)
    x_res, y_res = _residuals(xs, design), _residuals(ys, design)
    _require_residual_variation(x_res, xs, "x")
    _require_residual_variation(y_res, ys, "y")

    if variant == "frank":
        require_min_n(n, 3, "a partial correlation")
        result = stats.pearsonr(x_res, y_res) if method == "pearson" else stats.spearmanr(x_res, y_res)
        return PartialCorrelation(float(result.statistic), float(result.pvalue), n, method, variant, n - 2, k)

    df = n - 2 - k
    if df < 1:
        raise StatisticsError(f"n = {n} is too small for {k} confounder parameters (df = n − 2 − k = {df})")
    r = float(np.clip(stats.pearsonr(x_res, y_res).statistic, -1.0, 1.0))
    return PartialCorrelation(r, _t_test_p(r, df), n, method, variant, df, k)
