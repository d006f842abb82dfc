import json

import pytest
from known_counts import TRUE_COUNTS
from sklearn.metrics import roc_auc_score

from factlab.data.adapters.scale_published import SPECS, adapt_screeneval, adapt_true_published
from factlab.data.adapters.true import adapt_true
from factlab.data.schema import validate_table

SPEC = {spec.name: spec for spec in SPECS}
DATASET = "scale_score_reference_outputs"


@pytest.fixture(scope="module")
def screeneval(raw):
    spec = SPEC["screeneval_published"]
    return validate_table(adapt_screeneval(raw).frame, spec.name, spec.required, spec.unique)


@pytest.fixture(scope="module")
def true_published(raw):
    spec = SPEC["true_published"]
    return validate_table(adapt_true_published(raw).frame, spec.name, spec.required, spec.unique)


def raw_result(raw, suffix):
    with open(raw.path(DATASET, suffix), encoding="utf-8") as handle:
        return json.load(handle)


def test_specs_are_published_tables():
    assert {spec.kind for spec in SPECS} == {"table"} and {spec.role for spec in SPECS} == {"published"}


def test_every_paired_screeneval_file_has_614_examples(screeneval):
    paired = screeneval[screeneval["experiment"].isin(["accuracy", "chunk_size"])]
    sizes = paired.groupby(["experiment", "metric"]).size()
    assert (sizes == 614).all()  # ScreenEval's 614 summary sentences (mirror README)
    metrics = paired.groupby("experiment")["metric"].agg(set)
    assert {"scale_large", "bert_score_f", "qa_fact", "summac_conv"} <= metrics["accuracy"]
    assert {"scale_large_1000", "scale_large_100", "scale_xl_1000"} <= metrics["chunk_size"]
    # All paired files list the same labels in the same order, so example_index pairs metrics.
    labels = paired.pivot_table(index="example_index", columns=["experiment", "metric"], values="label")
    assert labels.nunique(axis=1).eq(1).all()


def test_screeneval_labels_are_one_for_consistent(screeneval):
    # SCALE's score is P("Yes, implied"): if labels were inverted its AUC would fall below 0.5.
    for metric in ("scale_large", "scale_xl"):
        rows = screeneval[(screeneval["experiment"] == "accuracy") & (screeneval["metric"] == metric)]
        assert roc_auc_score(rows["label"], rows["score"]) > 0.7


def test_screeneval_rows_match_the_raw_files(raw, screeneval):
    scores, labels, runtime = raw_result(raw, "experiments/chunk_size/results/scale_large_1000_results.json")
    rows = screeneval[(screeneval["experiment"] == "chunk_size") & (screeneval["metric"] == "scale_large_1000")]
    assert rows["score"].tolist() == scores and rows["label"].tolist() == labels
    assert (rows["runtime_s"] == runtime).all()


def test_other_example_set_is_kept_apart(raw, screeneval):
    subset = screeneval[screeneval["experiment"] == "accuracy_226"]
    assert set(subset["metric"]) >= {"scale_small", "rouge_1_f", "rouge_2_f", "rouge_l_p"}
    assert subset.groupby("metric").size().eq(226).all()
    # rouge_1_f comes from two files; it is kept once and equals rouge-1 F of the combined file.
    combined = raw_result(raw, "experiments/accuracy/results/rouge_results.json")[0]
    rouge_1_f = subset[subset["metric"] == "rouge_1_f"]
    assert rouge_1_f["score"].tolist() == [entry["rouge-1"]["f"] for entry in combined]
    assert adapt_screeneval(raw).counts["duplicate_rows_merged"] == 226


def test_true_published_counts_match_true_sets(true_published):
    assert set(true_published["metric"]) == {"bert_score_f", "summac_conv", "summac_zs", "unieval"}
    assert true_published["dataset"].nunique() == 11
    sizes = true_published.groupby(["metric", "dataset"]).size()
    for true_set, count in TRUE_COUNTS.items():
        assert (sizes.xs(true_set, level="dataset") == count).all()


@pytest.mark.parametrize("true_set", ["begin", "frank", "qags_xsum"])
def test_true_published_labels_join_the_true_benchmarks(raw, true_published, true_set):
    benchmark = adapt_true(raw, true_set).frame.set_index("example_id")["label"]
    for _, rows in true_published[true_published["dataset"] == true_set].groupby("metric"):
        assert rows.set_index("example_id")["label"].equals(benchmark.loc[rows["example_id"]])
