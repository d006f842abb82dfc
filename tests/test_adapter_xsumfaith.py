import json

import pandas as pd
import pytest

from factlab.data.adapters.xsumfaith import SPECS, adapt_xsumfaith
from factlab.data.schema import validate_benchmark

SYSTEMS = {"BERTS2S", "PtGen", "TConvS2S", "TranS2S"}


@pytest.fixture(scope="module")
def built(raw):
    return adapt_xsumfaith(raw)


@pytest.fixture(scope="module")
def xsumfaith(built):
    return validate_benchmark(built.frame, "xsumfaith")


@pytest.fixture(scope="module")
def answers(raw):
    return pd.read_csv(raw.path("xsumfaith", "factuality_annotations_xsum_summaries.csv"), dtype=str)


def test_xsumfaith_file_matches_mirror_readme(answers):
    # 498 articles x 4 systems; only summaries with a marked hallucination were asked (1,869 pairs).
    assert answers["bbcid"].nunique() == 498
    assert set(answers["system"]) == SYSTEMS  # no gold summaries in the factuality file
    assert answers.groupby(["bbcid", "system"]).ngroups == 1869


def test_xsumfaith_counts_and_join_coverage(xsumfaith, built):
    counts = built.counts
    assert counts["pairs"] == 1869
    assert counts["dropped_no_votes"] == 11
    assert counts["dropped_no_article"] == 22
    assert counts["articles_without_text"] == 6 < 20
    assert len(xsumfaith) == counts["pairs"] - counts["dropped_no_votes"] - counts["dropped_no_article"] == 1836
    assert xsumfaith["doc_id"].nunique() == counts["articles"] == 489
    by_source = xsumfaith["article_source"].value_counts().to_dict()
    assert by_source == {name: counts[f"pairs_from_{name}"] for name in ("summac", "cliff", "frank")}
    assert set(xsumfaith["system"]) == SYSTEMS and (xsumfaith["split"] == "test").all()


def test_xsumfaith_label_is_majority_of_yes_votes(xsumfaith):
    votes = xsumfaith["votes"]
    assert votes.map(len).isin([2, 3]).all()
    assert (votes.map(len) == xsumfaith["worker_ids"].map(len)).all()
    assert (xsumfaith["label"] == votes.map(lambda v: int(2 * sum(v) > len(v)))).all()
    assert (xsumfaith["human_score"] == votes.map(lambda v: sum(v) / len(v))).all()
    assert 0.05 < xsumfaith["label"].mean() < 0.25


def test_xsumfaith_votes_and_summaries_come_from_the_csv(xsumfaith, answers):
    answered = answers[answers["is_factual"].isin(["yes", "no"])]
    answered = answered.assign(yes=answered["is_factual"].eq("yes").astype(int))
    expected = answered.groupby(["bbcid", "system"]).agg(yes=("yes", "sum"), n=("yes", "size"), summary=("summary", "first"))
    rows = xsumfaith.astype({"doc_id": str, "system": str}).rename(columns={"doc_id": "bbcid"})
    joined = rows.merge(expected, left_on=["bbcid", "system"], right_index=True, how="left", validate="1:1")
    assert joined["n"].notna().all()
    assert (joined["votes"].map(sum) == joined["yes"]).all()
    assert (joined["votes"].map(len) == joined["n"]).all()
    assert (joined["output"] == joined["summary"]).all()


def test_xsumfaith_articles_come_from_the_preferred_source(xsumfaith, raw):
    with open(raw.path("summac_benchmark_pr15_subset", "data/xsumfaith.json"), encoding="utf-8") as handle:
        summac = {record["bbcid"]: record["document"] for record in json.load(handle).values()}
    cliff = pd.read_csv(raw.path("aggrefact_partial", "CLIFF_error_types.csv"), dtype=str)
    cliff = dict(zip(cliff["id"], cliff["doc"], strict=True))
    from_summac = xsumfaith["article_source"] == "summac"
    assert (xsumfaith.loc[from_summac, "source"] == xsumfaith.loc[from_summac, "doc_id"].map(summac)).all()
    rest = xsumfaith[~from_summac]
    assert not rest["doc_id"].isin(list(summac)).any()
    from_cliff = rest["article_source"] == "cliff"
    assert (rest.loc[from_cliff, "source"] == rest.loc[from_cliff, "doc_id"].map(cliff)).all()
    assert not rest.loc[~from_cliff, "doc_id"].isin(list(cliff)).any()


def test_xsumfaith_spec_lists_every_dataset_read():
    (spec,) = SPECS
    assert set(spec.datasets) == {"xsumfaith", "summac_benchmark_pr15_subset", "aggrefact_partial", "frank"}
