"""`factlab benchmarks export`: built benchmarks as JSON Lines with their sentence units, and a manifest.

A results folder is made of real rows: 20 SummEval summaries (with the sentence units factlab's preprocess stage
splits them into) and 20 of TRUE's SummEval (no sentence units), in a shuffled order that is not example_id order,
beside a built table (FRANK's published baseline scores) that is not a benchmark.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from factlab.cli import main
from factlab.data.adapters.custom import custom_spec
from factlab.data.build import build_benchmark
from factlab.data.registry import get_spec
from factlab.data.schema import validate_benchmark
from factlab.download.manifest import RawFiles
from factlab.io import write_parquet
from factlab.preprocess.benchmark import select_examples, sentence_units

N_EXAMPLES = 20
FIXTURES = Path(__file__).parent / "fixtures"


def strict_json(line: str) -> dict[str, Any]:
    def refuse(constant: str) -> None:
        raise ValueError(f"not strict JSON: {constant}")

    return json.loads(line, parse_constant=refuse)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [strict_json(line) for line in path.read_text(encoding="utf-8").splitlines()]


def export(*words: str) -> int:
    return main(["benchmarks", "export", *words])


@pytest.fixture(scope="module")
def results(raw: RawFiles, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("run") / "results"
    summeval = validate_benchmark(get_spec("summeval").build(raw).frame, "summeval")
    kept = summeval.sample(N_EXAMPLES + 5, random_state=0).reset_index(drop=True)
    # The sentence units are split from 5 more examples than the table keeps: their rows are counted as dropped.
    sentences, _ = sentence_units(select_examples(kept, "summeval"), "summeval", "pysbd", progress=False)
    write_parquet(kept.head(N_EXAMPLES), folder / "data" / "summeval.parquet")
    write_parquet(sentences, folder / "preprocess" / "summeval" / "sentences.parquet")
    true_summeval = validate_benchmark(get_spec("true_summeval").build(raw).frame, "true_summeval")
    write_parquet(true_summeval.sample(N_EXAMPLES, random_state=1), folder / "data" / "true_summeval.parquet")
    baselines = get_spec("frank_baseline_scores").build(raw).frame
    write_parquet(baselines, folder / "data" / "frank_baseline_scores.parquet")
    return folder


@pytest.fixture(scope="module")
def exported(results: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("exports") / "plain"
    assert export(str(out), "--results", str(results)) == 0
    return out


@pytest.fixture(scope="module")
def labelled(results: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("exports") / "labelled"
    assert export(str(out), "--results", str(results), "--labels", "--benchmarks", "summeval", "true_summeval") == 0
    return out


def test_every_example_in_the_tables_order_with_its_sentence_units(results: Path, exported: Path) -> None:
    table = pd.read_parquet(results / "data" / "summeval.parquet")
    records = read_jsonl(exported / "summeval.jsonl")
    assert table["example_id"].tolist() != sorted(table["example_id"])  # the order below is the table's, not sorted
    assert [r["example_id"] for r in records] == table["example_id"].tolist()
    for name in ("doc_id", "source", "output"):
        assert [r[name] for r in records] == table[name].tolist()
    for record in records:
        assert list(record) == ["example_id", "doc_id", "source", "output", "sentences"]
        units = record["sentences"]
        assert units and [unit["index"] for unit in units] == list(range(len(units)))
        for unit in units:
            assert set(unit) == {"index", "start", "end", "text"}
            assert record["output"][unit["start"] : unit["end"]] == unit["text"]
    sentences = pd.read_parquet(results / "preprocess" / "summeval" / "sentences.parquet")
    of_table = sentences[(sentences["side"] == "output") & sentences["example_id"].isin(table["example_id"])]
    assert sum(len(r["sentences"]) for r in records) == len(of_table)


def test_labels_and_split_only_with_labels(results: Path, exported: Path, labelled: Path) -> None:
    for name in ("summeval", "true_summeval"):
        assert not any({"label", "split"} & set(r) for r in read_jsonl(exported / f"{name}.jsonl"))
        table = pd.read_parquet(results / "data" / f"{name}.parquet")
        records = read_jsonl(labelled / f"{name}.jsonl")
        assert [r["label"] for r in records] == [int(label) for label in table["label"]]
        assert [r["split"] for r in records] == table["split"].tolist()
        assert {r["label"] for r in records} == {0, 1}
    assert list(read_jsonl(labelled / "summeval.jsonl")[0])[-3:] == ["sentences", "label", "split"]


def test_manifest_records_each_file_and_the_command(exported: Path, labelled: Path) -> None:
    manifest = json.loads((exported / "manifest.json").read_text())
    assert sorted(path.name for path in exported.iterdir()) == ["manifest.json", "summeval.jsonl", "true_summeval.jsonl"]
    assert list(manifest["benchmarks"]) == ["summeval", "true_summeval"]  # a table (frank_baseline_scores) is not
    for name, entry in manifest["benchmarks"].items():
        assert entry["file"] == f"{name}.jsonl"
        assert entry["sha256"] == hashlib.sha256((exported / entry["file"]).read_bytes()).hexdigest()
        assert entry["examples"] == len(read_jsonl(exported / entry["file"])) == N_EXAMPLES
        assert entry["labels"] is False and entry["dropped"]["examples"] == 0
    summeval, true_summeval = manifest["benchmarks"]["summeval"], manifest["benchmarks"]["true_summeval"]
    units = sum(len(r["sentences"]) for r in read_jsonl(exported / "summeval.jsonl"))
    assert summeval["sentences"] is True and summeval["sentence_units"] == units and summeval["examples_without_sentences"] == 0
    assert summeval["dropped"]["sentence_rows"] > 0  # the 5 examples' sentence rows that the table lacks
    assert true_summeval["sentences"] is False and true_summeval["sentence_units"] is None
    assert true_summeval["examples_without_sentences"] == N_EXAMPLES
    assert not any("sentences" in r for r in read_jsonl(exported / "true_summeval.jsonl"))
    assert manifest["without_sentences"] == ["true_summeval"]
    assert manifest["dropped"] == {"examples": 0, "sentence_rows": summeval["dropped"]["sentence_rows"]}
    assert manifest["factlab_version"] and manifest["arguments"]["labels"] is False
    assert manifest["arguments"]["benchmarks"] is None
    with_labels = json.loads((labelled / "manifest.json").read_text())
    assert with_labels["arguments"]["benchmarks"] == ["summeval", "true_summeval"]
    assert all(entry["labels"] for entry in with_labels["benchmarks"].values())


def test_a_custom_benchmark_is_exported_by_the_kind_its_build_report_records(tmp_path: Path, raw: RawFiles) -> None:
    columns = {"example_id": "id", "source": "document", "output": "summary", "label": "faithful"}
    config = {"path": str(FIXTURES / "byo_qags_xsum_head.csv"), "columns": columns, "label_map": {"yes": 1, "no": 0}}
    data = tmp_path / "results" / "data"
    build_benchmark(custom_spec("mine", config), raw, data / "mine.parquet", data / "reports" / "mine.json")
    assert export(str(tmp_path / "out"), "--results", str(tmp_path / "results")) == 0
    ids = [r["example_id"] for r in read_jsonl(tmp_path / "out" / "mine.jsonl")]
    assert ids == pd.read_parquet(data / "mine.parquet")["example_id"].tolist() and ids


def leftovers(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir())


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["summeval", "nosuch_benchmark"], ["'nosuch_benchmark'", "results/data/nosuch_benchmark.parquet"]),
        (["qags_xsum"], ["'qags_xsum': not built", "rule build_benchmark", "results/data/qags_xsum.parquet"]),
        (["frank_baseline_scores"], ["'frank_baseline_scores': a table, not a benchmark"]),
    ],
)
def test_a_name_that_cannot_be_exported_fails_naming_it(
    results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], names: list[str], expected: list[str]
) -> None:
    assert export(str(tmp_path / "out"), "--results", str(results), "--benchmarks", *names) == 1
    error = capsys.readouterr().err
    assert all(part in error for part in expected), error
    assert leftovers(tmp_path) == []


def test_a_failure_midway_leaves_no_file(results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Sentence offsets that do not index the output (a sentences file older than its table) fail the export after
    another benchmark's file was written: neither DIR nor its staging folder remains."""
    stale = tmp_path / "stale"
    shutil.copytree(results, stale)
    path = stale / "preprocess" / "summeval" / "sentences.parquet"
    sentences = pd.read_parquet(path)
    first_output = sentences.index[sentences["side"] == "output"][0]
    sentences.loc[first_output, "start"] += 1
    write_parquet(sentences, path)
    before = leftovers(tmp_path)
    assert export(str(tmp_path / "out"), "--results", str(stale), "--benchmarks", "true_summeval", "summeval") == 1
    error = capsys.readouterr().err
    assert repr(sentences.loc[first_output, "example_id"]) in error and "sentences.parquet" in error, error
    assert leftovers(tmp_path) == before


def test_an_earlier_export_is_replaced_only_with_force(results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert export(str(out), "--results", str(results), "--benchmarks", "true_summeval") == 0
    first = (out / "manifest.json").read_text()
    assert export(str(out), "--results", str(results), "--benchmarks", "summeval") == 1
    assert "--force" in capsys.readouterr().err and (out / "manifest.json").read_text() == first
    assert export(str(out), "--results", str(results), "--benchmarks", "summeval", "--force") == 0
    assert leftovers(out) == ["manifest.json", "summeval.jsonl"] and leftovers(tmp_path) == ["out"]


def test_a_folder_of_other_files_is_never_replaced(results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    assert export(str(tmp_path), "--results", str(results), "--force") == 1
    assert "not a benchmark export" in capsys.readouterr().err
    assert leftovers(tmp_path) == ["notes.txt"] and (tmp_path / "notes.txt").read_text() == "mine"
