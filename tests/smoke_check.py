"""After the smoke run: `factlab check` and `factlab.check` with the run's checker folder give the pipeline's own
AlignScore scores for the same pairs (results/score/<benchmark>/alignscore.parquet), on every benchmark the run
scored whole with AlignScore; and the command writes one row per input line, with offsets, evidence sentences
inside the source, and the token head's spans (each inside the output, with an explanation). `factlab metaeval
decisions`, reading the same tables at the checker folder's thresholds, gives each labelled output the verdict and
the number of spans that `factlab check` gives it, and each consistent one the correction's outcome (rewritten or
not).

    python tests/smoke_check.py .smoke
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

import factlab

TOLERANCE = 1e-5  # batches differ between the two paths (padding); the engine's scores agree to this


def localisation_problems(row: dict, frank: pd.DataFrame) -> list[str]:
    """What is wrong with one row's evidence sentences and spans (their offsets must point into the texts)."""
    source, output = frank["source"].iloc[int(row["id"])], frank["output"].iloc[int(row["id"])]
    problems = []
    for sentence in row["sentences"]:
        evidence = sentence["evidence"]
        if not evidence or any(source[e["start"] : e["end"]] != e["text"] for e in evidence):
            problems.append(f"sentence {sentence['start']}: evidence sentences missing or not the source's text")
        if any(not sentence["evidence_start"] <= e["start"] < e["end"] <= sentence["evidence_end"] for e in evidence):
            problems.append(f"sentence {sentence['start']}: an evidence sentence outside the best chunk")
    for span in row["spans"]:
        if output[span["start"] : span["end"]] != span["text"] or not span["explanation"]:
            problems.append(f"span {span}: not the output's text, or no explanation")
    return problems


def decision_problems(run: Path, benchmark: str, checked: pd.DataFrame, checker: factlab.Checker) -> list[str]:
    """Where `factlab metaeval decisions`, reading the pipeline's AlignScore table at the checker folder's thresholds,
    gives a labelled output another verdict or another number of spans than `factlab check` (`checked`) does, or a
    consistent one another correction outcome."""
    from factlab.checker.folder import CARD_FILE, CheckerSettings
    from factlab.metaeval.analyses.decisions_command import DATA_COLUMNS, NO_SCORE, example_decisions, scored_rows

    settings = CheckerSettings.from_json(run / "results/checker/model" / CARD_FILE)
    data = pd.read_parquet(run / f"results/data/{benchmark}.parquet")
    scores = pd.read_parquet(run / f"results/score/{benchmark}/alignscore.parquet")
    labelled = data.loc[data["label"].notna(), list(DATA_COLUMNS)]
    decided = example_decisions(scored_rows(data, labelled, scores, benchmark), settings, checker)
    decided = decided.set_index("example_id")
    mine = checked.set_index("id").loc[decided.index.astype(str)]
    verdicts = mine["verdict"].map({"consistent": 1, "inconsistent": 0, "uncertain": -1}).fillna(NO_SCORE).to_numpy()
    spans = mine["spans"].map(len).to_numpy()
    # only a consistent output's correction is counted (decisions.csv's consistent_rewritten)
    rewritten = (decided["label"] == 1).to_numpy() & mine["correction"].map(lambda fix: bool(fix and fix["edits"])).to_numpy()
    return [
        f"{benchmark} {example_id}: decisions read verdict {row.verdict} with {row.spans} span(s), rewritten "
        f"{row.rewritten}; factlab check {verdict} with {count}, rewritten {changed}"
        for (example_id, row), verdict, count, changed in zip(decided.iterrows(), verdicts, spans, rewritten, strict=True)
        if row.verdict != verdict or row.spans != count or row.rewritten != changed
    ]


def main(run: Path) -> int:
    model = run / "results/checker/model"
    checker = factlab.Checker(model=model)
    failures = []
    compared = 0
    for scores_path in sorted(run.glob("results/score/*/alignscore.parquet")):
        benchmark = scores_path.parent.name
        pipeline = pd.read_parquet(scores_path, columns=["example_id", "score"])
        data = pd.read_parquet(run / f"results/data/{benchmark}.parquet").set_index("example_id").loc[pipeline["example_id"]]
        mine = checker.check(data["source"].tolist(), data["output"].tolist(), ids=pipeline["example_id"].tolist())
        difference = np.nanmax(np.abs(mine["score"].to_numpy(float) - pipeline["score"].to_numpy(float)))
        both_nan = (mine["score"].isna() == pipeline["score"].isna()).all()
        print(f"{benchmark}: {len(pipeline)} pairs, max |factlab.check - pipeline| = {difference:.2e}")
        compared += len(pipeline)
        if difference > TOLERANCE or not both_nan:
            failures.append(benchmark)
        failures += decision_problems(run, benchmark, mine, checker)
    with tempfile.TemporaryDirectory() as folder:
        frank = pd.read_parquet(run / "results/data/frank.parquet").head(20)
        pairs, out = Path(folder) / "pairs.jsonl", Path(folder) / "scores.jsonl"
        lines = [json.dumps({"source": s, "output": o}) + "\n" for s, o in zip(frank["source"], frank["output"], strict=True)]
        pairs.write_text("".join(lines))
        done = subprocess.run(
            [sys.executable, "-m", "factlab", "check", str(pairs), "-o", str(out), "--model", str(model)],
            capture_output=True,
            text=True,
            check=False,
        )
        rows = [json.loads(line) for line in out.read_text().splitlines()] if out.is_file() else []
        print(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "(no stderr)")
        if done.returncode != 0 or len(rows) != len(frank) or not all(row["sentences"] for row in rows):
            failures.append("factlab check command")
        failures += [f"row {index}: {problem}" for index, row in enumerate(rows) for problem in localisation_problems(row, frank)]
        print(f"{sum(len(row['spans']) for row in rows)} unsupported spans marked in {len(rows)} outputs")
    if failures or not compared:
        print(f"smoke check failed: {failures or 'no AlignScore score file'}", file=sys.stderr)
        return 1
    print(
        f"factlab.check equals the pipeline's AlignScore scores on {compared} pairs, and its verdicts and spans "
        "(and corrections) those `factlab metaeval decisions` reads from them"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
