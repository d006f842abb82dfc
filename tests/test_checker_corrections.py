"""The checker's promises about spans and corrections, each worked by hand: a span lies in one sentence, an edit
replaces whole words, and a deletion is offered only where the sentence stays grammatical."""

from __future__ import annotations

from typing import Any

import pytest

from factlab.checker.correct import deletion_keeps_grammar, on_word_boundaries, span_candidates
from factlab.models.token_words import cut_at_breaks, phrases_from_words


def test_a_phrase_never_runs_across_a_sentence_start() -> None:
    text = "He joined on loan . The midfielder had been brought in ."
    # every word of "loan . The midfielder" flagged: four words separated only by spaces
    words = [(text.index(word), text.index(word) + len(word), 0.9) for word in ("loan", ".", "The", "midfielder")]
    second = text.index("The")
    assert phrases_from_words(text, words, 0.5) == [(13, 34, 0.9)]  # one phrase without breaks
    assert phrases_from_words(text, words, 0.5, [0, second]) == [(13, 19, 0.9), (20, 34, 0.9)]
    assert text[13:19] == "loan ." and text[20:34] == "The midfielder"


def test_a_word_that_runs_across_a_sentence_end_is_cut_there() -> None:
    # DialFact writes "me.But": one word with an inner dot, while the sentence splitter starts a sentence at "But"
    text = "It is new to me.But I like it ."
    second = text.index("But")
    word = (text.index("me"), text.index(" I"), 0.9)
    assert text[word[0] : word[1]] == "me.But"
    words = cut_at_breaks([(0, 2, 0.1), word], [0, second])
    assert words == [(0, 2, 0.1), (13, 16, 0.9), (16, 19, 0.9)]
    assert [text[start:end] for start, end, _ in phrases_from_words(text, words, 0.5, [0, second])] == ["me.", "But"]
    assert cut_at_breaks([word], [0]) == [word]  # no break inside: unchanged


@pytest.mark.parametrize(
    ("text", "start", "end", "expected"),
    [
        ("200million", 0, 3, False),  # a number inside a word
        ("PWNED2", 5, 6, False),
        ("in 2015 .", 3, 7, True),
        ("costs $5m now", 7, 8, False),  # "5" of "5m"
        ("(2015)", 1, 5, True),  # brackets are not word characters
    ],
)
def test_word_boundaries(text: str, start: int, end: int, expected: bool) -> None:
    assert on_word_boundaries(text, start, end) is expected


def candidate_edits(output: str, span_text: str, source: str, evidence: str) -> list[tuple[str, str]]:
    """(text replaced, replacement) of every candidate for the span `span_text` of a one-sentence output whose best
    chunk is the whole source and whose evidence sentence is `evidence`."""
    start = output.index(span_text)
    span: dict[str, Any] = {"start": start, "end": start + len(span_text)}
    at = source.index(evidence)
    sentence = {
        "start": 0,
        "end": len(output),
        "chunk_start": 0,
        "chunk_end": len(source),
        "evidence": [{"start": at, "end": at + len(evidence)}],
    }
    return [(output[c.start : c.end], c.replacement) for c in span_candidates(0, 0, span, output, source, sentence)]


def test_a_number_glued_to_a_word_is_not_replaced_inside_it() -> None:
    source = "The club paid 11 million pounds for him."
    # not "11million": the glued word can only go whole (a compound modifier: "The club paid pounds .")
    assert candidate_edits("The club paid 200million pounds .", "200million", source, source) == [(" 200million", "")]
    assert candidate_edits("The club paid 200 million pounds .", "200 million", source, source) == [("200", "11")]
    assert candidate_edits("the code PWNED2 was used .", "PWNED2", "the code 12 was used.", "the code 12 was used.") == []


@pytest.mark.parametrize(
    ("sentence", "span", "expected"),
    [
        ("the midfielder left him at the club in 2015 .", "left him", False),  # the verb and its object
        ("the midfielder left him at the club in 2015 .", "at the club", True),  # a prepositional phrase
        ("the midfielder left him at the club in 2015 .", "the club", False),  # the object of "at" alone
        ("the former chelsea midfielder had been brought in on loan .", "former", True),  # an adjective
        ("the former chelsea midfielder had been brought in on loan .", "chelsea midfielder", False),  # the subject's head
        ("John , the mayor of the city , said it was over .", "the mayor of the city", False),  # leaves ", ,"
        ("he scored 200 goals quickly .", "quickly", True),
        ("he scored 200 goals quickly .", "200 go", False),  # cuts a word
    ],
)
def test_a_deletion_is_offered_only_where_the_sentence_stays_grammatical(sentence: str, span: str, expected: bool) -> None:
    start = sentence.index(span)
    assert deletion_keeps_grammar(sentence, start, start + len(span)) is expected


def test_no_ungrammatical_deletion_is_a_candidate() -> None:
    """The issue's example: " left him" deleted left "the midfielder at the club"; a modifier may go."""
    source = "The midfielder joined the club in 2015."
    output = "the midfielder left him at the club in 2015 ."
    assert candidate_edits(output, "left him", source, source) == []
    assert candidate_edits(output, "at the club", source, source) == [(" at the club", "")]
