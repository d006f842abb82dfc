"""XSumFaith hallucinated spans as gold tokens (xsumfaith_spans), against the raw CSV, the upstream README
(3 workers x 500 articles x 5 summaries) and the faithfulness scores released with it."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil

import numpy as np
import pandas as pd
import pytest
from damaged_copies import row

from factlab.data.adapters.xsumfaith import adapt_xsumfaith
from factlab.data.adapters.xsumfaith_spans import SPANS_FILE, adapt_xsumfaith_spans
from factlab.data.registry import builtin_specs
from factlab.data.schema import validate_table
from factlab.download.manifest import RawFiles
from factlab.errors import DataError
from factlab.io import sha256_file

FACTUALITY = "factuality_annotations_xsum_summaries.csv"
RELEASED = "eval_scores_xsum_summaries.csv"
# Names of the systems in the released scores file.
RELEASED_SYSTEMS = {"bert_withckpt": "BERTS2S", "ptgen": "PtGen", "tconvs2s": "TConvS2S", "bert_nockpt": "TranS2S"}


@pytest.fixture(scope="module")
def built(raw):
    return adapt_xsumfaith_spans(raw)


@pytest.fixture(scope="module")
def table(built):
    spec = builtin_specs()["xsumfaith_spans"]
    return validate_table(built.frame, spec.name, spec.required, spec.unique)


@pytest.fixture(scope="module")
def spans_csv(raw):
    return pd.read_csv(raw.path("xsumfaith", SPANS_FILE), dtype=str, keep_default_na=False)


def test_spec_is_a_table_of_the_xsumfaith_download():
    spec = builtin_specs()["xsumfaith_spans"]
    assert (spec.kind, spec.role, spec.datasets, spec.unique) == ("table", "evaluation", ("xsumfaith",), ("example_id",))


def test_counts_match_the_upstream_readme(table, built, spans_csv):
    # "3 judgements for each of 500 x 5 document-system pairs"; one summary has only 2 workers.
    assert spans_csv["bbcid"].nunique() == 500 == table["doc_id"].nunique() == built.counts["articles"]
    assert table["system"].value_counts().to_dict() == dict.fromkeys(["BERTS2S", "PtGen", "TConvS2S", "TranS2S", "Gold"], 500)
    assert len(table) == spans_csv.groupby(["bbcid", "system"]).ngroups == 2500
    assert table["n_workers"].value_counts().to_dict() == {3: 2499, 2: 1}
    assert row(table, "xsumfaith-35266927-PtGen")["n_workers"] == 2
    # Every summary of the factuality file (the xsumfaith benchmark's source) is here.
    assert int(table["in_factuality_file"].sum()) == 1869 and set(table.loc[table["in_factuality_file"], "system"]) != {"Gold"}
    assert built.counts["read"] == len(spans_csv) == 11185
    assert built.counts["duplicate_rows"] == int(spans_csv.duplicated().sum()) == 33


def test_offsets_are_one_based_with_the_end_exclusive_on_unescaped_text(built, spans_csv):
    marked = spans_csv[spans_csv["hallucination_type"] != "NULL"].drop_duplicates()
    text = marked["summary"].str.replace("\\'", "'", regex=False)
    span = marked["hallucinated_span"].str.replace("\\'", "'", regex=False)
    start, end = marked["hallucinated_span_start"].astype(int), marked["hallucinated_span_end"].astype(int)
    at_offsets = [t[s - 1 : e - 1] == p for t, p, s, e in zip(text, span, start, end, strict=True)]
    assert sum(at_offsets) == len(marked) - 39 == 10325
    # The other 39 carry the annotation page's "\n" and start at 0; the adapter finds them by their text.
    rest = marked[~np.array(at_offsets)]
    assert rest["hallucinated_span"].str.contains("\\n", regex=False).all() and (rest["hallucinated_span_start"] == "0").all()
    assert built.counts["spans_located_by_text"] == 39
    assert built.counts["spans"] == len(marked)


def test_a_real_summary_by_hand(table):
    rory = row(table, "xsumfaith-34687720-BERTS2S")  # rows 2-4 of the CSV
    assert rory["output"].endswith("after carding a three-under")
    tokens = json.loads(rory["tokens"])
    assert tokens[:8] == ["rory", "mcilroy", "will", "take", "a", "one", "-", "shot"] and len(tokens) == 25
    workers = json.loads(rory["worker_token_labels"])
    # wid_0 and wid_1 marked the whole summary [1, 114); wid_2 "the final round of the wgc-hsbc champions" [45, 86).
    assert workers[0] == workers[1] == [0] * 25
    assert [token for token, label in zip(tokens, workers[2], strict=True) if label == 0] == (
        "the final round of the wgc - hsbc champions".split()
    )
    assert json.loads(rory["token_labels"]) == [0] * 25 and rory["n_unsupported_tokens"] == 25
    assert json.loads(rory["worker_spans"])[2] == [[44, 85, "extrinsic"]]


def test_majority_labels_and_tokens(table):
    for _, built in table.iterrows():
        tokens, offsets = json.loads(built["tokens"]), json.loads(built["token_offsets"])
        assert [built["output"][s:e] for s, e in offsets] == tokens
        assert "".join(tokens) == re.sub(r"\s", "", built["output"])
        workers = np.array(json.loads(built["worker_token_labels"]))
        marked = (1 - workers).sum(axis=0)
        assert json.loads(built["token_labels"]) == [int(2 * m <= len(workers)) for m in marked]
        assert built["n_unsupported_tokens"] == int((2 * marked > len(workers)).sum())


def test_outputs_are_the_xsumfaith_benchmark_outputs(raw, table, built):
    benchmark = adapt_xsumfaith(raw).frame
    joined = benchmark.merge(table, on="example_id", how="left", suffixes=("", "_spans"), validate="one_to_one")
    assert joined["output_spans"].notna().all()
    assert (joined["output"] == joined["output_spans"]).all()
    # Two summaries are written with quotation marks in the span file only: their spans moved to the benchmark's text.
    assert built.counts["outputs_aligned_to_factuality"] == 2


def test_faithfulness_agrees_with_the_released_scores(raw, table):
    # Maynez et al. release per summary the share of (word, worker) pairs outside every span. Words here are
    # whitespace-separated; their exact word mapping is not published, so the check is close agreement.
    released = pd.read_csv(raw.path("xsumfaith", RELEASED), dtype={"system_bbcid": str})
    released[["system", "bbcid"]] = released["system_bbcid"].str.rsplit("_", n=1, expand=True)
    released["system"] = released["system"].map(RELEASED_SYSTEMS)

    def whitespace_faithfulness(summary: pd.Series) -> float:
        words = [(m.start(), m.end()) for m in re.finditer(r"\S+", summary["output"])]
        spans = json.loads(summary["worker_spans"])
        return float(np.mean([not any(s < b and a < e for a, b, _ in worker) for worker in spans for s, e in words]))

    ours = table.assign(ours=table.apply(whitespace_faithfulness, axis=1))
    joined = released.merge(ours, left_on=["bbcid", "system"], right_on=["doc_id", "system"], validate="one_to_one")
    assert len(joined) == len(released) == 1992
    for _, group in joined.groupby("system"):
        assert np.corrcoef(group["ours"], group["Faithful"])[0, 1] > 0.99
        assert (group["ours"] - group["Faithful"]).abs().mean() < 0.05


def damaged_csv(raw: RawFiles, tmp_path, line_no: int, edit) -> tuple[RawFiles, str]:
    """RawFiles under tmp_path where line `line_no` of the span CSV went through `edit` (a str -> str)."""
    pinned = list(raw.manifest)
    for name in (SPANS_FILE, FACTUALITY):
        entry = raw.entry("xsumfaith", name)
        target = tmp_path / entry.relpath
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(raw.path("xsumfaith", name), target)
        if name == SPANS_FILE:
            lines = target.read_text(encoding="utf-8").split("\n")
            lines[line_no - 1] = edit(lines[line_no - 1])
            target.write_text("\n".join(lines), encoding="utf-8")
            pinned = [dataclasses.replace(e, sha256=sha256_file(target)) if e == entry else e for e in pinned]
            path = str(target)
    return RawFiles(tmp_path, pinned, per_dataset=False), path


def assert_names(error: pytest.ExceptionInfo[DataError], path: str, record: str, field: str) -> None:
    assert (error.value.file, error.value.record, error.value.field) == (path, record, field)
    assert "\n" not in str(error.value)


def test_a_span_not_in_its_summary_names_file_row_and_field(raw, tmp_path):
    # Row 4: wid_2 marked "the final round of the wgc-hsbc champions" at 45-86; point it elsewhere.
    broken, path = damaged_csv(raw, tmp_path, 4, lambda line: line.replace(",45,86,", ",46,87,"))
    with pytest.raises(DataError) as error:
        adapt_xsumfaith_spans(broken)
    assert_names(error, path, "row 4", "hallucinated_span")


def test_an_unknown_worker_names_file_row_and_field(raw, tmp_path):
    broken, path = damaged_csv(raw, tmp_path, 3, lambda line: line.replace(",wid_1", ",wid_7"))
    with pytest.raises(DataError) as error:
        adapt_xsumfaith_spans(broken)
    assert_names(error, path, "row 3", "worker_id")
