import pandas as pd
import pytest
from damaged_copies import check_nli_schema, line_count

from factlab.data.adapters.nli import (
    BINARY_LABELS,
    DOCNLI,
    adapt_anli,
    adapt_docnli_binary,
    adapt_mctest,
    adapt_rte,
    adapt_sick,
    iter_tab_lines,
    read_labelled_lines,
)
from factlab.errors import DataError

THREE_WAY = {"entailment", "neutral", "contradiction"}
TWO_WAY = {"entailment", "not_entailment"}


@pytest.fixture(scope="module")
def mnli(raw):
    return adapt_docnli_binary(raw, folder="binary-MNLI", corpus="mnli")


@pytest.fixture(scope="module")
def fever(raw):
    return adapt_docnli_binary(raw, folder="binary-FEVER-NLI", corpus="fever")


def split_sizes(frame: pd.DataFrame) -> dict[str, int]:
    return frame["split"].value_counts().to_dict()


def test_binary_mnli_and_fever_counts_match_mirror_readme(raw, mnli, fever):
    assert split_sizes(mnli.frame) == {"dev": 6_647, "test": 13_000}
    assert split_sizes(fever.frame) == {"dev": 8_209, "test": 10_000}
    assert mnli.counts["read"] == 19_647 and fever.counts["read"] == 18_209
    for split in ("dev", "test"):
        assert line_count(raw.path(DOCNLI, f"Data/binary-MNLI/{split}.txt")) == split_sizes(mnli.frame)[split]


def test_binary_sets_are_binary_canonical_rows(mnli, fever):
    for built, name in ((mnli, "nli_mnli_binary"), (fever, "nli_fever_binary")):
        frame = check_nli_schema(built.frame, name, TWO_WAY)
        assert frame["system"].nunique() == 1
    first = mnli.frame.iloc[0]  # line 1 of binary-MNLI/dev.txt
    assert first["nli_label"] == "not_entailment" and first["source"] == "Challenges to Restore Public Confidence in"


def test_mctest_reads_five_files_with_subset_and_split(raw):
    built = adapt_mctest(raw)
    frame = check_nli_schema(built.frame, "nli_mctest", TWO_WAY)
    paths = raw.glob(DOCNLI, "Data/MCTest-NLI/")
    assert len(paths) == 5 and len(frame) == sum(line_count(p) for p in paths)
    per_file = built.frame.groupby(["subset", "split"]).size().to_dict()
    assert per_file == {(p.name.split(".")[0], p.name.split(".")[1].split("_")[0]): line_count(p) for p in paths}
    # Each MCTest question has 4 answer options, exactly one of them correct.
    assert (frame["label"].sum() * 4) == len(frame)


def test_anli_counts_rounds_and_labels(raw):
    frame = check_nli_schema(adapt_anli(raw).frame, "nli_anli", THREE_WAY)
    assert len(frame) == 6_400
    assert split_sizes(frame) == {"dev": 3_200, "test": 3_200}
    assert frame["round"].value_counts().to_dict() == {1: 2_000, 2: 2_000, 3: 2_400}


def test_sick_counts_labels_and_relatedness(raw):
    built = adapt_sick(raw)
    frame = check_nli_schema(built.frame, "nli_sick", THREE_WAY)
    assert len(frame) == 9_927
    assert split_sizes(frame) == {"train": 4_500, "dev": 500, "test": 4_927}
    assert frame["relatedness"].between(1, 5).all()
    # The test file has CRLF line ends: no label or text may keep a stray \r.
    assert not frame["output"].str.contains("\r").any()


def test_rte_resplit_covers_official_train_plus_dev(raw):
    frame = check_nli_schema(adapt_rte(raw).frame, "nli_rte", TWO_WAY)
    assert len(frame) == 2_767
    assert split_sizes(frame) == {"train": 1_244, "dev": 139, "test": 1_384}
    indices = frame["example_id"].str.removeprefix("rte-").astype(int)
    assert sorted(indices) == list(range(2_767))
    # test.tsv holds quote characters that a CSV reader would treat as quoting; every line is one row.
    assert line_count(raw.path("nli_rte_resplit", "glue_data/RTE/test.tsv")) - 1 == 1_384
    assert frame.loc[frame["split"] == "test", "output"].str.contains('"').any()


def test_malformed_line_names_file_and_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("entailment\tpremise\thypothesis\nentailment\tonly two fields\n", encoding="utf-8")
    with pytest.raises(DataError) as error:
        list(iter_tab_lines(path, 3))
    assert error.value.file == str(path) and error.value.record == "line 2"


def test_unknown_label_is_an_error(tmp_path):
    path = tmp_path / "bad_label.txt"
    path.write_text("maybe\tpremise\thypothesis\n", encoding="utf-8")
    with pytest.raises(DataError) as error:
        list(read_labelled_lines(path, BINARY_LABELS))
    assert error.value.field == "label" and error.value.record == "line 1"


def test_a_repeated_pair_is_dropped_and_a_relabelled_one_is_an_error(tmp_path):
    from factlab.data.adapters.nli import is_repeat

    first = {("doc", "claim"): {"nli_label": "entailment", "example_id": "x-1"}}
    assert not is_repeat(first, ("doc", "other"), "entailment", "document and claim", file=tmp_path, record="line 2", field="f")
    assert is_repeat(first, ("doc", "claim"), "entailment", "document and claim", file=tmp_path, record="line 2", field="f")
    with pytest.raises(DataError, match="the same document and claim are not_entailment here but entailment in x-1"):
        is_repeat(first, ("doc", "claim"), "not_entailment", "document and claim", file=tmp_path, record="line 3", field="f")
