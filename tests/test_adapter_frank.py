import json

import pandas as pd
import pytest

from factlab.data.adapters.frank import BASELINE_METRICS, SPECS, adapt_frank, adapt_frank_baselines
from factlab.data.schema import validate_benchmark, validate_table

CNNDM_SYSTEMS = {"bart", "bert_sum", "bus", "pgn", "s2s"}
XSUM_SYSTEMS = {"BERTS2S", "PtGen", "TConvS2S", "TranS2S"}


@pytest.fixture(scope="module")
def built(raw):
    return adapt_frank(raw)


@pytest.fixture(scope="module")
def frank(built):
    return validate_benchmark(built.frame, "frank")


@pytest.fixture(scope="module")
def annotations(raw):
    with open(raw.path("frank", "data/human_annotations.json"), encoding="utf-8") as handle:
        return json.load(handle)


def test_frank_counts_match_mirror_readme(frank, built):
    assert len(frank) == 2246 and built.counts["dropped_no_text"] == 0
    assert frank["system"].nunique() == 9
    per_subset = frank.groupby("subset")
    assert per_subset["doc_id"].nunique().to_dict() == {"cnndm": 250, "xsum": 249}
    assert set(frank.loc[frank["dataset"] == "cnndm", "system"]) == CNNDM_SYSTEMS
    assert set(frank.loc[frank["dataset"] == "bbc", "system"]) == XSUM_SYSTEMS
    assert (frank["subset"] == frank["dataset"].map({"cnndm": "cnndm", "bbc": "xsum"})).all()
    assert frank["reference"].notna().all()


def test_frank_split_is_by_article(frank):
    assert frank["split"].value_counts().to_dict() == {"test": 1575, "validation": 671}
    assert frank.groupby("doc_id")["split"].nunique().eq(1).all()


def test_frank_label_is_error_free_summary(frank, annotations):
    assert frank["human_score"].between(0, 1).all()
    assert (frank["label"] == frank["human_score"].eq(1.0).astype("Int8")).all()
    assert int(frank["label"].sum()) == sum(record["Factuality"] == 1 for record in annotations)
    assert 0.2 < frank["label"].mean() < 0.5


def test_frank_keeps_every_error_and_flip_column(frank, annotations):
    kept = set(annotations[0]) - {"hash", "model_name", "split", "Factuality"}
    assert kept <= set(frank.columns)
    assert sum(c.startswith("Flip_") for c in frank.columns) == 11
    first = frank.set_index("example_id").loc[f"frank-{annotations[0]['hash']}-{annotations[0]['model_name']}"]
    assert all(first[c] == annotations[0][c] for c in kept - {"dataset"})


def test_frank_texts_match_true_copy(frank, raw):
    # TRUE (Honovich et al., 2022) copied FRANK's validation texts from benchmark_data.json.
    true = pd.read_csv(raw.path("true_benchmark_scale_copy", "data/true/frank.csv"))
    joined = true.merge(frank, left_on=["hash", "model"], right_on=["doc_id", "system"], how="left", validate="1:1")
    assert len(joined) == 671 and joined["example_id"].notna().all()
    assert (joined["split"] == "validation").all()
    assert (joined["output"] == joined["generated_text"]).all()
    assert (joined["source"] == joined["grounding"]).all()


def test_frank_baseline_scores_are_wide_and_join_frank(raw, frank):
    spec = next(s for s in SPECS if s.name == "frank_baseline_scores")
    table = validate_table(adapt_frank_baselines(raw).frame, spec.name, spec.required, spec.unique)
    assert len(table) == 2246
    assert set(table["example_id"]) == set(frank["example_id"])
    with open(raw.path("frank", "data/baseline_factuality_metrics_outputs.json"), encoding="utf-8") as handle:
        records = json.load(handle)
    metrics = [k for k in records[0] if k not in ("hash", "model_name", "dataset", "split")]
    assert tuple(metrics) == BASELINE_METRICS
    by_id = table.set_index("example_id")
    for record in records:
        row = by_id.loc[f"frank-{record['hash']}-{record['model_name']}"]
        for metric in metrics:
            if record[metric] is None:
                assert pd.isna(row[metric])
            else:
                assert row[metric] == record[metric]
