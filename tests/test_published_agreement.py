"""Agreement of QAGS and XSumFaith votes, checked against closed forms for binary votes worked by hand
(the statistics themselves come from statsmodels and the krippendorff package)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from factlab.cli import main
from factlab.data.registry import get_spec
from factlab.metaeval.analyses.published.agreement_command import AGREEMENT_COLUMNS, agreement_table, ratings_matrix

DATASETS = ("qags_cnndm", "qags_xsum", "xsumfaith")


@pytest.fixture(scope="module")
def frames(raw) -> dict[str, pd.DataFrame]:
    return {name: get_spec(name).build(raw).frame for name in DATASETS}


@pytest.fixture(scope="module")
def agreement(frames) -> pd.DataFrame:
    return agreement_table(frames).set_index("dataset")


def test_counts_and_excluded_items(agreement):
    assert agreement.index.tolist() == list(DATASETS)
    assert ["dataset", *agreement.columns] == AGREEMENT_COLUMNS
    assert agreement["items"].to_dict() == {"qags_cnndm": 714, "qags_xsum": 239, "xsumfaith": 1836}
    assert agreement["raters"].eq(3).all()
    # XSumFaith: 9 summaries got only 2 answers; Fleiss' kappa needs 3 per item.
    assert agreement["n_excluded"].to_dict() == {"qags_cnndm": 0, "qags_xsum": 0, "xsumfaith": 9}


def test_ratings_matrix_pads_missing_votes_with_nan():
    matrix = ratings_matrix(pd.Series([np.array([1, 0, 1]), np.array([0, 0])]))
    assert matrix.shape == (2, 3) and np.isnan(matrix[1, 2]) and matrix[0].tolist() == [1.0, 0.0, 1.0]


def binary_fleiss_kappa(complete: np.ndarray) -> float:
    """Fleiss' kappa of binary votes, 3 per item, in closed form: a 3-0 item agrees in all 3 rater pairs
    (P_i = 1), a 2-1 item in 1 of 3 (P_i = 1/3); chance P_e = p^2 + (1 - p)^2 with p the share of 1 votes."""
    ones = complete.sum(axis=1)
    p_bar = np.mean(np.where((ones == 0) | (ones == 3), 1.0, 1 / 3))
    p = ones.sum() / complete.size
    p_e = p**2 + (1 - p) ** 2
    return (p_bar - p_e) / (1 - p_e)


def binary_krippendorff_alpha(votes: list[np.ndarray]) -> float:
    """Krippendorff's nominal alpha of binary votes from its coincidence matrix (Krippendorff 2011, sec. 3):
    alpha = 1 - (n - 1) * o_01 / (n_0 * n_1), o_01 = sum over units with m >= 2 values of n_u0 * n_u1 / (m - 1)."""
    pairable = [v for v in votes if len(v) >= 2]
    n = sum(len(v) for v in pairable)
    n_1 = sum(int(v.sum()) for v in pairable)
    n_0 = n - n_1
    o_01 = sum((len(v) - v.sum()) * v.sum() / (len(v) - 1) for v in pairable)
    return 1 - (n - 1) * o_01 / (n_0 * n_1)


def test_statistics_match_closed_forms(frames, agreement):
    for name, frame in frames.items():
        votes = [np.asarray(v, dtype=int) for v in frame["votes"]]
        complete = np.stack([v for v in votes if len(v) == 3])
        assert agreement.loc[name, "fleiss_kappa"] == pytest.approx(binary_fleiss_kappa(complete), abs=1e-12)
        assert agreement.loc[name, "krippendorff_alpha"] == pytest.approx(binary_krippendorff_alpha(votes), abs=1e-12)
        # Share of votes equal to their item's majority, by hand: 3-0 items give 3/3, 2-1 items 2/3.
        by_hand = np.mean([max(sum(v), 3 - sum(v)) / 3 for v in complete])
        assert agreement.loc[name, "majority_agreement_share"] == pytest.approx(by_hand)


def test_cli_writes_table_and_metrics(frames, tmp_path):
    paths = []
    for name in DATASETS:
        path = tmp_path / f"{name}.parquet"
        frames[name][["example_id", "votes"]].to_parquet(path)
        paths.append(str(path))
    out, md, tex = tmp_path / "out", tmp_path / "a.md", tmp_path / "a.tex"
    args = ["metaeval", "annotator-agreement", "--data", *paths, "--out-dir", str(out)]
    assert main(args) == 0
    written = pd.read_csv(out / "agreement.csv")
    table = ["paper", "agreement-table", "--agreement", str(out / "agreement.csv")]
    assert main([*table, "--out-md", str(md), "--out-tex", str(tex)]) == 0
    assert written["dataset"].tolist() == list(DATASETS) and (out / "metrics.json").is_file()
    assert "\\label{tab:agreement}" in tex.read_text() and md.read_text().startswith("| dataset |")
