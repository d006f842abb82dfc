"""`factlab calibrate` and the uncertain band: the band and threshold worked by hand and against scikit-learn, the
cross-validated estimate on data whose answer is known, and the command on 100 real labelled pairs from the mirror,
whose folder `factlab check` then reads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import balanced_accuracy_score
from tiny_aligner import save_tiny_checker

from factlab.checker.calibration import calibrate, uncertain_band, verdicts
from factlab.checker.folder import CARD_FILE, CARD_TABLE_HEADING, CheckerSettings, card_table_rows
from factlab.data.adapters.true import adapt_true
from factlab.download.manifest import RawFiles


def test_the_band_worked_by_hand() -> None:
    scores = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    labels = [0, 0, 0, 1, 0, 1, 0, 1, 1, 1]
    # threshold 0.45: above it 0.5..1.0 (labels 0,1,0,1,1,1); from 0.8 up all consistent (precision 1 >= 0.8), from 0.7
    # 3/4, from 0.6 4/5 = 0.8: the lowest cut reaching 0.8 is 0.6. Below it: < 0.4 all inconsistent (3/3); < 0.45
    # is not a cut (cuts are observed scores <= 0.45: 0.4 -> below it 0.1..0.3, 3/3 inconsistent).
    assert uncertain_band(labels, scores, 0.45, 0.8) == (0.4, 0.6)
    assert verdicts([0.35, 0.4, 0.5, 0.6], 0.45, (0.4, 0.6)).tolist() == [0, -1, -1, 1]
    assert verdicts([0.35, 0.5], 0.45, None).tolist() == [0, 1]


def test_no_cut_reaching_the_precision_gives_that_verdict_never() -> None:
    labels, scores = [1, 0, 1, 0], [0.2, 0.4, 0.6, 0.8]  # consistent share above any cut >= 0.6 is at most 1/2
    low, high = uncertain_band(labels, scores, 0.6, 0.9)
    assert high > 1.0 and verdicts([1.0], 0.6, (low, high)).tolist() == [-1]


def test_calibration_on_separable_and_on_random_labels() -> None:
    rng = np.random.default_rng(5)
    scores = rng.uniform(size=400)
    separable = (scores >= 0.37).astype(int)
    result = calibrate(separable, scores, precision=0.8, folds=5, seed=1)
    best = max(np.unique(scores), key=lambda t: balanced_accuracy_score(separable, scores >= t))
    assert result.threshold == pytest.approx(best)
    assert result.cv_balanced_accuracy == pytest.approx(1.0, abs=0.01) and result.coverage == 1.0
    assert result.band_low == result.band_high == result.threshold
    noise = rng.integers(0, 2, size=400)
    random = calibrate(noise, scores, precision=0.8, folds=5, seed=1)
    assert random.cv_low < 0.5 < random.cv_high + 0.05 and random.cv_balanced_accuracy < 0.58
    assert random.coverage < 0.5  # neither verdict reaches 80% precision on noise: mostly uncertain
    never = calibrate(noise, scores, precision=0.99, folds=5, seed=1)  # no cut reaches 99%: never consistent
    assert never.precision_consistent is None and json.loads(json.dumps(never.as_json()))["band_high"] > 1.0
    assert calibrate(noise, scores, precision=0.8, folds=5, seed=1) == random  # seeded


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory, raw: RawFiles) -> Path:
    """100 real QAGS-XSum pairs of TRUE (both labels) as a user's labelled JSONL, labels as true/false."""
    frame = adapt_true(raw, "qags_xsum").frame.sort_values("example_id").head(100)
    assert frame["label"].nunique() == 2
    path = tmp_path_factory.mktemp("labelled") / "mine.jsonl"
    records = [
        {"source": s, "output": o, "faithful": bool(y)}
        for s, o, y in zip(frame["source"], frame["output"], frame["label"], strict=True)
    ]
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def run(*arguments: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "factlab", *map(str, arguments)], capture_output=True, text=True, check=False)


def test_calibrate_writes_a_folder_that_check_applies(labelled: Path, tmp_path: Path) -> None:
    settings = CheckerSettings(words_per_chunk=120, threshold=0.5, precision="fp32")
    checker = save_tiny_checker(tmp_path / "checker", settings)
    # its card as packaging writes one, and another section's table with a row of the same name
    table = "\n".join(["| setting | value |", "|---|---|", *card_table_rows(settings)])
    other = "## Other\n\n| threshold | 0.5 |\n"
    (checker / "README.md").write_text(f"# factlab checker\n\n{CARD_TABLE_HEADING}\n\n{table}\n\n{other}")
    calibrated = tmp_path / "calibrated"
    done = run("calibrate", labelled, "-o", calibrated, "--model", checker, "--label-column", "faithful", "--quiet")
    assert done.returncode == 0, done.stderr
    card = json.loads((calibrated / CARD_FILE).read_text())
    smaller_class = min(card["calibration"]["n_consistent"], card["calibration"]["n_inconsistent"])
    assert ("under 50 of a class" in done.stderr) == (smaller_class < 50)
    assert card["threshold_source"].startswith("calibrated on mine.jsonl (100 pairs")
    low, high = card["uncertain_band"]
    assert low <= card["threshold"] <= high and card["calibration"]["n"] == 100
    readme = (calibrated / "README.md").read_text()
    assert readme.startswith("## Calibration in force")
    # the card's table reads the calibrated checker.json, not the one it was calibrated from
    assert f"| threshold | {card['threshold']} |" in readme and readme.count("| threshold | 0.5 |") == 1  # the other's
    assert f"| uncertain_band | {card['uncertain_band']} |" in readme and "| calibration |" not in readme
    out = tmp_path / "scores.jsonl"
    checked = run("check", labelled, "-o", out, "--model", calibrated)
    assert checked.returncode == 0, checked.stderr
    assert "calibrated on mine.jsonl" in checked.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    for row in rows:
        expected = (
            "uncertain" if low <= row["score"] < high else ("consistent" if row["score"] >= card["threshold"] else "inconsistent")
        )
        assert row["verdict"] == expected
        assert row["consistent"] == (None if expected == "uncertain" else expected == "consistent")
        if row["verdict"] != "inconsistent":
            assert row["correction"] is None  # only what the checker is sure fails is rewritten
    # the threshold balanced accuracy chose on the sample, by scikit-learn over the sample's own scores
    labels = [int(record["faithful"]) for record in map(json.loads, labelled.read_text().splitlines())]
    scores = np.array([row["score"] for row in rows])
    best = max(np.unique(scores), key=lambda t: (balanced_accuracy_score(labels, scores >= t), -t))
    assert card["threshold"] == pytest.approx(best)


def test_bad_labels_are_all_named(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    pd.DataFrame(
        {"source": ["A cat sat.", "A dog ran.", "It rained."], "output": ["A cat.", "A dog.", "Rain."], "label": ["yes", 1, 2]}
    ).to_csv(path, index=False)
    checker = save_tiny_checker(tmp_path / "checker", CheckerSettings())
    done = run("calibrate", path, "-o", tmp_path / "out", "--model", checker)
    assert done.returncode == 1 and not (tmp_path / "out").exists()
    assert "record 1" in done.stderr and "record 3" in done.stderr and "record 2," not in done.stderr
