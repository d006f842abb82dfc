"""Bring-your-own benchmark: a file plus a column mapping becomes a benchmark, no code change."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from factlab.data.adapters.custom import adapt_custom
from factlab.data.registry import all_specs
from factlab.data.schema import validate_benchmark
from factlab.errors import DataError

FIXTURES = Path(__file__).parent / "fixtures"
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
    with pytest.raises(DataError, match="label 'no' is not in label_map.*row 1.*'faithful'"):
        adapt_custom("mine", config)


def test_mapped_column_absent_is_named():
    config = {"path": str(FIXTURES / "byo_qags_xsum_head.csv"), "columns": {**COLUMNS, "source": "article"}}
    with pytest.raises(DataError, match="mapped column 'article' is not in the file"):
        adapt_custom("mine", config)
