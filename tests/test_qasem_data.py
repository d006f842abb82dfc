"""Gold sentences for the QASem parser from the real QA-SRL GS and QANom tables (known counts)."""

from __future__ import annotations

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
    unlabel_nouns,
)
from factlab.models.qasem.train import noun_verb_lexicon


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
    assert dev_counts["dropped_qas_on_non_verbal_predicate"] == int(((qanom["question"] != "") & ~qanom["is_verbal"]).sum()) == 112
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
