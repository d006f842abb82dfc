"""The scorer tables render the metaeval CSVs at the precision of each estimate."""

from __future__ import annotations

import io

import pandas as pd

from factlab.paper.scorer_tables import frank_scorers_frame, interval, localisation_frame

# Rows of results/metaeval/frank_scorers/correlations.csv from a default run (session 17).
CORRELATIONS = """metric,subset,n,pearson,pearson_p,spearman,spearman_p,variant,n_dropped_nan,pearson_ci_low,pearson_ci_high
factlab alignscore,all,2246,0.17144572402722796,2.8e-16,0.15519229074105476,1.4e-13,frank,0,0.12539021300119108,0.220304805884748
BertScore P Art,all,2246,0.2710806892071824,3.9e-39,0.24324424941241,1.3e-31,frank,0,0.2307364761382547,0.3133202691742095
factlab alignscore,cnndm,1250,0.19325663517642233,5.5e-12,0.1708590647155343,1.2e-09,frank,0,,
BertScore P Art,cnndm,1250,0.345507562928669,2.3e-36,0.28954275769888516,1.4e-25,frank,0,,
"""


def test_correlation_interval_keeps_three_decimals() -> None:
    # A correlation's CI at one decimal read "[0.2, 0.3]" for both rows: it could not separate them.
    table = frank_scorers_frame(pd.read_csv(io.StringIO(CORRELATIONS))).set_index("metric")
    assert table.at["BertScore P Art", "95% CI (all)"] == "[0.231, 0.313]"
    assert table.at["factlab alignscore", "95% CI (all)"] == "[0.125, 0.220]"
    assert list(table.index) == ["BertScore P Art", "factlab alignscore"]  # by Pearson on all, highest first


def test_auc_interval_in_points_and_missing_bounds() -> None:
    assert interval(0.7713, 0.8491, 100) == "[77.1, 84.9]"
    assert interval(float("nan"), 0.8, 100) == ""


# A row of results/metaeval/localisation/tokens.csv from a default run (session 17).
TOKENS = {
    "dataset": "wice_tokens", "scorer": "alignscore", "policy": "fixed05", "threshold": 0.5, "n_examples": 105,
    "n_unscored_examples": 0, "n_tokens": 1514, "n_unsupported": 407, "base_rate": 0.268824, "n_flagged": 1075,
    "precision": 0.256744, "recall": 0.678133, "f1": 0.37247, "f1_ci_low": 0.328277, "f1_ci_high": 0.41367,
    "roc_auc": 0.508336, "roc_auc_ci_low": 0.468416, "roc_auc_ci_high": 0.548524, "n_tokens_outside_units": 0,
}  # fmt: skip


def test_localisation_intervals_on_the_scale_of_their_estimates() -> None:
    # The token AUC is shown on 0-1 (0.508), so its CI must be too: it once read "[46.8, 54.9]" beside it.
    row = localisation_frame(pd.DataFrame([TOKENS])).iloc[0]
    assert round(row["token AUC"], 3) == 0.508
    assert row["AUC 95% CI"] == "[0.468, 0.549]"
    assert row["F1 95% CI"] == "[0.328, 0.414]"
