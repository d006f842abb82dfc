"""The scorer tables render the metaeval CSVs at the precision of each estimate."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from factlab.paper.scorer_tables_command import (
    correction_frame,
    correlations_frame,
    error_types_frame,
    explanations_frame,
    interval,
    localisation_frame,
)

# Rows of results/metaeval/frank_scorers/correlations.csv from a default run, with the `sampled`
# column the table has since gained.
CORRELATIONS = """metric,subset,n,pearson,pearson_p,spearman,spearman_p,variant,n_dropped_nan,pearson_ci_low,pearson_ci_high
factlab alignscore,all,2246,0.17144572402722796,2.8e-16,0.15519229074105476,1.4e-13,frank,0,0.12539021300119108,0.220304805884748
BertScore P Art,all,2246,0.2710806892071824,3.9e-39,0.24324424941241,1.3e-31,frank,0,0.2307364761382547,0.3133202691742095
factlab alignscore,cnndm,1250,0.19325663517642233,5.5e-12,0.1708590647155343,1.2e-09,frank,0,,
BertScore P Art,cnndm,1250,0.345507562928669,2.3e-36,0.28954275769888516,1.4e-25,frank,0,,
"""


def correlations_csv() -> pd.DataFrame:
    return pd.read_csv(io.StringIO(CORRELATIONS)).assign(sampled=False)


def test_correlation_interval_keeps_three_decimals() -> None:
    # A correlation's CI at one decimal read "[0.2, 0.3]" for both rows: it could not separate them.
    table = correlations_frame(correlations_csv()).set_index("metric")
    assert table.at["BertScore P Art", "95% CI (all)"] == "[0.231, 0.313]"
    assert table.at["factlab alignscore", "95% CI (all)"] == "[0.125, 0.220]"
    assert list(table.index) == ["BertScore P Art", "factlab alignscore"]  # by Pearson on all, highest first


def test_auc_interval_in_points_and_missing_bounds() -> None:
    assert interval(0.7713, 0.8491, 100) == "[77.1, 84.9]"
    assert interval(float("nan"), 0.8, 100) == ""


# A row of results/metaeval/localisation/tokens.csv from a smoke run.
TOKENS = {
    "dataset": "xsumfaith_spans", "scorer": "alignscore_localiser", "policy": "fixed05", "threshold": 0.5,
    "n_examples": 9, "n_unscored_examples": 1741, "n_tokens": 166, "n_unsupported": 95, "base_rate": 0.572289,
    "n_flagged": 92, "precision": 0.73913, "recall": 0.715789, "f1": 0.727273, "f1_ci_low": 0.307692,
    "f1_ci_high": 0.771084, "n_characters": 672, "n_unsupported_characters": 411, "n_flagged_characters": 399,
    "char_precision": 0.781955, "char_recall": 0.759124, "char_f1": 0.77037, "char_f1_ci_low": 0.097561,
    "char_f1_ci_high": 0.843137, "roc_auc": 0.738769, "roc_auc_ci_low": 0.708901, "roc_auc_ci_high": 0.835223,
    "n_tokens_outside_units": 0,
}  # fmt: skip


def test_localisation_intervals_on_the_scale_of_their_estimates() -> None:
    # The token AUC is shown on 0-1 (0.739), so its CI must be too, not in points ("[70.9, 83.5]").
    row = localisation_frame(pd.DataFrame([TOKENS])).iloc[0]
    assert round(row["token AUC"], 3) == 0.739
    assert row["AUC 95% CI"] == "[0.709, 0.835]"
    assert row["F1 95% CI"] == "[0.308, 0.771]"
    assert (row["char precision"], row["char recall"], row["char F1"]) == pytest.approx((0.781955, 0.759124, 0.77037))
    assert row["char F1 95% CI"] == "[0.098, 0.843]"


def test_localisation_table_adds_the_annotators_and_the_evidence_rows() -> None:
    """The agreement of the evaluated part (not of `all`) and each retrieval method at each k, beside the token rows;
    without annotators or retrieval, the token rows alone."""
    report = {
        "datasets": {
            "wice_tokens": {"agreement": None},
            "xsumfaith_spans": {
                "agreement": {
                    "all": {"mean_pairwise_f1": 0.9, "fleiss_kappa": 0.9, "n_tokens": 60000},
                    "evaluated": {"mean_pairwise_f1": 0.5123, "fleiss_kappa": 0.2111, "n_tokens": 33000},
                }
            },
        }
    }
    retrieval = {
        "summary": [
            {
                "split": "test",
                "method": "binary_search",
                "k": 1,
                "claims": 328,
                "recall": 0.173,
                "hit": 0.317,
                "mean_calls": 14.2,
            },
            {"split": "test", "method": "brute_force", "k": 3, "claims": 328, "recall": 0.586, "hit": 0.82, "mean_calls": 123.2},
            {"split": "dev", "method": "best_chunk", "k": 1, "claims": 300, "recall": 0.3, "hit": 0.4, "mean_calls": 20.0},
        ]
    }
    table = localisation_frame(pd.DataFrame([TOKENS]), report, retrieval)
    methods = ["scale binary_search", "scale brute_force", "best_chunk"]
    assert list(table["scorer"]) == ["alignscore_localiser", "annotators", *methods]
    assert table.iloc[4]["gold"] == "wice_claims evidence (dev)"
    annotators = table.iloc[1]
    assert (annotators["gold"], annotators["n"], annotators["F1"]) == ("xsumfaith_spans", 33000, 0.5123)
    assert annotators["policy"] == "pairwise, kappa 0.211"
    assert pd.isna(annotators["precision"]) and pd.isna(annotators["token AUC"])
    evidence = table.iloc[3]
    assert (evidence["gold"], evidence["policy"], evidence["n"], evidence["recall"]) == (
        "wice_claims evidence (test)",
        "top 3",
        328,
        0.586,
    )
    assert table["n"].dtype == "Int64" and table.iloc[0]["n"] == 166
    assert len(localisation_frame(pd.DataFrame([TOKENS]), {"datasets": {}}, {"summary": []})) == 1


# Rows of results/metaeval/frank_scorers/williams.csv of the same run (factlab alignscore vs the reference).
WILLIAMS = """metric_a,metric_b,n,r12,r13,r23,t,df,p_two_sided,p_frank_one_sided,variant,p
factlab alignscore,BertScore P Art,2246,0.171,0.271,0.43,-4.1,2243,0.0042,0.0021,frank_one_sided,0.0021
"""


def test_williams_p_against_the_top_row_only_where_the_pair_was_tested() -> None:
    """FRANK: the best metric (the released BERTScore-P-Art here) heads the table; factlab alignscore carries the p of
    its tested pair with it; a subset-keyed Williams table (SummEval) is read on the table's subset only."""
    correlations = correlations_csv()
    table = correlations_frame(correlations, pd.read_csv(io.StringIO(WILLIAMS))).set_index("metric")
    column = "Williams p vs BertScore P Art (all)"
    assert table.at["BertScore P Art", column] == ""
    assert table.at["factlab alignscore", column] == "0.004"  # the two-sided p, not FRANK's one-sided one
    on_cnndm = correlations.assign(subset=correlations["subset"].replace({"all": "everything", "cnndm": "all"}))
    keyed = pd.read_csv(io.StringIO(WILLIAMS)).assign(subset="everything")
    table = correlations_frame(on_cnndm, keyed).set_index("metric")  # no test on the subset shown: no p
    assert (table[column] == "").all() and table.at["BertScore P Art", "n (all)"] == 1250


def test_p_values_at_three_decimals_or_below_a_thousandth() -> None:
    from factlab.paper.scorer_tables_command import p_value_text

    assert [p_value_text(p) for p in (0.2209, 0.0012, 0.00099, float("nan"))] == ["0.221", "0.001", "< 0.001", ""]


def test_a_sampled_scorer_heading_the_table_is_marked_and_not_the_one_compared_with() -> None:
    """A scorer of a seeded sample (score.sample) with the highest Pearson is listed first, marked, with its own n, and
    carries its p against the best of the metrics that scored every summary, which the column is named after."""
    sampled = pd.DataFrame(
        [{"metric": "factlab summac_zs", "subset": "all", "n": 200, "pearson": 0.35, "pearson_ci_low": 0.2,
          "pearson_ci_high": 0.47, "sampled": True}]
    )  # fmt: skip
    correlations = pd.concat([correlations_csv(), sampled], ignore_index=True)
    williams = pd.concat(
        [pd.read_csv(io.StringIO(WILLIAMS)),
         pd.DataFrame([{"metric_a": "factlab summac_zs", "metric_b": "BertScore P Art", "n": 200, "p_two_sided": 0.31}])],
        ignore_index=True,
    )  # fmt: skip
    table = correlations_frame(correlations, williams).set_index("metric")
    column = "Williams p vs BertScore P Art (all)"
    assert list(table.index)[0] == "factlab summac_zs (sample)" and column in table.columns
    assert table.at["factlab summac_zs (sample)", column] == "0.310"
    assert table.at["factlab summac_zs (sample)", "n (all)"] == 200 and table.at["BertScore P Art", column] == ""


def test_error_types_table_one_row_per_category_then_the_macro_auc() -> None:
    rows = []
    for category, auc in (("EntE", 0.7), ("RelE", 0.6)):
        methods = (("type_head", auc), ("unsupported", 0.55), ("rule", 0.52), ("majority", 0.5), ("perfect_detector", 0.8))
        for method, value in methods:
            rows.append(
                {"category": category, "method": method, "n": 100, "n_present": 30, "roc_auc": value,
                 "roc_auc_ci_low": value - 0.05, "roc_auc_ci_high": value + 0.05, "roc_auc_among_errors": value - 0.1,
                 "threshold": 0.4, "f1": value / 2}
            )  # fmt: skip
    report = {
        "macro_roc_auc": {"type_head": 0.65, "unsupported": 0.55, "rule": 0.52, "majority": 0.5, "perfect_detector": 0.8},
        "macro_roc_auc_among_errors": {"type_head": 0.55, "unsupported": 0.45, "rule": 0.5},
    }
    table = error_types_frame(pd.DataFrame(rows), report)
    assert list(table["category"]) == ["EntE", "RelE", "macro"]
    ente = table.iloc[0]
    assert (ente["present"], ente["type head AUC"], ente["rule AUC"], ente["type head F1"]) == (30, 0.7, 0.52, 0.35)
    assert ente["type head AUC 95% CI"] == "[0.650, 0.750]"
    assert ente["type head AUC among errors"] == pytest.approx(0.6) and ente["perfect detector AUC"] == 0.8
    macro = table.iloc[2]
    assert macro["type head AUC"] == 0.65 and pd.isna(macro["n"])
    assert (macro["perfect detector AUC"], macro["type head AUC among errors"]) == (0.8, 0.55)
    assert (macro["unsupported AUC among errors"], macro["rule AUC among errors"]) == (0.45, 0.5)
    assert ente["unsupported AUC among errors"] == pytest.approx(0.45) and "majority AUC among errors" not in table


def test_correction_table_in_percent():
    systems = pd.DataFrame(
        [
            {"system": "bart", "n_outputs": 175, "n_changed": 14, "judge_consistent_before": 0.4, "judge_consistent_after": 0.45,
             "n_human_consistent": 80, "n_over_corrected": 4, "over_correction": 0.05, "over_correction_ci_low": 0.0197,
             "over_correction_ci_high": 0.1216, "rouge_l_changed": 0.9},
        ]
    )  # fmt: skip
    restore = pd.DataFrame(
        [{"transform": "number_swap", "error_type": "CircE", "n_corrupted": 100, "n_flagged": 90, "n_changed": 60,
          "n_restored": 45, "restore_rate": 0.45}]
    )  # fmt: skip
    table = correction_frame(systems, restore).set_index("rows")
    assert table.loc["bart", ["judge consistent before %", "judge consistent after %", "over-correction %"]].tolist() == (
        pytest.approx([40.0, 45.0, 5.0])
    )
    assert table.loc["bart", ["human-consistent", "over-corrected", "over-correction 95% CI"]].tolist() == [80, 4, "[2.0, 12.2]"]
    assert table.loc["restore: number_swap (CircE)", ["n", "changed", "restored %"]].tolist() == [100, 60, pytest.approx(45.0)]


def test_explanations_table_in_percent():
    summary = pd.DataFrame(
        [{"split": "test", "task": "all", "n_responses": 151, "n_unsupported_qas": 531, "coverage": 0.5,
          "coverage_ci_low": 0.4, "coverage_ci_high": 0.6, "coverage_predicate": 0.25, "coverage_answer": 0.375,
          "n_explanations": 486, "precision": 0.6, "precision_ci_low": 0.55, "precision_ci_high": 0.65,
          "chance_precision": 0.5}]
    )  # fmt: skip
    row = explanations_frame(summary).iloc[0]
    assert [row["pointed at %"], row["by predicate %"], row["by answer %"], row["on an unsupported QA %"], row["chance %"]] == (
        pytest.approx([50.0, 25.0, 37.5, 60.0, 50.0])
    )
    assert (row["pointed 95% CI"], row["on QA 95% CI"]) == ("[40.0, 60.0]", "[55.0, 65.0]")
    assert [row["responses"], row["unsupported QAs"], row["explanations"]] == [151, 531, 486]
