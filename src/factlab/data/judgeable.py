"""Inputs a checker cannot judge: flagged, counted and shown, never silently scored.

factlab's checkers are trained on English text. A (source, output) pair gets a flag when
- `no_words_in_source` / `no_words_in_output`: the text has no letter at all (punctuation, numbers): there is
  no claim to check or nothing to check it against. Such a pair gets no score (null);
- `not_english`: most of its letters are outside the Latin script, or a long Latin-script text has almost no
  English function words (French, German, ...). It is scored, but marked unreliable.

`factlab check` returns the flags per row; a custom benchmark keeps them in its `input_flags` column and counts
them in its build report (results/data/reports/<name>.json).
"""

from __future__ import annotations

import re
import unicodedata

from factlab.text.words import LETTER_WORD

NO_WORDS_IN_SOURCE = "no_words_in_source"
NO_WORDS_IN_OUTPUT = "no_words_in_output"
NOT_ENGLISH = "not_english"
FLAGS = (NO_WORDS_IN_SOURCE, NO_WORDS_IN_OUTPUT, NOT_ENGLISH)
UNSCORABLE = (NO_WORDS_IN_SOURCE, NO_WORDS_IN_OUTPUT)  # no score at all; other flags: a score marked unreliable

LETTER = re.compile(r"[^\W\d_]")
# The most frequent English function words: a long English text has many (about 40% of running words).
ENGLISH_FUNCTION_WORDS = frozenset(
    "the of and to a in is was for that on with as by it he she they his her at from be are were this an or has "
    "have had not but which who their its will would been also than more".split()
)
MIN_LATIN_SHARE = 0.5  # of a text's letters
MIN_WORDS_FOR_FUNCTION_TEST = 12  # shorter texts (a name, a number, a title) say too little to judge their language
MIN_FUNCTION_SHARE = 0.05


def latin_share(text: str) -> float:
    """The share of `text`'s letters in the Latin script (1.0 for a text without letters)."""
    letters = LETTER.findall(text)
    if not letters:
        return 1.0
    latin = sum(1 for letter in letters if "LATIN" in unicodedata.name(letter, ""))
    return latin / len(letters)


def looks_english(text: str) -> bool:
    if latin_share(text) < MIN_LATIN_SHARE:
        return False
    words = [word.lower() for word in LETTER_WORD.findall(text)]
    if len(words) < MIN_WORDS_FOR_FUNCTION_TEST:
        return True
    return sum(word in ENGLISH_FUNCTION_WORDS for word in words) / len(words) >= MIN_FUNCTION_SHARE


def judge_flags(source: str, output: str) -> list[str]:
    """The reasons a (source, output) pair cannot be judged reliably; [] for an ordinary English pair."""
    flags = []
    if not LETTER.search(source):
        flags.append(NO_WORDS_IN_SOURCE)
    if not LETTER.search(output):
        flags.append(NO_WORDS_IN_OUTPUT)
    if not (looks_english(source) and looks_english(output)):
        flags.append(NOT_ENGLISH)
    return flags
