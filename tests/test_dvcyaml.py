"""dvc.yaml is generated from the Snakemake workflow (factlab.workflow.dvcyaml): the committed file must be what
the workflow generates, and what it says must match facts about the rules."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from factlab.workflow.dvcyaml import generate

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def generated() -> str:
    import os

    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        return generate(ROOT / "Snakefile")
    finally:
        os.chdir(cwd)


@pytest.fixture(scope="module")
def stages(generated) -> dict:
    return yaml.safe_load(generated)["stages"]


def test_committed_dvc_yaml_is_generated(generated):
    assert (ROOT / "dvc.yaml").read_text() == generated, "run `python -m factlab.workflow.dvcyaml` and commit dvc.yaml"


def test_rule_files_read_parameters_only_through_param():
    # Any other read (config["metaeval"][…], an alias of a subtree) would be missing from dvc.yaml's params.
    for path in sorted((ROOT / "workflow" / "rules").glob("*.smk")):
        text = path.read_text()
        if path.name == "common.smk":
            text = text.replace("value = config", "")
        assert not re.search(r"(?<![\w/.\"])config\s*(\[|\.get\b)", text), f"{path.name} reads config directly"
    assert "config[" not in (ROOT / "Snakefile").read_text()


def test_stages_follow_the_pipeline(stages):
    assert set(stages) == {"download", "data", "preprocess", "train", "score", "checker", "metaeval", "paper", "report"}
    assert stages["preprocess"]["cmd"] == "snakemake --cores all preprocess qas"
    paper_outs = ["paper/README.md", "paper/figures", "paper/main.pdf", "paper/main.tex", "paper/tables", "results/paper"]
    assert [next(iter(out)) for out in stages["paper"]["outs"]] == paper_outs
    timings = {"persist": True}  # benchmark: files, cached: Snakemake counts them as outputs, so a clone pulls them
    assert stages["train"]["outs"] == [{"benchmarks/train": timings}, {"results/models": {"persist": True}}]
    assert stages["score"]["outs"] == [
        {"benchmarks/score": timings},
        {"results/benchmarks": {"persist": True}},
        {"results/score": {"persist": True}},
    ]


def test_params_are_the_keys_each_stage_reads(stages):
    # Read by the rules of the stage (see the .smk files); common.smk's selection keys concern all.
    assert "qasem.train" in stages["train"]["params"]
    assert not any(
        key.startswith("qasem.train") for stage in ("preprocess", "metaeval", "paper") for key in stages[stage]["params"]
    )
    assert "metaeval.frank.subsets" in stages["metaeval"]["params"] and "metaeval.frank.subsets" in stages["paper"]["params"]
    assert not any(key.startswith(("metaeval.", "preprocess.")) for key in stages["train"]["params"])
    assert "score.alignscore.chunk_policy" in stages["score"]["params"]
    assert "aligner.train" in stages["train"]["params"] and "aligner.train" not in stages["score"]["params"]
    assert "score.alignscore.model" in stages["score"]["params"]
    for stage in stages.values():
        assert "data.benchmarks" in stage["params"]


def test_deps_are_the_code_each_stage_runs(stages):
    deps = {name: set(stage["deps"]) for name, stage in stages.items()}
    assert "src/factlab/metaeval/analyses/published/frank_command.py" in deps["metaeval"]
    assert not any(dep.startswith("src/factlab/metaeval/") for dep in deps["train"] | deps["preprocess"])
    assert "src/factlab/train/qasem.py" in deps["train"] and "src/factlab/train/qasem.py" not in deps["preprocess"]
    assert {"results/data", "results/models"} <= deps["preprocess"]  # qas reads the trained parser
    assert {"results/models", "results/preprocess"} <= deps["score"]  # the aligner and the sentences
    assert "src/factlab/train/aligner.py" not in deps["score"] and "src/factlab/models/engine.py" in deps["score"]
    assert "results/metaeval" in deps["paper"]  # (and results/models: the training-mixture table reads its report)
    for name, stage in stages.items():
        for dep in stage["deps"]:
            assert (ROOT / dep).exists() or dep.startswith(("results/", "benchmarks/")), (name, dep)
