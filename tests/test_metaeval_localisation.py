"""Token-level localisation (factlab.metaeval.localisation and `factlab metaeval localisation`), checked against
projections and character overlaps worked by hand, scikit-learn on hand-built token arrays, a hand-written Fleiss' κ,
and the counts and characters of the real WiCE and XSumFaith gold tables."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from known_counts import WICE_TOKENS
from sklearn.metrics import f1_score, precision_recall_fscore_support, roc_auc_score

from factlab.data.adapters.wice_tokens import adapt_wice_tokens
from factlab.data.adapters.xsumfaith import adapt_xsumfaith
from factlab.data.adapters.xsumfaith_spans import adapt_xsumfaith_spans
from factlab.errors import DataError, FactlabError
from factlab.metaeval.analyses.localisation_command import run_localisation
from factlab.metaeval.errors import StatisticsError
from factlab.metaeval.localisation import (
    character_prf,
    document_split,
    flag_all_baseline,
    flag_tokens,
    lexically_novel,
    policy_threshold,
    project_sentence_support,
    project_unit_support,
    token_agreement,
    token_prf,
    token_roc_auc,
    token_runs,
    tune_token_threshold,
    unsupported_from_labels,
)

# Projection


def test_projection_worked_by_hand():
    # "Cats purr. Dogs bark loudly."
    tokens = [[0, 4], [5, 9], [9, 10], [11, 15], [16, 20], [21, 27], [27, 28]]
    projected = project_sentence_support(tokens, [[0, 10], [11, 28]], [0.8, 0.3])
    assert projected.support.tolist() == [0.8, 0.8, 0.8, 0.3, 0.3, 0.3, 0.3]
    assert projected.sentence_index.tolist() == [0, 0, 0, 1, 1, 1, 1] and projected.n_outside == 0
    assert (1 - projected.support).round(6).tolist() == [0.2, 0.2, 0.2, 0.7, 0.7, 0.7, 0.7]


def test_tokens_outside_every_sentence_take_the_nearest_and_are_counted():
    # The splitter left out both full stops (9-10 and 27-28).
    tokens = [[0, 4], [5, 9], [9, 10], [11, 15], [27, 28]]
    projected = project_sentence_support(tokens, [[0, 9], [11, 27]], [0.8, 0.3])
    assert projected.support.tolist() == [0.8, 0.8, 0.8, 0.3, 0.3]
    assert projected.n_outside == 2


def test_a_token_split_between_sentences_takes_the_larger_share_then_the_earlier():
    # "U.S." cut after "U." (2 and 2 characters: a tie) and "New York" split 3 / 5.
    assert project_sentence_support([[0, 4]], [[0, 2], [2, 10]], [0.9, 0.1]).support.tolist() == [0.9]
    assert project_sentence_support([[0, 8]], [[0, 3], [3, 10]], [0.9, 0.1]).support.tolist() == [0.1]


@pytest.mark.parametrize(
    ("tokens", "sentences", "support"),
    [([[0, 4]], [], []), ([[0, 4]], [[0, 4]], [np.nan]), ([[3, 3]], [[0, 4]], [0.5]), ([[0, 4]], [[0, 4]], [0.5, 0.6])],
)
def test_projection_refuses_bad_input(tokens, sentences, support):
    with pytest.raises(StatisticsError):
        project_sentence_support(tokens, sentences, support)


def test_unit_projection_worked_by_hand():
    # "Snow is hot and white." QA 1: predicate "is" [5, 7), answer "hot" [8, 11), support 0.2; QA 2: predicate "is",
    # answer "Snow" [0, 4), support 0.9; "and white." is in no QA: support 1.
    tokens = [[0, 4], [5, 7], [8, 11], [12, 15], [16, 21], [21, 22]]
    projected = project_unit_support(tokens, [[[5, 7], [8, 11]], [[5, 7], [0, 4]]], [0.2, 0.9])
    assert projected.support.tolist() == [0.9, 0.2, 0.2, 1.0, 1.0, 1.0]  # "is": the lower of its two QAs
    assert projected.sentence_index.tolist() == [1, 0, 0, -1, -1, -1] and projected.n_outside == 3
    # A span covering part of a token covers the token; ties keep the earlier unit; a unit without spans covers none.
    tied = project_unit_support([[0, 6], [7, 9]], [[[2, 3]], [[0, 1]], []], [0.4, 0.4, 0.1])
    assert tied.support.tolist() == [0.4, 1.0] and tied.sentence_index.tolist() == [0, -1]


@pytest.mark.parametrize(
    ("spans", "support"),
    [([[[0, 4]]], [np.nan]), ([[[3, 3]]], [0.5]), ([[[0, 4]]], [0.5, 0.6])],
)
def test_unit_projection_refuses_bad_input(spans, support):
    with pytest.raises(StatisticsError):
        project_unit_support([[0, 4]], spans, support)


# Precision, recall, F1, AUC against scikit-learn


@pytest.fixture(scope="module")
def arrays():
    rng = np.random.default_rng(7)
    y_unsupported = rng.integers(0, 2, 300)
    support = np.round(rng.random(300) - 0.3 * y_unsupported, 2)  # ties on purpose
    return y_unsupported, support


@pytest.mark.parametrize("threshold", [0.5, 0.2, -1.0, 2.0])
def test_token_prf_is_sklearns_binary_prf(arrays, threshold):
    y, support = arrays
    flagged = flag_tokens(support, threshold)
    assert flagged.tolist() == (support < threshold).astype(int).tolist()
    precision, recall, f1, _ = precision_recall_fscore_support(y, flagged, average="binary", pos_label=1, zero_division=0)
    result = token_prf(y, flagged)
    assert (result.precision, result.recall, result.f1) == pytest.approx((precision, recall, f1), abs=1e-12)
    assert result.n_flagged == flagged.sum() and result.n_unsupported == y.sum() and result.n_tokens == len(y)


def test_token_prf_hand_built():
    gold = [1, 1, 0, 0, 1, 0]
    flagged = [1, 0, 1, 0, 1, 0]
    result = token_prf(gold, flagged)
    assert (result.true_positives, result.precision, result.recall, result.f1) == (2, 2 / 3, 2 / 3, 2 / 3)
    assert token_prf([0, 0, 1], [0, 0, 0]).f1 == 0.0  # nothing flagged: zero, as sklearn's zero_division=0


def test_token_auc_is_sklearns_auc_of_one_minus_support(arrays):
    y, support = arrays
    assert token_roc_auc(y, support) == pytest.approx(roc_auc_score(y, 1 - support), abs=1e-12)
    assert token_roc_auc([1, 0, 1, 0], [0.1, 0.9, 0.2, 0.8]) == 1.0
    with pytest.raises(StatisticsError):
        token_roc_auc([1, 1, 1], [0.1, 0.2, 0.3])


def test_flag_all_baseline_has_recall_one_and_the_base_rate_as_precision(arrays):
    y, _ = arrays
    lengths = np.random.default_rng(3).integers(1, 12, len(y))
    baseline = flag_all_baseline(y, lengths)
    assert baseline.tokens.recall == 1.0 and baseline.tokens.precision == pytest.approx(y.mean())
    assert baseline.tokens.f1 == pytest.approx(f1_score(y, np.ones_like(y)))
    assert baseline.characters.recall == 1.0
    assert baseline.characters.precision == pytest.approx(lengths[y == 1].sum() / lengths.sum())


# Character overlap: outputs worked by hand, and scikit-learn with each token weighted by its characters

# "Cats purr loudly." "Dogs fly." "Ice is cold.": the gold marks "loudly" and "fly"; the localiser flags
# "purr loudly", "Dogs" and "cold".
HAND_OUTPUTS = [
    ("Cats purr loudly.", [[0, 4], [5, 9], [10, 16], [16, 17]], [0, 0, 1, 0], [0, 1, 1, 0]),
    ("Dogs fly.", [[0, 4], [5, 8], [8, 9]], [0, 1, 0], [1, 0, 0]),
    ("Ice is cold.", [[0, 3], [4, 6], [7, 11], [11, 12]], [0, 0, 0, 0], [0, 0, 1, 0]),
]


def test_character_prf_worked_by_hand():
    lengths = np.concatenate([[end - start for start, end in offsets] for _, offsets, _, _ in HAND_OUTPUTS])
    gold = np.concatenate([gold for *_, gold, _ in HAND_OUTPUTS])
    flagged = np.concatenate([flagged for *_, flagged in HAND_OUTPUTS])
    # Flagged characters: purr 4 + loudly 6 + Dogs 4 + cold 4 = 18 (the space inside "purr loudly" is no token's);
    # unsupported: loudly 6 + fly 3 = 9; both: loudly 6.
    result = character_prf(gold, flagged, lengths)
    assert (result.n_characters, result.n_flagged, result.n_unsupported, result.overlap) == (33, 18, 9, 6)
    assert (result.precision, result.recall, result.f1) == pytest.approx((6 / 18, 6 / 9, 2 * 6 / (18 + 9)))
    # Token level on the same flags: 1 of 4 flagged tokens is unsupported, 1 of 2 unsupported tokens flagged.
    assert (token_prf(gold, flagged).precision, token_prf(gold, flagged).recall) == pytest.approx((1 / 4, 1 / 2))


def test_flag_all_does_not_score_character_f1_one_when_the_gold_is_partial():
    lengths = np.concatenate([[end - start for start, end in offsets] for _, offsets, _, _ in HAND_OUTPUTS])
    gold = np.concatenate([gold for *_, gold, _ in HAND_OUTPUTS])
    # Every token flagged: 33 characters, 9 of them unsupported. Every output holding gold has a flagged run over
    # it, which an overlap-any span criterion counts as F1 1.
    baseline = flag_all_baseline(gold, lengths).characters
    assert (baseline.precision, baseline.recall) == pytest.approx((9 / 33, 1.0))
    assert baseline.f1 == pytest.approx(2 * 9 / (33 + 9))  # 3/7
    assert character_prf([1, 1], [1, 1], [3, 5]).f1 == 1.0  # all gold: flagging all is right
    assert character_prf([0, 1], [0, 0], [3, 5]).f1 == 0.0  # nothing flagged: 0, as token F1


def test_character_prf_is_sklearns_prf_weighted_by_characters(arrays):
    y, support = arrays
    lengths = np.random.default_rng(11).integers(1, 15, len(y))
    for threshold in (0.2, 0.5, 0.8):
        flagged = flag_tokens(support, threshold)
        expected = precision_recall_fscore_support(y, flagged, average="binary", sample_weight=lengths, zero_division=0)[:3]
        result = character_prf(y, flagged, lengths)
        assert (result.precision, result.recall, result.f1) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("lengths", [[1, 0], [1.5, 2.0], [1], [[1, 2]]])
def test_character_prf_refuses_bad_lengths(lengths):
    with pytest.raises(StatisticsError):
        character_prf([0, 1], [1, 1], lengths)


def test_lexical_floor_worked_by_hand():
    source = "The cat sat on the mat in Paris."
    tokens = ["A", "Cat", "sat", "in", "PARIS", "and", "cats", "U.K.", ",", "."]
    # Lower-cased: "a", "and" and "cats" (no stemming) are not source words, nor "u"/"k"; punctuation is never flagged.
    assert lexically_novel(tokens, source).tolist() == [1, 0, 0, 0, 0, 1, 1, 1, 0, 0]
    assert lexically_novel([], source).tolist() == []


def test_tuned_threshold_is_the_best_f1_by_brute_force(arrays):
    y, support = arrays
    threshold = tune_token_threshold(y, support)
    candidates = [*np.unique(support), np.inf]
    scores = [f1_score(y, (support < c).astype(int), zero_division=0) for c in candidates]
    best = max(scores)
    lowest_best = min(c for c, s in zip(candidates, scores, strict=True) if s == pytest.approx(best, abs=1e-12))
    assert f1_score(y, flag_tokens(support, threshold)) == pytest.approx(best, abs=1e-12)
    assert threshold == lowest_best


def test_tuning_can_flag_every_token():
    # All tokens unsupported: flagging all of them is the best F1 (1.0).
    threshold = tune_token_threshold([1, 1, 1], [0.2, 0.5, 0.9])
    assert threshold > 0.9 and flag_tokens([0.2, 0.5, 0.9], threshold).tolist() == [1, 1, 1]


def test_threshold_policies():
    evaluated = ([1, 0, 1, 0], [0.1, 0.9, 0.3, 0.6])
    validation = ([1, 1, 0], [0.7, 0.75, 0.8])
    assert policy_threshold("fixed05", evaluated=evaluated, validation=None) == 0.5
    assert policy_threshold("val_tuned", evaluated=evaluated, validation=validation) == 0.8
    assert policy_threshold("oracle", evaluated=evaluated, validation=validation) == 0.6
    with pytest.raises(StatisticsError, match="validation"):
        policy_threshold("val_tuned", evaluated=evaluated, validation=None)
    with pytest.raises(StatisticsError, match="unknown"):
        policy_threshold("best", evaluated=evaluated, validation=None)


def test_labels_are_inverted_once():
    assert unsupported_from_labels([1, 0, 1]).tolist() == [0, 1, 0]
    with pytest.raises(StatisticsError):
        unsupported_from_labels([1, 2])


def test_document_split_is_seeded_and_by_document():
    docs = [f"d{i % 20}" for i in range(100)]
    first = document_split(docs, 0.3, 2022)
    assert first == document_split(list(reversed(docs)), 0.3, 2022) == sorted(first)
    assert len(first) == 6 and set(first) <= set(docs)
    assert first != document_split(docs, 0.3, 1)
    with pytest.raises(StatisticsError):
        document_split(["a", "b"], 0.1, 0)


# Agreement


def fleiss_by_hand(ratings: np.ndarray) -> float:
    """Fleiss (1971) on an (items x raters) 0/1 array, written out."""
    n = ratings.shape[1]
    counts = np.stack([(ratings == 0).sum(axis=1), (ratings == 1).sum(axis=1)], axis=1)
    p_item = ((counts**2).sum(axis=1) - n) / (n * (n - 1))
    p_category = counts.sum(axis=0) / counts.sum()
    chance = (p_category**2).sum()
    return float((p_item.mean() - chance) / (1 - chance))


def test_token_runs_stop_at_each_output():
    assert token_runs(np.array([1, 1, 1]), np.array(["a", "b", "b"])) == [(0, 1), (1, 3)]
    assert token_runs(np.array([0, 1, 1, 0, 1]), np.zeros(5)) == [(1, 3), (4, 5)]


def test_token_agreement_hand_built():
    outputs = [
        np.array([[1, 0, 0, 1], [1, 0, 1, 1], [1, 1, 0, 1]]),
        np.array([[0, 1], [0, 1], [0, 0]]),
        np.array([[1, 0, 1], [0, 0, 1]]),  # two annotators only: out of κ and the majority share
    ]
    agreement = token_agreement(outputs)
    complete = np.concatenate([outputs[0].T, outputs[1].T])
    assert agreement.fleiss_kappa == pytest.approx(fleiss_by_hand(complete), abs=1e-12)
    assert (agreement.n_outputs, agreement.n_tokens, agreement.raters, agreement.n_excluded_outputs) == (3, 9, 3, 1)
    # Pair (0, 1) on all 9 tokens; pairs with slot 2 on the 6 tokens of the first two outputs.
    slot = [np.concatenate([o[i] for o in outputs if len(o) > i]) for i in range(3)]
    expected = {
        "0-1": f1_score(1 - slot[0], 1 - slot[1]),
        "0-2": f1_score(1 - slot[0][:6], 1 - slot[2]),
        "1-2": f1_score(1 - slot[1][:6], 1 - slot[2]),
    }
    assert agreement.pairwise_f1 == pytest.approx(expected, abs=1e-12)
    assert agreement.mean_pairwise_f1 == pytest.approx(np.mean(list(expected.values())), abs=1e-12)


# The command on hand-built tables


def gold_row(example_id, doc_id, split, output, tokens, labels, workers=None):
    offsets, position = [], 0
    for token in tokens:
        start = output.index(token, position)
        offsets.append([start, start + len(token)])
        position = start + len(token)
    row = {
        "example_id": example_id,
        "doc_id": doc_id,
        "split": split,
        "output": output,
        "tokens": json.dumps(tokens),
        "token_offsets": json.dumps(offsets),
        "token_labels": json.dumps(labels),
    }
    if workers is not None:
        row["worker_token_labels"] = json.dumps(workers)
    return row


def sentence(output, text, support):
    start = output.index(text)
    return {"sentence_index": 0, "sentence": text, "start": start, "end": start + len(text), "support": support}


HAND_GOLD = [
    gold_row("d1", "A", "dev", "Cats purr. Dogs bark.", ["Cats", "purr", ".", "Dogs", "bark", "."], [1, 1, 1, 0, 0, 1]),
    gold_row("d2", "B", "dev", "Birds sing.", ["Birds", "sing", "."], [0, 0, 1]),
    gold_row("t1", "C", "test", "Fish swim. Fish fly.", ["Fish", "swim", ".", "Fish", "fly", "."], [1, 1, 1, 1, 0, 1]),
    gold_row("t2", "D", "test", "Snow is hot.", ["Snow", "is", "hot", "."], [1, 1, 0, 1]),
    gold_row("t3", "D", "test", "Ice is cold.", ["Ice", "is", "cold", "."], [1, 1, 1, 1]),  # not scored
]
HAND_SCORES = [
    ("d1", [sentence("Cats purr. Dogs bark.", "Cats purr.", 0.9), sentence("Cats purr. Dogs bark.", "Dogs bark.", 0.6)]),
    ("d2", [sentence("Birds sing.", "Birds sing.", 0.7)]),
    ("t1", [sentence("Fish swim. Fish fly.", "Fish swim.", 0.95), sentence("Fish swim. Fish fly.", "Fish fly.", 0.8)]),
    ("t2", [sentence("Snow is hot.", "Snow is hot.", 0.2)]),
]


def write_inputs(tmp_path: Path, gold_rows, scored, benchmark="bench", scorer="alignscore") -> tuple[str, str]:
    gold = tmp_path / "gold_tokens.parquet"
    pd.DataFrame(gold_rows).to_parquet(gold)
    return str(gold), write_scores(tmp_path, scored, benchmark, scorer)


def write_scores(tmp_path: Path, scored, benchmark: str, scorer: str) -> str:
    scores = tmp_path / "score" / benchmark / f"{scorer}.parquet"
    scores.parent.mkdir(parents=True, exist_ok=True)
    rows = [
        {"example_id": eid, "score": float(np.mean([s["support"] for s in sents])), "sentences": sents} for eid, sents in scored
    ]
    pd.DataFrame(rows).to_parquet(scores)
    return str(scores)


def run(
    tmp_path: Path,
    gold: str,
    scores: list[str],
    benchmark="bench",
    policies=("fixed05", "val_tuned", "oracle"),
    sources: str | None = None,
):
    args = argparse.Namespace(
        sources=[f"{benchmark}={sources}"] if sources else [],
        localiser_out=str(tmp_path / "token_localiser.json") if sources else None,
        scores=scores,
        gold=[f"{benchmark}={gold}"],
        policies=list(policies),
        val_fraction=0.5,
        seed=2022,
        resamples=200,
        confidence=0.95,
        out=str(tmp_path / "tokens.csv"),
        report=str(tmp_path / "report.json"),
        out_metrics=str(tmp_path / "metrics.json"),
    )
    run_localisation(args)
    return pd.read_csv(args.out).set_index("policy"), json.loads(Path(args.report).read_text())


def test_command_on_a_hand_built_table(tmp_path):
    gold, scores = write_inputs(tmp_path, HAND_GOLD, HAND_SCORES)
    table, report = run(tmp_path, gold, [scores])
    # Evaluated = the scored test outputs t1, t2 (t3 is unscored); worked out by hand:
    support = np.array([0.95, 0.95, 0.95, 0.8, 0.8, 0.8, 0.2, 0.2, 0.2, 0.2])
    y = np.array([0, 0, 0, 0, 1, 0, 0, 0, 1, 0])
    # Validation (dev) tokens: support .9 .9 .9 .6 .6 .6 .7 .7 .7, unsupported 0 0 0 1 1 0 1 1 0: F1 is best
    # (8/10) flagging support < .9.
    # Oracle (on these tokens): flagging support < .95 gives the best F1 (4/9).
    expected_thresholds = {"fixed05": 0.5, "val_tuned": 0.9, "oracle": 0.95}
    for policy, threshold in expected_thresholds.items():
        row = table.loc[policy]
        precision, recall, f1, _ = precision_recall_fscore_support(y, (support < threshold).astype(int), average="binary")
        assert (row["threshold"], row["precision"], row["recall"], row["f1"]) == pytest.approx(
            (threshold, precision, recall, f1), abs=1e-6
        )  # the CSV keeps 6 significant digits
        assert row["roc_auc"] == pytest.approx(roc_auc_score(y, 1 - support), abs=1e-6)
        assert (row["n_examples"], row["n_unscored_examples"], row["n_tokens"], row["n_unsupported"]) == (2, 1, 10, 2)
    assert table.loc["fixed05", ["precision", "recall"]].tolist() == pytest.approx([0.25, 0.5])
    # Characters: t1 "Fish swim. Fish fly." 4+4+1+4+3+1 = 17, t2 "Snow is hot." 4+2+3+1 = 10; unsupported: "fly" 3,
    # "hot" 3. At 0.5 all of t2 is flagged (10 characters, "hot" among them).
    assert (table.loc["fixed05", ["n_characters", "n_unsupported_characters", "n_flagged_characters"]] == [27, 6, 10]).all()
    char_columns = ["char_precision", "char_recall", "char_f1"]
    assert table.loc["fixed05", char_columns].tolist() == pytest.approx([3 / 10, 3 / 6, 2 * 3 / 16], abs=1e-6)
    # Below 0.9 (and 0.95): t1's "Fish fly." (8 characters) and all of t2: 18 flagged, both golds found.
    assert table.loc["val_tuned", char_columns].tolist() == pytest.approx([6 / 18, 1.0, 2 * 6 / 24], abs=1e-6)
    baseline = table.loc["flag_all"]
    assert (baseline["recall"], baseline["precision"], baseline["base_rate"]) == pytest.approx((1.0, 0.2, 0.2))
    assert baseline[char_columns].tolist() == pytest.approx([6 / 27, 1.0, 2 * 6 / 33], abs=1e-6)  # F1 4/11, not 1
    assert pd.isna(baseline["threshold"]) and pd.isna(baseline["roc_auc"])
    assert baseline["f1_ci_low"] <= baseline["f1"] <= baseline["f1_ci_high"]
    assert baseline["char_f1_ci_low"] <= baseline["char_f1"] <= baseline["char_f1_ci_high"]
    assert "lexical_floor" not in table.index  # no sources, no lexical floor
    entry = report["datasets"]["gold_tokens"]
    assert entry["split"] == {"kind": "upstream", "validation": "dev", "evaluated": "test"}
    assert entry["scorers"]["alignscore"]["thresholds"] == pytest.approx(expected_thresholds)
    assert entry["scorers"]["alignscore"]["unscored"] == 1 and entry["agreement"] is None
    # metrics.json: the same numbers per scorer and dataset, against scikit-learn.
    metrics = json.loads((tmp_path / "metrics.json").read_text())["alignscore"]["gold_tokens"]
    names = [*expected_thresholds, "flag_all"]
    assert set(metrics) == {"roc_auc"} | {f"{kind}_{name}" for kind in ("f1", "char_f1") for name in names}
    assert metrics["roc_auc"] == pytest.approx(roc_auc_score(y, 1 - support), abs=1e-4)
    for policy, threshold in expected_thresholds.items():
        f1 = precision_recall_fscore_support(y, (support < threshold).astype(int), average="binary")[2]
        assert metrics[f"f1_{policy}"] == pytest.approx(f1, abs=1e-4)
    assert metrics["f1_flag_all"] == pytest.approx(2 * 0.2 / 1.2, abs=1e-4)  # precision 0.2, recall 1
    assert metrics["char_f1_flag_all"] == pytest.approx(4 / 11, abs=1e-4)


def test_command_reads_the_lexical_floor_beside_each_scorer(tmp_path):
    """With the outputs' sources, each scorer's rows end with the lexical floor on the scorer's own tokens."""
    gold, scores = write_inputs(tmp_path, HAND_GOLD, HAND_SCORES)
    sources = tmp_path / "sources.parquet"
    pd.DataFrame(
        {
            "example_id": ["d1", "d2", "t1", "t2"],  # t3 is not scored and needs none
            "source": ["Cats purr. Dogs bark.", "Birds sing.", "Fishes swim in a river.", "Snow is cold."],
        }
    ).to_parquet(sources)
    table, _ = run(tmp_path, gold, [scores], sources=str(sources))
    assert list(table.index) == ["fixed05", "val_tuned", "oracle", "flag_all", "lexical_floor"]
    floor = table.loc["lexical_floor"]
    # Evaluated tokens t1 "Fish swim . Fish fly .", t2 "Snow is hot .": "Fish" (the source has "Fishes"), "fly"
    # and "hot" are not source words.
    y = np.array([0, 0, 0, 0, 1, 0, 0, 0, 1, 0])
    flags = np.array([1, 0, 0, 1, 1, 0, 0, 0, 1, 0])
    lengths = np.array([4, 4, 1, 4, 3, 1, 4, 2, 3, 1])
    precision, recall, f1, _ = precision_recall_fscore_support(y, flags, average="binary")
    assert (floor["precision"], floor["recall"], floor["f1"]) == pytest.approx((precision, recall, f1), abs=1e-6)
    # Characters: flagged 4 + 4 + 3 + 3 = 14, unsupported 6, all of them flagged.
    assert floor[["char_precision", "char_recall", "char_f1"]].tolist() == pytest.approx([6 / 14, 1.0, 12 / 20], abs=1e-6)
    assert int((lengths * flags).sum()) == floor["n_flagged_characters"] == 14
    assert floor["roc_auc"] == pytest.approx(roc_auc_score(y, flags), abs=1e-6) and pd.isna(floor["threshold"])
    metrics = json.loads((tmp_path / "metrics.json").read_text())["alignscore"]["gold_tokens"]
    assert metrics["char_f1_lexical_floor"] == pytest.approx(0.6, abs=1e-4)
    assert metrics["roc_auc"] == pytest.approx(table.loc["fixed05", "roc_auc"], abs=1e-4)  # the scorer's, not the floor's


def test_command_localises_a_qa_scorer_by_its_units(tmp_path):
    """A QASemConsistency-style table (`units` with output spans) on the hand-built gold: each token takes the lowest
    support of the QAs covering it, 1 where none does; t1 fell back to its sentences (their spans)."""
    gold_rows = HAND_GOLD[:4]

    def qa(spans: list[list[int]], score: float, answer: str) -> dict:
        return {"unit": "qa", "output_spans": spans, "score": score, "answer": answer, "hypothesis": "q " + answer}

    def sentence_unit(spans: list[list[int]], score: float, text: str) -> dict:
        return {"unit": "sentence", "output_spans": spans, "score": score, "answer": None, "hypothesis": text}

    scored = {
        "d1": [qa([[16, 20], [11, 15]], 0.3, "Dogs"), qa([[5, 9], [0, 4]], 0.8, "Cats")],
        "d2": [qa([[6, 10], [0, 5]], 0.4, "Birds")],
        "t1": [sentence_unit([[0, 10]], 0.9, "Fish swim."), sentence_unit([[11, 20]], 0.3, "Fish fly.")],
        "t2": [qa([[5, 7], [8, 11]], 0.1, "hot"), qa([[5, 7], [0, 4]], 0.7, "Snow")],
    }  # fmt: skip
    gold = tmp_path / "gold_tokens.parquet"
    pd.DataFrame(gold_rows).to_parquet(gold)
    scores = tmp_path / "score" / "bench" / "qasem_consistency.parquet"
    scores.parent.mkdir(parents=True)
    pd.DataFrame([{"example_id": eid, "score": 0.5, "units": units} for eid, units in scored.items()]).to_parquet(scores)
    table, report = run(tmp_path, str(gold), [str(scores)])
    # Evaluated (test) tokens: t1 "Fish swim ." 0.9 (the last "." is inside sentence 1), "Fish fly ." 0.3;
    # t2 "Snow" 0.7, "is" 0.1, "hot" 0.1, "." uncovered 1.0.
    support = np.array([0.9, 0.9, 0.9, 0.3, 0.3, 0.3, 0.7, 0.1, 0.1, 1.0])
    y = np.array([0, 0, 0, 0, 1, 0, 0, 0, 1, 0])
    row = table.loc["fixed05"]
    precision, recall, f1, _ = precision_recall_fscore_support(y, (support < 0.5).astype(int), average="binary")
    assert (row["precision"], row["recall"], row["f1"]) == pytest.approx((precision, recall, f1), abs=1e-6)
    assert row["roc_auc"] == pytest.approx(roc_auc_score(y, 1 - support), abs=1e-6)
    assert row["n_tokens_outside_units"] == 4  # the full stops in no QA: d1's two, d2's and t2's
    # Validation (dev) tokens: d1 "Cats" .8 "purr" .8 "." 1 "Dogs" .3 "bark" .3 "." 1; d2 "Birds" .4 "sing" .4 "." 1,
    # unsupported 0 0 0 1 1 0 1 1 0: flagging support < .8 (0.3 and 0.4) finds all four with no false flag.
    assert table.loc["val_tuned", "threshold"] == pytest.approx(0.8)
    assert report["datasets"]["gold_tokens"]["scorers"]["qasem_consistency"]["tokens_outside_units"] == 4
    # A unit that is not the gold output's text where it says (a stale or another benchmark's table) is refused.
    scored["t2"][0]["answer"] = "cold"
    pd.DataFrame([{"example_id": eid, "score": 0.5, "units": units} for eid, units in scored.items()]).to_parquet(scores)
    with pytest.raises(DataError, match=r"unit 0 'cold' is not the gold output's text at \[8, 11\].*record t2.*units"):
        run(tmp_path, str(gold), [str(scores)])


def test_command_splits_a_one_split_table_by_document_and_measures_agreement(tmp_path):
    rows, scored = [], []
    for i in range(12):
        output = f"Claim {i} holds. Claim {i} fails."
        labels = [1, 1, 1, 1, 0, 0, 0, 0]  # the second sentence is unsupported
        rows.append(
            gold_row(
                f"e{i}",
                f"doc{i % 6}",
                "test",
                output,
                ["Claim", str(i), "holds", ".", "Claim", str(i), "fails", "."],
                labels,
                workers=[labels, labels, [1] * 8],
            )
        )
        scored.append(
            (f"e{i}", [sentence(output, f"Claim {i} holds.", 0.9), sentence(output, f"Claim {i} fails.", 0.1 + i / 100)])
        )
    gold, scores = write_inputs(tmp_path, rows, scored)
    table, report = run(tmp_path, gold, [scores], policies=["fixed05", "val_tuned"])
    split = report["datasets"]["gold_tokens"]["split"]
    validation = document_split([r["doc_id"] for r in rows], 0.5, 2022)
    assert split["kind"] == "seeded_documents" and split["validation_documents"] == validation
    assert (split["n_validation_documents"], split["n_evaluated_documents"]) == (3, 3)
    evaluated = [r for r in rows if r["doc_id"] not in validation]
    assert table.loc["fixed05", "n_tokens"] == 8 * len(evaluated) and table.loc["fixed05", "f1"] == 1.0
    agreement = report["datasets"]["gold_tokens"]["agreement"]
    assert agreement["all"]["n_outputs"] == 12 and agreement["all"]["pairwise_f1"]["0-1"] == 1.0
    assert agreement["all"]["pairwise_f1"]["0-2"] == 0.0 and agreement["evaluated"]["n_outputs"] == len(evaluated)


# Bad input: FactlabError naming file, record and field


def test_gold_token_not_at_its_offsets(tmp_path):
    rows = [dict(r) for r in HAND_GOLD]
    rows[2]["token_offsets"] = json.dumps([[0, 4], [5, 9], [9, 10], [11, 15], [16, 19], [20, 21]])
    gold, scores = write_inputs(tmp_path, rows, HAND_SCORES)
    with pytest.raises(DataError) as error:
        run(tmp_path, gold, [scores])
    assert (error.value.file, error.value.record, error.value.field) == (gold, "t1", "token_offsets")


def test_gold_tokens_that_overlap_are_refused(tmp_path):
    # "Snow is hot." as tokens "is" [5, 7) and "s ho" [6, 10): each is the output's text at its offsets, but the
    # character metric would count the "s" at 6 twice.
    rows = [dict(r) for r in HAND_GOLD]
    rows[3] = {**rows[3], "tokens": json.dumps(["Snow", "is", "s ho", "."])}
    rows[3]["token_offsets"] = json.dumps([[0, 4], [5, 7], [6, 10], [11, 12]])
    gold, scores = write_inputs(tmp_path, rows, HAND_SCORES)
    with pytest.raises(DataError, match="overlaps") as error:
        run(tmp_path, gold, [scores])
    assert (error.value.file, error.value.record, error.value.field) == (gold, "t2", "token_offsets")


def test_gold_labels_not_json(tmp_path):
    rows = [dict(r) for r in HAND_GOLD]
    rows[1]["token_labels"] = "[0, 0,"
    gold, scores = write_inputs(tmp_path, rows, HAND_SCORES)
    with pytest.raises(DataError) as error:
        run(tmp_path, gold, [scores])
    assert (error.value.file, error.value.record, error.value.field) == (gold, "d2", "token_labels")


def test_scored_sentence_not_the_gold_text(tmp_path):
    scored = [*HAND_SCORES[:3], ("t2", [{**sentence("Snow is hot.", "Snow is hot.", 0.2), "sentence": "Snow is cold."}])]
    gold, scores = write_inputs(tmp_path, HAND_GOLD, scored)
    with pytest.raises(DataError) as error:
        run(tmp_path, gold, [scores])
    assert (error.value.file, error.value.record, error.value.field) == (scores, "t2", "sentences")


def test_scored_example_missing_from_the_gold(tmp_path):
    gold, scores = write_inputs(tmp_path, HAND_GOLD, [*HAND_SCORES, ("x9", [sentence("Elsewhere.", "Elsewhere.", 0.5)])])
    with pytest.raises(DataError) as error:
        run(tmp_path, gold, [scores])
    assert (error.value.file, error.value.record, error.value.field) == (scores, "x9", "example_id")


def test_scores_of_a_benchmark_without_gold(tmp_path):
    gold, scores = write_inputs(tmp_path, HAND_GOLD, HAND_SCORES, benchmark="other")
    with pytest.raises(FactlabError, match="no --gold table for benchmark 'other'"):
        run(tmp_path, gold, [scores])


# The real gold tables


@pytest.fixture(scope="module")
def wice_gold(raw, tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("wice") / "wice_tokens.parquet"
    adapt_wice_tokens(raw).frame.to_parquet(path)
    return str(path)


def test_real_wice_gold_through_the_command(wice_gold, tmp_path):
    gold = pd.read_parquet(wice_gold)
    # A stand-in scorer: one sentence per subclaim, support = its share of supported tokens.
    share = gold["token_labels"].map(lambda labels: float(np.mean(json.loads(labels))))
    scored = [
        (eid, [{"sentence_index": 0, "sentence": out, "start": 0, "end": len(out), "support": s}])
        for eid, out, s in zip(gold["example_id"], gold["output"], share, strict=True)
    ]
    scores = write_scores(tmp_path, scored, "wice_tokens", "share")
    table, report = run(tmp_path, wice_gold, [scores], benchmark="wice_tokens")
    test = WICE_TOKENS["test"]
    assert table["n_tokens"].eq(test["tokens"]).all() and table["n_unsupported"].eq(test["unsupported_tokens"]).all()
    assert table["n_examples"].eq(test["rows"]).all() and table["n_unscored_examples"].eq(0).all()
    assert table.loc["flag_all", "precision"] == pytest.approx(test["unsupported_tokens"] / test["tokens"], abs=1e-6)
    tokens = gold[gold["split"] == "test"]
    y = np.concatenate([1 - np.array(json.loads(labels)) for labels in tokens["token_labels"]])
    support = np.concatenate([[s] * n for s, n in zip(share[tokens.index], tokens["n_tokens"], strict=True)])
    assert table.loc["fixed05", "roc_auc"] == pytest.approx(roc_auc_score(y, 1 - support), abs=1e-6)
    assert table.loc["fixed05", "f1"] == pytest.approx(f1_score(y, (support < 0.5).astype(int)), abs=1e-6)
    assert report["datasets"]["wice_tokens"]["examples"] == WICE_TOKENS["dev"]["rows"] + test["rows"]


def test_real_xsumfaith_rows_through_the_command(raw, tmp_path):
    """A few real XSumFaith outputs with their real sources: the character columns and both floors are there, and
    flag-all finds every unsupported character at the precision of their share, counted here from the tokens."""
    spans = adapt_xsumfaith_spans(raw).frame
    data = adapt_xsumfaith(raw).frame
    with_source = spans[spans["example_id"].isin(data["example_id"])]
    documents = sorted(with_source["doc_id"].unique())[:8]
    gold_rows = with_source[with_source["doc_id"].isin(documents)]
    gold = tmp_path / "xsumfaith_spans.parquet"
    gold_rows.to_parquet(gold)
    sources = tmp_path / "xsumfaith.parquet"
    data[data["example_id"].isin(gold_rows["example_id"])][["example_id", "source"]].to_parquet(sources)
    share = gold_rows["token_labels"].map(lambda labels: float(np.mean(json.loads(labels))))
    scored = [
        (eid, [{"sentence_index": 0, "sentence": out, "start": 0, "end": len(out), "support": s}])
        for eid, out, s in zip(gold_rows["example_id"], gold_rows["output"], share, strict=True)
    ]
    scores = write_scores(tmp_path, scored, "xsumfaith", "share")
    table, _ = run(tmp_path, str(gold), [scores], benchmark="xsumfaith", policies=["fixed05"], sources=str(sources))
    assert list(table.index) == ["fixed05", "flag_all", "lexical_floor"]
    for column in ("n_characters", "n_unsupported_characters", "char_precision", "char_recall", "char_f1", "char_f1_ci_low"):
        assert table[column].notna().all(), column
    evaluated = gold_rows[~gold_rows["doc_id"].isin(document_split(documents, 0.5, 2022))]
    characters = unsupported = 0
    for tokens, labels in zip(evaluated["tokens"], evaluated["token_labels"], strict=True):
        for token, label in zip(json.loads(tokens), json.loads(labels), strict=True):
            characters += len(token)
            unsupported += len(token) * (1 - label)
    assert 0 < unsupported < characters
    flag_all = table.loc["flag_all"]
    assert (flag_all["n_characters"], flag_all["n_unsupported_characters"]) == (characters, unsupported)
    assert flag_all["char_recall"] == 1.0
    assert flag_all["char_precision"] == pytest.approx(unsupported / characters, abs=1e-6)
    assert flag_all["char_f1"] < 1.0
    floor = table.loc["lexical_floor"]
    assert 0 < floor["n_flagged_characters"] < characters and 0 <= floor["char_f1"] <= 1


def test_real_xsumfaith_token_agreement(raw):
    table = adapt_xsumfaith_spans(raw).frame
    workers = [np.array(json.loads(labels)) for labels in table["worker_token_labels"]]
    agreement = token_agreement(workers)
    complete = np.concatenate([w.T for w in workers if len(w) == 3])
    assert agreement.n_outputs == 2500 and agreement.n_excluded_outputs == 1
    assert agreement.n_tokens == int(table["n_tokens"].sum())
    assert agreement.fleiss_kappa == pytest.approx(fleiss_by_hand(complete), abs=1e-9)
    for i, j in ((0, 1), (0, 2), (1, 2)):
        both = [w for w in workers if len(w) > j]
        expected = f1_score(np.concatenate([1 - w[i] for w in both]), np.concatenate([1 - w[j] for w in both]))
        assert agreement.pairwise_f1[f"{i}-{j}"] == pytest.approx(expected, abs=1e-12)
