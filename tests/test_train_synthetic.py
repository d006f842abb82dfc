"""Synthetic factual errors (factlab.train.synthetic: its transforms and pairs) on real documents: 4 ANLI contexts
and 2 MCTest stories (tests/fixtures/synthetic). Expected strings were worked out by hand."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from factlab.errors import ConfigError, DataError
from factlab.runtime import load_spacy
from factlab.text.sentences import split_sentences
from factlab.text.words import whitespace_word_count
from factlab.train.synthetic.lexicon import MONTHS, ORDINAL_WORDS
from factlab.train.synthetic.pairs import (
    LABELS,
    PAIR_COLUMNS,
    POSITIVE_TRANSFORMS,
    TRANSFORMS,
    SyntheticSettings,
    make_synthetic_pairs,
    premise_window,
)
from factlab.train.synthetic.transforms import (
    TRANSFORM_FUNCTIONS,
    Pool,
    Pools,
    build_pools,
    change_value,
    drop_appositive,
    drop_parenthetical,
    move_fronted_phrase,
    new_number,
)

FIXTURE = Path(__file__).parent / "fixtures" / "synthetic" / "documents.jsonl"
ZEFFIRELLI, SUNRISE, LA_CYGNE, WALKER, JESSIE, SALLY = range(6)


@pytest.fixture(scope="module")
def documents() -> pd.DataFrame:
    return pd.read_json(FIXTURE, lines=True, dtype=False)


@pytest.fixture(scope="module")
def nlp():
    return load_spacy(disable=())


@pytest.fixture(scope="module")
def pools(documents: pd.DataFrame, nlp) -> Pools:
    texts = documents["text"].tolist()
    return build_pools(list(nlp.pipe(texts)), [split_sentences(text) for text in texts])


@pytest.fixture(scope="module")
def pairs(documents: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    # A 60-word window is smaller than the MCTest stories and two ANLI contexts: windows are cut.
    return make_synthetic_pairs(documents, SyntheticSettings(premise_words=60, claims_per_document=6, seed=11))


def apply(name: str, claim: str, nlp, pools: Pools, doc_index: int = -1, seed: int = 0) -> str | None:
    return TRANSFORM_FUNCTIONS[name](claim, nlp(claim), Pool(pools, doc_index), np.random.default_rng(seed))


def sentence_of(documents: pd.DataFrame, index: int, start: str) -> str:
    """The fixture sentence that starts with `start` (the tests use real sentences only)."""
    return next(s.text for s in split_sentences(documents["text"].iloc[index]) if s.text.startswith(start))


def test_fixture_is_cut_from_the_mirror(documents: pd.DataFrame, mirror: Path) -> None:
    for row in documents.itertuples():
        path, line, field = row.source.rsplit(":", 2)
        record = (mirror / path).read_text(encoding="utf-8").splitlines()[int(line) - 1]
        text = json.loads(record)[field] if path.endswith(".jsonl") else record.split("\t")[int(field) - 1]
        assert text == row.text, row.doc_id


# --- positives ---------------------------------------------------------------------------------


def test_paraphrase_edits_by_hand(documents: pd.DataFrame, nlp) -> None:
    walker = sentence_of(documents, WALKER, "Idrees")
    assert drop_parenthetical(walker, nlp(walker)) == (
        "Idrees Kenyatta Walker is a former professional American football player who was an offensive tackle "
        "in the National Football League (NFL) for six seasons."  # the first parenthetical only
    )
    sally = sentence_of(documents, SALLY, "Sally collected")
    assert drop_appositive(sally, nlp(sally)) == (
        "Sally collected shells and mailed some to her friend, so she could make some arts and crafts with them."
    )
    lion = sentence_of(documents, JESSIE, "Soon her friend")
    assert lion == "Soon her friend Lion came over."
    assert move_fronted_phrase(lion, nlp(lion)) == "Her friend Lion came over soon."
    census = sentence_of(documents, LA_CYGNE, "As of")
    assert move_fronted_phrase(census, nlp(census)) == "The city population was 1,149 as of the 2010 census."
    # "Her friend Lion": an appositive without commas stays; so does a fronted adverb that a later
    # clause could take over ("found that he is ... recently").
    assert drop_appositive(lion, nlp(lion)) is None
    recently = sentence_of(documents, ZEFFIRELLI, "Recently")
    assert move_fronted_phrase(recently, nlp(recently)) is None


def test_keep_and_paraphrase(documents: pd.DataFrame, nlp, pools: Pools) -> None:
    lion = sentence_of(documents, JESSIE, "Soon her friend")
    assert apply("keep", lion, nlp, pools) == lion
    assert apply("paraphrase", lion, nlp, pools) == "Her friend Lion came over soon."
    party = sentence_of(documents, JESSIE, "She was having")
    assert apply("paraphrase", party, nlp, pools) is None


# --- FactCC-style negatives ----------------------------------------------------------------------


def test_negation_by_hand(documents: pd.DataFrame, nlp, pools: Pools) -> None:
    cake = sentence_of(documents, JESSIE, "She made a big cake")
    negated = apply("negation", cake, nlp, pools)
    assert negated == "She did not make a big cake, and hung up some balloons."  # do-support
    assert apply("negation", negated, nlp, pools) == cake  # removing it undoes do-support
    named = sentence_of(documents, LA_CYGNE, "The city is named")
    assert apply("negation", named, nlp, pools).startswith("The city is not named after the Marais des Cygnes River")
    senator = sentence_of(documents, ZEFFIRELLI, "He is also")
    assert apply("negation", senator, nlp, pools).startswith("He is also not a former senator")
    sally = sentence_of(documents, SALLY, "Sally collected")
    assert "so she could not make some arts" in apply("negation", sally, nlp, pools)
    # "ca n't" -> "can"; "Yes! said Lion." has its subject after the verb: no do-support.
    assert apply("negation", "Jessie can't swim.", nlp, pools) == "Jessie can swim."
    assert apply("negation", "Yes! said Lion.", nlp, pools) is None


def test_argument_swap_by_hand(documents: pd.DataFrame, nlp, pools: Pools) -> None:
    hug = sentence_of(documents, JESSIE, "Jessie hugged")
    assert hug == "Jessie hugged her friends."
    assert apply("argument_swap", hug, nlp, pools) is None  # "her friends" is no name (and holds a pronoun)
    assert apply("argument_swap", "Smith beat Jones in the final.", nlp, pools) == "Jones beat Smith in the final."
    assert apply("argument_swap", "The train runs from Paris to London.", nlp, pools) == "The train runs from London to Paris."
    # the words stay the same: only their order changes
    swapped = apply("argument_swap", "Prices rose from 1990 to 1995.", nlp, pools)
    assert swapped == "Prices rose from 1995 to 1990."
    assert sorted(swapped.replace(".", "").split()) == sorted("Prices rose from 1990 to 1995".split())
    walker = sentence_of(documents, WALKER, "Walker played college football")
    assert apply("argument_swap", walker, nlp, pools) is None  # "college football" is no name
    # two names of one type in one sentence, whatever their roles
    told = apply("argument_swap", "Smith told reporters that Jones had resigned.", nlp, pools)
    assert told == "Jones told reporters that Smith had resigned."


def test_sentence_insertion_by_hand(documents: pd.DataFrame, nlp, pools: Pools) -> None:
    claim = "Jessie hugged her friends. They all had a good time."
    inserted = apply("sentence_insertion", claim, nlp, pools, doc_index=JESSIE, seed=0)
    # one whole sentence of another document, after one of the claim's, the claim's words all kept
    added = [text for index, document in enumerate(pools.sentences) if index != JESSIE for text in document if text in inserted]
    assert len(added) == 1 and 6 <= len(added[0].split()) <= 30
    assert inserted.replace(added[0], "").split() == claim.split()


def test_phrase_insertion_by_hand(documents: pd.DataFrame, nlp, pools: Pools) -> None:
    # the pool: verb modifiers naming a place, time or number, from every document
    assert (LA_CYGNE, "in East Central Kansas") in pools.phrases and (SALLY, "in the summer") in pools.phrases
    hug = sentence_of(documents, JESSIE, "Jessie hugged")
    inserted = apply("phrase_insertion", hug, nlp, pools, doc_index=JESSIE, seed=0)
    assert inserted.startswith("Jessie hugged her friends ") and inserted.endswith(".")
    phrase = inserted[len("Jessie hugged her friends ") : -1]
    assert any(text == phrase and index != JESSIE for index, text in pools.phrases)  # another document's
    assert apply("phrase_insertion", "Yes", nlp, pools) is None  # no sentence-final punctuation


def test_pronoun_swap_by_hand(documents: pd.DataFrame, nlp, pools: Pools) -> None:
    assert apply("pronoun_swap", "Soon her friend Lion came over.", nlp, pools) == "Soon his friend Lion came over."
    senator = sentence_of(documents, ZEFFIRELLI, "He is also")
    assert apply("pronoun_swap", senator, nlp, pools) == "She" + senator[2:]
    assert apply("pronoun_swap", "Then Jessie opened her presents.", nlp, pools) == "Then Jessie opened his presents."
    assert apply("pronoun_swap", "Jessie hugged her friends.", nlp, pools) == "Jessie hugged his friends."
    # "They all had a good time": "all" keeps it plural (no "He all had"); nothing else to swap.
    assert apply("pronoun_swap", "They all had a good time.", nlp, pools) is None
    bunk = sentence_of(documents, SALLY, "They shared")
    outputs = {apply("pronoun_swap", bunk, nlp, pools, seed=seed) for seed in range(40)}
    assert outputs == {
        "He shared a bunk bed in their cabin.",
        "She shared a bunk bed in their cabin.",
        "They shared a bunk bed in his cabin.",
        "They shared a bunk bed in her cabin.",
    }


NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+|\d+")


def test_number_swap_changes_only_the_number(documents: pd.DataFrame, nlp, pools: Pools) -> None:
    census = sentence_of(documents, LA_CYGNE, "As of")
    for seed in range(10):
        swapped = apply("number_swap", census, nlp, pools, seed=seed)
        assert swapped != census
        assert NUMBER.sub("#", swapped) == NUMBER.sub("#", census)  # the words are untouched
        year, population = NUMBER.findall(swapped)
        if year != "2010":
            assert population == "1,149" and 1 <= abs(int(year) - 2010) <= 10
        else:
            assert re.fullmatch(r"\d{1,3}(,\d{3})+|\d{1,3}", population) and population != "1,149"
    camp = sentence_of(documents, SALLY, "She went to summer camp")
    swapped = apply("number_swap", camp, nlp, pools)
    prefix, suffix = "She went to summer camp for the ", " time."
    assert swapped.startswith(prefix) and swapped.endswith(suffix)
    assert swapped[len(prefix) : -len(suffix)] in ORDINAL_WORDS and "first" not in swapped
    assert apply("number_swap", "Jessie hugged her friends.", nlp, pools) is None


def test_number_values() -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        population = new_number("1,149", "CARDINAL", rng)  # scaled by 0.5-1.5, commas kept
        assert re.fullmatch(r"\d{1,3}(,\d{3})?", population) and 574 <= int(population.replace(",", "")) <= 1724
        assert population != "1,149"
        assert 1 <= abs(int(new_number("2016", "DATE", rng)) - 2016) <= 10
        assert 1 <= int(new_number("12", "DATE", rng)) <= 28
        assert re.fullmatch(r"\d+\.\d", new_number("3.5", "QUANTITY", rng))
    assert re.fullmatch(r"(\d+)(st|nd|rd|th) century", change_value("4th century", "DATE", rng))
    assert change_value("the summer", "DATE", rng) is None  # no value: the pool is used instead
    assert change_value("June", "DATE", rng) in MONTHS


def test_entity_swap_uses_a_same_label_entity(documents: pd.DataFrame, nlp, pools: Pools) -> None:
    hugged = "Jessie hugged her friends."  # a real MCTest sentence
    persons = [text for _, text in pools.entities["PERSON"]]
    outputs = {apply("entity_swap", hugged, nlp, pools, doc_index=JESSIE, seed=seed) for seed in range(12)}
    for swapped in outputs:
        assert swapped.endswith(" hugged her friends.")
        replacement = swapped.removesuffix(" hugged her friends.")
        assert replacement in persons and "Jessie" not in replacement
    # Both sources occur: Lion or Tiger from the same story, Sally or Michael Collins from others.
    own = {"Lion", "Tiger"} & {s.split()[0] for s in outputs}
    assert own and len(outputs) > len(own)
    assert apply("entity_swap", "She made a big cake, and hung up some balloons.", nlp, pools) is None


def test_other_document(documents: pd.DataFrame, nlp, pools: Pools) -> None:
    claim = sentence_of(documents, JESSIE, "She made a big cake")
    other = apply("other_document", claim, nlp, pools, doc_index=JESSIE)
    others = [s.text for i, text in enumerate(documents["text"]) if i != JESSIE for s in split_sentences(text)]
    assert other in others


# --- FactEdit-style ------------------------------------------------------------------------------


def test_factedit_subject_and_object(documents: pd.DataFrame, nlp, pools: Pools) -> None:
    hugged = "Jessie hugged her friends."
    persons = [text for index, text in pools.entities["PERSON"] if index != JESSIE]
    swapped = apply("factedit_subject", hugged, nlp, pools, doc_index=JESSIE)
    assert swapped.endswith(" hugged her friends.") and swapped.removesuffix(" hugged her friends.") in persons
    persons = [text for index, text in pools.entities["PERSON"] if index != SUNRISE]
    directed = sentence_of(documents, SUNRISE, "Almost Sunrise")
    edited = apply("factedit_object", directed, nlp, pools, doc_index=SUNRISE)
    prefix = "Almost Sunrise is a 2016 American documentary film directed by "
    assert edited.startswith(prefix) and edited.removeprefix(prefix).removesuffix(".") in persons
    # A pronoun subject is no fact to swap; "was having a party" has no other subject of "have".
    assert apply("factedit_subject", "She was having a party.", nlp, pools, doc_index=JESSIE) is None


def test_factedit_relation_keeps_the_frame(documents: pd.DataFrame, nlp, pools: Pools) -> None:
    walker = sentence_of(documents, WALKER, "Walker played")
    edited = apply("factedit_relation", walker, nlp, pools, doc_index=WALKER)
    match = re.fullmatch(r"Walker (\w+) college football for the University of Florida\.", edited)
    # A past-tense verb with a direct object, no preposition, from another document's triple.
    verbs = [text for index, text in pools.elements[("relation", "VBD", "", "dobj")] if index != WALKER]
    assert match and match.group(1) != "played" and match.group(1) in verbs
    # Copulas are light verbs: "is a former senator" never becomes "loves a former senator".
    senator = sentence_of(documents, ZEFFIRELLI, "He is also")
    assert apply("factedit_relation", senator, nlp, pools, doc_index=ZEFFIRELLI) is None


def test_every_transform_applies_somewhere(documents: pd.DataFrame, nlp, pools: Pools) -> None:
    applied = dict.fromkeys(TRANSFORM_FUNCTIONS, 0)
    for index, text in enumerate(documents["text"]):
        for sentence in split_sentences(text):
            for name in applied:
                new = apply(name, sentence.text, nlp, pools, doc_index=index)
                applied[name] += new is not None and (name == "keep" or new != sentence.text)
    assert all(count > 0 for count in applied.values()), applied


# --- the pipeline --------------------------------------------------------------------------------


def test_pairs_columns_and_labels(pairs: tuple[pd.DataFrame, dict[str, int]], documents: pd.DataFrame) -> None:
    frame, _ = pairs
    assert list(frame.columns) == list(PAIR_COLUMNS)
    assert len(frame) > 0 and frame["pair_id"].is_unique
    for row in frame.itertuples():
        assert (row.label_bin, row.label_3way) == LABELS[row.transform]
        assert row.task == ("synthetic_factedit" if row.transform.startswith("factedit_") else "synthetic_factcc")
        assert row.origin == documents.set_index("doc_id").loc[row.doc_id, "origin"]
    table = {
        "keep": (1, 0),
        "paraphrase": (1, 0),
        "entity_swap": (0, 2),
        "number_swap": (0, 2),
        "pronoun_swap": (0, 2),
        "negation": (0, 2),
        "argument_swap": (0, 2),
        "phrase_insertion": (0, 1),
        "sentence_insertion": (0, 1),
        "other_document": (0, 1),
        "claim_removed": (0, 1),
        "factedit_subject": (0, 2),
        "factedit_relation": (0, 2),
        "factedit_object": (0, 2),
    }
    assert LABELS == table


def test_premises(pairs: tuple[pd.DataFrame, dict[str, int]], documents: pd.DataFrame) -> None:
    frame, _ = pairs
    longest = {
        row.doc_id: max(whitespace_word_count(s.text) for s in split_sentences(row.text)) for row in documents.itertuples()
    }
    claim_not_first = 0
    for row in frame.itertuples():
        assert whitespace_word_count(row.text_a) <= 60 + longest[row.doc_id]
        if row.transform == "claim_removed":
            assert row.text_b == row.original_claim and row.text_b not in row.text_a and row.text_a
        else:
            assert row.original_claim in row.text_a  # the window holds the claim's sentences
            claim_not_first += not row.text_a.startswith(row.original_claim)
        if row.transform == "keep":
            assert row.text_b in row.text_a
        if row.transform not in POSITIVE_TRANSFORMS and row.transform != "claim_removed":
            assert row.text_b != row.original_claim
    assert claim_not_first > len(frame) // 3  # the claim sits anywhere in its window


def test_premise_window_places_the_claim_at_random() -> None:
    counts = [10] * 20
    windows = {premise_window(counts, 10, 11, 55, np.random.default_rng(seed)) for seed in range(20)}
    assert all(hi - lo == 5 and lo <= 10 < hi for lo, hi in windows)
    assert len({10 - lo for lo, _ in windows}) >= 4  # different positions of the claim
    assert premise_window(counts, 3, 5, 500, np.random.default_rng(0)) == (0, 20)  # short: whole


def test_counts_add_up(pairs: tuple[pd.DataFrame, dict[str, int]]) -> None:
    frame, counts = pairs
    for name in TRANSFORMS:
        assert counts[f"{name}.tried"] == counts[f"{name}.applied"] + counts[f"{name}.not_applicable"]
        assert counts[f"{name}.applied"] == int((frame["transform"] == name).sum())
    assert counts["pairs"] == len(frame) == sum(counts[f"{name}.applied"] for name in TRANSFORMS)
    assert counts["claims"] == counts["pairs"] + counts["claims_without_transform"]
    assert counts["documents"] == 6


def test_seed_determinism(documents: pd.DataFrame, pairs: tuple[pd.DataFrame, dict[str, int]]) -> None:
    settings = SyntheticSettings(premise_words=60, claims_per_document=6, seed=11)
    again, counts = make_synthetic_pairs(documents, settings)
    pd.testing.assert_frame_equal(again, pairs[0])
    assert counts == pairs[1]
    other, _ = make_synthetic_pairs(documents, SyntheticSettings(premise_words=60, claims_per_document=6, seed=12))
    assert not other.equals(pairs[0])


def test_positive_share_and_negatives(documents: pd.DataFrame) -> None:
    positives, _ = make_synthetic_pairs(documents, SyntheticSettings(positive_share=1.0, claims_per_document=3))
    assert set(positives["transform"]) <= set(POSITIVE_TRANSFORMS) and (positives["label_bin"] == 1).all()
    settings = SyntheticSettings(positive_share=0.0, claims_per_document=3, negatives=("claim_removed",))
    removed, counts = make_synthetic_pairs(documents, settings)
    assert (removed["transform"] == "claim_removed").all() and (removed["label_3way"] == 1).all()
    # A 3-sentence ANLI claim that is the whole context leaves no premise: counted, not dropped silently.
    assert counts["claim_removed.not_applicable"] == counts["claims_without_transform"]


def test_bad_input(documents: pd.DataFrame) -> None:
    with pytest.raises(DataError, match="origin"):
        make_synthetic_pairs(documents.drop(columns="origin"), SyntheticSettings())
    with pytest.raises(ConfigError):
        make_synthetic_pairs(documents, SyntheticSettings(negatives=("typo_swap",)))
    with pytest.raises(ConfigError):
        make_synthetic_pairs(documents, SyntheticSettings(positive_share=1.5))
