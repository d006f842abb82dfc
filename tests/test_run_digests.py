"""The two-run manifest (tests/run_digests.py): a changed artefact is found, a changed timing is not."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).with_name("run_digests.py")


def tree(root: Path, aligner_auc: float, seconds: float) -> Path:
    (root / "results" / "metaeval").mkdir(parents=True)
    (root / "paper" / "tables").mkdir(parents=True)
    (root / "results" / "metaeval" / "metrics.json").write_text(json.dumps({"auc": aligner_auc, "score_seconds": seconds}))
    (root / "paper" / "tables" / "pipeline_cost.md").write_text(f"| wall s | {seconds} |\n")  # a timing file: exempt
    (root / "paper" / "tables" / "detection.md").write_text("| scorer | BAcc |\n| alignscore | 69.18 |\n")
    (root / "README.md").write_text("a checkout\n")
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "README.md"], check=True)
    subprocess.run([*git, "commit", "-qm", "a run's checkout"], check=True)
    return root


def run(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def test_the_same_artefacts_with_other_timings_compare_identical(tmp_path):
    first, second = tree(tmp_path / "a", 0.8579, 1705.1), tree(tmp_path / "b", 0.8579, 1496.0)
    manifest = tmp_path / "manifest.json"
    assert run("write", first, manifest).returncode == 0
    recorded = json.loads(manifest.read_text())
    assert sorted(recorded["digests"]) == ["paper/tables/detection.md", "results/metaeval/metrics.json"]
    compared = run("compare", second, manifest)
    assert compared.returncode == 0, compared.stdout
    assert "byte-identical: 2; differing: 0; only_in_manifest: 0; only_here: 0" in compared.stdout


def test_a_changed_metric_and_a_missing_table_are_named(tmp_path):
    first, second = tree(tmp_path / "a", 0.8579, 1705.1), tree(tmp_path / "b", 0.8580, 1705.1)
    (second / "paper" / "tables" / "detection.md").unlink()
    manifest = tmp_path / "manifest.json"
    run("write", first, manifest)
    compared = run("compare", second, manifest)
    assert compared.returncode == 1
    assert "differing:\n  results/metaeval/metrics.json" in compared.stdout
    assert "only_in_manifest:\n  paper/tables/detection.md" in compared.stdout


def test_a_broken_report_differs_and_the_manifest_names_commit_and_cpu(tmp_path):
    first, second = tree(tmp_path / "a", 0.8579, 1705.1), tree(tmp_path / "b", 0.8579, 1705.1)
    (second / "results" / "metaeval" / "metrics.json").write_text('{"auc": 0.85')  # a run that died writing it
    manifest = tmp_path / "manifest.json"
    run("write", first, manifest)
    recorded = json.loads(manifest.read_text())
    head = subprocess.run(["git", "-C", str(first), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert recorded["commit"] == head and "family" in recorded["cpu"]
    compared = run("compare", second, manifest)
    assert compared.returncode == 1 and "differing:\n  results/metaeval/metrics.json" in compared.stdout


def test_no_checkout_or_no_artefact_is_an_error(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    refused = run("write", empty, tmp_path / "manifest.json")
    assert refused.returncode != 0 and "not a git checkout" in refused.stderr
    bare = tree(tmp_path / "bare", 0.8579, 1.0)
    for folder in ("results", "paper"):
        subprocess.run(["rm", "-r", str(bare / folder)], check=True)
    refused = run("write", bare, tmp_path / "manifest.json")
    assert refused.returncode != 0 and "holds no artefact" in refused.stderr
    assert not (tmp_path / "manifest.json").exists()
