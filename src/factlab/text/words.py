"""What a word is, once for each use: every module that counts, matches or marks words takes its notion from here.

The notions differ on purpose, each fitted to the unit it serves (a chunk budget, an n-gram overlap, a span a
reader sees), so a change to one changes the outputs that depend on it and no others. Plain `re` only: the
checker's command line imports this module and stays light.
"""

from __future__ import annotations

import re

# Runs of non-whitespace: the words `whitespace_word_count` counts, with their offsets (a word-level diff).
WHITESPACE_WORD = re.compile(r"\S+")
# Runs of word characters: n-gram overlap between texts compares these, lower-cased (`overlap_words`).
OVERLAP_WORD = re.compile(r"\w+")
# Letters and digits with inner apostrophes, hyphens and dots ("U.S.", "don't", "2.5"); any other character stands
# alone, so that a marked word does not take its sentence's full stop along: the words token-level localisation
# scores and marks.
MARKED_WORD = re.compile(r"\w+(?:['\u2019.-]\w+)*|[^\w\s]")
# Runs of letters (no digits, no underscore): a text's language is judged by the English function words among these.
LETTER_WORD = re.compile(r"[^\W\d_]+")
# Word characters joined by inner hyphens and apostrophes ("well-known", "don't"): the words of an extracted
# triple's element, matched against gold head words.
HEAD_MATCH_WORD = re.compile(r"\w+(?:[-'’]\w+)*")
# Runs of ASCII letters: the candidates a synthetic edit looks up in its lists of value words (months, weekdays,
# number words).
VALUE_WORD = re.compile(r"[A-Za-z]+")


def whitespace_word_count(text: str) -> int:
    """Whitespace-separated words: the unit of AlignScore's 350-word chunks, of the word counts in stage reports and
    dataset statistics, and of synthetic pairs' lengths."""
    return len(text.split())


def overlap_words(text: str) -> list[str]:
    """`OVERLAP_WORD` runs of the lower-cased text, in order, so that punctuation, case and spacing differences do
    not hide a shared run: training-data leakage (n-word runs) and the checker's chunk pre-ranker."""
    return OVERLAP_WORD.findall(text.lower())
