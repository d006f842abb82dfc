"""Agreement of QAGS and XSumFaith votes, checked against statsmodels and the krippendorff package."""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from factlab.cli import main
from factlab.data.registry import get_spec
from factlab.metaeval.published.agreement import AGREEMENT_COLUMNS, agreement_table, ratings_matrix

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


def test_statistics_match_reference_packages(frames, agreement):
    for name, frame in frames.items():
        votes = list(frame["votes"])
        complete = np.stack([v for v in votes if len(v) == 3])
        table, _ = aggregate_raters(complete)
        assert agreement.loc[name, "fleiss_kappa"] == pytest.approx(statsmodels_fleiss_kappa(table, method="fleiss"), abs=1e-12)
        padded = np.array([list(v) + [np.nan] * (3 - len(v)) for v in votes], dtype=float)
        expected_alpha = krippendorff.alpha(reliability_data=padded.T, level_of_measurement="nominal")
        assert agreement.loc[name, "krippendorff_alpha"] == pytest.approx(expected_alpha, abs=1e-12)
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
