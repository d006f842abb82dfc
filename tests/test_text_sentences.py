"""Sentence splitting on real mirrored texts: offsets, abbreviations, quotes, odd whitespace."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from factlab.errors import DataError
from factlab.text.sentences import (
    METHODS,
    Sentence,
    _fill_gaps,
    _spans_to_sentences,
    split_sentences,
    split_sentences_many,
)

TRUE = "true_benchmark_scale_copy"


@pytest.fixture(scope="module")
def dialfact(raw) -> pd.DataFrame:
    return pd.read_csv(raw.path(TRUE, "data/true/dialfact.csv"))


@pytest.fixture(scope="module")
def begin(raw) -> pd.DataFrame:
    return pd.read_csv(raw.path(TRUE, "data/true/begin.csv"))


@pytest.fixture(scope="module")
def q2(raw) -> pd.DataFrame:
    return pd.read_csv(raw.path(TRUE, "data/true/q2.csv"))


def texts(sentences: list[Sentence]) -> list[str]:
    return [s.text for s in sentences]


def assert_well_formed(text: str, sentences: list[Sentence]) -> None:
    """Offsets index the text, sentences are stripped, ordered, and lose no character."""
    previous_end = 0
    for sentence in sentences:
        assert text[sentence.start : sentence.end] == sentence.text
        assert sentence.text == sentence.text.strip() and sentence.text
        assert sentence.start >= previous_end
        previous_end = sentence.end
    assert re.sub(r"\s", "", "".join(texts(sentences))) == re.sub(r"\s", "", text)


@pytest.mark.parametrize("method", METHODS)
def test_offsets_hold_on_real_groundings_and_dialogue_turns(method, dialfact, begin, raw):
    summeval = pd.read_csv(raw.path(TRUE, "data/true/summeval.csv"))
    sample = (
        dialfact["grounding"].drop_duplicates().head(150).tolist()
        + dialfact["generated_text"].head(150).tolist()
        + begin["generated_text"].head(150).tolist()
        + summeval["generated_text"].head(50).tolist()
    )
    split = split_sentences_many(sample, method=method)
    assert len(split) == len(sample)
    for text, sentences in zip(sample, split, strict=True):
        assert_well_formed(text, sentences)
    # The splitter must actually split: 22 of these 150 groundings have several sentences
    # (the same 22 that show ". Capital" outside abbreviations); 177-178 sentences in all.
    assert sum(len(sentences) > 1 for sentences in split[:150]) == 22
    assert 177 <= sum(len(sentences) for sentences in split[:150]) <= 178


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(
    ("row", "abbreviation"),
    [(94, "Dr. Dre"), (6768, "726 St. Peter Street"), (5390, '"Mr. Roboto"'), (344, "Broadus, Jr. (born")],
)
def test_abbreviations_do_not_end_a_sentence(method, row, abbreviation, dialfact):
    grounding = dialfact.loc[row, "grounding"]
    assert abbreviation in grounding
    assert texts(split_sentences(grounding, method)) == [grounding.strip()]


@pytest.mark.parametrize("method", METHODS)
def test_us_inside_a_sentence_then_a_real_boundary(method, dialfact):
    sentences = split_sentences(dialfact.loc[396, "grounding"], method)
    assert sentences[0].text == ("West Baton Rouge Parish () is one of the sixty-four parishes in the U.S. state of Louisiana.")
    assert sentences[1].text.startswith("It forms the parish seat")


@pytest.mark.parametrize("method", METHODS)
def test_sentence_ending_inside_quotes(method, dialfact):
    sentences = split_sentences(dialfact.loc[1369, "generated_text"], method)
    assert texts(sentences) == [
        'Mike Love of the Beach Boys once said of their musical style: "Don\'t f%#$ with the formula."',
        "They must have known they had something good.",
    ]


@pytest.mark.parametrize("method", METHODS)
def test_turn_with_abbreviation_and_question(method, dialfact):
    sentences = split_sentences(dialfact.loc[2650, "generated_text"], method)
    assert texts(sentences) == [
        "He is awesome!",
        "Most people don't realize that his real name is Calvin Cordozar Broadus Jr.",
        "He is also a TV personality.",
        "Have you seen him live before?",
    ]


@pytest.mark.parametrize("method", METHODS)
def test_newline_before_url_and_non_ascii_ipa(method, dialfact):
    text = dialfact.loc[539, "grounding"]
    sentences = split_sentences(text, method)
    assert_well_formed(text, sentences)
    assert sentences[0].text.startswith("Niagara Falls /naɪˈæɡrə, naɪˈæɡərə/ is a group")
    assert sentences[-1].text == "https://en.wikipedia.org/wiki/Niagara_Falls"


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("row", [42, 384])  # Greek letters; a no-break space inside the sentence
def test_non_ascii_and_no_break_space_are_kept(method, row, q2):
    grounding = q2.loc[row, "grounding"]
    assert texts(split_sentences(grounding, method)) == [grounding.strip()]


@pytest.mark.parametrize("method", METHODS)
def test_verbless_tokenised_reference_sentence(method, raw):
    path = raw.path("summeval", "train/data/Explainaboard/summeval.jsonl")
    with open(path, encoding="utf-8") as handle:
        reference = json.loads(handle.readline())["ref_summ"]
    assert texts(split_sentences(reference, method)) == [
        "Andros Townsend an 83rd minute sub in Tottenham 's draw with Burnley .",
        "He was unable to find a winner as the game ended without a goal .",
        "Townsend had clashed with Paul Merson last week over England call-up .",
    ]


def frank_article(raw, name: str) -> str:
    with open(raw.path("frank", f"data/articles-wmetrics-reference-json/{name}.json"), encoding="utf-8") as handle:
        return json.load(handle)["article"]


def test_multi_sentence_quotation_is_split(raw):
    # Plain pysbd keeps a whole quotation ('...enjoyed it. I'm fortunate ... tell them.') as one
    # sentence; with quotation marks hidden from it, it splits inside and keeps the marks.
    article = frank_article(raw, "008aa71f64621995d749aff42be822b1b6ca7bc9")
    sentences = texts(split_sentences(article, "pysbd"))
    quote_start = sentences.index("‘I had a taste of it (management) at Hearts and really enjoyed it.")
    assert sentences[quote_start + 1 : quote_start + 3] == [
        "I’m fortunate I was put into this position at a great club.",
        "It’s a fantastic opportunity.",
    ]
    assert_well_formed(article, split_sentences(article, "pysbd"))


def test_tokenised_source_with_split_clitics(raw):
    # SummEval sources are tokenised ("2012 's series"); plain pysbd reads " 's" as an opening
    # quote and returned this 386-word document as one sentence.
    path = raw.path("summeval", "train/data/Explainaboard/summeval.jsonl")
    with open(path, encoding="utf-8") as handle:
        source = json.loads(handle.readlines()[17])["src"]
    sentences = split_sentences(source, "pysbd")
    assert len(sentences) == len(split_sentences(source, "spacy")) == 14
    assert sentences[1].text == (
        "It 's now been revealed that X Factor finalist and pop star Ella Henderson has joined forces"
        " with dry shampoo brand Batiste ."
    )
    assert max(len(s.text.split()) for s in sentences) == 47


@pytest.mark.parametrize("method", METHODS)
def test_glued_sentences_and_bullets_are_cut(method, raw):
    # FRANK's XSum articles glue paragraphs ("three quarters.She goes") and bullets ("II•Under").
    racing = frank_article(raw, "39938984")
    sentences = texts(split_sentences(racing, method))
    after = next(i for i, s in enumerate(sentences) if s.startswith("She goes to Chantilly next"))
    assert sentences[after - 1].endswith("beat runner-up Vintage Folly by a length and three quarters.")
    assert sentences[after + 1].startswith("Tasleet (14-1) took the Duke of York Stakes")
    convoys = frank_article(raw, "29458868")
    sentences = texts(split_sentences(convoys, method))
    bullets = [s for s in sentences if s.startswith("•")]
    assert [b[:30] for b in bullets[:3]] == [
        "•They consisted of vessels whi",
        "•Under constant threat of atta",
        "•By May 1945, the Arctic route",
    ]
    assert_well_formed(convoys, split_sentences(convoys, method))


def test_lowercased_dialogue_turns_split_only_by_spacy(begin):
    # BEGIN responses are lower-cased: pysbd needs a capital after "!" to split, senter does not.
    turn = begin.loc[11, "generated_text"]
    assert turn == "the walking dead has attracted the most 18 to 49 year olds! it was a very popular show."
    assert texts(split_sentences(turn, "pysbd")) == [turn]
    assert texts(split_sentences(turn, "spacy")) == [
        "the walking dead has attracted the most 18 to 49 year olds!",
        "it was a very popular show.",
    ]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("text", ["", "   ", "\n\n\t\u00a0"])
def test_empty_and_whitespace_only_give_no_sentences(method, text):
    assert split_sentences(text, method) == []


@pytest.mark.parametrize("method", METHODS)
def test_tabs_and_repeated_newlines(method):
    text = "First line.\tSecond line.\n\n\nThird  line.  "
    sentences = split_sentences(text, method)
    assert sentences == [
        Sentence("First line.", 0, 11),
        Sentence("Second line.", 12, 24),
        Sentence("Third  line.", 27, 39),
    ]


def test_spacy_batches_agree_with_single_calls(dialfact):
    sample = dialfact["grounding"].drop_duplicates().head(20).tolist()
    assert split_sentences_many(sample, "spacy", batch_size=7) == [split_sentences(t, "spacy") for t in sample]


def test_text_pysbd_leaves_out_is_put_back(dialfact):
    # pysbd silently drops a sentence it altered; the gap filler restores the uncovered text.
    text = dialfact.loc[2650, "generated_text"]
    found = [(0, 15), (15, 91), (120, len(text))]  # the 3rd sentence missing, as in pysbd's bug
    restored = _spans_to_sentences(text, _fill_gaps(text, found))  # text has no quotation marks
    assert texts(restored)[2] == "He is also a TV personality."
    assert_well_formed(text, restored)


def test_bad_input_is_named():
    with pytest.raises(DataError, match="must be a string"):
        split_sentences_many(["fine", None])
    with pytest.raises(ValueError, match="unknown sentence splitter"):
        split_sentences("A sentence.", method="nltk")
