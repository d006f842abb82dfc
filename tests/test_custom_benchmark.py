"""Bring-your-own benchmark: a file plus a column mapping becomes a benchmark, no code change."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from factlab.data.adapters.custom import adapt_custom, custom_spec
from factlab.data.build import build_benchmark
from factlab.data.registry import all_specs
from factlab.data.schema import validate_benchmark
from factlab.errors import DataError, DataErrors

FIXTURES = Path(__file__).parent / "fixtures"
CUSTOM = FIXTURES / "custom"
# Cuts of real files (tests/fixtures/README.md): TRUE's CSVs keep their pandas index column, whose header is empty.
QAGS_CNNDM, QAGS_XSUM = CUSTOM / "true_qags_cnndm_head.csv", CUSTOM / "true_qags_xsum_head.csv"
SUMMEVAL = CUSTOM / "true_summeval_rows6-17.csv"
PAIRS = CUSTOM / "cogensumm_val_sentence_pairs_head.json"
TRUE_COLUMNS = {"source": "grounding", "output": "generated_text", "label": "label"}
PAIR_COLUMNS = {"example_id": "incorrect_sent_id", "source": "article_sent", "output": "incorrect_sent"}
# TRUE's SummEval rows 6-17: ten outputs of article 8764fb95… and two of f26d8400…
DOC_A, DOC_B = "8764fb95bfad8ee849274873a92fb8d6b400eee2", "f26d8400ae49b90d109c165d0f44b8f6ca253c08"
COLUMNS = {"example_id": "id", "source": "document", "output": "summary", "label": "faithful"}
LABELS = {"yes": 1, "no": 0}


@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_custom_file_becomes_canonical_benchmark(suffix):
    path = FIXTURES / f"byo_qags_xsum_head.{suffix}"
    config = {"path": str(path), "columns": COLUMNS, "label_map": LABELS, "defaults": {"system": "bart"}}
    frame = validate_benchmark(adapt_custom("mine", config).frame, "mine")
    upstream = pd.read_csv(FIXTURES / "byo_qags_xsum_head.csv")
    assert frame["example_id"].tolist() == upstream["id"].tolist()
    assert frame["label"].tolist() == upstream["faithful"].map(LABELS).tolist()
    assert (frame["system"] == "bart").all() and (frame["split"] == "test").all()
    assert frame["source"].tolist() == upstream["document"].tolist()


def test_custom_spec_joins_registry():
    specs = all_specs({"mine": {"path": str(FIXTURES / "byo_qags_xsum_head.csv"), "columns": COLUMNS}})
    assert specs["mine"].local_files == (str(FIXTURES / "byo_qags_xsum_head.csv"),)
    assert "qags_xsum" in specs


def test_label_missing_from_label_map_is_named():
    config = {"path": str(FIXTURES / "byo_qags_xsum_head.csv"), "columns": COLUMNS, "label_map": {"yes": 1}}
    # qx1, the first "no", is the file's line 3 (the header is line 1)
    with pytest.raises(DataErrors) as raised:
        adapt_custom("mine", config)
    upstream = pd.read_csv(FIXTURES / "byo_qags_xsum_head.csv")
    lines = [f"line {i + 2}" for i in upstream.index[upstream["faithful"] == "no"]]  # every "no", not only the first
    assert raised.value.details[:-1] == [f"record {line}, field 'faithful': label 'no' is not in label_map" for line in lines]
    hint = "labels not in label_map: ['no']; map them (1 = consistent), e.g. label_map: {\"no\": 0, 1 or null}"
    assert raised.value.details[-1] == hint
    assert str(raised.value).startswith(f"{len(lines) + 1} bad record(s)")


def test_mapped_column_absent_is_named():
    config = {"path": str(FIXTURES / "byo_qags_xsum_head.csv"), "columns": {**COLUMNS, "source": "article"}}
    with pytest.raises(DataError, match="mapped column 'article' is not in the file"):
        adapt_custom("mine", config)


def generated_texts(path: Path) -> list[str]:
    """The generated_text column of a TRUE cut, read with the csv module alone."""
    with open(path, newline="", encoding="utf-8") as handle:
        return [row["generated_text"] for row in csv.DictReader(handle)]


def test_json_array_file_is_read():
    config = {"path": str(PAIRS), "columns": {**PAIR_COLUMNS, "doc_id": "article_id"}, "defaults": {"label": "0"}}
    frame = validate_benchmark(adapt_custom("pairs", config).frame, "pairs")
    assert frame["example_id"].tolist() == ["40-0", "17-1", "4-1", "83-2"]
    assert frame["doc_id"].iloc[0] == "67c3b0a2da09ce32a83c098da1e0aff034e790d0"
    assert frame["source"].iloc[1].startswith("five ambitious clubs are locked in a scramble")
    assert frame["label"].tolist() == [0, 0, 0, 0]


def test_inputs_a_checker_cannot_judge_are_flagged_and_counted(tmp_path):
    records = [json.loads(line) for line in (FIXTURES / "byo_qags_xsum_head.jsonl").read_text().splitlines()]
    records[1]["summary"] = "一辆安保车在格拉斯哥市中心被抢劫。"  # a Chinese output
    records[2]["document"] = "2014 -- 2015: 4.5 / 7.25"  # a numeric source
    records[4]["document"] = "... !!! ???"  # punctuation only
    (tmp_path / "mine.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records))
    built = adapt_custom("mine", {"path": str(tmp_path / "mine.jsonl"), "columns": COLUMNS, "label_map": LABELS})
    frame = validate_benchmark(built.frame, "mine")
    assert frame["input_flags"].map(list).tolist() == [
        [],
        ["not_english"],
        ["no_words_in_source"],
        [],
        ["no_words_in_source"],
        [],
    ]
    assert (built.counts["flagged_not_english"], built.counts["flagged_no_words_in_source"]) == (1, 2)


def test_glob_concatenates_files_in_sorted_path_order():
    config = {"path": str(CUSTOM / "true_qags_*_head.csv"), "columns": TRUE_COLUMNS}
    built = adapt_custom("mine", config)
    frame = validate_benchmark(built.frame, "mine")
    # qags_cnndm sorts before qags_xsum: its six rows come first
    assert frame["output"].tolist() == generated_texts(QAGS_CNNDM) + generated_texts(QAGS_XSUM)
    assert frame["output"].iloc[6].startswith("Two security guards have been threatened")
    assert frame["label"].tolist() == [1, 1, 0, 0, 0, 1] + [1, 0, 0, 0, 1, 1]
    # twelve records: two digits, so that the ids sort in file order (unpadded, mine-10 would sort before mine-2)
    assert frame["example_id"].iloc[0] == "mine-00" and frame["example_id"].iloc[11] == "mine-11"
    assert sorted(frame["example_id"]) == frame["example_id"].tolist()
    flagged = {"flagged_no_words_in_source": 0, "flagged_no_words_in_output": 0, "flagged_not_english": 0}
    assert built.counts == {"read": 12, "files": 2, "unnamed_columns": 2, **flagged}
    assert frame["input_flags"].map(list).tolist() == [[]] * 12


def test_path_list_is_read_in_sorted_path_order():
    config = {"path": [str(QAGS_XSUM), str(QAGS_CNNDM)], "columns": TRUE_COLUMNS}
    frame = adapt_custom("mine", config).frame
    assert frame["output"].tolist() == generated_texts(QAGS_CNNDM) + generated_texts(QAGS_XSUM)
    assert custom_spec("mine", config).local_files == (str(QAGS_CNNDM), str(QAGS_XSUM))


def test_glob_matching_nothing_names_the_pattern():
    pattern = str(CUSTOM / "nothing_*.csv")
    with pytest.raises(DataError, match=r"no file matches the pattern '.*nothing_\*\.csv'"):
        adapt_custom("mine", {"path": pattern, "columns": TRUE_COLUMNS})
    assert custom_spec("mine", {"path": pattern, "columns": TRUE_COLUMNS}).local_files == ()


def test_unmapped_columns_are_kept_in_the_parquet(tmp_path):
    config = {"path": str(SUMMEVAL), "columns": TRUE_COLUMNS}
    report = build_benchmark(custom_spec("mine", config), None, tmp_path / "mine.parquet", tmp_path / "mine.json")
    stored = pd.read_parquet(tmp_path / "mine.parquet")
    assert stored["id"].tolist() == [DOC_A] * 10 + [DOC_B] * 2
    assert "" not in stored.columns and "Unnamed: 0" not in stored.columns  # the unnamed index column is skipped
    assert report["counts"]["unnamed_columns"] == 1


def test_kept_columns_can_be_named_as_group_columns():
    config = {"path": str(SUMMEVAL), "columns": TRUE_COLUMNS, "group_columns": ["id"]}
    assert custom_spec("mine", config).group_columns == ("id",)
    assert adapt_custom("mine", config).frame["id"].nunique() == 2  # TRUE's two article ids in the cut
    with pytest.raises(DataError, match="group column 'domain'.*group_columns"):
        adapt_custom("mine", {**config, "group_columns": ["domain"]})


def test_unmapped_column_with_a_canonical_name_is_kept_apart():
    # TRUE's `label` column left unmapped: the benchmark's label stays unset, the upstream one is kept
    frame = adapt_custom("mine", {"path": str(QAGS_XSUM), "columns": {"source": "grounding", "output": "generated_text"}}).frame
    assert frame["upstream_label"].tolist() == ["1", "0", "0", "0", "1", "1"]
    assert frame["label"].isna().all()


def test_doc_id_from_source_groups_the_outputs_of_one_document():
    config = {"path": str(SUMMEVAL), "columns": TRUE_COLUMNS, "doc_id": "from_source"}
    frame = validate_benchmark(adapt_custom("mine", config).frame, "mine")
    # `sha1sum` of each article's text (the grounding cell, as written in the file) gives 80f49710b70c… and 7f7b9ba760e1…
    assert frame["doc_id"].tolist() == ["doc-80f49710b70c"] * 10 + ["doc-7f7b9ba760e1"] * 2
    # the same partition as the article ids TRUE ships
    assert frame.groupby("doc_id")["id"].nunique().eq(1).all() and frame["doc_id"].nunique() == 2


def test_duplicate_id_names_file_line_and_upstream_column():
    # TRUE's SummEval `id` is the article's, shared by its ten outputs: not an example id
    config = {"path": str(SUMMEVAL), "columns": {**TRUE_COLUMNS, "example_id": "id"}}
    with pytest.raises(
        DataError,
        match=rf"duplicate example_id, first on line 2 \(file .*true_summeval_rows6-17.csv, "
        rf"record {DOC_A} on line 3, field 'id'\)",
    ):
        adapt_custom("mine", config)


def test_repeated_header_name_is_an_error(tmp_path):
    lines = QAGS_XSUM.read_text(encoding="utf-8").splitlines(keepends=True)
    assert lines[0] == ",grounding,generated_text,label\n"
    bad = tmp_path / "mine.csv"
    bad.write_text(",grounding,label,label\n" + "".join(lines[1:]), encoding="utf-8")
    match = r"column name 'label' is repeated in the header .*mine.csv, record line 1, field 'label'"
    with pytest.raises(DataError, match=match) as error:
        adapt_custom("mine", {"path": str(bad), "columns": {"source": "grounding", "output": "label"}})
    assert "label.1" not in str(error.value)


def blank(suffix: str, value: str, tmp_path: Path) -> tuple[dict, str]:
    """A copy of a real fixture whose third record has `value` as its output; the config and where that record starts."""
    if suffix == "csv":
        table = pd.read_csv(FIXTURES / "byo_qags_xsum_head.csv", dtype=str, keep_default_na=False)
        table.loc[2, "summary"] = value
        table.to_csv(tmp_path / "mine.csv", index=False)
        return {"path": str(tmp_path / "mine.csv"), "columns": COLUMNS, "label_map": LABELS}, "line 4, field 'summary'"
    if suffix == "jsonl":
        records = [json.loads(line) for line in (FIXTURES / "byo_qags_xsum_head.jsonl").read_text().splitlines()]
        records[2]["summary"] = value
        (tmp_path / "mine.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
        return {"path": str(tmp_path / "mine.jsonl"), "columns": COLUMNS, "label_map": LABELS}, "line 3, field 'summary'"
    records = json.loads(PAIRS.read_text())
    records[2]["incorrect_sent"] = value
    # the upstream layout: records start on lines 2, 10, 18 and 26
    (tmp_path / "mine.json").write_text(json.dumps(records, indent=1))
    return {"path": str(tmp_path / "mine.json"), "columns": PAIR_COLUMNS}, "line 18, item 3, field 'incorrect_sent'"


@pytest.mark.parametrize("value", ["", "  \t "])
@pytest.mark.parametrize("suffix", ["csv", "jsonl", "json"])
def test_empty_output_is_rejected_alike_in_every_format(suffix, value, tmp_path):
    config, where = blank(suffix, value, tmp_path)
    with pytest.raises(DataError, match=rf"output is empty.*mine\.{suffix}, record {where}"):
        adapt_custom("mine", config)


def test_null_output_in_json_is_rejected_like_an_empty_cell(tmp_path):
    config, where = blank("json", "x", tmp_path)
    records = json.loads(Path(config["path"]).read_text())
    del records[2]["incorrect_sent"]
    Path(config["path"]).write_text(json.dumps(records, indent=1))
    with pytest.raises(DataError, match=rf"output is empty \(an empty cell, null or absent\).*record {where}"):
        adapt_custom("mine", config)


def test_empty_id_names_its_line(tmp_path):
    table = pd.read_csv(FIXTURES / "byo_qags_xsum_head.csv", dtype=str, keep_default_na=False)
    table.loc[3, "id"] = ""
    table.to_csv(tmp_path / "mine.csv", index=False)
    with pytest.raises(DataError, match=r"example_id is empty.*record line 5, field 'id'") as error:
        adapt_custom("mine", {"path": str(tmp_path / "mine.csv"), "columns": COLUMNS, "label_map": LABELS})
    assert "<NA>" not in str(error.value)


def test_label_map_keys_read_as_booleans_by_yaml_are_explained():
    label_map = yaml.safe_load("{yes: 1, no: 0}")  # unquoted, as a user would write it in params.yaml
    assert label_map == {True: 1, False: 0}
    config = {"path": str(FIXTURES / "byo_qags_xsum_head.csv"), "columns": COLUMNS, "label_map": label_map}
    match = r"label 'yes' is not in label_map; YAML read the unquoted key yes as boolean True: quote it"
    with pytest.raises(DataErrors, match=match):  # the summary line quotes the first of the file's bad records
        adapt_custom("mine", config)


def test_training_overlap_lists_examples_sharing_an_eight_word_run():
    from factlab.score.training_overlap import overlapping_examples

    frame = pd.read_json(FIXTURES / "byo_qags_xsum_head.jsonl", lines=True)
    examples = frame.rename(columns={"id": "example_id", "document": "source", "summary": "output"})
    words = examples["output"][2].split()
    eight, seven = " ".join(words[2:10]), " ".join(words[2:9])  # a copied run of 8 words, and one of 7 (no apostrophe)
    source_words = examples["source"][4].split()
    training = [f"An unrelated premise. {eight.upper()}!", f"Nothing here {seven}, or less.", " ".join(source_words[3:11])]
    assert overlapping_examples(examples, training, 8) == sorted([examples["example_id"][2], examples["example_id"][4]])
    assert overlapping_examples(examples, training[1:2], 8) == []
