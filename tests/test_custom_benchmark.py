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
    hint = (
        "labels not in label_map: ['no']; map every label of the file to 1 (consistent), 0 (not) or null (unlabelled), "
        'e.g. label_map: {"no": 0, "yes": 1}'
    )
    assert raised.value.details[-1] == hint  # the hint is listed after the records, not counted as one
    assert str(raised.value).startswith(f"{len(lines)} bad record(s)")


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


def test_every_duplicate_id_is_named_with_file_line_and_upstream_column():
    # TRUE's SummEval `id` is the article's, shared by its ten outputs: not an example id
    config = {"path": str(SUMMEVAL), "columns": {**TRUE_COLUMNS, "example_id": "id"}}
    with pytest.raises(DataErrors, match=r"true_summeval_rows6-17.csv") as raised:
        adapt_custom("mine", config)
    # article A's outputs are on lines 2-11, article B's on lines 12-13: every repeat after the first of each
    expected = [f"record line {line}, field 'id': duplicate example_id '{DOC_A}', first on line 2" for line in range(3, 12)]
    expected.append(f"record line 13, field 'id': duplicate example_id '{DOC_B}', first on line 12")
    assert raised.value.details == expected
    assert str(raised.value).startswith("10 bad record(s)")


def test_duplicate_ids_are_reported_at_once_with_every_other_bad_record(tmp_path):
    """Repeated ids of two examples, an empty output and a label that maps to nothing, in two files: one error lists
    them all, each with its file and line, so one pass over the files fixes everything."""
    records = [json.loads(line) for line in (FIXTURES / "byo_qags_xsum_head.jsonl").read_text().splitlines()]
    first, second = [dict(record) for record in records[:3]], [dict(record) for record in records[3:]]
    first[2]["summary"] = ""  # a.jsonl line 3
    second[0]["id"] = "qx0"  # b.jsonl line 1 repeats a.jsonl line 1
    second[1]["faithful"] = "maybe"  # b.jsonl line 2
    second[2]["id"] = "qx1"  # b.jsonl line 3 repeats a.jsonl line 2
    for name, rows in (("a", first), ("b", second)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    config = {"path": str(tmp_path / "*.jsonl"), "columns": COLUMNS, "label_map": LABELS}
    with pytest.raises(DataErrors) as raised:
        adapt_custom("mine", config)
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert raised.value.details[:4] == [
        f"file {a}, record line 3, field 'summary': output is empty",
        f"file {b}, record line 1, field 'id': duplicate example_id 'qx0', first on line 1 of {a}",
        f"file {b}, record line 2, field 'faithful': label 'maybe' is not in label_map",
        f"file {b}, record line 3, field 'id': duplicate example_id 'qx1', first on line 2 of {a}",
    ]
    assert raised.value.details[4].startswith(f"file {b}: labels not in label_map: ['maybe']")
    assert str(raised.value).startswith("4 bad record(s)")


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
    label_map = yaml.safe_load("{yes: 1, no: 0}")  # unquoted, as a user would write it in their config file
    assert label_map == {True: 1, False: 0}
    config = {"path": str(FIXTURES / "byo_qags_xsum_head.csv"), "columns": COLUMNS, "label_map": label_map}
    match = r"label 'yes' is not in label_map; YAML read the unquoted key yes as boolean True: quote it in my_bench.yaml"
    with pytest.raises(DataErrors, match=match) as raised:  # the summary line quotes the first of the file's bad records
        adapt_custom("mine", config, config_file="my_bench.yaml")
    assert "params.yaml" not in str(raised.value) + "".join(raised.value.details)
    assert raised.value.details[-1].endswith('e.g. label_map: {"no": 0, "yes": 1}')  # what the user meant, quoted
    # where the workflow cannot tell which file declares the benchmark
    with pytest.raises(DataErrors, match="quote it in your config file"):
        adapt_custom("mine", config)


# Labels as users write them: every label_map a message suggests is YAML that maps every label of the file, and the
# file is then read.
LABEL_FILES = {
    "yes_no": (["yes", "no", "no", "yes"], None),
    "unquoted_yaml_booleans": (["yes", "no"], {True: 1, False: 0}),
    "words": (["faithful", "hallucinated", "faithful"], None),
    "one_missing": (["maybe", "yes", "no"], {"yes": 1, "no": 0}),
    "awkward_text": (["it's: {odd}", 'say "no"', "#1", "null", "- x", "ünï"], None),
    "numbers_as_text": (["1.0", "0.0", "0.5"], None),
}


@pytest.mark.parametrize("case", list(LABEL_FILES))
def test_every_suggested_label_map_is_yaml_that_reads_the_file(case, tmp_path):
    labels, label_map = LABEL_FILES[case]
    records = [json.loads(line) for line in (FIXTURES / "byo_qags_xsum_head.jsonl").read_text().splitlines()]
    rows = [{**records[i], "faithful": label} for i, label in enumerate(labels)]
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    config = {"path": str(path), "columns": COLUMNS, "label_map": label_map}
    with pytest.raises(DataErrors) as raised:
        adapt_custom("mine", config)
    shown = "\n".join([*raised.value.details, str(raised.value)])
    suggestions = [line.split("e.g. ", 1)[1] for line in shown.splitlines() if "e.g. " in line]
    assert suggestions and all(suggestion.startswith("label_map: ") for suggestion in suggestions)
    for suggestion in suggestions:
        suggested = yaml.safe_load(suggestion)["label_map"]
        assert set(suggested) == set(labels) and set(suggested.values()) <= {0, 1, None}
        built = adapt_custom("mine", {**config, "label_map": suggested}).frame
        assert len(built) == len(labels)
    if case in ("yes_no", "unquoted_yaml_booleans"):
        assert yaml.safe_load(suggestions[0])["label_map"] == {"yes": 1, "no": 0}


def test_nan_label_is_refused_in_jsonl_as_in_csv(tmp_path):
    """JSON's NaN is no label, as CSV's "NaN" is not: both are refused with their line, never read as missing."""
    records = [json.loads(line) for line in (FIXTURES / "byo_qags_xsum_head.jsonl").read_text().splitlines()]
    rows = [{**record, "faithful": 1} for record in records]
    rows[2]["faithful"] = float("nan")
    (tmp_path / "mine.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))  # json writes NaN
    assert "NaN" in (tmp_path / "mine.jsonl").read_text().splitlines()[2]
    table = pd.read_csv(FIXTURES / "byo_qags_xsum_head.csv", dtype=str, keep_default_na=False)
    table["faithful"] = "1"
    table.loc[2, "faithful"] = "NaN"
    table.to_csv(tmp_path / "mine.csv", index=False)
    for name, where, shown in (("mine.jsonl", "line 3", "NaN"), ("mine.csv", "line 4", "'NaN'")):
        with pytest.raises(DataErrors) as raised:
            adapt_custom("mine", {"path": str(tmp_path / name), "columns": COLUMNS})
        assert raised.value.details[0].startswith(f"record {where}, field 'faithful': label {shown} is not 0, 1 or null")


def test_a_json_array_in_a_jsonl_file_is_told_to_be_a_json_file(tmp_path):
    records = [json.loads(line) for line in (FIXTURES / "byo_qags_xsum_head.jsonl").read_text().splitlines()]
    for layout, text in (("one line", json.dumps(records)), ("pretty-printed", json.dumps(records, indent=2))):
        (tmp_path / "mine.jsonl").write_text(text + "\n")
        with pytest.raises(DataError, match=r"the file holds a JSON array of records: name it \.json.*record line 1"):
            adapt_custom("mine", {"path": str(tmp_path / "mine.jsonl"), "columns": COLUMNS, "label_map": LABELS})
        (tmp_path / "mine.json").write_text(text + "\n")  # renamed, it is read
        frame = adapt_custom("mine", {"path": str(tmp_path / "mine.json"), "columns": COLUMNS, "label_map": LABELS}).frame
        assert frame["example_id"].tolist() == [record["id"] for record in records], layout


def test_a_truncated_json_line_names_its_line_and_column(tmp_path):
    text = (FIXTURES / "byo_qags_xsum_head.jsonl").read_text()
    (tmp_path / "mine.jsonl").write_text(text[:-40])  # the last record cut inside its summary
    cut = text[:-40].splitlines()[-1]
    column = cut.index('"summary":"') + len('"summary":') + 1  # the cut string opens here (columns count from 1)
    match = rf"malformed JSON line: Unterminated string starting at column {column} \(file .*mine.jsonl, record line 6\)"
    with pytest.raises(DataError, match=match):
        adapt_custom("mine", {"path": str(tmp_path / "mine.jsonl"), "columns": COLUMNS, "label_map": LABELS})


def test_training_overlap_lists_examples_sharing_an_eight_word_run():
    from factlab.score.training_overlap_command import overlapping_examples

    frame = pd.read_json(FIXTURES / "byo_qags_xsum_head.jsonl", lines=True)
    examples = frame.rename(columns={"id": "example_id", "document": "source", "summary": "output"})
    words = examples["output"][2].split()
    eight, seven = " ".join(words[2:10]), " ".join(words[2:9])  # a copied run of 8 words, and one of 7 (no apostrophe)
    source_words = examples["source"][4].split()
    training = [f"An unrelated premise. {eight.upper()}!", f"Nothing here {seven}, or less.", " ".join(source_words[3:11])]
    assert overlapping_examples(examples, training, 8) == sorted([examples["example_id"][2], examples["example_id"][4]])
    assert overlapping_examples(examples, training[1:2], 8) == []
