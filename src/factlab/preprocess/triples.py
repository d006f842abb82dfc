"""OpenIE-style (subject, relation, object) triples from a spaCy dependency parse.

Used by the FRANK OpenIE baseline (match output triples against source triples) and by
FactEdit-style negatives (mask one element of a triple). Rules, per predicate (a verb, or a
copula such as "is"):

- active: nsubj - verb - dobj ("Townsend missed the chance");
- passive: nsubjpass - verb, with the agent as a prepositional object ("was beaten by Villa");
- copular: "X is a Y" -> (X, is, Y), also adjectival ("X is unfit") and "X is in Y";
- prepositional objects extend the relation: (X, was born in, Y);
- conjunctions: conjoined subjects and objects give one triple each; a conjoined verb without
  its own subject shares the first verb's subject; an `xcomp` verb takes the governing verb's
  subject and relation ("agreed to sign");
- relative clauses and participle modifiers take the noun they modify as subject (or, for a
  relative pronoun object, as object: "the prize that he won" -> (he, won, the prize));
- negation stays in the relation ("did not win") and sets `negated`.

Arguments are the full subtree of the head noun (determiners, compounds, adjectives and
prepositional modifiers kept) without its conjuncts, relative clauses, appositions and clausal
modifiers, which become triples of their own.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from factlab.runtime import parse_many
from factlab.text.words import HEAD_MATCH_WORD

if TYPE_CHECKING:  # spaCy loads only where text is parsed: scoring jobs read these modules too
    from spacy.tokens import Doc, Token

PREDICATE_POS = {"VERB", "AUX"}
SUBJECT_DEPS = {"nsubj", "nsubjpass"}
DIRECT_OBJECT_DEPS = {"dobj", "attr", "acomp", "oprd"}
PREPOSITION_DEPS = {"prep", "agent"}
RELATION_DEPS = {"aux", "auxpass", "neg", "prt"}  # function words kept in the relation
# Branches left out of an argument: separate triples (conj, relcl, acl) or asides (appos).
ARGUMENT_EXCLUDED_DEPS = {"conj", "cc", "preconj", "relcl", "acl", "appos", "advcl", "parataxis"}
RELATIVE_PRONOUNS = {"who", "whom", "which", "that"}
PARTICIPLE_TAGS = {"VBN", "VBG"}


@dataclass(frozen=True)
class Triple:
    subject: str
    relation: str
    object: str
    negated: bool
    sentence_index: int  # index of the sentence in `doc.sents`
    # Character spans (start, end) in the doc's text of subject, relation, object; the relation
    # span runs from its first to its last word in the text, and may enclose other words
    # ("was born in 1950 in" -> "born in 1950 in").
    spans: tuple[tuple[int, int], tuple[int, int], tuple[int, int]]
    heads: tuple[str, str, str]  # syntactic head word of each element


def extract_triples(doc: Doc) -> list[Triple]:
    """All triples of a parsed doc, in sentence and predicate order, without duplicates."""
    if len(doc) and not doc.has_annotation("DEP"):
        # A doc from a pipeline without the parser would silently give no triples at all.
        raise ValueError("extract_triples needs a dependency-parsed doc (see parse_triples_docs)")
    sentence_of = {}
    for index, sentence in enumerate(doc.sents):
        for token in sentence:
            sentence_of[token.i] = index
    triples: list[Triple] = []
    seen: set[tuple[str, str, str]] = set()
    for token in doc:
        if not _is_predicate(token):
            continue
        for triple in _predicate_triples(token, sentence_of[token.i]):
            key = (triple.subject, triple.relation, triple.object)
            if key not in seen:
                seen.add(key)
                triples.append(triple)
    return triples


def extract_triples_many(texts: Iterable[str], batch_size: int = 64) -> list[list[Triple]]:
    """Triples of each text, parsed in batches by the cached parser pipeline that keeps
    hyphenated words whole (see `factlab.runtime.load_spacy`)."""
    return [extract_triples(doc) for doc in parse_triples_docs(texts, batch_size=batch_size)]


def parse_triples_docs(texts: Iterable[str], batch_size: int = 64) -> Iterator[Doc]:
    """The parses `extract_triples_many` uses, for callers that also need the docs."""
    return parse_many(texts, batch_size=batch_size, keep_hyphenated=True)


def _is_predicate(token: Token) -> bool:
    return token.pos_ in PREDICATE_POS and token.dep_ not in {"aux", "auxpass"}


def _predicate_triples(predicate: Token, sentence_index: int) -> list[Triple]:
    subjects = _subjects(predicate)
    if not subjects:
        return []
    relation = _relation_tokens(predicate)
    arguments = [(extra, _antecedent(predicate, obj)) for extra, obj in _arguments(predicate)]
    return [
        _make_triple(subject, relation, extra, obj, sentence_index, predicate) for subject in subjects for extra, obj in arguments
    ]


def _subjects(predicate: Token) -> list[Token]:
    """Subject heads of a predicate (each conjunct separately), found or inherited."""
    own = [child for child in predicate.children if child.dep_ in SUBJECT_DEPS]
    if own:
        subjects = [conjunct for subject in own for conjunct in _with_conjuncts(subject)]
        return [_antecedent(predicate, subject) for subject in subjects]
    head = predicate.head
    if predicate.dep_ in {"conj", "xcomp"} and head is not predicate and _is_predicate(head):
        return _subjects(head)  # "won the race and broke the record"; "agreed to sign"
    if predicate.dep_ == "advcl" and _is_predicate(head) and any(c.tag_ == "TO" for c in predicate.children):
        return _subjects(head)  # purpose clause: "they crossed the line to avoid a train"
    if predicate.dep_ == "relcl" or (predicate.dep_ == "acl" and predicate.tag_ in PARTICIPLE_TAGS):
        return [head] if head.pos_ in {"NOUN", "PROPN", "PRON", "NUM"} else []  # "a skeleton found in"
    return []


def _antecedent(predicate: Token, argument: Token) -> Token:
    """In a relative clause the relative pronoun stands for the noun the clause modifies:
    "the man who won" -> (the man, won, ...); "the prize that he won" -> (he, won, the prize)."""
    if predicate.dep_ == "relcl" and argument.lower_ in RELATIVE_PRONOUNS:
        return predicate.head
    return argument


def _relation_tokens(predicate: Token) -> list[Token]:
    tokens = [predicate] + [child for child in predicate.children if child.dep_ in RELATION_DEPS]
    if predicate.dep_ == "xcomp" and _is_predicate(predicate.head):
        tokens += _relation_tokens(predicate.head)  # "has agreed" + "to sign"
    return tokens


def _arguments(predicate: Token) -> list[tuple[list[Token], Token]]:
    """(extra relation tokens, object head) for each object, complement and prepositional object."""
    arguments: list[tuple[list[Token], Token]] = []
    for child in predicate.children:
        if child.dep_ in DIRECT_OBJECT_DEPS:
            arguments += [([], obj) for obj in _with_conjuncts(child)]
        elif child.dep_ in PREPOSITION_DEPS or (child.dep_ == "dative" and child.pos_ == "ADP"):
            for preposition in _with_conjuncts(child):
                arguments += _prepositional_objects([preposition])
    return arguments


def _prepositional_objects(prepositions: list[Token]) -> list[tuple[list[Token], Token]]:
    """Noun objects of a preposition; multi-word ones ("out of", "due to") are followed down."""
    last = prepositions[-1]
    objects = [child for child in last.children if child.dep_ == "pobj"]
    if objects:
        # "due to": the second word hangs off the first as `pcomp`; keep it in the relation.
        relation = prepositions + [c for c in last.children if c.dep_ == "pcomp" and c.pos_ == "ADP"]
        return [(relation, obj) for head in objects for obj in _with_conjuncts(head)]
    inner = [child for child in last.children if child.dep_ in {"prep", "pcomp"} and child.pos_ == "ADP"]
    return [pair for child in inner for pair in _prepositional_objects([*prepositions, child])]


def _with_conjuncts(token: Token) -> list[Token]:
    return [token, *(c for c in token.conjuncts if c.i > token.i)]


def _argument_tokens(head: Token) -> list[Token]:
    """The head's subtree minus excluded branches, without stray punctuation at the edges."""
    return _trim_edges(sorted(_subtree_without_excluded(head), key=lambda token: token.i))


def _subtree_without_excluded(head: Token) -> list[Token]:
    kept = [head]
    for child in head.children:
        if child.dep_ not in ARGUMENT_EXCLUDED_DEPS:
            kept += _subtree_without_excluded(child)
    return kept


def _trim_edges(tokens: list[Token]) -> list[Token]:
    """Drops edge punctuation, except a quote or bracket whose partner is inside ("‘zero points’")."""
    while len(tokens) > 1 and tokens[0].is_punct and not (_opens(tokens[0]) and any(map(_closes, tokens[1:]))):
        tokens = tokens[1:]
    while len(tokens) > 1 and tokens[-1].is_punct and not (_closes(tokens[-1]) and any(map(_opens, tokens[:-1]))):
        tokens = tokens[:-1]
    return tokens


def _opens(token: Token) -> bool:
    return token.is_left_punct or token.is_quote


def _closes(token: Token) -> bool:
    return token.is_right_punct or token.is_quote


def _make_triple(
    subject: Token,
    verb_group: Sequence[Token],
    prepositions: Sequence[Token],
    obj: Token,
    sentence_index: int,
    predicate: Token,
) -> Triple:
    subject_tokens = _argument_tokens(subject)
    object_tokens = _argument_tokens(obj)
    # Verb group in text order, then the preposition, also when it comes first ("in which he lived").
    relation_tokens = sorted(set(verb_group), key=lambda token: token.i) + list(prepositions)
    return Triple(
        subject=_text(subject_tokens),
        relation=_text(relation_tokens),
        object=_text(object_tokens),
        negated=any(token.dep_ == "neg" for token in relation_tokens),
        sentence_index=sentence_index,
        spans=(_span(subject_tokens), _span(sorted(relation_tokens, key=lambda t: t.i)), _span(object_tokens)),
        heads=(subject.text, predicate.text, obj.text),
    )


def _text(tokens: Sequence[Token]) -> str:
    """Tokens joined as written; a gap between non-adjacent tokens becomes one space."""
    parts = []
    for token, following in zip(tokens, [*tokens[1:], None], strict=True):
        parts.append(token.text)
        if following is not None:
            parts.append(token.whitespace_ if following.i == token.i + 1 else " ")
    return "".join(parts)


def _span(tokens: Sequence[Token]) -> tuple[int, int]:
    return tokens[0].idx, tokens[-1].idx + len(tokens[-1].text)


@dataclass(frozen=True)
class TripleScores:
    """Precision / recall / F1 of extracted triples against gold, with the counts behind them."""

    precision: float
    recall: float
    f1: float
    n_predicted: int
    n_gold: int
    n_predicted_correct: int  # predicted triples that match some gold triple of their sentence
    n_gold_found: int  # gold triples matched by some predicted triple of their sentence


def element_words(text: str) -> set[str]:
    """Lower-cased words of a triple element; hyphens and apostrophes stay inside words."""
    return set(HEAD_MATCH_WORD.findall(text.lower()))


def matches_heads(predicted: Sequence[str], gold_heads: Sequence[str]) -> bool:
    """Lenient match: each gold head word occurs in the predicted subject, relation, object."""
    return all(head.lower() in element_words(element) for head, element in zip(gold_heads, predicted, strict=True))


def score_triples(predicted: Sequence[Sequence[Sequence[str]]], gold_heads: Sequence[Sequence[Sequence[str]]]) -> TripleScores:
    """Scores per-sentence lists of predicted (subject, relation, object) against gold head triples."""
    if len(predicted) != len(gold_heads):
        raise ValueError(f"{len(predicted)} predicted sentences for {len(gold_heads)} gold sentences")
    correct = found = n_predicted = n_gold = 0
    for sentence_predicted, sentence_gold in zip(predicted, gold_heads, strict=True):
        n_predicted += len(sentence_predicted)
        n_gold += len(sentence_gold)
        correct += sum(any(matches_heads(p, g) for g in sentence_gold) for p in sentence_predicted)
        found += sum(any(matches_heads(p, g) for p in sentence_predicted) for g in sentence_gold)
    precision = correct / n_predicted if n_predicted else 0.0
    recall = found / n_gold if n_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return TripleScores(precision, recall, f1, n_predicted, n_gold, correct, found)
