import csv
import dataclasses
import shutil

import pytest
from known_counts import TRUE_COUNTS

from factlab.data.adapters.true import MIRRORED_SETS, SPECS, adapt_true
from factlab.data.schema import validate_benchmark
from factlab.download.manifest import RawFiles
from factlab.errors import DataError
from factlab.io import sha256_file


def read_csv_rows(raw, true_set):
    with open(raw.path("true_benchmark_scale_copy", f"data/true/{true_set}.csv"), newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_one_spec_per_mirrored_set():
    assert [spec.name for spec in SPECS] == [f"true_{name}" for name in TRUE_COUNTS]
    assert set(MIRRORED_SETS) == set(TRUE_COUNTS)


@pytest.mark.parametrize("true_set", sorted(TRUE_COUNTS))
def test_true_counts_ids_and_labels_match_the_csv(raw, true_set):
    built = adapt_true(raw, true_set)
    frame = validate_benchmark(built.frame, f"true_{true_set}")
    rows = read_csv_rows(raw, true_set)
    assert len(frame) == TRUE_COUNTS[true_set] == built.counts["read"]
    assert frame["example_id"].is_unique
    assert (frame["split"] == "test").all()
    # TRUE labels are already canonical (1 = consistent): passed through unchanged, in CSV order.
    assert frame["label"].tolist() == [int(row["label"]) for row in rows]
    assert frame["source"].tolist() == [row["grounding"] for row in rows]
    assert frame["output"].tolist() == [row["generated_text"] for row in rows]


@pytest.mark.parametrize("true_set", ["dialfact", "frank", "summeval"])
def test_outputs_sharing_a_grounding_share_a_doc_id(raw, true_set):
    frame = adapt_true(raw, true_set).frame
    assert frame.groupby("source")["doc_id"].nunique().eq(1).all()
    assert frame["doc_id"].nunique() == frame["source"].nunique()


def test_begin_label_is_entailment(raw):
    # Independent check of the convention: BEGIN's consistent class is its "entailment" label.
    frame = adapt_true(raw, "begin").frame
    assert ((frame["coarse_label"] == "entailment").astype(int) == frame["label"]).all()
    assert {"previous_turn", "gold_label", "full_label_set"} <= set(frame.columns)


def test_system_comes_from_the_model_column(raw):
    frank = adapt_true(raw, "frank").frame
    assert frank["system"].nunique() == 9  # FRANK's 9 systems (mirror README)
    assert set(adapt_true(raw, "q2").frame["system"]) == {"dodeca", "memnet"}
    assert (adapt_true(raw, "paws").frame["system"] == "unknown").all()
    # SummEval's article ids give its 100 documents.
    summeval = adapt_true(raw, "summeval").frame
    assert summeval["upstream_id"].nunique() == summeval["doc_id"].nunique() == 100


def test_bad_label_names_the_row(raw, tmp_path):
    # A real file with one label corrupted: the error must name the file, row and field.
    entry = raw.entry("true_benchmark_scale_copy", "data/true/qags_xsum.csv")
    broken = tmp_path / entry.relpath
    broken.parent.mkdir(parents=True)
    shutil.copy(raw.path("true_benchmark_scale_copy", "data/true/qags_xsum.csv"), broken)
    rows = read_csv_rows(raw, "qags_xsum")
    rows[5]["label"] = "2"
    with open(broken, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    # The damaged file is pinned as published (its own sha256): the adapter's check is what is tested here;
    # a file changed after its download is refused earlier (test_build_failures).
    pinned = [dataclasses.replace(e, sha256=sha256_file(broken)) if e == entry else e for e in raw.manifest]
    with pytest.raises(DataError) as error:
        adapt_true(RawFiles(tmp_path, pinned, per_dataset=False), "qags_xsum")
    assert error.value.record == "row 5" and error.value.field == "label"
    with pytest.raises(DataError, match="differs from the manifest"):
        adapt_true(RawFiles(tmp_path, raw.manifest, per_dataset=False), "qags_xsum")
