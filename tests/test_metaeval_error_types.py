"""Error types on FRANK (factlab.metaeval.error_types): hand-worked statistics, scikit-learn as the reference for
AUC and F1, and the command on real FRANK summaries with scores whose answers are known."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import f1_score as sklearn_f1
from sklearn.metrics import roc_auc_score

from factlab.data.registry import get_spec
from factlab.metaeval.analyses.error_types_command import auc_among_errors, run_error_types
from factlab.metaeval.error_types import (
    EVALUATED_TYPES,
    Word,
    best_f1_threshold,
    category_present,
    confusion,
    presence_auc,
    rule_scores,
    summary_type_scores,
)


def test_summary_type_score_is_the_worst_unsupported_sentence_of_that_type():
    sentences = [
        {"support": 0.9, "error_types": {"EntE": 0.8, "RelE": 0.2}},  # supported: 0.1 x ...
        {"support": 0.2, "error_types": {"EntE": 0.1, "RelE": 0.9}},  # unsupported relation: 0.8 x 0.9
    ]
    scores = summary_type_scores(sentences, ("EntE", "RelE"))
    assert scores == pytest.approx({"EntE": max(0.1 * 0.8, 0.8 * 0.1), "RelE": 0.8 * 0.9})
    assert np.isnan(summary_type_scores([{"support": 0.5}], ("EntE",))["EntE"])  # no type head: no score


def test_category_presence():
    assert category_present([1.0, 0.5, 0.0, 1.0]).tolist() == [0, 1, 1, 0]


def test_rules_worked_by_hand():
    source = [Word("smith", "smith", "PROPN"), Word("won", "win", "VERB"), Word("2013", "2013", "NUM")]
    output = [
        Word("jones", "jones", "PROPN"),
        Word("won", "win", "VERB"),
        Word("in", "in", "ADP"),
        Word("2015", "2015", "NUM"),
        Word("he", "he", "PRON"),
    ]
    scores = rule_scores(output, source)
    assert scores["EntE"] == 1.0  # "jones" of one proper noun is new
    assert scores["CircE"] == 1.0 and scores["RelE"] == 0.0  # "2015" new; "won" has its lemma in the source
    assert scores["OutE"] == pytest.approx(2 / 3)  # jones, 2015 new of jones, won, 2015
    assert scores["CorefE"] == 1.0  # one pronoun


def test_auc_f1_and_threshold_against_scikit_learn():
    rng = np.random.default_rng(5)
    present = rng.integers(0, 2, 300)
    score = present * 0.3 + rng.random(300)
    assert presence_auc(present, score) == pytest.approx(roc_auc_score(present, score), abs=1e-12)
    threshold = best_f1_threshold(present, score)
    best = max(sklearn_f1(present, score >= t) for t in np.unique(score))
    assert sklearn_f1(present, score >= threshold) == pytest.approx(best)


def test_auc_among_errors_degenerate_cases():
    assert auc_among_errors(np.array([1, 0, 1]), np.array([0.2, 0.2, 0.2])) == 0.5  # a constant: ties count half
    assert np.isnan(auc_among_errors(np.array([1, 1, 1]), np.array([0.1, 0.5, 0.9])))  # always present
    assert np.isnan(auc_among_errors(np.array([], dtype=int), np.array([])))  # no summary with an error


def test_confusion_counts():
    matrix = confusion(["EntE", "RelE", "EntE"], ["EntE", "EntE", "CircE"])
    assert matrix[0, 0] == 1 and matrix[0, 2] == 1 and matrix[1, 0] == 1 and matrix.sum() == 3


@pytest.fixture(scope="module")
def frank(raw) -> pd.DataFrame:
    frame = get_spec("frank").build(raw).frame
    # every article of 40 in each split: enough summaries of every category
    chosen = pd.concat([group.drop_duplicates("doc_id").head(40) for _, group in frame.groupby("split")])["doc_id"]
    return frame[frame["doc_id"].isin(chosen)].reset_index(drop=True)


def test_command_on_real_frank_summaries(frank: pd.DataFrame, tmp_path: Path):
    # a type head that knows EntE exactly and guesses the rest from a seeded coin: its EntE AUC is 1, the others near 0.5
    rng = np.random.default_rng(0)
    records = []
    for row in frank.itertuples(index=False):
        ent = float(row.EntE < 1)
        types = {name: (ent if name == "EntE" else float(rng.random())) for name in EVALUATED_TYPES}
        score = float(rng.random())  # an untyped AlignScore score, the same for every category
        records.append({"example_id": row.example_id, "score": score, "sentences": [{"support": 0.0, "error_types": types}]})
    frank.to_parquet(tmp_path / "data.parquet")
    pd.DataFrame(records).to_parquet(tmp_path / "scores.parquet")
    args = argparse.Namespace(
        data=str(tmp_path / "data.parquet"),
        scores=str(tmp_path / "scores.parquet"),
        seed=1,
        resamples=100,
        confidence=0.95,
        out=str(tmp_path / "categories.csv"),
        confusion=str(tmp_path / "confusion.csv"),
        report=str(tmp_path / "report.json"),
        out_metrics=str(tmp_path / "metrics.json"),
    )
    run_error_types(args)
    rows = pd.read_csv(args.out).set_index(["category", "method"])
    test = frank[frank["split"] == "test"]
    assert rows.loc[("EntE", "type_head"), "roc_auc"] == pytest.approx(1.0)
    assert rows.loc[("EntE", "type_head"), "n_present"] == int((test["EntE"] < 1).sum())
    assert rows.loc[("EntE", "majority"), "roc_auc"] == 0.5
    # the others: the AUC of the coin, recomputed with scikit-learn on the same test summaries
    scores = pd.DataFrame(records).set_index("example_id").loc[test["example_id"], "sentences"]
    relation = [sentences[0]["error_types"]["RelE"] for sentences in scores]
    assert rows.loc[("RelE", "type_head"), "roc_auc"] == pytest.approx(roc_auc_score(test["RelE"] < 1, relation), abs=1e-6)
    # the perfect untyped detector: the annotations' "any of the five", scored against each category by scikit-learn
    present = test[list(EVALUATED_TYPES)] < 1
    any_error = present.any(axis=1)
    for name in EVALUATED_TYPES:
        assert rows.loc[(name, "perfect_detector"), "roc_auc"] == pytest.approx(roc_auc_score(present[name], any_error), abs=1e-6)
        assert rows.loc[(name, "perfect_detector"), "roc_auc_among_errors"] == 0.5  # constant where there is an error
    # among the summaries with an error, the EntE oracle still ranks perfectly and the RelE coin is scored there alone
    assert rows.loc[("EntE", "type_head"), "roc_auc_among_errors"] == pytest.approx(1.0)
    among = np.asarray(relation)[any_error.to_numpy()]
    expected = roc_auc_score(present["RelE"][any_error], among)
    assert rows.loc[("RelE", "type_head"), "roc_auc_among_errors"] == pytest.approx(expected, abs=1e-6)
    # 1 - AlignScore among the summaries with an error, and its macro over the five, by scikit-learn
    unsupported = 1 - pd.DataFrame(records).set_index("example_id").loc[test["example_id"], "score"].to_numpy()
    expected_among = {
        name: roc_auc_score(present[name][any_error], unsupported[any_error.to_numpy()]) for name in EVALUATED_TYPES
    }
    for name, value in expected_among.items():
        assert rows.loc[(name, "unsupported"), "roc_auc_among_errors"] == pytest.approx(value, abs=1e-6)
    report = json.loads(Path(args.report).read_text())
    assert report["test_summaries_with_errors"] == int(any_error.sum())
    assert report["macro_roc_auc_among_errors"]["unsupported"] == pytest.approx(np.mean(list(expected_among.values())), abs=1e-6)
    # the perfect detector reads the annotations: a reference in the report, never a method in metrics.json
    metrics = json.loads(Path(args.out_metrics).read_text())
    assert "perfect_detector" in report["macro_roc_auc"] and "perfect_detector" not in metrics["macro_roc_auc"]
    assert "perfect_detector" not in metrics["EntE"] and "type_head" in metrics["EntE"]
    assert report["test_summaries"] == len(test) and report["validation_summaries"] == int((frank["split"] == "validation").sum())
    matrix = pd.read_csv(args.confusion, index_col=0)
    single = (test[list(EVALUATED_TYPES)] < 1).sum(axis=1) == 1
    assert matrix.to_numpy().sum() == int(single.sum())
