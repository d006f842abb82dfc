"""What an edit reruns, read from the real workflow: `snakemake -n --forceall` lists every job's inputs
and outputs (default config; nothing needs to be built), and a job reruns when one of its inputs
changes or is rebuilt. Editing FRANK's analysis must reach the FRANK rules and the paper rules drawn
from them, nothing else; editing any metaeval module must retrain and re-preprocess nothing."""

from __future__ import annotations

import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from factlab.workflow.codedeps import closure_of_digest

ROOT = Path(__file__).resolve().parents[1]
FRANK = "src/factlab/metaeval/analyses/published/frank_command.py"


@pytest.fixture(scope="module")
def jobs() -> list[tuple[str, set[str], set[str]]]:
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--forceall"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    found: list[tuple[str, set[str], set[str]]] = []
    for line in result.stdout.splitlines():
        if line.startswith(("rule ", "localrule ")):
            found.append((line.split()[1].rstrip(":"), set(), set()))
        elif found and line.startswith("    input: "):
            for path in line.removeprefix("    input: ").split(", "):  # a code digest stands for its sources
                found[-1][1].update(closure_of_digest(path) or [path])
        elif found and line.startswith("    output: "):
            found[-1][2].update(line.removeprefix("    output: ").split(", "))
    return found


def rerun_rules(jobs: list[tuple[str, set[str], set[str]]], edited: str) -> set[str]:
    """Rules (with outputs) of the jobs an edit of `edited` reruns, directly or through rebuilt inputs."""
    changed, rules = {edited}, set()
    consumers = defaultdict(list)
    for index, (_, inputs, _) in enumerate(jobs):
        for path in inputs:
            consumers[path].append(index)
    stack, seen = [edited], set()
    while stack:
        for index in consumers[stack.pop()]:
            if index in seen:
                continue
            seen.add(index)
            rule, _, outputs = jobs[index]
            if outputs:
                rules.add(rule)
                stack.extend(outputs - changed)
                changed |= outputs
    return rules


@pytest.mark.slow
def test_editing_frank_reruns_only_frank_and_its_paper_rules(jobs):
    assert rerun_rules(jobs, FRANK) == {
        "correlate_frank_baselines",
        "compare_frank_metrics",
        "ablate_frank_categories",
        "summarise_frank_baselines",
        "correlate_frank_scorers",  # factlab's scorers under FRANK's protocol
        "correlate_summeval_scorers",  # the same protocol on SummEval, with FRANK's functions
        "tabulate_summeval_scorers",
        "tabulate_frank_scorers",
        "plot_frank_scorers_ablation",
        "plot_frank_scorers_williams",  # the baselines' figure command on factlab's scorers
        "tabulate_frank_baselines",
        "plot_frank_williams",
        "plot_frank_ablation",
        "write_paper_main",  # every table is \input by paper/main.tex, and the PDF is rebuilt
        "paper_pdf",
    }


@pytest.mark.slow
def test_editing_a_metaeval_module_trains_and_preprocesses_nothing(jobs):
    for module in sorted((ROOT / "src/factlab/metaeval").rglob("*.py")):
        reached = rerun_rules(jobs, str(module.relative_to(ROOT)))
        assert reached, module  # every metaeval module is some rule's input
        assert not {r for r in reached if r.startswith(("train_", "preprocess_", "build_", "download_"))}, module


@pytest.mark.slow
def test_editing_a_table_layout_recomputes_no_statistic(jobs):
    paper_document = {"write_paper_main", "paper_pdf"}  # main.tex inputs every table; the PDF follows
    assert rerun_rules(jobs, "src/factlab/paper/true_published_command.py") == {"tabulate_true_published", *paper_document}
    assert rerun_rules(jobs, "src/factlab/paper/captions.py") >= {"tabulate_datasets", "tabulate_qasem_parser"}
    for module in sorted((ROOT / "src/factlab/paper").rglob("*.py")):
        reached = rerun_rules(jobs, str(module.relative_to(ROOT)))
        assert reached and all(
            rule.startswith(("tabulate_", "plot_")) or rule in {"write_paper_main", "paper_pdf"} for rule in reached
        ), (module, reached)


def qas_commands(tmp_path: Path, overrides: dict) -> list[str]:
    """The preprocess_qas shell commands of a dry run with `overrides` merged over params.yaml."""
    import yaml

    configfile = tmp_path / f"override{len(list(tmp_path.iterdir()))}.yaml"
    configfile.write_text(yaml.safe_dump(overrides))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "-n",
            "-p",
            "--forceall",
            "--until",
            "preprocess_qas",
            "--configfile",
            str(configfile),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    commands = [line for line in (result.stdout + result.stderr).splitlines() if "factlab preprocess qas" in line]
    assert commands
    return sorted(commands)


@pytest.mark.slow
def test_hub_decoding_settings_reach_preprocess_qas_only_with_the_hub_parser(tmp_path):
    hub = {"format": "qanom_seq2seq", "num_beams": 8, "max_new_tokens": 64}
    trained = qas_commands(tmp_path, {})
    assert trained == qas_commands(tmp_path, {"qasem": {"hub": hub}})  # nothing to rerun
    assert not any("--num-beams" in command for command in trained)
    with_hub = qas_commands(tmp_path, {"qasem": {"parser": "hub", "hub": hub}})
    assert all("--hub-format qanom_seq2seq --num-beams 8 --max-new-tokens 64" in command for command in with_hub)
