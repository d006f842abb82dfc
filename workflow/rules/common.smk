# Config validation, benchmark selection and input functions shared by every stage.
import json
from pathlib import Path

import factlab.data

from snakemake.utils import validate

from factlab.data.manifest import load_manifest
from factlab.data.registry import all_specs


# One environment for every rule: the pinned project environment (`--sdm conda` users).
CONDA_ENV = "../../environment.yml"

validate(config, "../schemas/params.schema.yaml")

MANIFEST = config["download"]["manifest"]
CUSTOM_BENCHMARKS = config["data"]["custom_benchmarks"]
SPECS = all_specs(CUSTOM_BENCHMARKS)
SELECTED = config["data"]["benchmarks"] or sorted(SPECS)
_unknown = sorted(set(SELECTED) - set(SPECS))
if _unknown:
    raise ValueError(f"params.yaml data.benchmarks names unknown benchmarks: {_unknown}")
BENCHMARKS = [name for name in SELECTED if SPECS[name].kind == "benchmark"]
TABLES = [name for name in SELECTED if SPECS[name].kind == "table"]
# Manifest datasets that the selected benchmarks read: only these are downloaded.
DOWNLOADS = sorted({dataset for name in SELECTED for dataset in SPECS[name].datasets})
_not_in_manifest = sorted(set(DOWNLOADS) - {entry.dataset for entry in load_manifest(MANIFEST)})
if _not_in_manifest:
    raise ValueError(f"{MANIFEST} lacks datasets read by the selected benchmarks: {_not_in_manifest}")


wildcard_constraints:
    dataset="[A-Za-z0-9_.]+",
    name="[A-Za-z0-9_]+",


def get_raw_dirs(wildcards):
    return [f"results/raw/{dataset}" for dataset in SPECS[wildcards.name].datasets]


# Adapters import each other and the shared data code: all of it is an input of every build,
# so that editing any of it reruns the builds (each takes seconds).
DATA_CODE = sorted(str(path) for path in Path(factlab.data.__file__).parent.rglob("*.py"))
# Markdown/LaTeX table writer: an input of every rule that writes a paper/tables file.
TABLE_CODE = ["src/factlab/report/tables.py"]


def get_local_files(wildcards):
    return list(SPECS[wildcards.name].local_files)


def custom_json(wildcards):
    spec = CUSTOM_BENCHMARKS.get(wildcards.name)
    return json.dumps({wildcards.name: spec} if spec else {})
