import zipfile

import pandas as pd
import pytest

from factlab.data.adapters.qasrl import COLUMNS, QANOM_ZIP, SPECS, adapt_qanom, adapt_qasrl_gs, parse_ranges
from factlab.data.schema import validate_table
from factlab.errors import DataError

SPEC = {spec.name: spec for spec in SPECS}


@pytest.fixture(scope="module")
def gs(raw):
    return adapt_qasrl_gs(raw)


@pytest.fixture(scope="module")
def qanom(raw):
    return adapt_qanom(raw)


def validated(built, name: str) -> pd.DataFrame:
    spec = SPEC[name]
    frame = validate_table(built.frame, name, spec.required, spec.unique)
    assert tuple(frame.columns) == COLUMNS
    return frame


def assert_spans_round_trip(frame: pd.DataFrame) -> None:
    for row in frame.itertuples():
        assert row.sentence == " ".join(row.tokens)
        assert row.predicate == row.tokens[row.predicate_idx]
        assert len(row.answers) == len(row.answer_ranges)
        for (start, end), answer in zip(row.answer_ranges, row.answers, strict=True):
            assert 0 <= start < end <= len(row.tokens)
            assert answer == " ".join(row.tokens[start:end])


def upstream_gs(raw) -> pd.DataFrame:
    """The gold files read independently with pandas, in the adapter's order."""
    frames = [
        pd.read_csv(raw.path("qasrl_gs", f"data/gold/{domain}.{split}.gold.csv"), dtype=str, keep_default_na=False)
        for domain in ("wikinews", "wikipedia")
        for split in ("dev", "test")
    ]
    return pd.concat(frames, ignore_index=True)


def test_qasrl_gs_counts_match_mirror_readme(gs):
    frame = validated(gs, "qasrl_gs")
    assert len(frame) == 14_290 and gs.counts["qas"] == 14_290
    assert frame["sentence_id"].nunique() == 1_999
    assert set(frame["split"]) == {"dev", "test"}
    assert set(frame["domain"]) == {"wikinews", "wikipedia"}
    assert frame["is_verbal"].all() and frame["question"].ne("").all()
    assert frame["verb_form"].isna().all()  # the gold standard gives no lemma


def test_qasrl_gs_spans_round_trip_and_match_upstream_exclusive_ends(raw, gs):
    frame = gs.frame
    assert_spans_round_trip(frame)
    upstream = upstream_gs(raw)
    assert len(upstream) == len(frame)
    assert (upstream["question"] == frame["question"]).all()
    # [start, end) read from the tokens reproduces upstream's answer strings, except where upstream
    # lost non-ASCII characters ("Garc?s"): the count of those is reported, not hidden.
    rebuilt = frame["answers"].map("~!~".join)
    differs = rebuilt != upstream["answer"]
    assert differs.sum() == gs.counts["answer_text_differs_upstream"] == 3
    assert upstream.loc[differs, "answer"].str.contains("?", regex=False).all()


def test_qasrl_gs_slots_and_ids(gs):
    frame = gs.frame
    assert (frame["key"] == frame["sentence_id"] + "_" + frame["predicate_idx"].astype(str)).all()
    assert (frame["qa_id"].str.rsplit("_q", n=1).str[0] == frame["key"]).all()
    assert frame["wh"].ne("").all()
    assert set(frame["subj"]) <= {"", "someone", "something"}
    negated = frame.loc[frame["verb_prefix"].str.startswith("not"), "verb"]
    assert negated.str.startswith("not").all() and len(negated) > 0


def test_qanom_counts_match_mirror_readme(raw, qanom):
    frame = validated(qanom, "qanom")
    counts = qanom.counts
    assert (counts["read_train"], counts["read_dev"], counts["read_test"]) == (30_644, 7_660, 7_023)
    with zipfile.ZipFile(raw.path("qanom", QANOM_ZIP)) as archive:
        for split in ("train", "dev", "test"):
            with archive.open(f"annot.{split}.csv") as handle:
                assert len(pd.read_csv(handle, dtype=str)) == counts[f"read_{split}"]
    train = frame[frame["split"] == "train"]
    assert train["sentence_id"].nunique() == 7_114
    # The 38 verbatim repeats in train are dropped and counted.
    assert counts["dropped_duplicate_row"] == 38 and len(train) == 30_644 - 38
    assert len(frame) == counts["read"] - counts["dropped_duplicate_row"]


def test_qanom_keeps_predicates_without_qas_as_negatives(qanom):
    frame = qanom.frame
    no_qa = frame[frame["question"] == ""]
    assert no_qa["answer_ranges"].map(len).eq(0).all() and no_qa["answers"].map(len).eq(0).all()
    assert (no_qa["verb"] == "").all() and (no_qa["wh"] == "").all()
    assert (~no_qa["is_verbal"]).sum() > 0 and no_qa["is_verbal"].sum() > 0
    # A predicate without QAs has exactly one row.
    assert no_qa["key"].isin(frame.loc[frame["question"] != "", "key"]).sum() == 0
    assert not no_qa["key"].duplicated().any()
    non_verbal_qas = (frame["question"] != "") & ~frame["is_verbal"]
    assert non_verbal_qas.sum() == qanom.counts["qa_on_non_verbal_predicate"]
    assert set(frame.loc[non_verbal_qas, "split"]) == {"dev"}


def test_qanom_spans_round_trip_and_keys(qanom):
    frame = qanom.frame
    assert_spans_round_trip(frame)
    assert (frame["key"] == frame["sentence_id"] + "_" + frame["predicate_idx"].astype(str)).all()
    assert frame["verb_form"].ne("").all()
    assert set(frame["domain"]) == {"wikinews", "wikipedia"}


def test_bad_answer_range_is_an_error():
    with pytest.raises(DataError) as error:
        parse_ranges("3:2", 10, file="gold.csv", record="line 5")
    assert error.value.field == "answer_range" and error.value.record == "line 5"
    with pytest.raises(DataError):
        parse_ranges("8:11", 10, file="gold.csv", record="line 5")
