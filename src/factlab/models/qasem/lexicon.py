"""The event-noun lexicon: which common nouns name events, and the verb each derives from.

Shared by factlab's trained parser (noun candidates, verb forms for questions) and the hub adapter's
predicate detection; spaCy's English lemmatizer index supplies the verbs.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from factlab.runtime import load_spacy

# Event-noun rule: suffix -> the endings tried in its place to find the verb.
EVENT_NOUN_SUFFIXES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ation", ("", "e", "ate")),
    ("ition", ("", "e")),
    ("ion", ("", "e")),
    ("ment", ("",)),
    ("ance", ("", "e")),
    ("ence", ("", "e")),
    ("al", ("", "e")),
    ("ure", ("", "e")),
    ("ing", ("", "e")),
    ("sis", ("ze", "se")),
    ("ery", ("er",)),
    ("age", ("",)),
)
MIN_STEM_CHARS = 3  # "ring" is not "r" + "ing"
COMMON_NOUN_TAGS = ("NN", "NNS")


@lru_cache(maxsize=1)
def verb_lemmas() -> frozenset[str]:
    """The verbs of spaCy's English lemmatizer index (the event-noun rule's lexicon)."""
    lemmatizer = load_spacy(disable=("ner", "parser", "senter")).get_pipe("lemmatizer")
    return frozenset(lemmatizer.lookups.get_table("lemma_index")["verb"])


def event_noun_verb(noun_lemma: str, verbs: Iterable[str] | None = None) -> str | None:
    """The verb an event noun derives from by a suffix ("preparation" -> "prepare"), else None."""
    lexicon = verb_lemmas() if verbs is None else frozenset(verbs)
    lemma = noun_lemma.lower()
    for suffix, endings in EVENT_NOUN_SUFFIXES:
        stem = lemma[: -len(suffix)]
        if not lemma.endswith(suffix) or len(stem) < MIN_STEM_CHARS:
            continue
        for ending in endings:
            if stem + ending in lexicon:
                return stem + ending
        if suffix == "ing" and stem[-1] == stem[-2] and stem[:-1] in lexicon:
            return stem[:-1]  # "running" -> "run"
    return None
