"""`factlab metaeval token-reading`: the aligner's token localiser and validation-tuned token thresholds from its own
scores alone are the localisation analysis's for the aligner, so the checker folder packaged from either reads words
the same way; and the checker's plan (a dry run of `results/checker/model` from nothing) holds no job of another
scorer and no QASem parser."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from factlab.checker.pipeline.package_command import token_reading
from factlab.cli import main
from factlab.metaeval.analyses.localisation_command import run_localisation

ROOT = Path(__file__).resolve().parents[1]
VOCABULARY = ("cats", "dogs", "purr", "bark", "fish", "swim", "birds", "sing", "snow", "ice", "melts", "falls")


def sentence_record(output: str, support: float) -> dict:
    return {"sentence_index": 0, "sentence": output, "start": 0, "end": len(output), "support": support}


def write_benchmark(root: Path, benchmark: str, splits: list[str], rng: np.random.Generator) -> dict[str, str]:
    """A gold token table, its data table (sources), an aligner score table with token detail and a sentence-level
    score table of another scorer: outputs whose words the source lacks are mostly unsupported, and the head's support
    is lower on them, with noise."""
    gold, data, aligner, other = [], [], [], []
    for i, split in enumerate(splits):
        example_id, doc_id = f"{benchmark}-{i}", f"doc{i // 2}"
        source_words = rng.choice(VOCABULARY, size=6, replace=False).tolist()
        words = rng.choice(VOCABULARY, size=int(rng.integers(3, 7))).tolist()
        output = " ".join(words) + "."
        tokens, offsets, position = [*words, "."], [], 0
        for token in tokens:
            start = output.index(token, position)
            offsets.append([start, start + len(token)])
            position = start + len(token)
        unsupported = [int(word not in source_words) if rng.random() > 0.15 else int(rng.random() < 0.5) for word in words]
        labels = [1 - flag for flag in unsupported] + [1]
        support = [float(np.clip(rng.normal(0.35 if flag else 0.7, 0.2), 0, 1)) for flag in unsupported] + [0.9]
        gold.append(
            {
                "example_id": example_id,
                "doc_id": doc_id,
                "split": split,
                "output": output,
                "tokens": json.dumps(tokens),
                "token_offsets": json.dumps(offsets),
                "token_labels": json.dumps(labels),
            }
        )
        data.append({"example_id": example_id, "source": " ".join(source_words).capitalize() + "."})
        pieces = [{"start": s, "end": e, "support": v} for (s, e), v in zip(offsets, support, strict=True)]
        aligner.append({"example_id": example_id, "score": float(np.mean(support)), "sentences": [], "tokens": pieces})
        aligner[-1]["sentences"] = [sentence_record(output, float(np.mean(support)))]
        other.append({"example_id": example_id, "score": 0.5, "sentences": [sentence_record(output, float(rng.random()))]})
    paths = {
        "gold": str(root / "data" / f"{benchmark}_gold.parquet"),
        "data": str(root / "data" / f"{benchmark}.parquet"),
        "alignscore": str(root / "score" / benchmark / "alignscore.parquet"),
        "rouge": str(root / "score" / benchmark / "rouge.parquet"),
    }
    for key, rows in (("gold", gold), ("data", data), ("alignscore", aligner), ("rouge", other)):
        Path(paths[key]).parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame(rows).to_parquet(paths[key])
    return paths


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, dict[str, str]]:
    rng = np.random.default_rng(7)
    return {
        # WiCE-like: a dev split tunes, test is evaluated
        "wice_like": write_benchmark(tmp_path, "wice_like", ["dev"] * 30 + ["test"] * 30, rng),
        # XSumFaith-like: one split, a seeded share of its documents tunes
        "one_split": write_benchmark(tmp_path, "one_split", ["test"] * 60, rng),
    }


def analysis_report(tmp_path: Path, inputs: dict[str, dict[str, str]]) -> dict:
    args = argparse.Namespace(
        scores=[paths[scorer] for paths in inputs.values() for scorer in ("alignscore", "rouge")],
        gold=[f"{name}={paths['gold']}" for name, paths in inputs.items()],
        sources=[f"{name}={paths['data']}" for name, paths in inputs.items()],
        localiser_out=str(tmp_path / "token_localiser.json"),
        policies=["fixed05", "val_tuned", "oracle"],
        val_fraction=0.4,
        seed=2022,
        resamples=50,
        confidence=0.95,
        out=str(tmp_path / "tokens.csv"),
        report=str(tmp_path / "report.json"),
        out_metrics=str(tmp_path / "metrics.json"),
    )
    run_localisation(args)
    return json.loads(Path(args.report).read_text())


def test_the_token_reading_is_the_localisation_analysis_reading_of_the_aligner(tmp_path, inputs):
    report = analysis_report(tmp_path, inputs)
    out = tmp_path / "token_reading.json"
    command = ["metaeval", "token-reading", "--scores", *[paths["alignscore"] for paths in inputs.values()]]
    command += ["--gold", *[f"{name}={paths['gold']}" for name, paths in inputs.items()]]
    command += ["--sources", *[f"{name}={paths['data']}" for name, paths in inputs.items()]]
    assert main([*command, "--val-fraction", "0.4", "--seed", "2022", "--out", str(out)]) == 0
    reading = json.loads(out.read_text())
    assert reading["localisers"] == report["localisers"] and set(reading["localisers"]) == {"alignscore"}
    for dataset in ("wice_like_gold", "one_split_gold"):
        assert reading["datasets"][dataset]["split"] == report["datasets"][dataset]["split"]
        found, expected = reading["datasets"][dataset]["scorers"], report["datasets"][dataset]["scorers"]
        assert set(found) == {"alignscore_tokens", "alignscore_localiser"}
        for scorer, entry in found.items():
            assert entry["thresholds"]["val_tuned"] is not None
            assert entry["thresholds"]["val_tuned"] == expected[scorer]["thresholds"]["val_tuned"]
    # the checker's reading (the gold names are not WiCE's or XSumFaith's: rename them as the pipeline names its gold)
    for payload in (reading, report):
        payload["datasets"]["wice_tokens"] = payload["datasets"].pop("wice_like_gold")
    (tmp_path / "reading.json").write_text(json.dumps(reading))
    (tmp_path / "analysis.json").write_text(json.dumps(report))
    from_reading, from_analysis = token_reading(str(tmp_path / "reading.json")), token_reading(str(tmp_path / "analysis.json"))
    assert from_reading == from_analysis and from_reading.localiser is not None and "wice_tokens (dev)" in from_reading.source


def test_scores_without_token_detail_give_no_reading(tmp_path, inputs):
    out = tmp_path / "token_reading.json"
    paths = inputs["wice_like"]
    code = main(
        ["metaeval", "token-reading", "--scores", paths["rouge"], "--gold", f"wice_like={paths['gold']}"]
        + ["--val-fraction", "0.4", "--seed", "2022", "--out", str(out)]
    )
    assert code == 0
    reading = json.loads(out.read_text())
    assert reading["localisers"] == {} and reading["datasets"]["wice_like_gold"]["scorers"] == {}


def dry_run_jobs(*arguments: str) -> tuple[Counter, set[str], str]:
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "-p", "--forceall", "--nolock", *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    jobs = Counter(re.findall(r"^(?:local)?rule (\w+):$", done.stdout, flags=re.MULTILINE))
    merged = set(re.findall(r"wildcards: benchmark=\w+, scorer=(\w+)", done.stdout))
    shell = re.search(r"^Shell command: (factlab checker package .*)$", done.stdout, flags=re.MULTILINE)
    return jobs, merged, shell.group(1) if shell else ""


@pytest.mark.slow
@pytest.mark.parametrize("configfile", [None, "config/smoke.yaml"], ids=["default", "smoke"])
def test_the_checker_is_built_from_the_aligner_alone(configfile):
    """`make checker` (snakemake results/checker/model) from nothing: the aligner, AlignScore's tuning and scores, the
    token reading, the folder; no QASem parser, no QA, no other scorer, no localisation analysis."""
    jobs, scorers, package = dry_run_jobs("results/checker/model", *(["--configfile", configfile] if configfile else []))
    assert jobs["package_checker"] == 1 and jobs["fit_token_reading"] == 1 and jobs["train_aligner"] == 1
    assert jobs["score_alignscore"] >= 1 and scorers == {"alignscore"}
    never = [rule for rule in jobs if rule.startswith(("score_", "fit_summac", "train_qasem")) and rule != "score_alignscore"]
    never += [rule for rule in jobs if rule in ("preprocess_qas", "preprocess_triples", "evaluate_localisation")]
    assert never == []
    assert "--localisation-report results/checker/token_reading.json" in package
