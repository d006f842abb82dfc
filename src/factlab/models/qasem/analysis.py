"""spaCy analysis of pre-tokenised sentences for the QASem parser: POS tags (which tokens may be
event nouns), verb lemmas (the verb a question inflects) and dependency parses (copular QAs).

The sentences keep their tokenisation (a spaCy `Doc` built from the tokens), so token indices
agree with the QA-SRL data and with the parser's spans.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

from spacy.language import Language
from spacy.tokens import Doc, Token

from factlab.models.qasem.inflection import verb_lemma
from factlab.runtime import load_spacy

NOUN_TAGS = ("NN", "NNS")  # common nouns: the candidates for event nouns (as QANom's candidates)
DISABLE: tuple[str, ...] = ()  # tags, lemmas, parse and entities (person subjects ask "who") are all used


def pipeline() -> Language:
    return load_spacy(disable=DISABLE)


def analyse(sentences: Sequence[Sequence[str]], batch_size: int = 64) -> list[Doc]:
    """One parsed Doc per tokenised sentence, tokens unchanged."""
    nlp = pipeline()
    docs = (Doc(nlp.vocab, words=list(tokens)) for tokens in sentences)
    return list(nlp.pipe(docs, batch_size=batch_size))


def is_noun_candidate(token: Token) -> bool:
    return token.tag_ in NOUN_TAGS


def is_content_word(token: Token) -> bool:
    """Not a stop word and not punctuation: an argument span needs at least one (decoding.py)."""
    return not token.is_stop and any(char.isalnum() for char in token.text)


@lru_cache(maxsize=1)
def verb_lexicon() -> frozenset[str]:
    """Known English verbs: spaCy's lemmatizer verb index."""
    from factlab.models.qasem.lexicon import verb_lemmas

    return verb_lemmas()


def token_verb_lemma(token: Token) -> str:
    """The base form of a token read as a verb ("staged" -> "stage", "scoring" -> "score"),
    whatever spaCy tagged it: spaCy's verb lemmatisation rules give candidates, and the one
    that inflects back to the token and is a known verb wins (inflection.verb_lemma)."""
    lemmatizer = pipeline().get_pipe("lemmatizer")
    saved = token.pos_
    token.pos_ = "VERB"
    try:
        hints = list(lemmatizer.rule_lemmatize(token))
    finally:
        token.pos_ = saved
    return verb_lemma(token.text, [*hints, token.lemma_], verb_lexicon())


def noun_verb_form(token: Token, lexicon: Mapping[str, str]) -> str:
    """The verb of an event noun: QANom's own verb forms first ("orientation" -> "orientate"),
    then the suffix rule of the hub adapter ("preparation" -> "prepare"), else the noun lemma."""
    from factlab.models.qasem.lexicon import event_noun_verb

    for key in (token.text.lower(), token.lemma_.lower()):
        if key in lexicon:
            return lexicon[key]
    return event_noun_verb(token.lemma_.lower(), verb_lexicon()) or token.lemma_.lower()
