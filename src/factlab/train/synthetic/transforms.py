"""The synthetic transforms: edits that turn a claim (sentences of a real document) into a supported or an
unsupported variant, the errors the alignment model learns to catch.

Each transform takes the claim, its spaCy parse, a `Pool` of replacements and the random generator, and returns
the edited claim, or None when it does not apply (`TRANSFORM_FUNCTIONS` names them).

- FactCC-style (Kryscinski et al., 2020). Positives keep the claim (`keep`) or lightly paraphrase it
  (`paraphrase`: drop a parenthetical, drop a comma-delimited appositive, or move a fronted adverbial phrase to
  the end). Negatives swap a named entity (`entity_swap`), a number or date (`number_swap`) or a pronoun
  (`pronoun_swap`), add or remove a negation (`negation`), swap two arguments of one predicate, or two same-type
  names of a sentence, with the words unchanged (`argument_swap`, PAWS-style: "A beat B" -> "B beat A", "from X
  to Y" -> "from Y to X"), add a modifier from another document that the premise does not state
  (`phrase_insertion`: "... hugged her friends" -> "... hugged her friends in Washington", the extrinsic detail
  abstractive summaries invent) or a whole sentence of another document after one of the claim's
  (`sentence_insertion`), or replace the claim by sentences of another document (`other_document`).
- FactEdit-style (Balachandran et al., 2022), offline: the claim's OpenIE triples (`factlab.preprocess.triples`)
  have one element (`factedit_subject|relation|object`) replaced by the same element of a triple from another
  document, preferring the same NER label and head tag, then the same label or part of speech: fluent, hard
  negatives.

Replacements come from `build_pools` over all documents, never from the claim's own document except for entity
swaps within it. The word tables are in factlab.train.synthetic.lexicon; `claim_removed`, which edits the premise,
is made with the pairs (factlab.train.synthetic.pairs).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from spacy.tokens import Doc, Span, Token

from factlab.models.qasem.inflection import inflect
from factlab.preprocess.triples import Triple, extract_triples
from factlab.text.sentences import Sentence, split_sentences
from factlab.text.words import VALUE_WORD, whitespace_word_count
from factlab.train.synthetic.lexicon import (
    ADVERBS_BEFORE_NOT,
    CONTRACTED_NEGATION_HOSTS,
    DETAIL_LABELS,
    DO_FORMS,
    DO_SUPPORT,
    FRONTED_CONNECTIVES,
    FRONTED_DEPS,
    GENDER_SWAPS,
    LIGHT_VERBS,
    MODIFIER_DEPS,
    NAMED_LABELS,
    NEGATORS,
    NUMBER_LABELS,
    OBJECT_SWAPS,
    PLURAL_MARKERS,
    PLURAL_SWAPS,
    POSSESSIVE_SWAPS,
    SENTENCE_END,
    SUBJECT_DEPS,
    SWAP_PREPOSITIONS,
    VALUE_WORD_LISTS,
)

DRAW_TRIES = 32  # random draws from a pool before falling back to a full scan
NUMBER_PATTERN = re.compile(r"\d{1,3}(?:,\d{3})+(?!\d)|\d+(?:\.\d+)?")
ORDINAL_SUFFIX = re.compile(r"(?:st|nd|rd|th)\b")
MAX_FRONTED_TOKENS = 8
TRIPLE_ELEMENTS = ("subject", "relation", "object")


# --- pools of replacements ------------------------------------------------------------------

PoolEntry = tuple[int, str]  # (index of the document it comes from, text)


@dataclass(frozen=True)
class Pools:
    """Replacement candidates from all documents, each tagged with its document, in document order."""

    entities: dict[str, list[PoolEntry]]  # NER label -> entity texts
    elements: dict[tuple[str, ...], list[PoolEntry]]  # triple element key (see `element_keys`) -> texts
    sentences: list[list[str]]  # each document's sentences
    document_entities: list[dict[str, list[str]]]  # each document's entity texts by label, first mention order
    phrases: list[PoolEntry] = field(default_factory=list)  # modifiers of verbs that name a place, time or number


@dataclass(frozen=True)
class Pool:
    """The view of `Pools` that one claim's transforms see: replacements from other documents,
    and this document's own entities (for swaps within the document)."""

    pools: Pools
    doc_index: int  # -1: the claim belongs to no document of the pools

    def own_entities(self, label: str) -> list[str]:
        if not 0 <= self.doc_index < len(self.pools.document_entities):
            return []
        return self.pools.document_entities[self.doc_index].get(label, [])

    def draw(self, entries: Sequence[PoolEntry], accept: Callable[[str], bool], rng: np.random.Generator) -> str | None:
        """A random entry from another document whose text `accept`s; None when there is none."""
        return _draw(entries, lambda e: e[0] != self.doc_index and accept(e[1]), rng)

    def other_document(self, rng: np.random.Generator) -> int | None:
        """A random other document with sentences; None when there is none."""
        count = len(self.pools.sentences)

        def fits(index: int) -> bool:
            return index != self.doc_index and bool(self.pools.sentences[index])

        for _ in range(DRAW_TRIES if count else 0):
            index = int(rng.integers(count))
            if fits(index):
                return index
        fitting = [index for index in range(count) if fits(index)]
        return fitting[int(rng.integers(len(fitting)))] if fitting else None


def _draw(entries: Sequence[PoolEntry], accept: Callable[[PoolEntry], bool], rng: np.random.Generator) -> str | None:
    """The text of a random accepted entry: random draws first (cheap on big pools), then a scan
    of every entry, so that a pool where few entries fit still yields one."""
    if not entries:
        return None
    for _ in range(DRAW_TRIES):
        entry = entries[int(rng.integers(len(entries)))]
        if accept(entry):
            return entry[1]
    fitting = [entry for entry in entries if accept(entry)]
    return fitting[int(rng.integers(len(fitting)))][1] if fitting else None


def build_pools(docs: Sequence[Doc], sentences: Sequence[Sequence[Sentence]]) -> Pools:
    """Entities (by NER label) and triple elements (by `element_keys`) of parsed documents, and
    their sentences; texts are stored as they would read mid-sentence (see `pool_text`)."""
    entities: dict[str, list[PoolEntry]] = {}
    elements: dict[tuple[str, ...], list[PoolEntry]] = {}
    document_entities: list[dict[str, list[str]]] = []
    phrases: list[PoolEntry] = []
    for index, doc in enumerate(docs):
        own: dict[str, list[str]] = {}
        for entity in doc.ents:
            span = _without_possessive(entity)
            if span is not None and "\n" not in span.text:
                _add_unique(entities.setdefault(entity.label_, []), (index, pool_text(span)))
                if pool_text(span) not in own.setdefault(entity.label_, []):
                    own[entity.label_].append(pool_text(span))
        document_entities.append(own)
        for triple in extract_triples(doc):
            for position, element in enumerate(TRIPLE_ELEMENTS):
                span = _element_span(doc, triple, position)
                if span is None:
                    continue
                for key in element_keys(element, span, triple):
                    _add_unique(elements.setdefault(key, []), (index, pool_text(span)))
        for phrase in modifier_phrases(doc):
            _add_unique(phrases, (index, phrase))
    texts = [[s.text for s in document] for document in sentences]
    return Pools(entities, elements, texts, document_entities, phrases)


MODIFIER_TOKENS = (2, 6)  # words of an inserted modifier: "in 2015" .. "at the end of the season"


def modifier_phrases(doc: Doc) -> list[str]:
    """A document's prepositional phrases that modify a verb and name a place, time, number or organisation
    ("in Washington", "on Tuesday", "for $5 million"): the details an inserted phrase adds."""
    found = []
    for token in doc:
        if token.dep_ != "prep" or token.head.pos_ not in {"VERB", "AUX"}:
            continue
        phrase = doc[token.left_edge.i : token.right_edge.i + 1]
        low, high = MODIFIER_TOKENS
        if low <= len(phrase) <= high and any(t.ent_type_ in DETAIL_LABELS for t in phrase) and "\n" not in phrase.text:
            if not any(t.is_punct for t in phrase):
                found.append(pool_text(phrase))
    return found


def _add_unique(entries: list[PoolEntry], entry: PoolEntry) -> None:
    if entry not in entries[-50:]:  # repeated mentions in one document ("Sally", "Sally")
        entries.append(entry)


def pool_text(span: Span) -> str:
    """The span's text, its first letter lower-cased when only the sentence start capitalised it
    ("The city" -> "the city"; "Walker" and "I" stay)."""
    first = span[0]
    if (first.is_sent_start or first.i == 0) and first.pos_ != "PROPN" and first.text != "I" and first.text[:1].isupper():
        return first.text[:1].lower() + span.text[1:]
    return span.text


def _without_possessive(span: Span) -> Span | None:
    """The span without a trailing "'s" (spaCy puts it inside PERSON entities: "Jessie Bear's")."""
    end = span.end
    while end > span.start and span.doc[end - 1].tag_ == "POS":
        end -= 1
    return Span(span.doc, span.start, end, label=span.label_) if end > span.start else None


def element_keys(element: str, span: Span, triple: Triple) -> list[tuple[str, ...]]:
    """Pool keys of a triple element (its span in a parsed doc), the most specific first; a
    replacement must share one, so that the edit stays fluent and plausible.

    Subject / object: the same predicate lemma and preposition ("played for" X), NER label and
    head tag; then, for an entity head, the same NER label and head tag (any PERSON for a PERSON).
    A common-noun argument of another predicate ("played a summer vacation") is never offered.
    Relation: the same tags word by word, the same final preposition and the same object
    dependency ("attr" of a copula, "dobj", "pobj"), so "is a senator" never becomes "loves a
    senator". Light verbs (`LIGHT_VERBS`: "is", "had") give no relation key and no
    same-predicate key: "was 1,149" and "had a cake" say too little about what fits. Pronoun and
    relative-pronoun arguments have no key: they are not facts to swap.
    """
    doc = span.doc
    predicate = _predicate(doc, triple)
    relation = doc.char_span(*triple.spans[1], alignment_mode="expand")
    obj = doc.char_span(*triple.spans[2], alignment_mode="expand")
    if predicate is None or relation is None or obj is None:
        return []
    preposition = relation[-1].lower_ if relation[-1].pos_ == "ADP" else ""
    light = predicate.lemma_.lower() in LIGHT_VERBS
    if element == "relation":
        return [] if light else [(element, " ".join(t.tag_ for t in span), preposition, obj.root.dep_)]
    head = span.root
    if head.pos_ == "PRON" or head.tag_ in {"WDT", "WP"}:
        return []
    keys = [] if light else [(element, "predicate", predicate.lemma_.lower(), preposition, head.ent_type_, head.tag_)]
    if head.ent_type_ and all(t.ent_type_ == head.ent_type_ or (t.i == span.start and t.pos_ == "DET") for t in span):
        keys.append((element, "entity", head.ent_type_, head.tag_))  # the element is the entity, not "one of the ..."
    return keys


def _predicate(doc: Doc, triple: Triple) -> Token | None:
    """The triple's predicate token: the word of its relation span that is its head verb."""
    relation = doc.char_span(*triple.spans[1], alignment_mode="expand")
    if relation is None:
        return None
    return next((t for t in relation if t.text == triple.heads[1] and t.pos_ in {"VERB", "AUX"}), None)


def _element_span(doc: Doc, triple: Triple, position: int) -> Span | None:
    """The element's span when its text is exactly the text at its character span (contiguous:
    no left-out relative clause or adverb inside); None otherwise."""
    start, end = triple.spans[position]
    text = (triple.subject, triple.relation, triple.object)[position]
    if doc.text[start:end] != text:
        return None
    return doc.char_span(start, end)


# --- editing helpers ---------------------------------------------------------------------------


def _is_sentence_start(token: Token) -> bool:
    return token.i == 0 or bool(token.is_sent_start)


def _splice(text: str, start: int, end: int, replacement: str, capitalize: bool = False) -> str:
    if capitalize:
        replacement = replacement[:1].upper() + replacement[1:]
    return text[:start] + replacement + text[end:]


def _keep_case(original: str, replacement: str) -> str:
    if len(original) > 1 and original.isupper():
        return replacement.upper()
    if original[:1].isupper():
        return replacement[:1].upper() + replacement[1:]
    return replacement


def _remove_tokens(doc: Doc, first: int, last: int) -> str:
    """The doc's text without tokens first..last (inclusive) and the space before them (or, at
    the start, the space after them)."""
    text = doc.text
    if first > 0:
        before = doc[first - 1]
        return text[: before.idx + len(before.text)] + text[doc[last].idx + len(doc[last].text) :]
    following = doc[last + 1].idx if last + 1 < len(doc) else len(text)
    rest = text[following:]
    return rest[:1].upper() + rest[1:]


def _mentions(text: str, claim: str) -> bool:
    return text.lower() in claim.lower()


def _overlaps(a: str, b: str) -> bool:
    """One text contains the other ("Jessie" / "Jessie Bear"): no swap of meaning."""
    return a.lower() in b.lower() or b.lower() in a.lower()


def shuffled(items: Sequence, rng: np.random.Generator) -> list:
    """The items in an order `rng` draws."""
    return [items[index] for index in rng.permutation(len(items))]


# --- positives ---------------------------------------------------------------------------------


def keep(claim: str, doc: Doc, pool: Pool, rng: np.random.Generator) -> str | None:
    """The claim as it is."""
    return claim


def paraphrase(claim: str, doc: Doc, pool: Pool, rng: np.random.Generator) -> str | None:
    """A meaning-preserving edit, chosen at random among those that apply: `drop_parenthetical`,
    `drop_appositive`, `move_fronted_phrase`; None when none applies."""
    options = [edit(claim, doc) for edit in (drop_parenthetical, drop_appositive, move_fronted_phrase)]
    options = [option for option in options if option is not None and option != claim]
    return options[int(rng.integers(len(options)))] if options else None


PARENTHETICAL = re.compile(r"\s*\([^()]*\)")


def drop_parenthetical(claim: str, doc: Doc) -> str | None:
    """The claim without its first parenthetical "(...)" not at its very start; a less specific,
    still supported claim."""
    for match in PARENTHETICAL.finditer(claim):
        if claim[: match.start()].strip():
            return claim[: match.start()] + claim[match.end() :]
    return None


def drop_appositive(claim: str, doc: Doc) -> str | None:
    """The claim without its first comma-delimited appositive: "to her friend, Tina, so she" ->
    "to her friend, so she". An appositive without a comma before it ("her friend Lion") is kept."""
    for token in doc:
        if token.dep_ != "appos" or token.head.i > token.i:
            continue
        first, last = token.left_edge.i, token.right_edge.i
        if first < 1 or doc[first - 1].text != "," or last + 1 >= len(doc):
            continue
        after = doc[last + 1]
        if after.text not in {",", ";"} and after.text not in SENTENCE_END:
            continue
        return _remove_tokens(doc, first - 1, last)
    return None


def move_fronted_phrase(claim: str, doc: Doc) -> str | None:
    """A sentence-initial adverbial (prepositional phrase, adverb, bare noun phrase such as "One
    day") moved to the end of its sentence: "Soon her friend Lion came over." -> "Her friend Lion
    came over soon." Only in sentences with a single clause, where the phrase cannot attach to
    another verb at the end. The first sentence where this applies is edited."""
    for sentence in doc.sents:
        edited = _move_fronted(sentence)
        if edited is not None:
            start, end = sentence.start_char, sentence.end_char
            return claim[:start] + edited + claim[end:]
    return None


def _move_fronted(sentence: Span) -> str | None:
    first, root, last = sentence[0], sentence.root, sentence[-1]
    if last.text not in SENTENCE_END or first.is_punct:
        return None
    phrase_head = next((c for c in root.lefts if c.left_edge.i == first.i), None)
    if phrase_head is None or phrase_head.dep_ not in FRONTED_DEPS:
        return None
    phrase_end = phrase_head.right_edge.i  # inclusive
    subjects = [c for c in root.children if c.dep_ in SUBJECT_DEPS]
    phrase = sentence.doc[first.i : phrase_end + 1]
    if (
        not subjects
        or subjects[0].i <= phrase_end
        or len(phrase) > MAX_FRONTED_TOKENS
        or any(t.pos_ in {"VERB", "AUX"} or t.is_punct for t in phrase)
        or first.lower_ in FRONTED_CONNECTIVES
    ):
        return None
    verbs = [t for t in sentence if t.pos_ in {"VERB", "AUX"} and t.i != root.i and t.head.i != root.i]
    if verbs or any(c.dep_ in {"ccomp", "xcomp", "advcl", "conj"} for c in root.children):
        return None  # a clause after the phrase could take it over ("found that he is ... recently")
    rest_first = phrase_end + 1
    if sentence.doc[rest_first].text == ",":
        rest_first += 1
    rest = sentence.doc[rest_first : last.i]
    if len(rest) < 2 or rest[0].is_punct:
        return None
    phrase_text = phrase.text if first.pos_ == "PROPN" or first.text == "I" else first.text[:1].lower() + phrase.text[1:]
    rest_text = rest.text[:1].upper() + rest.text[1:]
    return f"{rest_text} {phrase_text}{last.text}"


# --- FactCC-style negatives --------------------------------------------------------------------


def entity_swap(claim: str, doc: Doc, pool: Pool, rng: np.random.Generator) -> str | None:
    """One named entity of the claim replaced by a different entity of the same NER label: from
    elsewhere in the same document (one not mentioned in the claim) or from another document, each
    tried first with even odds. None when the claim has no named entity with a replacement."""
    candidates = [span for entity in doc.ents if entity.label_ in NAMED_LABELS and (span := _without_possessive(entity))]
    for span in shuffled(candidates, rng):
        replacement = _entity_replacement(span, claim, pool, rng)
        if replacement is not None:
            return _splice(claim, span.start_char, span.end_char, replacement, capitalize=_is_sentence_start(span[0]))
    return None


def _entity_replacement(span: Span, claim: str, pool: Pool, rng: np.random.Generator) -> str | None:
    """A same-label entity for `span`: this document's or another's, in random order."""

    def accept(text: str) -> bool:
        return not _overlaps(text, span.text) and not _mentions(text, claim)

    own = [text for text in pool.own_entities(span.label_) if accept(text)]
    for source in shuffled(("own", "other"), rng):
        if source == "own" and own:
            return own[int(rng.integers(len(own)))]
        if source == "other":
            replacement = pool.draw(pool.pools.entities.get(span.label_, []), accept, rng)
            if replacement is not None:
                return replacement
    return None


def number_swap(claim: str, doc: Doc, pool: Pool, rng: np.random.Generator) -> str | None:
    """One number or date of the claim (an entity labelled CARDINAL, DATE, MONEY, PERCENT,
    QUANTITY, TIME or ORDINAL, or a digit token outside any entity) given a different value of the
    same kind (`change_value`); an entity without digits or number words ("the summer") takes a
    same-label entity of another document instead, unless it modifies a noun ("summer camp").
    Only that value changes."""
    candidates: list[Span] = [entity for entity in doc.ents if entity.label_ in NUMBER_LABELS]
    candidates += [doc[t.i : t.i + 1] for t in doc if t.ent_iob_ == "O" and any(c.isdigit() for c in t.text)]
    for span in shuffled(candidates, rng):
        label = span.label_ or "CARDINAL"
        new = change_value(span.text, label, rng)
        if new is None and span.root.dep_ not in MODIFIER_DEPS:
            new = pool.draw(pool.pools.entities.get(label, []), lambda t, s=span: not _overlaps(t, s.text), rng)
            if new is not None:
                new = _keep_case(span.text, new) if _is_sentence_start(span[0]) else new
        if new is not None and new != span.text:
            return _splice(claim, span.start_char, span.end_char, new)
    return None


def change_value(text: str, label: str, rng: np.random.Generator) -> str | None:
    """`text` with one value changed: a digit group (`new_number`), else a number word, ordinal
    word, month or weekday (another of its list, same case). None when it holds none of these."""
    numbers = list(NUMBER_PATTERN.finditer(text))
    if numbers:
        match = numbers[int(rng.integers(len(numbers)))]
        value = new_number(match.group(), label, rng)
        suffix = ORDINAL_SUFFIX.match(text, match.end())
        if suffix:
            return text[: match.start()] + value + _ordinal_suffix(int(value)) + text[suffix.end() :]
        return text[: match.start()] + value + text[match.end() :]
    words = [
        (match, values)
        for match in VALUE_WORD.finditer(text)
        for values in VALUE_WORD_LISTS
        if match.group().lower() in _lower(values)
    ]
    if not words:
        return None
    match, values = words[int(rng.integers(len(words)))]
    others = [v for v in values if v.lower() != match.group().lower()]
    new = _keep_case(match.group(), others[int(rng.integers(len(others)))])
    return text[: match.start()] + new + text[match.end() :]


def _lower(values: Sequence[str]) -> list[str]:
    return [value.lower() for value in values]


def new_number(number: str, label: str, rng: np.random.Generator) -> str:
    """A different number in the same format (thousands commas, decimal places).

    Years (1000-2100 without commas) move by 1-10 years; days in a DATE (up to 31) become another
    day 1-28; other numbers under 10 another digit 1-9; larger ones are scaled by 0.5-1.5."""
    places = len(number.partition(".")[2])
    value = float(number.replace(",", ""))
    if places == 0 and "," not in number and 1000 <= value <= 2100:
        offset = int(rng.integers(1, 11)) * (1 if rng.random() < 0.5 else -1)
        new = value + offset
    elif places == 0 and label in {"DATE", "TIME"} and value <= 31:
        new = float(_other_integer(int(value), 1, 28, rng))
    elif places == 0 and value < 10:
        new = float(_other_integer(int(value), 1, 9, rng))
    else:
        new = round(value * rng.uniform(0.5, 1.5), places)
        if new == value or new <= 0:
            new = value + 10**-places if places else value + 1
    if places:
        return f"{new:,.{places}f}" if "," in number else f"{new:.{places}f}"
    return f"{int(new):,}" if "," in number else str(int(new))


def _other_integer(value: int, low: int, high: int, rng: np.random.Generator) -> int:
    choices = [n for n in range(low, high + 1) if n != value]
    return choices[int(rng.integers(len(choices)))]


def _ordinal_suffix(value: int) -> str:
    if value % 100 in {11, 12, 13}:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(value % 10, "th")


def pronoun_swap(claim: str, doc: Doc, pool: Pool, rng: np.random.Generator) -> str | None:
    """One pronoun swapped for another person, case kept: he<->she, him<->her, his<->her,
    himself<->herself; they/them/their -> he/she forms where no verb agreement changes ("they"
    only as the subject of a past-tense or modal verb, not with "all"/"both"/"together")."""
    swaps = [(token, new) for token in doc if (new := _pronoun_replacement(token, rng)) is not None]
    if not swaps:
        return None
    token, new = swaps[int(rng.integers(len(swaps)))]
    return _splice(claim, token.idx, token.idx + len(token.text), _keep_case(token.text, new))


def _pronoun_replacement(token: Token, rng: np.random.Generator) -> str | None:
    word = token.lower_
    if token.tag_ not in {"PRP", "PRP$"}:
        return None
    if word in GENDER_SWAPS:
        return GENDER_SWAPS[word]
    if word in POSSESSIVE_SWAPS:
        return POSSESSIVE_SWAPS[word] if token.tag_ == "PRP$" else OBJECT_SWAPS[word]
    gender = int(rng.integers(2))
    if word in PLURAL_SWAPS:
        return PLURAL_SWAPS[word][gender]
    if word == "they" and _singular_subject_fits(token):
        return ("he", "she")[gender]
    return None


def _singular_subject_fits(pronoun: Token) -> bool:
    """True when "they" -> "he" needs no other change: the subject of a past-tense verb (not
    "were") or of a modal, without a plural marker ("all", "together") on the verb or pronoun."""
    verb = pronoun.head
    if pronoun.dep_ not in {"nsubj", "nsubjpass"} or verb.i < pronoun.i:
        return False
    auxiliaries = [c for c in verb.children if c.dep_ in {"aux", "auxpass"} and c.i < verb.i]
    agreeing = auxiliaries[0] if auxiliaries else verb
    if agreeing.tag_ not in {"VBD", "MD"} or agreeing.lower_ == "were":
        return False
    nearby = list(verb.children) + list(pronoun.children)
    return not any(t.lower_ in PLURAL_MARKERS for t in nearby)


def negation(claim: str, doc: Doc, pool: Pool, rng: np.random.Generator) -> str | None:
    """The first sentence that allows it negated or un-negated, at its main verb.

    An existing "not"/"n't"/"never" is removed ("did not open" -> "opened", "can't" -> "can").
    Otherwise "not" goes after the first auxiliary ("has not won", "is also not"), or with
    do-support when the main verb stands alone ("opened" -> "did not open"); do-support is used
    only when the verb's lemma inflects back to the verb itself, and only with the subject
    before the verb. Imperatives, questions and verbless sentences are not applicable."""
    for sentence in doc.sents:
        edited = _remove_negation(doc, sentence)
        if edited is None:
            edited = _add_negation(doc, sentence.root)
        if edited is not None:
            return edited
    return None


def _remove_negation(doc: Doc, sentence: Span) -> str | None:
    negator = next((t for t in sentence if t.dep_ == "neg" and t.lower_ in NEGATORS), None)
    if negator is None:
        return None
    text = doc.text
    verb = negator.head
    helper = doc[negator.i - 1] if negator.i > 0 else None
    if (
        helper is not None
        and helper.lower_ in DO_FORMS
        and helper.head.i == verb.i
        and verb.i == negator.i + 1
        and verb.tag_ == "VB"
        and verb.lemma_.isalpha()
    ):
        form = _keep_case(helper.text, inflect(verb.lemma_, DO_FORMS[helper.lower_]))
        return text[: helper.idx] + form + text[verb.idx + len(verb.text) :]
    if negator.lower_ == "n't" and helper is not None and helper.lower_ in CONTRACTED_NEGATION_HOSTS:
        host = _keep_case(helper.text, CONTRACTED_NEGATION_HOSTS[helper.lower_])
        return text[: helper.idx] + host + text[negator.idx + len(negator.text) :]
    if negator.lower_ == "n't" and helper is not None and helper.lower_ == "ai":
        return None  # "ain't": no single positive form
    return _remove_tokens(doc, negator.i, negator.i)


def _add_negation(doc: Doc, verb: Token) -> str | None:
    text = doc.text
    subjects = [c for c in verb.children if c.dep_ in SUBJECT_DEPS]
    if not subjects or subjects[0].i > verb.i:
        return None
    auxiliaries = [c for c in verb.children if c.dep_ in {"aux", "auxpass"} and c.i < verb.i and c.tag_ != "TO"]
    if auxiliaries and auxiliaries[0].i > subjects[0].i:
        anchor = auxiliaries[0]
    elif verb.pos_ == "AUX" and verb.tag_ in {"VBZ", "VBD", "VBP", "MD"}:
        anchor = verb  # copula: "is", "was"
    elif verb.pos_ == "VERB" and verb.tag_ in DO_SUPPORT:
        helper, form = DO_SUPPORT[verb.tag_]
        lemma = verb.lemma_.lower()
        if not lemma.isalpha() or inflect(lemma, form) != verb.lower_:
            return None  # the lemma would not give the verb back: do-support unreliable here
        return text[: verb.idx] + f"{helper} not {lemma}" + text[verb.idx + len(verb.text) :]
    else:
        return None
    if anchor.lower_ == "can":
        return text[: anchor.idx + len(anchor.text)] + "not" + text[anchor.idx + len(anchor.text) :]
    after = anchor
    while after.i + 1 < len(doc) and doc[after.i + 1].lower_ in ADVERBS_BEFORE_NOT:
        after = doc[after.i + 1]
    end = after.idx + len(after.text)
    return text[:end] + " not" + text[end:]


def other_document(claim: str, doc: Doc, pool: Pool, rng: np.random.Generator) -> str | None:
    """As many consecutive sentences of a random other document as the claim has (fewer if that
    document is shorter); the premise stays that of the claim. None without another document."""
    other = pool.other_document(rng)
    if other is None:
        return None
    sentences = pool.pools.sentences[other]
    count = min(max(len(split_sentences(claim)), 1), len(sentences))
    start = int(rng.integers(len(sentences) - count + 1))
    return " ".join(sentences[start : start + count])


# --- FactEdit-style negatives ------------------------------------------------------------------


def factedit(element: str) -> Callable[[str, Doc, Pool, np.random.Generator], str | None]:
    """The FactEdit transform for one triple element ("subject", "relation" or "object")."""
    position = TRIPLE_ELEMENTS.index(element)

    def transform(claim: str, doc: Doc, pool: Pool, rng: np.random.Generator) -> str | None:
        for triple in shuffled(extract_triples(doc), rng):
            span = _element_span(doc, triple, position)
            if span is None:
                continue
            replacement = _element_replacement(element, span, triple, claim, pool, rng)
            if replacement is not None:
                return _splice(claim, span.start_char, span.end_char, replacement, capitalize=_is_sentence_start(span[0]))
        return None

    transform.__name__ = f"factedit_{element}"
    transform.__doc__ = (
        f"The {element} of one of the claim's triples replaced by the {element} of a triple from another "
        "document, same NER label and head tag preferred (`element_keys`); None when no triple has a "
        f"contiguous {element} with a replacement."
    )
    return transform


def _element_replacement(
    element: str, span: Span, triple: Triple, claim: str, pool: Pool, rng: np.random.Generator
) -> str | None:
    def accept(text: str) -> bool:
        if element == "relation":
            return text.lower() != span.text.lower() and text.split()[0].lower() != span[0].lower_
        return not _overlaps(text, span.text) and not _mentions(text, claim)

    for key in element_keys(element, span, triple):
        replacement = pool.draw(pool.pools.elements.get(key, []), accept, rng)
        if replacement is not None:
            return replacement
    return None


# --- inserted details --------------------------------------------------------------------------------------


def phrase_insertion(claim: str, doc: Doc, pool: Pool, rng: np.random.Generator) -> str | None:
    """A modifier of another document (`modifier_phrases`) inserted at the end of one of the claim's sentences,
    before its final punctuation: a detail the premise does not state. None when no sentence ends in
    punctuation or no phrase qualifies (it must not be in the claim already)."""
    ends = [sentence[-1] for sentence in doc.sents if sentence[-1].text in SENTENCE_END and len(sentence) > 2]
    if not ends:
        return None
    phrase = pool.draw(pool.pools.phrases, lambda text: text.lower() not in claim.lower(), rng)
    if phrase is None:
        return None
    end = ends[int(rng.integers(len(ends)))]
    return claim[: end.idx].rstrip() + " " + phrase + claim[end.idx :]


INSERTED_WORDS = (6, 30)  # an inserted sentence's length in words: a statement, not a heading or a paragraph


def sentence_insertion(claim: str, doc: Doc, pool: Pool, rng: np.random.Generator) -> str | None:
    """A sentence of another document (INSERTED_WORDS words) inserted after one of the claim's sentences: the claim
    stays supported but for one invented statement, the only words its token labels mark. None without another
    document with such a sentence that the claim lacks."""
    other = pool.other_document(rng)
    if other is None:
        return None
    low, high = INSERTED_WORDS
    candidates = [
        text for text in pool.pools.sentences[other] if low <= whitespace_word_count(text) <= high and text not in claim
    ]
    if not candidates:
        return None
    inserted = candidates[int(rng.integers(len(candidates)))]
    ends = [sentence.end_char for sentence in doc.sents]
    at = ends[int(rng.integers(len(ends)))]
    return claim[:at].rstrip() + " " + inserted + claim[at:]


# --- PAWS-style argument swaps -----------------------------------------------------------------------------

MAX_SWAP_TOKENS = 6  # an argument longer than this is a clause, not a name: swapping it reads as noise


def argument_swap(claim: str, doc: Doc, pool: Pool, rng: np.random.Generator) -> str | None:
    """Two arguments swap places, every word kept (PAWS, Zhang et al., 2019): the subject and the direct object of
    one predicate when both are names (proper nouns or named entities: "Jessie hugged Lion" -> "Lion hugged
    Jessie"), the objects of "from" and "to" on one head ("from 1990 to 1995" -> "from 1995 to 1990"), or two
    named entities of one type in one sentence ("Smith told Jones that Brown won" -> "Brown told Jones that Smith
    won"). No pronoun moves (its case would change), arguments of at most MAX_SWAP_TOKENS tokens, and the two texts
    must differ; None when no pair qualifies."""
    pairs = []
    for sentence in doc.sents:
        entities = [entity for entity in sentence.ents if entity.label_ in NAMED_LABELS]
        pairs += [
            (first, second)
            for index, first in enumerate(entities)
            for second in entities[index + 1 :]
            if first.label_ == second.label_
        ]
    for head in doc:
        subjects = [c for c in head.children if c.dep_ == "nsubj"]
        objects = [c for c in head.children if c.dep_ == "dobj"]
        if subjects and objects and all(_is_name(t) for t in (subjects[0], objects[0])):
            pairs.append((_argument(subjects[0]), _argument(objects[0])))
        preps = {c.lower_: c for c in head.children if c.dep_ == "prep"}
        if all(word in preps for word in SWAP_PREPOSITIONS):
            found = [[c for c in preps[word].children if c.dep_ == "pobj"] for word in SWAP_PREPOSITIONS]
            if all(found):
                pairs.append((_argument(found[0][0]), _argument(found[1][0])))
    for first, second in shuffled(pairs, rng):
        first, second = sorted((first, second), key=lambda span: span.start)
        if not _swappable(first, second):
            continue
        new_first, new_second = second.text, first.text
        if _is_sentence_start(first[0]):  # the sentence's capital goes with the position, not the words
            new_first = new_first[:1].upper() + new_first[1:]
            new_second = new_second if first[0].pos_ == "PROPN" or first[0].ent_type_ else new_second[:1].lower() + new_second[1:]
        return (
            claim[: first.start_char]
            + new_first
            + claim[first.end_char : second.start_char]
            + new_second
            + claim[second.end_char :]
        )
    return None


def _is_name(token: Token) -> bool:
    return token.pos_ == "PROPN" or token.ent_type_ in NAMED_LABELS


def _argument(token: Token) -> Span:
    return token.doc[token.left_edge.i : token.right_edge.i + 1]


def _swappable(first: Span, second: Span) -> bool:
    return (
        first.end <= second.start
        and max(len(first), len(second)) <= MAX_SWAP_TOKENS
        and first.text.lower() != second.text.lower()
        and not any(t.tag_ in {"PRP", "PRP$", "WP", "WP$"} for t in (*first, *second))
        and "\n" not in first.text + second.text
    )


TRANSFORM_FUNCTIONS: dict[str, Callable[[str, Doc, Pool, np.random.Generator], str | None]] = {
    "keep": keep,
    "paraphrase": paraphrase,
    "entity_swap": entity_swap,
    "number_swap": number_swap,
    "pronoun_swap": pronoun_swap,
    "negation": negation,
    "argument_swap": argument_swap,
    "phrase_insertion": phrase_insertion,
    "sentence_insertion": sentence_insertion,
    "other_document": other_document,
    "factedit_subject": factedit("subject"),
    "factedit_relation": factedit("relation"),
    "factedit_object": factedit("object"),
}  # claim_removed edits the premise, not the claim: see factlab.train.synthetic.pairs
