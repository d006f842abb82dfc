"""factlab's scorers as detectors: checked against scikit-learn and values worked by hand."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from simple_scores import word_share
from sklearn.metrics import balanced_accuracy_score, roc_auc_score

from factlab.errors import FactlabError
from factlab.metaeval.analyses.detection_command import detection_row
from factlab.metaeval.analyses.score_tables import labelled_scores
from factlab.metaeval.detection import validation_threshold

SCORES = [0.9, 0.8, 0.35, 0.6, 0.2, 0.55, 0.1, 0.7]
LABELS = [1, 1, 1, 0, 0, 1, 0, 0]


def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "example_id": [f"e{i}" for i in range(8)],
            "doc_id": [f"d{i // 2}" for i in range(8)],
            "source": [f"s{i // 2}" for i in range(8)],
            "label": LABELS,
            "score": SCORES,
        }
    )


def test_row_matches_sklearn_and_hand_values() -> None:
    row = detection_row("alignscore", "b", frame(), 0.5, 0.25, resamples=200, confidence=0.9, seed=1, ece_bins=5)
    assert row["roc_auc"] == pytest.approx(roc_auc_score(LABELS, SCORES))
    predicted = (np.array(SCORES) >= 0.5).astype(int)
    assert row["bacc_fixed05"] == pytest.approx(balanced_accuracy_score(LABELS, predicted))
    # hand: at 0.5, positives 0.9 0.8 0.55 hit and 0.35 misses (TPR 3/4); negatives 0.2 0.1 rejected (TNR 2/4)
    assert row["bacc_fixed05"] == pytest.approx((3 / 4 + 2 / 4) / 2)
    assert row["roc_auc_ci_low"] <= row["roc_auc"] <= row["roc_auc_ci_high"]
    assert row["tuning_overlap"] == 0.25
    assert row["n"] == 8
    assert row["bacc_val_tuned"] == pytest.approx(0.625)  # at the given 0.5: as above
    # hand: at 0.35 every positive is accepted (TPR 1) and 0.2, 0.1 rejected (TNR 2/4)
    at_035 = detection_row("alignscore", "b", frame(), 0.35, 0.0, resamples=50, confidence=0.9, seed=1, ece_bins=5)
    assert at_035["bacc_val_tuned"] == pytest.approx(0.75) and at_035["threshold_val_tuned"] == 0.35


def frank_released(raw, *metrics: str) -> pd.DataFrame:
    """FRANK's labels and documents with the released scores of `metrics`, rows where all are present."""
    from factlab.data.adapters.frank import adapt_frank, adapt_frank_baselines

    labels = adapt_frank(raw).frame[["example_id", "doc_id", "label"]]
    joined = labels.merge(adapt_frank_baselines(raw).frame[["example_id", *metrics]], on="example_id")
    return joined.dropna(subset=["label", *metrics])


def test_auc_interval_is_scipys_percentile_bootstrap_and_resamples_groups(raw) -> None:
    scored = frank_released(raw, "FactCC").rename(columns={"FactCC": "score"})  # 2,246 summaries of 499 documents
    y, s = scored["label"].astype(int).to_numpy(), scored["score"].to_numpy(float)
    settings = {"resamples": 1000, "confidence": 0.95, "seed": 3, "ece_bins": 10}
    alone = detection_row("x", "frank", scored.assign(doc_id=scored["example_id"]), None, 0.0, **settings)
    reference = stats.bootstrap(
        (y, s), roc_auc_score, paired=True, vectorized=False, n_resamples=1000, method="percentile",
        confidence_level=0.95, rng=np.random.default_rng(4),
    ).confidence_interval  # fmt: skip
    assert alone["roc_auc_ci_low"] == pytest.approx(reference.low, abs=0.01)
    assert alone["roc_auc_ci_high"] == pytest.approx(reference.high, abs=0.01)
    # Resampling groups, not rows: with two groups (alternate rows) a resample is A+A, A+B or B+B, so the 95%
    # percentile interval runs from the lower to the higher of the two groups' own AUCs (a quarter of resamples each).
    halves = np.arange(len(scored)) % 2
    two = detection_row("x", "frank", scored.assign(doc_id=halves), None, 0.0, **settings)
    own = sorted(roc_auc_score(y[halves == half], s[halves == half]) for half in (0, 1))
    assert (two["roc_auc_ci_low"], two["roc_auc_ci_high"]) == pytest.approx(own, abs=1e-12)
    assert own[1] - own[0] < 0.5 * (alone["roc_auc_ci_high"] - alone["roc_auc_ci_low"])  # rows resampled would be wider


def test_validation_threshold_maximises_balanced_accuracy() -> None:
    # hand: t = 0.35 accepts every positive (TPR 1) and rejects 0.2 and 0.1 (TNR 2/4): 0.75; t = 0.8 gives
    # TPR 2/4, TNR 1: also 0.75; every other candidate is lower (0.55: (3/4 + 2/4)/2). Ties go to the lowest.
    assert validation_threshold({"v": frame()}) == pytest.approx(0.35)


def test_unknown_scored_example_is_an_error() -> None:
    data = frame().drop(columns="score")
    scores = pd.DataFrame({"example_id": ["e0", "zz"], "score": [0.1, 0.2]})
    with pytest.raises(Exception, match="'zz' is not in the benchmark"):
        labelled_scores(data, scores)


def delong_difference(labels: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """DeLong et al. (1988): AUC(a) - AUC(b) and its standard error, from the structural components."""

    def components(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pos, neg = scores[labels == 1], scores[labels == 0]
        kernel = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
        return kernel.mean(axis=1), kernel.mean(axis=0)

    (va, wa), (vb, wb) = components(a), components(b)
    m, n = len(va), len(wa)
    s10 = np.cov(np.vstack([va, vb]))
    s01 = np.cov(np.vstack([wa, wb]))
    variance = (s10[0, 0] + s10[1, 1] - 2 * s10[0, 1]) / m + (s01[0, 0] + s01[1, 1] - 2 * s01[0, 1]) / n
    return va.mean() - vb.mean(), float(np.sqrt(variance))


def test_paired_bootstrap_agrees_with_delong_on_real_frank_scores(raw) -> None:
    from factlab.metaeval.paired import paired_auc_difference

    joined = frank_released(raw, "FactCC", "BertScore P Art")
    y = joined["label"].astype(int).to_numpy()
    a, b = joined["FactCC"].to_numpy(float), joined["BertScore P Art"].to_numpy(float)
    difference, standard_error = delong_difference(y, a, b)
    bootstrap = paired_auc_difference(y, a, b, groups=None, n_resamples=2000, confidence=0.95, rng=np.random.default_rng(0))
    assert bootstrap.difference == pytest.approx(difference)
    assert bootstrap.difference == pytest.approx(roc_auc_score(y, a) - roc_auc_score(y, b))
    # The percentile interval's half-width is about 1.96 DeLong standard errors on 2,000+ examples.
    assert (bootstrap.high - bootstrap.low) / 2 == pytest.approx(1.96 * standard_error, rel=0.15)
    delong_p = 2 * stats.norm.sf(abs(difference) / standard_error)
    assert (bootstrap.p_value < 0.05) == (delong_p < 0.05)


def test_paired_bootstrap_p_value_is_delongs_on_a_close_pair(raw) -> None:
    """FactCC against QAGS on FRANK: AUCs 1.2 points apart, DeLong's two-sided p 0.28; the bootstrap's p (twice the
    smaller tail share) must be the same number, not merely on the same side of 0.05."""
    from factlab.metaeval.paired import paired_auc_difference

    joined = frank_released(raw, "FactCC", "QAGS")
    y = joined["label"].astype(int).to_numpy()
    a, b = joined["FactCC"].to_numpy(float), joined["QAGS"].to_numpy(float)
    difference, standard_error = delong_difference(y, a, b)
    delong_p = 2 * stats.norm.sf(abs(difference) / standard_error)
    assert 0.2 < delong_p < 0.4
    bootstrap = paired_auc_difference(y, a, b, groups=None, n_resamples=2000, confidence=0.95, rng=np.random.default_rng(0))
    assert bootstrap.p_value == pytest.approx(delong_p, abs=0.03)


def test_a_scorer_against_itself_differs_by_nothing() -> None:
    from factlab.metaeval.paired import paired_auc_difference

    result = paired_auc_difference(
        LABELS, SCORES, SCORES, groups=None, n_resamples=100, confidence=0.9, rng=np.random.default_rng(1)
    )
    assert (result.difference, result.low, result.high, result.p_value) == (0.0, 0.0, 0.0, 1.0)


def test_detection_table_compares_each_scorer_with_the_best(tmp_path) -> None:
    from factlab.metaeval.analyses.detection_command import COLUMNS, compare_with_best

    data = frame().drop(columns="score")
    worse = [0.1, 0.8, 0.35, 0.6, 0.2, 0.55, 0.9, 0.7]
    frames = {
        "good": {"b": labelled_scores(data, frame()[["example_id", "score"]])},
        "bad": {"b": labelled_scores(data, frame().assign(score=worse)[["example_id", "score"]])},
    }
    rows = [
        detection_row(name, "b", frames[name]["b"], None, 0.0, resamples=50, confidence=0.9, seed=1, ece_bins=2)
        for name in ("good", "bad")
    ]
    table = compare_with_best(pd.DataFrame(rows, columns=list(COLUMNS)), frames, resamples=200, confidence=0.9, seed=1)
    assert list(table["best_scorer"]) == ["good", "good"]
    expected = roc_auc_score(LABELS, worse) - roc_auc_score(LABELS, SCORES)
    assert table.loc[1, "auc_diff_to_best"] == pytest.approx(expected)
    assert table.loc[0, "p_vs_best"] == 1.0
    # oracle: the best balanced accuracy over observed thresholds, worked above for SCORES: 0.75
    assert table.loc[0, "bacc_oracle"] == pytest.approx(0.75)


def test_reliability_rows_pool_benchmarks_and_match_sklearn() -> None:
    from sklearn.calibration import calibration_curve
    from sklearn.isotonic import IsotonicRegression

    from factlab.metaeval.analyses.detection_command import reliability_rows
    from factlab.metaeval.calibration import isotonic_calibrator

    second = frame().assign(score=[0.95, 0.45, 0.15, 0.65, 0.05, 0.85, 0.3, 0.75], label=[1, 0, 1, 0, 0, 1, 0, 1])
    calibrate = isotonic_calibrator(LABELS, SCORES)
    table = pd.DataFrame(reliability_rows("s", [frame(), second], calibrate, 4))
    labels = np.array(LABELS + second["label"].tolist())
    scores = np.array(SCORES + second["score"].tolist())
    raw = table[table["variant"] == "raw"]
    assert (raw["metric"] == "s").all() and (raw["n"] == 16).all() and raw["count"].sum() == 16
    filled = raw[raw["count"] > 0]
    share, mean = calibration_curve(labels, scores, n_bins=4, strategy="uniform")
    assert filled["consistent_share"].to_numpy() == pytest.approx(share)
    assert filled["mean_score"].to_numpy() == pytest.approx(mean)
    isotonic = table[table["variant"] == "isotonic"]
    assert (isotonic["metric"] == "s, isotonic").all()
    mapped = IsotonicRegression(out_of_bounds="clip").fit(SCORES, LABELS).predict(scores)
    filled = isotonic[isotonic["count"] > 0]
    share, mean = calibration_curve(labels, mapped, n_bins=4, strategy="uniform")
    assert filled["consistent_share"].to_numpy() == pytest.approx(share)
    assert filled["mean_score"].to_numpy() == pytest.approx(mean)


def test_reliability_rows_skip_raw_scores_outside_unit_interval_and_single_class() -> None:
    from factlab.metaeval.analyses.detection_command import reliability_rows

    signed = frame().assign(score=[s * 2 - 1 for s in SCORES])
    assert reliability_rows("zs", [signed], None, 4) == []  # no raw diagram of scores in [-1, 1], no calibrator
    one_class = frame().assign(label=1)
    assert reliability_rows("s", [one_class], None, 4) == []


def test_a_similarity_rounded_above_one_still_gets_an_ece() -> None:
    # MiniLM's cosine of a text with itself, computed in float32, comes out as 1.0000001 (seen on TRUE-BEGIN).
    rounded_one = float(np.float32(1.0000001))
    assert rounded_one > 1.0
    scored = frame().assign(score=[rounded_one, *SCORES[1:]])
    row = detection_row("bertscore_precision", "b", scored, 0.5, 0.0, resamples=50, confidence=0.9, seed=1, ece_bins=2)
    # hand, bins (0, .5] and (.5, 1] with the 1.0000001 read as 1: {0.35, 0.2, 0.1} conf .65/3, acc 1/3;
    # {1, 0.8, 0.6, 0.55, 0.7} conf .73, acc 3/5. ECE = 3/8 * |1/3 - .65/3| + 5/8 * |.6 - .73| = .04375 + .08125
    assert row["ece"] == pytest.approx(0.125)
    beyond = frame().assign(score=[1.01, *SCORES[1:]])  # a scorer whose range is not [0, 1]: no ECE
    row = detection_row("rouge", "b", beyond, 0.5, 0.0, resamples=50, confidence=0.9, seed=1, ece_bins=2)
    assert np.isnan(row["ece"]) and np.isnan(row["ece_equal_mass"])


def test_tuning_overlap_is_the_share_of_examples_sharing_word_runs_not_equal_strings() -> None:
    """Real QAGS-XSum records: a reported benchmark holding one tuning article in another tokenisation (upper case,
    commas spaced) overlaps the tuning data in that example only; one holding other articles does not."""
    from factlab.metaeval.analyses.detection_command import TuningOverlap

    records = pd.read_csv(Path(__file__).parent / "fixtures" / "byo_qags_xsum_head.csv")
    texts = pd.DataFrame(
        {"example_id": [f"e{i}" for i in range(len(records))], "source": records["document"], "output": records["summary"]}
    )
    tuning, other = texts.iloc[:3], texts.iloc[3:].copy()
    copied = other.copy()
    copied.iloc[0, copied.columns.get_loc("source")] = tuning["source"].iloc[0].upper().replace(",", " ,")
    assert copied["source"].iloc[0] != tuning["source"].iloc[0]
    data = {"cut": tuning, "clean": other, "copied": copied}
    overlap = TuningOverlap(data, ["cut"])
    assert overlap("copied", copied.assign(score=0.5)) == pytest.approx(1 / len(copied))
    assert overlap("clean", other.assign(score=0.5)) == 0.0
    assert TuningOverlap(data, [])("copied", copied.assign(score=0.5)) == 0.0  # no validation data, no overlap
    # only scored examples count: the copied article unscored, no overlap
    assert overlap("copied", copied.assign(score=[np.nan] + [0.5] * (len(copied) - 1))) == 0.0
    with pytest.raises(FactlabError, match=r"no --data file for validation benchmark\(s\) \['absent'\]"):
        TuningOverlap(data, ["absent"])


def test_tuning_overlap_is_measured_against_every_validation_benchmark_for_every_scorer(tmp_path, capsys) -> None:
    """Real QAGS-XSum records: a reported benchmark holding two of cut B's articles overlaps the tuning data in half its
    examples, for a scorer that scored only cut A (its head and chunks may come from B; here on a seeded sample of it,
    which the report names) and for one that scored no cut (the ensemble, fitted on them)."""
    from factlab.cli import main

    records = pd.read_csv(Path(__file__).parent / "fixtures" / "byo_qags_xsum_head.csv")
    texts = pd.DataFrame(
        {
            "example_id": records["id"],
            "doc_id": records["id"],
            "source": records["document"],
            "output": records["summary"],
            "label": (records["faithful"] == "yes").astype(int),
        }
    )
    parts = {"cut_a": texts.iloc[:2], "cut_b": texts.iloc[2:4], "reported": texts.iloc[2:]}
    assert set(parts["reported"]["label"]) == {0, 1}
    (tmp_path / "data").mkdir()
    for name, part in parts.items():
        part.to_parquet(tmp_path / "data" / f"{name}.parquet")
    scored = {"one_cut": ["cut_a", "reported"], "no_cut": ["reported"]}
    scores = []
    for scorer, benchmarks in scored.items():
        for name in benchmarks:
            path = tmp_path / "score" / name / f"{scorer}.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            part = parts[name]
            part[["example_id"]].assign(score=np.linspace(0.2, 0.8, len(part))).to_parquet(path)
            scores.append(str(path))
    sampled_cut = scores.pop(0)  # one_cut's cut A: a sampled table (score.sample), tuned on all the same
    command = ["metaeval", "detection", "--scores", *scores, "--sampled-scores", sampled_cut,
               "--data", *(str(tmp_path / "data" / f"{name}.parquet") for name in parts),
               "--validation", "cut_a", "cut_b", "--resamples", "20", "--confidence", "0.9", "--seed", "1",
               "--ece-bins", "2", "--reliability-bins", "2", "--out", str(tmp_path / "auc.csv"),
               "--out-reliability", str(tmp_path / "reliability.csv"), "--report", str(tmp_path / "report.json"),
               "--out-metrics", str(tmp_path / "metrics.json")]  # fmt: skip
    assert main(command) == 0
    table = pd.read_csv(tmp_path / "auc.csv").set_index("scorer")
    assert set(table["benchmark"]) == {"reported"}
    assert table.loc["one_cut", "tuning_overlap"] == pytest.approx(0.5)
    assert table.loc["no_cut", "tuning_overlap"] == pytest.approx(0.5)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["thresholds_tuned_on_sample"] == {"one_cut": ["cut_a"]}
    assert report["thresholds"]["one_cut"] is not None and report["thresholds"]["no_cut"] is None
    # metrics.json: every scorer's headline numbers on the reported benchmark, against scikit-learn.
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    reported = parts["reported"]
    auc = roc_auc_score(reported["label"], np.linspace(0.2, 0.8, len(reported)))
    bacc = balanced_accuracy_score(reported["label"], np.linspace(0.2, 0.8, len(reported)) >= 0.5)
    assert set(metrics) == set(scored)
    for scorer in scored:
        assert metrics[scorer]["benchmarks"] == 1
        assert metrics[scorer]["roc_auc"] == {"reported": pytest.approx(auc, abs=1e-4)}
        assert metrics[scorer]["mean_roc_auc"] == pytest.approx(auc, abs=1e-4)
        assert metrics[scorer]["mean_bacc_fixed05"] == pytest.approx(bacc, abs=1e-4)
    absent = command[: command.index("cut_b") + 1] + ["cut_c"] + command[command.index("cut_b") + 1 :]
    assert main(absent) != 0  # a validation benchmark without its data: its overlap cannot be measured
    assert "no --data file for validation benchmark(s) ['cut_c']" in capsys.readouterr().err


def test_headline_metrics_average_only_the_benchmarks_with_an_auc() -> None:
    """A benchmark with one label (no AUC) is left out of the scorer's means and counts; worked by hand."""
    from factlab.metaeval.analyses.detection_command import headline_metrics

    table = pd.DataFrame(
        {
            "scorer": ["a", "a", "a", "b"],
            "benchmark": ["x", "y", "one_label", "x"],
            "sampled": [False, True, False, False],
            "roc_auc": [0.8, 0.6, np.nan, 0.55],
            "bacc_fixed05": [0.75, 0.5, np.nan, 0.5],
        }
    )
    metrics = headline_metrics(table)
    assert metrics["a"] == {
        "benchmarks": 2,
        "sampled_benchmarks": ["y"],
        "mean_roc_auc": 0.7,
        "mean_bacc_fixed05": 0.625,
        "roc_auc": {"x": 0.8, "y": 0.6},
        "bacc_fixed05": {"x": 0.75, "y": 0.5},
    }
    assert metrics["b"]["mean_roc_auc"] == 0.55 and metrics["b"]["benchmarks"] == 1


def test_wice_partially_supported_claims_get_their_own_rows(raw, tmp_path, capsys) -> None:
    """Real WiCE claims (test split): the 3-way label breaks the supported-vs-not row down into partially supported
    vs supported and not supported vs supported, each against scikit-learn on the claims picked here by hand; the
    supported claims alone would be the whole benchmark again, so they get no row; a breakdown row is not in the means."""
    from factlab.cli import main
    from factlab.data.adapters.wice import adapt_wice_claims

    data = adapt_wice_claims(raw).frame.query("split == 'test'")
    data_path = tmp_path / "data" / "wice_claims.parquet"
    data_path.parent.mkdir()
    data.to_parquet(data_path)
    scores = data[["example_id"]].assign(score=[word_share(s, o) for s, o in zip(data["source"], data["output"], strict=True)])
    score_path = tmp_path / "score" / "wice_claims" / "overlap.parquet"
    score_path.parent.mkdir(parents=True)
    scores.to_parquet(score_path)
    brevity = data[["example_id"]].assign(score=[1 / len(output.split()) for output in data["output"]])
    brevity.to_parquet(score_path.parent / "brevity.parquet")
    command = ["metaeval", "detection", "--scores", str(score_path), str(score_path.parent / "brevity.parquet"),
               "--data", str(data_path),
               "--groups", "wice_claims=wice_label", "--resamples", "20", "--confidence", "0.9", "--seed", "1",
               "--ece-bins", "2", "--reliability-bins", "2", "--out", str(tmp_path / "auc.csv"),
               "--out-reliability", str(tmp_path / "reliability.csv"), "--report", str(tmp_path / "report.json"),
               "--out-metrics", str(tmp_path / "metrics.json")]  # fmt: skip
    assert main(command) == 0
    both = pd.read_csv(tmp_path / "auc.csv")
    table = both[both["scorer"] == "overlap"].set_index("benchmark")
    joined = data.assign(score=scores["score"].to_numpy(), brevity=brevity["score"].to_numpy())
    expected = {
        "wice_claims": joined,
        "wice_claims[wice_label=partially_supported vs all consistent]": joined[joined["wice_label"] != "not_supported"],
        "wice_claims[wice_label=not_supported vs all consistent]": joined[joined["wice_label"] != "partially_supported"],
    }
    assert set(table.index) == set(expected)
    for name, part in expected.items():
        assert table.loc[name, "n"] == len(part)
        assert table.loc[name, "roc_auc"] == pytest.approx(roc_auc_score(part["label"], part["score"]))
        assert table.loc[name, "bacc_fixed05"] == pytest.approx(balanced_accuracy_score(part["label"], part["score"] >= 0.5))
        # the paired test against the row's best scorer reads the breakdown's own examples
        aucs = {"overlap": roc_auc_score(part["label"], part["score"]), "brevity": roc_auc_score(part["label"], part["brevity"])}
        best = max(aucs, key=aucs.get)
        rows = both[both["benchmark"] == name].set_index("scorer")
        assert set(rows["best_scorer"]) == {best}
        other = min(aucs, key=aucs.get)
        assert rows.loc[other, "auc_diff_to_best"] == pytest.approx(aucs[other] - aucs[best], abs=1e-5)  # CSV: 6 digits
        assert 0 <= rows.loc[other, "p_vs_best"] <= 1
    assert (table.loc["wice_claims[wice_label=partially_supported vs all consistent]", "n"], table.loc["wice_claims", "n"]) == (
        326,
        358,
    )  # 215 partially supported + 111 supported of the 358 test claims (the mirror README's counts)
    metrics = json.loads((tmp_path / "metrics.json").read_text())["overlap"]  # brevity's alike
    assert metrics["benchmarks"] == 1
    assert metrics["mean_roc_auc"] == pytest.approx(table.loc["wice_claims", "roc_auc"], abs=1e-4)
    assert len(metrics["roc_auc"]) == 3
    assert json.loads((tmp_path / "report.json").read_text())["groups"] == {"wice_claims": ["wice_label"]}
    assert main([("wice_claims=domain" if part == "wice_claims=wice_label" else part) for part in command]) != 0
    assert f"{data_path}" in capsys.readouterr().err


def test_breakdown_of_a_group_holding_both_labels_is_its_own_examples() -> None:
    """A group column whose values each hold both labels (a custom benchmark's domain): one row per value, its examples."""
    from factlab.metaeval.analyses.detection_command import breakdowns

    data = frame().assign(domain=["news", "news", "news", "news", "chat", "chat", "chat", "chat"])
    subsets = breakdowns("b", data, ["domain"])
    assert list(subsets) == ["b[domain=chat]", "b[domain=news]"]
    assert list(subsets["b[domain=news]"]["example_id"]) == ["e0", "e1", "e2", "e3"]


def test_headline_metrics_of_a_scorer_with_no_auc_anywhere() -> None:
    """A scorer whose every benchmark has one label (a smoke subset) has no means and counts no benchmark."""
    from factlab.metaeval.analyses.detection_command import headline_metrics

    table = pd.DataFrame(
        {"scorer": ["a"], "benchmark": ["one_label"], "sampled": [False], "roc_auc": [np.nan], "bacc_fixed05": [np.nan]}
    )
    assert headline_metrics(table)["a"] == {
        "benchmarks": 0,
        "sampled_benchmarks": [],
        "mean_roc_auc": None,
        "mean_bacc_fixed05": None,
        "roc_auc": {},
        "bacc_fixed05": {},
    }


def test_a_sampled_scorer_is_never_the_best_the_others_are_compared_with(raw, tmp_path) -> None:
    """Real WiCE test claims: word overlap on a seeded sample of 120 claims (score.sample) beats brevity, which scored
    every claim, yet brevity is the best every row is compared with (an AUC on a sample is noisier, and the full
    scorers would be compared on its sample only); the sampled row says so, its n is the sample's, and its paired
    difference to the best is scikit-learn's on the claims both scored."""
    from factlab.cli import main
    from factlab.data.adapters.wice import adapt_wice_claims
    from factlab.sampling import sample_examples

    data = adapt_wice_claims(raw).frame.query("split == 'test'")
    data_path = tmp_path / "data" / "wice_claims.parquet"
    data_path.parent.mkdir()
    data.to_parquet(data_path)
    folder = tmp_path / "score" / "wice_claims"
    folder.mkdir(parents=True)
    sample = sample_examples(data, 120, seed=2022)
    overlap = sample[["example_id"]].assign(
        score=[word_share(s, o) for s, o in zip(sample["source"], sample["output"], strict=True)]
    )
    overlap.to_parquet(folder / "overlap.parquet")
    brevity = data[["example_id"]].assign(score=[1 / len(output.split()) for output in data["output"]])
    brevity.to_parquet(folder / "brevity.parquet")
    on_sample = sample[["example_id", "label"]].merge(overlap).merge(brevity, on="example_id", suffixes=("", "_brevity"))
    overlap_auc = roc_auc_score(on_sample["label"], on_sample["score"])
    brevity_auc = roc_auc_score(data["label"], brevity["score"])
    assert overlap_auc > brevity_auc  # else the test could not tell
    command = ["metaeval", "detection", "--scores", str(folder / "brevity.parquet"),
               "--sampled-scores", str(folder / "overlap.parquet"), "--data", str(data_path),
               "--resamples", "20", "--confidence", "0.9", "--seed", "1", "--ece-bins", "2", "--reliability-bins", "2",
               "--out", str(tmp_path / "auc.csv"), "--out-reliability", str(tmp_path / "reliability.csv"),
               "--report", str(tmp_path / "report.json"), "--out-metrics", str(tmp_path / "metrics.json")]  # fmt: skip
    assert main(command) == 0
    rows = pd.read_csv(tmp_path / "auc.csv").set_index("scorer")
    assert set(rows["best_scorer"]) == {"brevity"}
    assert bool(rows.loc["overlap", "sampled"]) and not bool(rows.loc["brevity", "sampled"])
    assert rows.loc["overlap", "n"] == 120 and rows.loc["brevity", "n"] == len(data)
    assert rows.loc["overlap", "roc_auc"] == pytest.approx(overlap_auc)
    paired = overlap_auc - roc_auc_score(on_sample["label"], on_sample["score_brevity"])
    assert rows.loc["overlap", "auc_diff_to_best"] == pytest.approx(paired, abs=1e-5)  # CSV: 6 digits
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["overlap"]["sampled_benchmarks"] == ["wice_claims"] and metrics["brevity"]["sampled_benchmarks"] == []
