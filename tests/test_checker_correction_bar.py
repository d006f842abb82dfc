"""The checker folder's correction bar (factlab.checker.calibration.correction_bar, `factlab checker package`): the
lowest support an edit must reach so that at most a stated share of each kind's consistent validation outputs is
rewritten. Against cases worked by hand, a brute-force search over every bar, and `factlab.Checker`'s own corrections
of the same real pairs (FRANK's validation rows, tests/fixtures/decisions) with the folder the command writes."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tiny_aligner import save_tiny_checker

import factlab
from factlab.checker.calibration import correction_bar, kind_correction_bar
from factlab.checker.folder import CARD_FILE, CheckerSettings
from factlab.checker.pipeline.package_command import read_validation, with_correction_bar
from factlab.models.loading import load_pair_scorer
from factlab.preprocess.benchmark import select_examples, sentence_units
from factlab.score.alignscore import AlignScoreSettings, score_benchmark

FIXTURES = Path(__file__).parent / "fixtures" / "decisions"


def test_kind_bar_on_supports_worked_by_hand() -> None:
    supports = [0.9, 0.7, 0.7, 0.4]  # four of ten consistent outputs have an edit that beats their sentence
    # 10%: one output may be rewritten, so the bar sits just above the second highest (0.7, twice)
    assert kind_correction_bar(supports, 10, floor=0.5, max_share=0.1) == np.nextafter(0.7, 1)
    # 30%: three may be; at the floor 0.5 exactly three (0.9, 0.7, 0.7) are
    assert kind_correction_bar(supports, 10, floor=0.5, max_share=0.3) == 0.5
    # 0%: none, so just above the highest
    assert kind_correction_bar(supports, 10, floor=0.5, max_share=0.0) == np.nextafter(0.9, 1)
    assert kind_correction_bar([], 10, floor=0.5, max_share=0.0) == 0.5
    with pytest.raises(ValueError, match="among 2 consistent"):
        kind_correction_bar(supports, 2, floor=0.5, max_share=0.1)
    bar, each = correction_bar({"news": (supports, 10), "qa": ([0.95], 40), "empty": ([], 0)}, 0.5, 0.1)
    assert each == {"news": np.nextafter(0.7, 1), "qa": 0.5} and bar == np.nextafter(0.7, 1)


@pytest.mark.parametrize("max_share", [0.0, 0.05, 0.2, 0.5])
def test_kind_bar_is_the_lowest_bar_a_brute_force_search_allows(max_share: float) -> None:
    rng = np.random.default_rng(3)
    supports = np.round(rng.uniform(0.3, 1.0, 60), 2)  # ties included
    n, floor = 200, 0.55
    bar = kind_correction_bar(supports, n, floor, max_share)
    allowed = [b for b in np.unique(np.concatenate([[floor], supports, np.nextafter(supports, 2)])) if b >= floor]
    feasible = [b for b in allowed if (supports >= b).sum() <= max_share * n]
    assert (supports >= bar).sum() <= max_share * n and bar >= floor
    assert (supports >= min(feasible)).sum() == (supports >= bar).sum()
    assert not [b for b in allowed if b < bar and (supports >= b).sum() <= max_share * n]


def scored_frank(folder: Path, tmp_path: Path) -> tuple[Path, Path]:
    """FRANK's fixture rows scored by the folder's model as the pipeline scores them (its table written), and the rows."""
    data = pd.read_parquet(FIXTURES / "data" / "frank.parquet")
    examples = select_examples(data, "frank")
    sentences, _ = sentence_units(examples, "frank", progress=False)
    reading = AlignScoreSettings(120, "reference", "mean", "three_way", localise=True)  # the folder's reading
    table, _ = score_benchmark(examples, sentences, load_pair_scorer(str(folder), device="cpu"), reading)
    (tmp_path / "score" / "frank").mkdir(parents=True)
    (tmp_path / "data").mkdir()
    table.to_parquet(tmp_path / "score" / "frank" / "alignscore.parquet")
    data.to_parquet(tmp_path / "data" / "frank.parquet")
    return tmp_path / "score" / "frank" / "alignscore.parquet", tmp_path / "data" / "frank.parquet"


def rewritten_by_check(folder: Path, pairs: pd.DataFrame) -> int:
    """How many of `pairs` `factlab.Checker` (the folder as written) rewrites: scored and corrected from scratch."""
    checked = factlab.Checker(model=folder).check(pairs["source"], pairs["output"], ids=pairs["example_id"])
    return int(checked["correction"].map(lambda fix: bool(fix and fix["edits"])).sum())


def test_the_packaged_bar_rewrites_at_most_the_share_of_consistent_validation_outputs(tmp_path: Path) -> None:
    """A small seeded checker, every FRANK validation output below the band called inconsistent: the bar chosen for
    share leaves at most that share of its consistent validation outputs rewritten by `factlab.Checker` (the lowest
    such bar: at 10% exactly one of 12), and where every share is allowed, the decision threshold (0 here)."""
    settings = CheckerSettings(
        words_per_chunk=120, aggregation="mean", support_head="three_way", token_threshold=0.25, precision="fp32"
    )
    folder = save_tiny_checker(tmp_path / "checker", settings)
    scores_path, data_path = scored_frank(folder, tmp_path)
    # the band decides the verdicts (all inconsistent); the threshold, 0, is the floor an edit's support must reach
    flagging = replace(settings, threshold=0.0, uncertain_band=[1.0, 1.1])
    (folder / CARD_FILE).write_text(json.dumps(flagging.as_json()))
    data = pd.read_parquet(data_path)
    consistent = data[(data["label"] == 1) & (data["split"] == "validation")]
    assert len(consistent) == 12

    tables = read_validation([str(scores_path)], [str(data_path)])
    found = {}
    for max_share in (1.0, 0.1, 0.0):
        chosen = with_correction_bar(flagging, folder, tables, max_share)
        kind = chosen.validation["correction"]["benchmarks"]["frank"]
        assert kind["consistent_outputs"] == 12 and chosen.correction_bar >= flagging.threshold
        written = tmp_path / f"share_{max_share}"
        written.mkdir()
        for item in folder.iterdir():
            (written / item.name).symlink_to(item.resolve())
        (written / CARD_FILE).unlink()
        (written / CARD_FILE).write_text(json.dumps(chosen.as_json()))
        found[max_share] = (chosen.correction_bar, kind["rewritable"], rewritten_by_check(written, consistent))
    bar, rewritable, rewritten = found[1.0]
    assert bar == 0.0 and rewritten == rewritable >= 2, found  # no bar: every output an edit improves is rewritten
    assert found[0.1][2] == math.floor(0.1 * 12) and found[0.0][2] == 0, found  # 1 of 12, then none
    assert found[0.0][0] > found[0.1][0] > 0.0, found
