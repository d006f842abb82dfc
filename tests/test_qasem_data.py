"""Gold sentences for the QASem parser from the real QA-SRL GS and QANom tables (known counts)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pandas as pd
import pytest

from factlab.data.registry import get_spec
from factlab.errors import DataError
from factlab.models.qasem.data import (
    DETECT_NOMINAL,
    DETECT_NONE,
    DETECT_VERBAL,
    IGNORE,
    QANOM,
    QASRL_GS,
    count_arguments,
    gold_sentences,
    merge_annotations,
    unlabel_nouns,
)
from factlab.train.qasem import noun_verb_lexicon, with_qanom_dev


@pytest.fixture(scope="module")
def qasrl_gs(raw) -> pd.DataFrame:
    return get_spec("qasrl_gs").build(raw).frame


@pytest.fixture(scope="module")
def qanom(raw) -> pd.DataFrame:
    return get_spec("qanom").build(raw).frame


def test_qasrl_gs_sentences_and_arguments(qasrl_gs: pd.DataFrame) -> None:
    dev, dev_counts = gold_sentences(qasrl_gs, QASRL_GS, "dev")
    test, _ = gold_sentences(qasrl_gs, QASRL_GS, "test")
    # Mirror README: 1,999 sentences; adapter: 2,448 dev and 2,450 test predicates.
    assert count_arguments(dev)["sentences"] + count_arguments(test)["sentences"] == 1999
    assert count_arguments(dev)["predicates"] == 2448 and count_arguments(test)["predicates"] == 2450
    # Every answer span is one argument: 14,290 QAs carry 17,616 spans.
    spans = int(qasrl_gs["answer_ranges"].map(len).sum())
    assert count_arguments(dev)["arguments"] + count_arguments(test)["arguments"] == spans == 17616
    assert dev_counts == {"dropped_qas_on_non_verbal_predicate": 0}
    sentence = dev[0]
    assert all(p.is_verbal and sentence.detection[p.index] == DETECT_VERBAL for p in sentence.predicates)
    assert set(sentence.detection) <= {DETECT_NONE, DETECT_VERBAL}


def test_qanom_sentences_predicates_and_candidates(qanom: pd.DataFrame) -> None:
    train, train_counts = gold_sentences(qanom, QANOM, "train")
    dev, dev_counts = gold_sentences(qanom, QANOM, "dev")
    counts = count_arguments(train)
    assert counts["sentences"] == 7114  # mirror README
    verbal_keys = qanom[(qanom["split"] == "train") & qanom["is_verbal"]]["key"].nunique()
    assert counts["predicates"] == verbal_keys == 9226
    assert counts["predicates_without_arguments"] == 901
    assert train_counts["dropped_qas_on_non_verbal_predicate"] == 0
    # The adapter's `qa_on_non_verbal_predicate` rows: all in dev, counted here, not silently lost.
    assert (
        dev_counts["dropped_qas_on_non_verbal_predicate"] == int(((qanom["question"] != "") & ~qanom["is_verbal"]).sum()) == 112
    )
    candidates = [label for sentence in train for label in sentence.detection if label != IGNORE]
    assert candidates.count(DETECT_NOMINAL) == 9226
    assert len(candidates) == qanom[qanom["split"] == "train"]["key"].nunique()
    assert all(not p.is_verbal and p.verb_form for s in train for p in s.predicates)


def test_unlabel_nouns_only_touches_none_labels(qasrl_gs: pd.DataFrame) -> None:
    sentence = gold_sentences(qasrl_gs, QASRL_GS, "dev")[0][0]
    verb = sentence.predicates[0].index
    mask = [True] * len(sentence.tokens)
    unlabel_nouns(sentence, mask)
    assert sentence.detection[verb] == DETECT_VERBAL
    assert all(label in (IGNORE, DETECT_VERBAL) for label in sentence.detection)
    with pytest.raises(DataError):
        unlabel_nouns(sentence, [True])


def test_unknown_source_or_split_is_an_error(qasrl_gs: pd.DataFrame) -> None:
    with pytest.raises(DataError):
        gold_sentences(qasrl_gs, "propbank", "dev")
    with pytest.raises(DataError):
        gold_sentences(qasrl_gs, QASRL_GS, "train")  # GS has dev and test only


def test_noun_verb_lexicon_from_qanom_train(qanom: pd.DataFrame) -> None:
    lexicon = noun_verb_lexicon(qanom)
    train = qanom[qanom["split"] == "train"]
    assert len(lexicon) == train["predicate"].str.lower().nunique()
    assert lexicon["orientation"] == "orientate"


def test_merge_annotations_of_the_sentences_gs_and_qanom_share(qasrl_gs: pd.DataFrame, qanom: pd.DataFrame) -> None:
    gs_dev = {s.sentence_id: s for s in gold_sentences(qasrl_gs, QASRL_GS, "dev")[0]}
    qanom_dev = gold_sentences(qanom, QANOM, "dev")[0]
    shared = [(gs_dev[s.sentence_id], s) for s in qanom_dev if s.sentence_id in gs_dev]
    counts: Counter[str] = Counter()
    merged = [merge_annotations(verbal, nominal, counts) for verbal, nominal in shared]
    assert len(merged) == 830  # QANom annotated 830 of the 1,000 GS dev sentences
    assert counts["dropped_nominal_predicates_on_verbs"] == 0  # QANom candidates are nouns, GS predicates verbs
    assert sum(not p.is_verbal for s in merged for p in s.predicates) == sum(len(n.predicates) for _, n in shared) == 1393
    assert sum(p.is_verbal for s in merged for p in s.predicates) == sum(len(v.predicates) for v, _ in shared)
    by_id = {s.sentence_id: s for s in merged}
    # By hand: "Searches are presently suspended until morning ." -- GS: "suspended" (3) is a verb,
    # every other token none; QANom: "Searches" (0) is an event noun (verb "search").
    sentence = by_id["Wiki1k:wikinews:1823406:3:4"]
    assert sentence.tokens == ["Searches", "are", "presently", "suspended", "until", "morning", "."]
    assert sentence.detection == [DETECT_NOMINAL, DETECT_NONE, DETECT_NONE, DETECT_VERBAL, DETECT_NONE, DETECT_NONE, DETECT_NONE]
    assert [(p.index, p.is_verbal, p.verb_form) for p in sentence.predicates] == [(0, False, "search"), (3, True, None)]
    # QANom writes brackets as -LRB-/-RSB- (21 shared sentences); the merged sentence keeps GS's tokens.
    assert sum(v.tokens != n.tokens for v, n in shared) == 21
    assert all(s.tokens == gs_dev[s.sentence_id].tokens for s in merged)


def test_merge_annotations_checks_it_is_one_sentence(qasrl_gs: pd.DataFrame, qanom: pd.DataFrame) -> None:
    verbal = gold_sentences(qasrl_gs, QASRL_GS, "dev")[0][0]
    nominal = next(s for s in gold_sentences(qanom, QANOM, "dev")[0] if s.sentence_id == verbal.sentence_id)
    with pytest.raises(DataError, match="tokens") as error:
        merge_annotations(verbal, replace(nominal, tokens=nominal.tokens[:-1]), Counter())
    assert error.value.record == verbal.sentence_id
    clash = replace(nominal, predicates=[replace(nominal.predicates[0], index=verbal.predicates[0].index)])
    counts: Counter[str] = Counter()
    merged = merge_annotations(verbal, clash, counts)
    assert counts["dropped_nominal_predicates_on_verbs"] == 1 and merged.predicates == verbal.predicates


def test_qanom_dev_for_training_keeps_the_validation_out(qasrl_gs: pd.DataFrame, qanom: pd.DataFrame) -> None:
    gs_dev = gold_sentences(qasrl_gs, QASRL_GS, "dev")[0]
    qanom_dev = gold_sentences(qanom, QANOM, "dev")[0]
    gs_ids = {s.sentence_id for s in gs_dev}
    outside = [s for s in qanom_dev if s.sentence_id not in gs_ids]
    validation = {s.sentence_id for s in outside[::3]}
    counts: dict[str, int] = {}
    merged, alone = with_qanom_dev(gs_dev[:500], qanom_dev, gs_ids | validation, counts)
    assert len(outside) == 1557 - 830 == 727  # QANom dev: 1,557 sentences (mirror README), 830 of them GS dev's
    assert [s.sentence_id for s in merged] == [s.sentence_id for s in gs_dev[:500]]
    assert len(alone) == 727 - len(validation) and not {s.sentence_id for s in alone} & (gs_ids | validation)
    shared = [s for s in gs_dev[:500] if s.sentence_id in {n.sentence_id for n in qanom_dev}]
    assert counts["qanom_dev_merged_sentences"] == len(shared)
    nominal = sum(not p.is_verbal for s in merged for p in s.predicates)
    assert counts["qanom_dev_merged_predicates"] == nominal > 0
