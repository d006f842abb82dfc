"""Rule-based QAs for copular relations, which QA-SRL leaves out ("be" is no QA-SRL predicate).

QASemConsistency adds them with an LLM ("Who is a musician? John"); factlab reads them off the
spaCy parse. For each "be" that is a main verb (not an auxiliary) with a subject:
- question = who/what + the auxiliaries before "be" + "be" as written + the complement;
  answer = the subject's span. "who" when the subject is a person (a PERSON entity or a personal
  pronoun), else "what".
- Complements: each nominal or adjectival complement (`attr`, `acomp`) and each of its
  conjuncts gives one QA ("an actor, producer and director" -> "an actor", "a producer",
  "a director": a bare conjunct borrows the first one's article); adverbs and negation between
  "be" and the complement stay in the question ("Who is currently the host …?"). Without such a
  complement, the words after "be" up to the end of its last prepositional phrase form one
  ("What has been on the air in Cleveland since 1978?").
- A relative pronoun subject ("who is …") is replaced by the noun it modifies; expletive subjects
  ("there is", "it is … that") give no QA.
The QA's predicate is the "be" token (verb form "be"), its source "copular_rule", its role
"copula" (no QA-SRL role applies).
"""

from __future__ import annotations

from spacy.tokens import Doc, Token

from factlab.models.qasem.types import Predicate, QAPair

SUBJECT_DEPS = ("nsubj",)
COMPLEMENT_DEPS = ("attr", "acomp")
RELATIVE_PRONOUNS = frozenset({"who", "which", "that", "whom"})
PERSON_PRONOUNS = frozenset({"i", "you", "he", "she", "we", "they", "me", "him", "her", "us", "them"})
ARTICLES = frozenset({"a", "an", "the"})
ROLE = "copula"
SOURCE = "copular_rule"


def is_copula(token: Token) -> bool:
    return token.lemma_.lower() == "be" and token.dep_ not in ("aux", "auxpass")


def subject_span(be: Token) -> tuple[int, int] | None:
    subjects = [child for child in be.children if child.dep_ in SUBJECT_DEPS]
    if not subjects:
        return None
    subject = subjects[0]
    if subject.lower_ in RELATIVE_PRONOUNS and be.dep_ == "relcl":
        head = be.head  # "the man who is …": the man
        return head.left_edge.i, head.i + 1
    return subject.left_edge.i, subject.right_edge.i + 1


def wh_word(doc: Doc, span: tuple[int, int]) -> str:
    tokens = doc[span[0] : span[1]]
    if any(token.ent_type_ == "PERSON" for token in tokens) or tokens.root.lower_ in PERSON_PRONOUNS:
        return "who"
    return "what"


DROPPED_CLAUSES = ("relcl", "appos")  # "the host of the show, which is popular": the show


def without_coordination(complement: Token) -> list[Token]:
    """The complement's words minus its conjuncts, coordinators, relative clauses and appositions,
    and the punctuation left at its ends."""
    dropped: set[int] = set()
    for child in complement.children:
        if child.dep_ == "conj":
            dropped.update(token.i for token in child.subtree)
        elif child.dep_ in ("cc", "punct") and child.i > complement.i:
            dropped.add(child.i)
    for token in complement.subtree:
        if token.dep_ in DROPPED_CLAUSES and token.i != complement.i:
            dropped.update(descendant.i for descendant in token.subtree)
    words = [token for token in complement.subtree if token.i not in dropped]
    while words and words[-1].is_punct:
        words.pop()
    while words and words[0].is_punct:
        words.pop(0)
    return words


def with_article(words: list[Token], article: str | None) -> list[str]:
    texts = [token.text for token in words]
    if article and texts and texts[0].lower() not in ARTICLES and words[0].tag_ in ("NN", "NNP", "JJ"):
        if article in ("a", "an"):
            article = "an" if texts[0][0].lower() in "aeiou" else "a"
        return [article, *texts]
    return texts


def complement_phrases(be: Token) -> list[list[str]]:
    """Each complement's words (see the module docstring)."""
    complements = [child for child in be.children if child.dep_ in COMPLEMENT_DEPS and child.i > be.i]
    modifiers = [child for child in be.children if child.dep_ in ("advmod", "neg") and child.i > be.i]
    phrases = []
    for complement in complements:
        lead = [token.text for token in modifiers if token.i < complement.left_edge.i]
        first_words = without_coordination(complement)
        article = first_words[0].lower_ if first_words and first_words[0].lower_ in ARTICLES else None
        phrases.append(lead + [token.text for token in first_words])
        for conjunct in complement.conjuncts:
            phrases.append(lead + with_article(without_coordination(conjunct), article))
    if complements:
        return phrases
    preps = [child for child in be.children if child.dep_ == "prep" and child.i > be.i]
    if not preps:
        return []
    end = max(prep.right_edge.i for prep in preps) + 1
    return [[token.text for token in be.doc[be.i + 1 : end]]]


def copular_qas(doc: Doc) -> list[QAPair]:
    qas = []
    for be in doc:
        if not is_copula(be):
            continue
        span = subject_span(be)
        if span is None or any(child.dep_ == "expl" for child in be.children):
            continue
        auxiliaries = [child.text.lower() for child in be.children if child.dep_ in ("aux", "neg") and child.i < be.i]
        wh = wh_word(doc, span)
        predicate = Predicate(index=be.i, text=be.text, is_verbal=True, verb_form="be")
        answer = " ".join(token.text for token in doc[span[0] : span[1]])
        for phrase in complement_phrases(be):
            words = [wh, *auxiliaries, be.text.lower(), *phrase]
            while words and words[-1] in (",", ".", ";", ":"):
                words.pop()
            text = " ".join(words)
            question = text[:1].upper() + text[1:] + "?"
            qas.append(QAPair(predicate, question, answer, span[0], span[1], role=ROLE, source=SOURCE))
    return qas
