"""`factlab metaeval decisions`: the checker's decisions per benchmark, against statsmodels' Wilson interval, counts
recomputed here from the scores and the recorded threshold and band, a set of outputs worked by hand, and the spans,
verdicts and corrections `factlab.Checker` gives the same real pairs.

Real rows: tests/fixtures/decisions, the smoke run's checker card and its AlignScore tables of FRANK and TRUE's BEGIN
with their benchmarks' rows (tests/fixtures/README.md)."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint
from tiny_aligner import save_tiny_checker

import factlab
from factlab.checker.folder import CARD_FILE, CheckerSettings
from factlab.errors import DataError, FactlabError
from factlab.metaeval.analyses.decisions_command import NO_SCORE, example_decisions, run_decisions, scored_rows
from factlab.metaeval.correction import wilson_interval
from factlab.metaeval.decisions import DECISION_COLUMNS, decision_row
from factlab.metaeval.errors import StatisticsError
from factlab.models.loading import load_pair_scorer
from factlab.preprocess.benchmark import select_examples, sentence_units
from factlab.score.alignscore import AlignScoreSettings, score_benchmark

FIXTURES = Path(__file__).parent / "fixtures" / "decisions"
BENCHMARKS = ("frank", "true_begin")
SHARES = {  # share -> (its count, the human label of the outputs it is a share of; None: all)
    "consistent_flagged": ("n_consistent_flagged", 1),
    "inconsistent_caught": ("n_inconsistent_caught", 0),
    "coverage": ("n_with_verdict", None),
    "consistent_with_span": ("n_consistent_with_span", 1),
    "consistent_correction_offered": ("n_consistent_correction_offered", 1),
    "consistent_rewritten": ("n_consistent_rewritten", 1),
}


@pytest.mark.parametrize(("successes", "n"), [(0, 5), (3, 3), (2, 10), (17, 40), (450, 1000)])
@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_wilson_interval_matches_statsmodels(successes: int, n: int, confidence: float) -> None:
    expected = proportion_confint(successes, n, alpha=1 - confidence, method="wilson")
    assert wilson_interval(successes, n, confidence) == pytest.approx(expected, abs=1e-12)


def test_decision_row_on_outputs_worked_by_hand() -> None:
    """Three consistent outputs and two inconsistent: the first consistent one flagged with two spans and rewritten,
    the second called consistent, the third uncertain with a span; the inconsistent ones caught, and unscored."""
    row = decision_row(labels=[1, 1, 1, 0, 0], verdicts=[0, 1, -1, 0, NO_SCORE], spans=[2, 0, 1, 0, 3], rewritten=[1, 0, 0, 0, 0])
    assert list(row) == list(DECISION_COLUMNS)
    assert (row["n"], row["n_consistent"], row["n_inconsistent"]) == (5, 3, 2)
    assert (row["n_consistent_flagged"], row["consistent_flagged"]) == (1, pytest.approx(1 / 3))
    assert (row["n_inconsistent_caught"], row["inconsistent_caught"]) == (1, pytest.approx(1 / 2))
    assert (row["n_with_verdict"], row["coverage"]) == (3, pytest.approx(3 / 5))
    assert (row["n_consistent_with_span"], row["consistent_with_span"]) == (2, pytest.approx(2 / 3))
    assert (row["n_consistent_correction_offered"], row["consistent_correction_offered"]) == (1, pytest.approx(1 / 3))
    assert (row["n_consistent_rewritten"], row["consistent_rewritten"]) == (1, pytest.approx(1 / 3))
    low, high = proportion_confint(1, 3, alpha=0.05, method="wilson")
    assert (row["consistent_flagged_ci_low"], row["consistent_flagged_ci_high"]) == pytest.approx((low, high))


def test_decision_row_without_outputs_of_a_class_has_no_share_of_it() -> None:
    row = decision_row(labels=[0, 0], verdicts=[0, 1], spans=[1, 1], rewritten=[0, 0])
    assert row["n_consistent"] == 0 and np.isnan(row["consistent_flagged"]) and np.isnan(row["consistent_with_span_ci_low"])
    assert row["inconsistent_caught"] == pytest.approx(0.5)
    with pytest.raises(StatisticsError, match="differ in length"):
        decision_row(labels=[0, 1], verdicts=[0], spans=[1, 1], rewritten=[0, 0])
    with pytest.raises(StatisticsError, match="0 .inconsistent. or 1"):
        decision_row(labels=[2], verdicts=[0], spans=[1], rewritten=[0])
    with pytest.raises(StatisticsError, match="not offered a correction"):  # called consistent, yet rewritten
        decision_row(labels=[1], verdicts=[1], spans=[1], rewritten=[1])


def copy_inputs(root: Path, card: dict | None = None) -> dict[str, list[str] | str]:
    """The fixture's checker card (changed by `card`) over a small seeded model's weights (which score the
    corrections' edits), score tables and data tables under `root`."""
    recorded = json.loads((FIXTURES / "checker" / CARD_FILE).read_text())
    save_tiny_checker(root / "checker", CheckerSettings.from_json(FIXTURES / "checker" / CARD_FILE))
    (root / "checker" / CARD_FILE).write_text(json.dumps({**recorded, **(card or {})}))
    shutil.copytree(FIXTURES / "score", root / "score")
    shutil.copytree(FIXTURES / "data", root / "data")
    return {
        "checker": str(root / "checker"),
        "scores": [str(root / "score" / name / "alignscore.parquet") for name in BENCHMARKS],
        "data": [str(root / "data" / f"{name}.parquet") for name in BENCHMARKS],
    }


def run(inputs: dict, tmp_path: Path, validation: tuple[str, ...] = ()) -> tuple[pd.DataFrame, dict]:
    out, metrics = tmp_path / "decisions.csv", tmp_path / "metrics.json"
    run_decisions(
        argparse.Namespace(**inputs, validation=list(validation), confidence=0.95, out=str(out), out_metrics=str(metrics))
    )
    return pd.read_csv(out), json.loads(metrics.read_text())


def evaluated(name: str) -> pd.DataFrame:
    """A fixture benchmark's scored test rows with their labels and scores, read here on their own."""
    scores = pd.read_parquet(FIXTURES / "score" / name / "alignscore.parquet")
    data = pd.read_parquet(FIXTURES / "data" / f"{name}.parquet")
    joined = data.merge(scores[["example_id", "score"]], on="example_id")
    return joined[joined["split"] == "test"]


def expected_counts(rows: pd.DataFrame, flagged: np.ndarray, given: np.ndarray) -> dict[str, int]:
    consistent = rows["label"].to_numpy() == 1
    return {
        "n_consistent": int(consistent.sum()),
        "n_inconsistent": int((~consistent).sum()),
        "n_consistent_flagged": int((flagged & consistent).sum()),
        "n_inconsistent_caught": int((flagged & ~consistent).sum()),
        "n_with_verdict": int(given.sum()),
    }


@pytest.mark.parametrize(
    "card",
    [
        {},  # the smoke checker as recorded: its band holds every score, so nothing gets a verdict
        {"uncertain_band": None},  # every score a verdict at the threshold
        {"uncertain_band": [0.39, 0.42]},  # inconsistent below 0.39, consistent from 0.42, uncertain between
    ],
    ids=["recorded", "no-band", "band"],
)
def test_counts_on_real_rows_equal_those_recomputed_from_scores_threshold_and_band(tmp_path: Path, card: dict) -> None:
    inputs = copy_inputs(tmp_path, card)
    table, metrics = run(inputs, tmp_path)
    settings = CheckerSettings.from_json(Path(str(inputs["checker"])) / CARD_FILE)
    assert table["benchmark"].tolist() == list(BENCHMARKS) and (table["split"] == "test").all()
    for name in BENCHMARKS:
        rows, row = evaluated(name), table.set_index("benchmark").loc[name]
        scores = rows["score"].to_numpy()
        if settings.uncertain_band is None:
            flagged, given = scores < settings.threshold, np.ones(len(scores), dtype=bool)
        else:
            low, high = settings.uncertain_band
            flagged, given = scores < low, (scores < low) | (scores >= high)
        assert {key: int(row[key]) for key in expected_counts(rows, flagged, given)} == expected_counts(rows, flagged, given)
        assert row["n"] == len(rows) and row["n_unscored"] == 0
        for share, (count, of_class) in SHARES.items():
            members = len(rows) if of_class is None else int((rows["label"] == of_class).sum())
            assert row[share] == pytest.approx(row[count] / members)
            low, high = proportion_confint(int(row[count]), members, alpha=0.05, method="wilson")
            assert (row[f"{share}_ci_low"], row[f"{share}_ci_high"]) == pytest.approx((low, high), abs=1e-6)
        assert row["n_consistent_correction_offered"] <= min(row["n_consistent_flagged"], row["n_consistent_with_span"])
        assert row["n_consistent_rewritten"] <= row["n_consistent_correction_offered"]
        assert metrics["benchmarks"][name]["consistent_flagged"] == pytest.approx(row["consistent_flagged"], abs=1e-4)
    assert metrics["checker"]["uncertain_band"] == settings.uncertain_band
    if card == {}:
        assert (table["coverage"] == 0).all() and (table["n_consistent_flagged"] == 0).all()
    if "uncertain_band" in card:  # both verdicts and the spans are exercised
        assert table["n_consistent_flagged"].sum() > 0 and table["n_consistent_with_span"].sum() > 0


def test_correction_offered_is_flagged_with_a_span(tmp_path: Path) -> None:
    """Against the per-output flags recomputed from the threshold: a consistent output is offered a correction
    exactly when it is flagged and has a span."""
    inputs = copy_inputs(tmp_path, {"uncertain_band": None})
    table, _ = run(inputs, tmp_path)
    settings = CheckerSettings.from_json(Path(str(inputs["checker"])) / CARD_FILE)
    for name in BENCHMARKS:
        rows = evaluated(name)
        scores = pd.read_parquet(FIXTURES / "score" / name / "alignscore.parquet")
        data, texts = pd.read_parquet(FIXTURES / "data" / f"{name}.parquet"), rows[["example_id", "source", "output", "label"]]
        decided = example_decisions(scored_rows(data, texts, scores, name), settings)
        flagged = rows["score"].to_numpy() < settings.threshold
        offered = flagged & (decided["spans"].to_numpy() > 0) & (rows["label"].to_numpy() == 1)
        assert table.set_index("benchmark").loc[name, "n_consistent_correction_offered"] == offered.sum()


def test_a_benchmark_without_a_test_split_is_measured_on_all_its_rows_and_tuning_ones_on_their_test_split(
    tmp_path: Path,
) -> None:
    inputs = copy_inputs(tmp_path, {"uncertain_band": None})
    frank = pd.read_parquet(FIXTURES / "data" / "frank.parquet")
    validation_only = frank[frank["split"] == "validation"]  # FRANK's validation rows alone: a set with no test split
    validation_only.to_parquet(tmp_path / "data" / "frank.parquet")
    scores = pd.read_parquet(FIXTURES / "score" / "frank" / "alignscore.parquet")
    scores[scores["example_id"].isin(validation_only["example_id"])].to_parquet(tmp_path / "score/frank/alignscore.parquet")
    table, metrics = run(inputs, tmp_path)
    row = table.set_index("benchmark").loc["frank"]
    assert row["split"] == "all" and row["n"] == len(validation_only) == 15
    assert (row["n_consistent"], row["n_inconsistent"]) == (12, 3)
    table, metrics = run(inputs, tmp_path, validation=("frank",))
    assert table["benchmark"].tolist() == ["true_begin"] and list(metrics["benchmarks"]) == ["true_begin"]
    # a benchmark whose validation split tuned the decisions is still measured on its test split
    shutil.copyfile(FIXTURES / "data" / "frank.parquet", tmp_path / "data" / "frank.parquet")
    shutil.copyfile(FIXTURES / "score" / "frank" / "alignscore.parquet", tmp_path / "score/frank/alignscore.parquet")
    table, _ = run(inputs, tmp_path, validation=("frank",))
    row = table.set_index("benchmark").loc["frank"]
    assert row["split"] == "test" and row["n"] == len(evaluated("frank"))


def test_inputs_that_are_not_the_checkers_scores_are_refused(tmp_path: Path) -> None:
    inputs = copy_inputs(tmp_path)
    renamed = tmp_path / "score" / "frank" / "rouge.parquet"
    shutil.copyfile(tmp_path / "score" / "frank" / "alignscore.parquet", renamed)
    with pytest.raises(FactlabError, match="the checker's scores are alignscore's"):
        run({**inputs, "scores": [str(renamed)]}, tmp_path)
    stray = pd.read_parquet(FIXTURES / "data" / "true_begin.parquet")
    stray.head(5).to_parquet(tmp_path / "data" / "true_begin.parquet")  # fewer rows than were scored
    with pytest.raises(DataError, match="not in the benchmark"):
        run(inputs, tmp_path)


def test_verdicts_and_spans_are_those_factlab_check_gives_the_same_pairs(tmp_path: Path) -> None:
    """A small seeded checker with a token head scores FRANK's 20 real pairs as the pipeline does (its table
    written and read back); the command's verdicts and span counts are those `factlab.Checker` returns for them."""
    data = pd.read_parquet(FIXTURES / "data" / "frank.parquet")
    settings = CheckerSettings(
        words_per_chunk=120, aggregation="mean", support_head="three_way", token_threshold=0.25, precision="fp32"
    )
    folder = save_tiny_checker(tmp_path / "checker", settings)
    examples = select_examples(data, "frank")
    sentences, _ = sentence_units(examples, "frank", progress=False)
    scorer = load_pair_scorer(str(folder), device="cpu")
    reading = AlignScoreSettings(120, "reference", "mean", "three_way", localise=True)  # the checker folder's
    table, _ = score_benchmark(examples, sentences, scorer, reading)
    table.to_parquet(tmp_path / "alignscore.parquet")
    low, high = np.quantile(table["score"], [0.3, 0.7])  # some outputs of each verdict, some uncertain
    # the band decides the verdicts; the threshold is the bar a correction's edit must reach: at 0, every edit that
    # raises its sentence's support passes, so that both outcomes of a correction occur
    band = CheckerSettings(**{**settings.as_json(), "threshold": 0.0, "uncertain_band": [low, high]})
    (folder / CARD_FILE).write_text(json.dumps(band.as_json()))

    stored = pd.read_parquet(tmp_path / "alignscore.parquet")
    checker = factlab.Checker(model=folder)
    consistent = data.assign(label=1)  # every output taken as consistent, so that each one offered a correction counts
    decided = example_decisions(scored_rows(data, consistent, stored, "alignscore.parquet"), band, checker)
    decided = decided.set_index("example_id")
    checked = checker.check(data["source"], data["output"], ids=data["example_id"]).set_index("id")
    codes = {"consistent": 1, "inconsistent": 0, "uncertain": -1}
    assert decided["verdict"].to_dict() == checked["verdict"].map(codes).to_dict()
    assert decided["spans"].to_dict() == checked["spans"].map(len).to_dict()
    assert set(decided["verdict"]) == {-1, 0, 1} and (decided["spans"] > 0).any()
    offered = checked["correction"].notna()  # the checker offers a correction: found inconsistent, with spans
    assert offered.to_dict() == ((decided["verdict"] == 0) & (decided["spans"] > 0)).to_dict()
    rewritten = checked["correction"].map(lambda correction: bool(correction and correction["edits"]))
    assert decided["rewritten"].to_dict() == rewritten.to_dict()
    assert rewritten.any() and (offered & ~rewritten).any()  # both outcomes exercised
