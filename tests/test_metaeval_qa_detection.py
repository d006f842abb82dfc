"""QASemConsistency's QA-level detection (factlab.metaeval.analyses.qa_detection_command) on the real gold QAs.

Scores: a word-overlap reading of each real QA (the share of the answer's words found in its source,
computed here) and, in the scorer's `units` layout, seeded noise around the labels. Every number is checked
against scikit-learn on the rows selected here by hand; the dev-tuned threshold against a brute-force
search over the dev scores; the bootstrap's unit (source documents) by what renaming responses or sources does.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import balanced_accuracy_score, roc_auc_score

from factlab.cli import main
from factlab.data.adapters.qasem_consistency import adapt_qas
from factlab.data.schema import validate_benchmark


@pytest.fixture(scope="module")
def gold(raw) -> pd.DataFrame:
    return validate_benchmark(adapt_qas(raw).frame, "qasem_consistency_qas")


def words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def overlap_scores(gold: pd.DataFrame) -> pd.DataFrame:
    shares = [
        len(words(answer) & words(source)) / max(1, len(words(answer)))
        for answer, source in zip(gold["answer"], gold["source"], strict=True)
    ]
    return pd.DataFrame({"example_id": gold["example_id"], "score": shares})


def protocol_table(gold: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The QASemConsistency scorer's layout (one row per response, its QAs as `qa` units) and the same scores flat."""
    rng = np.random.default_rng(3)
    flat = pd.DataFrame(
        {"example_id": gold["example_id"], "score": np.clip(0.3 * gold["label"] + rng.uniform(0, 0.7, len(gold)), 0, 1)}
    )
    by_qa = dict(zip(flat["example_id"], flat["score"], strict=True))
    rows = [
        {
            "example_id": response,
            "score": float(np.mean([by_qa[qa] for qa in part["example_id"]])),
            "units": [
                {"unit": "qa", "qa_id": qa, "sentence_index": int(sentence), "score": by_qa[qa]}
                for qa, sentence in zip(part["example_id"], part["sent_id"], strict=True)
            ],
        }
        for response, part in gold.groupby("doc_id", sort=False)
    ]
    return pd.DataFrame(rows), flat


def run(
    tmp_path,
    gold: pd.DataFrame,
    scores: dict[str, pd.DataFrame],
    protocol: pd.DataFrame | None,
    resamples: int = 100,
    sampled: dict[str, pd.DataFrame] | None = None,
) -> int:
    gold_path = tmp_path / "qasem_consistency_qas.parquet"
    gold.to_parquet(gold_path)
    paths, sampled_paths = [], []
    for name, frame in scores.items():
        paths.append(tmp_path / f"{name}.parquet")
        frame.to_parquet(paths[-1])
    for name, frame in (sampled or {}).items():
        sampled_paths.append(tmp_path / f"{name}.parquet")
        frame.to_parquet(sampled_paths[-1])
    protocol_args = []
    if protocol is not None:
        protocol.to_parquet(tmp_path / "gold_qas.parquet")
        protocol_args = ["--protocol-scores", str(tmp_path / "gold_qas.parquet")]
    return main(
        ["metaeval", "qa-detection", "--gold-qas", str(gold_path), "--scores", *map(str, paths),
         "--sampled-scores", *map(str, sampled_paths), *protocol_args,
         "--resamples", str(resamples), "--confidence", "0.95", "--seed", "1",
         "--out", str(tmp_path / "qa_detection.csv"), "--out-published", str(tmp_path / "published.csv"),
         "--out-metrics", str(tmp_path / "metrics.json")]
    )  # fmt: skip


def brute_force_threshold(labels: np.ndarray, scores: np.ndarray) -> float:
    """The lowest observed score whose `score >= t` maximises sklearn's balanced accuracy."""
    candidates = np.unique(scores)
    accuracies = [balanced_accuracy_score(labels, scores >= t) for t in candidates]
    return float(candidates[int(np.argmax(accuracies))])


def test_every_row_equals_sklearn_on_its_task_and_split(tmp_path, gold) -> None:
    protocol, protocol_flat = protocol_table(gold)
    overlap = overlap_scores(gold)
    assert run(tmp_path, gold, {"overlap": overlap}, protocol) == 0
    table = pd.read_csv(tmp_path / "qa_detection.csv").set_index(["scorer", "task", "split"])
    assert set(table.index.get_level_values("scorer")) == {"overlap", "qasem_consistency"}
    for scorer, flat in (("overlap", overlap), ("qasem_consistency", protocol_flat)):
        joined = gold[["example_id", "task", "split", "label"]].merge(flat, on="example_id")
        dev = joined[joined["split"] == "dev"]
        threshold = brute_force_threshold(dev["label"].to_numpy(), dev["score"].to_numpy())
        for split in ("dev", "test"):
            in_split = joined[joined["split"] == split]
            for task in ("cliff", "factscore", "verifiability", "all"):
                part = in_split if task == "all" else in_split[in_split["task"] == task]
                row = table.loc[(scorer, task, split)]
                assert row["n"] == len(part) > 100 and row["supported"] == part["label"].sum()
                assert row["roc_auc"] == pytest.approx(roc_auc_score(part["label"], part["score"]))
                assert row["roc_auc_ci_low"] <= row["roc_auc"] <= row["roc_auc_ci_high"]
                assert row["bacc_fixed05"] == pytest.approx(balanced_accuracy_score(part["label"], part["score"] >= 0.5))
                assert row["bacc_fixed05_ci_low"] <= row["bacc_fixed05"] <= row["bacc_fixed05_ci_high"]
                if split == "dev":  # in-sample there: left empty
                    assert np.isnan(row["threshold_dev_tuned"]) and np.isnan(row["bacc_dev_tuned"])
                    continue
                assert row["threshold_dev_tuned"] == pytest.approx(threshold)
                assert row["bacc_dev_tuned"] == pytest.approx(balanced_accuracy_score(part["label"], part["score"] >= threshold))
    # the answer-overlap reading carries signal on the real QAs: an unsupported answer often names what the source lacks
    assert table.loc[("overlap", "all", "test"), "roc_auc"] > 0.6
    published = pd.read_csv(tmp_path / "published.csv")
    assert set(published["task"]) == {"cliff", "factscore", "verifiability"} and set(published["split"]) == {"test"}
    # metrics.json: the test split's numbers, each against scikit-learn, and the best scorer per task
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    test = {}
    for scorer, flat in (("overlap", overlap), ("qasem_consistency", protocol_flat)):
        joined = gold[["example_id", "task", "split", "label"]].merge(flat, on="example_id").query("split == 'test'")
        for task in ("cliff", "factscore", "verifiability"):
            part = joined[joined["task"] == task]
            test[(scorer, task)] = balanced_accuracy_score(part["label"], part["score"] >= 0.5)
            entry = metrics["scorers"][scorer][task]
            assert entry["bacc_fixed05"] == pytest.approx(test[(scorer, task)], abs=5e-5)
            assert entry["roc_auc"] == pytest.approx(roc_auc_score(part["label"], part["score"]), abs=5e-5)
    for task in ("cliff", "factscore", "verifiability"):
        best = max(("overlap", "qasem_consistency"), key=lambda scorer: test[(scorer, task)])
        assert metrics["best_bacc_fixed05"][task]["scorer"] == best
    assert metrics["best_bacc_fixed05"]["factscore"]["published"] == {"TRUE-11B": 0.725, "MiniCheck": 0.78}


def test_a_scorer_of_a_sample_of_the_qas_is_not_set_beside_the_published_numbers(tmp_path, gold) -> None:
    """The answer overlap on a seeded sample of 400 QAs (score.sample) beats reading every QA as supported on some task,
    yet metrics.json's best scorer per task is the one that scored every QA; the sampled rows say so and count the QAs
    they left unscored; the paper table marks them and gives each row's test n."""
    from factlab.sampling import sample_examples

    overlap = overlap_scores(gold)
    kept = sample_examples(gold, 400, seed=2022)["example_id"]
    always = gold[["example_id"]].assign(score=1.0)  # every QA supported: balanced accuracy 0.5 on every task
    assert run(tmp_path, gold, {"always": always}, None, sampled={"overlap": overlap[overlap["example_id"].isin(kept)]}) == 0
    table = pd.read_csv(tmp_path / "qa_detection.csv").set_index(["scorer", "task", "split"])
    test = table.xs("test", level="split")
    assert (test.loc["overlap", "bacc_fixed05"] > 0.5).any()  # else the test could not tell
    assert table.loc["overlap", "sampled"].all() and not table.loc["always", "sampled"].any()
    assert table.xs(("overlap", "all"), level=("scorer", "task"))["n"].sum() == 400
    assert (
        table.loc[("overlap", "all", "test"), "n_unscored"]
        == (gold["split"] == "test").sum() - table.loc[("overlap", "all", "test"), "n"]
    )
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert {entry["scorer"] for entry in metrics["best_bacc_fixed05"].values()} == {"always"}
    from factlab.paper.scorer_tables_command import qa_detection_frame

    frame = qa_detection_frame(pd.read_csv(tmp_path / "qa_detection.csv"), pd.read_csv(tmp_path / "published.csv"))
    frame = frame.set_index("scorer")
    assert frame.loc["factlab: overlap (sample)", "n (test)"] == table.loc[("overlap", "all", "test"), "n"]
    assert frame.loc["factlab: always", "n (test)"] == (gold["split"] == "test").sum()


def test_unscored_qas_are_counted_and_left_out(tmp_path, gold) -> None:
    overlap = overlap_scores(gold)
    unscored = overlap["example_id"].isin(set(gold.loc[gold["split"] == "test", "example_id"].iloc[:7]))
    overlap.loc[unscored, "score"] = np.nan
    assert run(tmp_path, gold, {"overlap": overlap.iloc[5:]}, None) == 0  # 5 QAs missing from the table too
    table = pd.read_csv(tmp_path / "qa_detection.csv").set_index(["scorer", "task", "split"])
    test_all = table.loc[("overlap", "all", "test")]
    assert test_all["n_unscored"] == 7 + int((gold.iloc[:5]["split"] == "test").sum())
    assert test_all["n"] + test_all["n_unscored"] == int((gold["split"] == "test").sum())


def test_the_auc_interval_resamples_sources_not_responses(tmp_path, gold) -> None:
    """The QAs of one source move together in the bootstrap: renaming responses (`doc_id`) leaves the interval as
    it is, while giving each QA its own source text (every QA then resampled alone) narrows it on the real data."""
    overlap = overlap_scores(gold)
    assert run(tmp_path, gold, {"overlap": overlap}, None) == 0
    by_source = pd.read_csv(tmp_path / "qa_detection.csv").set_index(["scorer", "task", "split"])
    # every response of a task and split named alike: a response bootstrap would now resample one group
    assert run(tmp_path, gold.assign(doc_id=gold["task"] + "/" + gold["split"]), {"overlap": overlap}, None) == 0
    renamed = pd.read_csv(tmp_path / "qa_detection.csv").set_index(["scorer", "task", "split"])
    pd.testing.assert_frame_equal(renamed, by_source)
    assert run(tmp_path, gold.assign(source=gold["source"] + gold["example_id"]), {"overlap": overlap}, None) == 0
    per_qa = pd.read_csv(tmp_path / "qa_detection.csv").set_index(["scorer", "task", "split"])
    width = lambda table: (table["roc_auc_ci_high"] - table["roc_auc_ci_low"]).loc[("overlap", "all", "test")]  # noqa: E731
    assert gold.loc[gold["split"] == "test", "source"].nunique() < 100 and width(per_qa) < width(by_source)


def test_a_qa_scored_twice_is_a_one_line_error(tmp_path, gold, capsys) -> None:
    overlap = overlap_scores(gold)
    assert run(tmp_path, gold, {"overlap": pd.concat([overlap, overlap.iloc[[3]]])}, None) != 0
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "overlap.parquet" in error[0] and str(overlap["example_id"].iloc[3]) in error[0]
    assert not (tmp_path / "qa_detection.csv").exists()


def test_a_score_for_an_unknown_qa_is_a_one_line_error(tmp_path, gold, capsys) -> None:
    overlap = overlap_scores(gold)
    overlap.loc[0, "example_id"] = "cliff/0/none/qa99"
    assert run(tmp_path, gold, {"overlap": overlap}, None) != 0
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "overlap.parquet" in error[0] and "cliff/0/none/qa99" in error[0]
    assert not (tmp_path / "qa_detection.csv").exists() and not (tmp_path / "published.csv").exists()


def test_paper_table_shows_the_test_split_beside_the_published_rows(tmp_path, gold) -> None:
    protocol, _ = protocol_table(gold)
    assert run(tmp_path, gold, {"overlap": overlap_scores(gold)}, protocol) == 0
    out_md, out_tex = tmp_path / "t.md", tmp_path / "t.tex"
    command = ["paper", "qa-detection-table", "--detection", str(tmp_path / "qa_detection.csv"),
               "--published", str(tmp_path / "published.csv"), "--out-md", str(out_md), "--out-tex", str(out_tex)]  # fmt: skip
    assert main(command) == 0
    from factlab.paper.scorer_tables_command import qa_detection_frame

    detection = pd.read_csv(tmp_path / "qa_detection.csv")
    frame = qa_detection_frame(detection, pd.read_csv(tmp_path / "published.csv")).set_index("scorer")
    expected = detection[(detection["split"] == "test") & (detection["task"] == "factscore")].set_index("scorer")
    assert frame.loc["factlab: overlap", "factscore BAcc"] == pytest.approx(100 * expected.loc["overlap", "bacc_fixed05"])
    assert frame.loc["factlab: qasem_consistency", "cliff AUC"] == pytest.approx(
        100 * detection.set_index(["scorer", "task", "split"]).loc[("qasem_consistency", "cliff", "test"), "roc_auc"]
    )
    low, high = map(float, frame.loc["factlab: overlap", "factscore AUC 95% CI"].strip("[]").split(", "))
    assert low < frame.loc["factlab: overlap", "factscore AUC"] < high
    low, high = map(float, frame.loc["factlab: overlap", "factscore BAcc 95% CI"].strip("[]").split(", "))
    assert low == pytest.approx(100 * expected.loc["overlap", "bacc_fixed05_ci_low"], abs=0.05)
    assert high == pytest.approx(100 * expected.loc["overlap", "bacc_fixed05_ci_high"], abs=0.05)
    assert frame.loc["TRUE-11B (published)", "factscore BAcc"] == 72.5
    assert pd.isna(frame.loc["MiniCheck (published)", "cliff AUC"])
    assert "tab:qa-detection" in out_tex.read_text() and "TRUE-11B" in out_md.read_text()


def test_the_balanced_accuracy_interval_matches_scipys_bootstrap_when_each_qa_is_its_own_source(tmp_path, gold) -> None:
    """With one QA per source the source bootstrap is the plain one: scipy.stats.bootstrap's percentile interval of
    sklearn's balanced accuracy at 0.5, within 0.01 (about 5 times the Monte Carlo error of 1,000 resamples each)."""
    test_qas = gold[gold["split"] == "test"]
    overlap = overlap_scores(test_qas)
    alone = test_qas.assign(source=test_qas["source"] + test_qas["example_id"])
    assert run(tmp_path, alone, {"overlap": overlap}, None, resamples=1000) == 0
    row = pd.read_csv(tmp_path / "qa_detection.csv").set_index(["scorer", "task", "split"]).loc[("overlap", "all", "test")]
    test = test_qas[["example_id", "label"]].merge(overlap, on="example_id")
    reference = stats.bootstrap(
        (test["label"].to_numpy(), (test["score"] >= 0.5).to_numpy()),
        lambda labels, predicted: balanced_accuracy_score(labels, predicted),
        paired=True,
        vectorized=False,
        n_resamples=1000,
        confidence_level=0.95,
        method="percentile",
        random_state=np.random.default_rng(5),
    ).confidence_interval
    assert row["bacc_fixed05_ci_low"] == pytest.approx(reference.low, abs=0.01)
    assert row["bacc_fixed05_ci_high"] == pytest.approx(reference.high, abs=0.01)
    assert reference.high - reference.low > 0.03  # a real interval, so agreeing within 0.01 says something
