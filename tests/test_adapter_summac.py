import json

import pytest

from factlab.data.adapters.summac import SPECS, adapt_summac
from factlab.data.schema import validate_benchmark

# Validation-cut counts from the mirror README (summac_benchmark_pr15_subset).
README_COUNTS = {"xsumfaith": 485, "polytope": 634, "factcc": 311, "summeval": 100}


@pytest.fixture(scope="module")
def summac(raw):
    return {name: validate_benchmark(adapt_summac(raw, name).frame, f"summac_{name}") for name in README_COUNTS}


def raw_records(raw, name):
    with open(raw.path("summac_benchmark_pr15_subset", f"data/{name}.json"), encoding="utf-8") as handle:
        return json.load(handle)


def test_specs_cover_the_four_sets():
    assert sorted(spec.name for spec in SPECS) == sorted(f"summac_{name}" for name in README_COUNTS)


@pytest.mark.parametrize("name", sorted(README_COUNTS))
def test_counts_split_and_texts(raw, summac, name):
    frame = summac[name]
    records = raw_records(raw, name)
    assert len(frame) == README_COUNTS[name]
    assert frame["example_id"].is_unique
    assert (frame["split"] == "validation").all()
    assert frame["source"].tolist() == [r["document"] for r in records.values()]
    assert frame["output"].tolist() == [r["claim"] for r in records.values()]
    assert frame["label"].tolist() == [r["label"] for r in records.values()]


def test_factcc_cut_is_counted_as_assumed(raw):
    assert adapt_summac(raw, "factcc").counts["cut_missing_assumed_validation"] == 311
    assert adapt_summac(raw, "summeval").counts["cut_missing_assumed_validation"] == 0


def test_polytope_label_is_no_error(summac):
    frame = summac["polytope"]
    assert (frame["label"] == frame["errors"].map(lambda errors: int(len(errors) == 0))).all()
    assert (frame["label"] == frame["overall_label"]).all()
    # Per-type labels are 1 when that error type is absent.
    has_omission = frame["errors"].map(lambda errors: "Omission" in errors)
    assert (frame["omission_label"] == (~has_omission).astype(int)).all()
    assert frame["doc_id"].nunique() == frame["source"].nunique()


def test_summeval_label_is_majority_of_expert_fives(summac):
    frame = summac["summeval"]
    majority_five = frame["annotations"].map(lambda scores: int(sum(s == 5 for s in scores) >= 2))
    assert (frame["label"] == majority_five).all()
    assert (frame["human_score"] == frame["annotations"].map(lambda s: sum(s) / len(s))).all()
    assert frame["human_score"].between(1, 5).all()
    assert set(frame["error_type"][frame["label"] == 1]) == {"no error"}


def test_xsumfaith_and_factcc_annotations_agree_with_label(summac):
    xsum = summac["xsumfaith"]
    # Annotation rows are 1 = no hallucination; where all agree, the label must say the same.
    unanimous = xsum["annotations"].map(lambda a: len(set(a)) == 1)
    assert (xsum.loc[unanimous, "label"] == xsum.loc[unanimous, "annotations"].map(lambda a: a[0])).all()
    assert set(xsum["system"]) >= {"BERTS2S", "TConvS2S", "PtGen", "TranS2S"}
    factcc = summac["factcc"]
    assert (factcc["annotations"].map(list) == factcc["label"].map(lambda label: [label])).all()
