"""factlab.text.words: each notion of a word on one sentence, worked by hand, so that none drifts into another."""

from __future__ import annotations

from factlab.text.words import (
    HEAD_MATCH_WORD,
    LETTER_WORD,
    MARKED_WORD,
    VALUE_WORD,
    WHITESPACE_WORD,
    overlap_words,
    whitespace_word_count,
)

SENTENCE = "The U.S. team's 3-0 win, well-known."


def test_each_notion_splits_one_sentence_its_own_way() -> None:
    assert whitespace_word_count(SENTENCE) == 6  # The | U.S. | team's | 3-0 | win, | well-known.
    assert WHITESPACE_WORD.findall(SENTENCE) == ["The", "U.S.", "team's", "3-0", "win,", "well-known."]
    assert overlap_words(SENTENCE) == ["the", "u", "s", "team", "s", "3", "0", "win", "well", "known"]
    assert MARKED_WORD.findall(SENTENCE) == ["The", "U.S", ".", "team's", "3-0", "win", ",", "well-known", "."]
    assert HEAD_MATCH_WORD.findall(SENTENCE.lower()) == ["the", "u", "s", "team's", "3-0", "win", "well-known"]
    assert LETTER_WORD.findall(SENTENCE) == ["The", "U", "S", "team", "s", "win", "well", "known"]
    assert VALUE_WORD.findall("Café opened in März") == ["Caf", "opened", "in", "M", "rz"]  # ASCII letters only
    assert LETTER_WORD.findall("Café opened in März") == ["Café", "opened", "in", "März"]
