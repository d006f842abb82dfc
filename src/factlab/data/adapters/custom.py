"""Bring-your-own benchmark: any CSV/JSONL plus a column mapping in params.yaml.

    data:
      custom_benchmarks:
        my_bench:
          path: data/my_outputs.csv        # .csv, .tsv, .jsonl
          columns: {source: document, output: summary, label: is_faithful}
          label_map: {"yes": 1, "no": 0}   # optional; values already 0/1 need none
          defaults: {split: test}          # optional constants for unmapped columns
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from factlab.download.manifest import RawFiles
from factlab.data.readers import iter_jsonl, read_text_csv
from factlab.data.spec import BenchmarkSpec, Built
from factlab.errors import DataError

MAPPABLE = ("example_id", "doc_id", "system", "split", "source", "output", "label", "human_score")
DEFAULTS = {"system": "unknown", "split": "test"}


def read_table(path: Path) -> pd.DataFrame:
    suffix = path.suffix.lower()
    if not path.is_file():
        raise DataError("input file not found", file=path)
    if suffix == ".jsonl":
        return pd.DataFrame([record for _, record in iter_jsonl(path)])
    if suffix in (".csv", ".tsv"):
        return read_text_csv(path, sep="\t" if suffix == ".tsv" else ",", empty_is_missing=True)
    raise DataError(f"unsupported format {suffix!r}: use .csv, .tsv or .jsonl", file=path)


def adapt_custom(name: str, config: Mapping[str, Any]) -> Built:
    path = Path(config["path"])
    table = read_table(path)
    columns: Mapping[str, str] = config.get("columns", {})
    unknown = set(columns) - set(MAPPABLE)
    if unknown:
        raise DataError(f"cannot map unknown canonical column(s) {sorted(unknown)}", file=path, field=sorted(unknown)[0])
    out = pd.DataFrame(index=table.index)
    for canonical, upstream in columns.items():
        if upstream not in table.columns:
            raise DataError(f"mapped column {upstream!r} is not in the file", file=path, field=upstream)
        out[canonical] = table[upstream]
    for canonical, value in {**DEFAULTS, **config.get("defaults", {})}.items():
        if canonical not in out:
            out[canonical] = value
    for required in ("source", "output"):
        if required not in out:
            raise DataError(f"no column is mapped to {required!r}", file=path, field=required)
    if "label" not in out:
        out["label"] = pd.NA
    elif config.get("label_map"):
        label_map = {str(k): v for k, v in config["label_map"].items()}
        raw = out["label"].astype("string")
        unmapped = raw.notna() & ~raw.isin(list(label_map))
        if unmapped.any():
            row = int(unmapped.idxmax())
            raise DataError(f"label {raw[row]!r} is not in label_map", file=path, record=f"row {row}", field=columns["label"])
        out["label"] = raw.map(label_map)
    if "example_id" not in out:
        out["example_id"] = [f"{name}-{i}" for i in range(len(out))]
    if "doc_id" not in out:
        out["doc_id"] = out["example_id"]
    out = out.astype({c: "string" for c in ("example_id", "doc_id", "system", "split")})
    return Built(out, {"read": len(table)})


def custom_spec(name: str, config: Mapping[str, Any]) -> BenchmarkSpec:
    if "path" not in config:
        raise DataError("custom benchmark needs a 'path'", file="params.yaml", record=name, field="path")

    def build(_raw: RawFiles) -> Built:
        return adapt_custom(name, config)

    build.__module__ = __name__
    return BenchmarkSpec(name=name, datasets=(), build=build, local_files=(str(config["path"]),),
                         description=f"bring-your-own benchmark from {config['path']}")


SPECS: list[BenchmarkSpec] = []
