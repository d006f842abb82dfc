"""Synthetic (premise, claim) pairs for training the alignment model (AlignScore-style): the entry point
`make_synthetic_pairs`, which cuts claims and premises from real documents, applies the transforms
(factlab.train.synthetic.transforms) and labels the pairs.

A claim is 1..`max_claim_sentences` consecutive sentences of a document. Premises are chunk-sized, as real
summaries are scored against ~350-word source chunks: a window of consecutive document sentences of at most
`premise_words` words (or the claim, if longer) that contains the claim at a random position; a document shorter
than that is used whole. `claim_removed` deletes the claim from the premise instead of editing the claim.

Labels: positives 1 / aligned (0); swaps, negation and FactEdit 0 / contradiction (2); `phrase_insertion`,
`sentence_insertion`, `other_document` and `claim_removed` 0 / neutral (1), so the model learns that unsupported
is not the same as contradicted.

Each claim is kept positive with probability `positive_share`; its transforms are then tried in a random order
until one applies. Every attempt is counted (`<name>.tried`, `.applied`, `.not_applicable`), so
`tried == applied + not_applicable` and nothing fails silently. Output is deterministic given the seed: one
`numpy.random.Generator` drives every choice, and no Python set decides any order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from factlab.errors import ConfigError, DataError
from factlab.runtime import load_spacy
from factlab.text.sentences import Sentence, split_sentences
from factlab.text.words import whitespace_word_count
from factlab.train.synthetic.transforms import TRANSFORM_FUNCTIONS, Pool, build_pools, shuffled

POSITIVE_TRANSFORMS = ("keep", "paraphrase")
NEGATIVE_TRANSFORMS = (
    "entity_swap",
    "number_swap",
    "pronoun_swap",
    "negation",
    "argument_swap",
    "phrase_insertion",
    "sentence_insertion",
    "other_document",
    "claim_removed",
    "factedit_subject",
    "factedit_relation",
    "factedit_object",
)
TRANSFORMS = POSITIVE_TRANSFORMS + NEGATIVE_TRANSFORMS
# label_bin (1 consistent / 0 not), label_3way (0 aligned, 1 neutral, 2 contradiction)
LABELS: dict[str, tuple[int, int]] = {
    "keep": (1, 0),
    "paraphrase": (1, 0),
    "other_document": (0, 1),
    "claim_removed": (0, 1),
    "phrase_insertion": (0, 1),
    "sentence_insertion": (0, 1),
} | {
    name: (0, 2)
    for name in NEGATIVE_TRANSFORMS
    if name not in {"other_document", "claim_removed", "phrase_insertion", "sentence_insertion"}
}
FACTCC_TASK = "synthetic_factcc"
FACTEDIT_TASK = "synthetic_factedit"
PAIR_COLUMNS = (
    "pair_id",
    "doc_id",
    "origin",
    "text_a",
    "text_b",
    "label_bin",
    "label_3way",
    "task",
    "transform",
    "original_claim",
)

MIN_CLAIM_WORDS = 4  # "Yes! said Lion." is no claim worth checking


@dataclass(frozen=True)
class SyntheticSettings:
    premise_words: int = 350  # premise = a window of about this many words of the document around the claim
    max_claim_sentences: int = 3  # claims are 1..this many consecutive sentences
    claims_per_document: int = 2
    positive_share: float = 0.5  # share of claims kept positive (as-is or lightly paraphrased)
    seed: int = 2022
    negatives: tuple[str, ...] = NEGATIVE_TRANSFORMS  # the negative transforms in use


# --- premises ----------------------------------------------------------------------------------


def premise_window(
    word_counts: Sequence[int], start: int, end: int, premise_words: int, rng: np.random.Generator
) -> tuple[int, int]:
    """Sentence range [lo, hi) around the claim sentences [start, end) holding at most
    `premise_words` words (or just the claim, if longer), with a random share of the room before
    the claim; the whole document when it fits."""
    n = len(word_counts)
    if sum(word_counts) <= premise_words:
        return 0, n
    used = sum(word_counts[start:end])
    room_before = int(rng.integers(0, max(premise_words - used, 0) + 1))
    lo, hi, limit = start, end, used + room_before
    while lo > 0 and used + word_counts[lo - 1] <= limit:
        lo -= 1
        used += word_counts[lo]
    while hi < n and used + word_counts[hi] <= premise_words:
        used += word_counts[hi]
        hi += 1
    while lo > 0 and used + word_counts[lo - 1] <= premise_words:
        lo -= 1
        used += word_counts[lo]
    return lo, hi


def _text_of(text: str, sentences: Sequence[Sentence], lo: int, hi: int) -> str:
    return text[sentences[lo].start : sentences[hi - 1].end] if hi > lo else ""


def _claim_removed_premise(
    text: str, sentences: Sequence[Sentence], start: int, end: int, premise_words: int, rng: np.random.Generator
) -> str:
    """The premise window filled as if the claim had no words, then the claim sentences cut out."""
    counts = [0 if start <= i < end else whitespace_word_count(s.text) for i, s in enumerate(sentences)]
    lo, hi = premise_window(counts, start, end, premise_words, rng)
    parts = [_text_of(text, sentences, lo, start), _text_of(text, sentences, end, hi)]
    return " ".join(part for part in parts if part)


# --- the pipeline ------------------------------------------------------------------------------


@dataclass
class _Counter:
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, key: str, amount: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + amount


def _check(documents: pd.DataFrame, settings: SyntheticSettings, origin_column: str) -> None:
    missing = [c for c in ("doc_id", "text", origin_column) if c not in documents.columns]
    if missing:
        raise DataError(f"documents lack the columns {missing}; they have {list(documents.columns)}")
    for row, text in enumerate(documents["text"]):
        if not isinstance(text, str):
            raise DataError(f"document text must be a string, got {type(text).__name__}", record=row, field="text")
    if settings.premise_words < 1 or settings.max_claim_sentences < 1 or settings.claims_per_document < 0:
        raise ConfigError(f"premise_words, max_claim_sentences must be >= 1, claims_per_document >= 0: {settings}")
    if not 0.0 <= settings.positive_share <= 1.0:
        raise ConfigError(f"positive_share must be in [0, 1], got {settings.positive_share}")
    unknown = [name for name in settings.negatives if name not in NEGATIVE_TRANSFORMS]
    if unknown or not settings.negatives:
        raise ConfigError(f"negatives must be a non-empty subset of {NEGATIVE_TRANSFORMS}, got {settings.negatives}")


def claim_spans(sentences: Sequence[Sentence], settings: SyntheticSettings, rng: np.random.Generator) -> list[tuple[int, int]]:
    """Up to `claims_per_document` distinct runs [start, end) of 1..max_claim_sentences sentences
    with at least MIN_CLAIM_WORDS words, drawn uniformly among all such runs."""
    spans = [
        (start, start + length)
        for length in range(1, settings.max_claim_sentences + 1)
        for start in range(len(sentences) - length + 1)
        if sum(whitespace_word_count(s.text) for s in sentences[start : start + length]) >= MIN_CLAIM_WORDS
    ]
    count = min(settings.claims_per_document, len(spans))
    return [spans[int(i)] for i in rng.choice(len(spans), size=count, replace=False)] if count else []


def make_synthetic_pairs(
    documents: pd.DataFrame, settings: SyntheticSettings, origin_column: str = "origin"
) -> tuple[pd.DataFrame, dict[str, int]]:
    """Synthetic (premise, claim) pairs from documents with columns doc_id, text, `origin_column`.

    Returns the pairs (columns `PAIR_COLUMNS`: doc_id, origin, text_a = premise, text_b = claim,
    label_bin, label_3way, task, transform, the original claim) and counts: documents, claims,
    pairs, claims for which no transform applied, and per transform `<name>.tried`,
    `<name>.applied`, `<name>.not_applicable`."""
    _check(documents, settings, origin_column)
    rng = np.random.default_rng(settings.seed)
    texts = documents["text"].tolist()
    sentences = [split_sentences(text) for text in texts]
    nlp = load_spacy(disable=())
    pools = build_pools(list(nlp.pipe(texts, batch_size=16)), sentences)
    plans = [(index, span) for index, document in enumerate(sentences) for span in claim_spans(document, settings, rng)]
    claims = [_text_of(texts[index], sentences[index], *span) for index, span in plans]
    counter = _Counter({"documents": len(texts), "claims": len(claims), "pairs": 0, "claims_without_transform": 0})
    for name in TRANSFORMS:
        for outcome in ("tried", "applied", "not_applicable"):
            counter.add(f"{name}.{outcome}", 0)
    rows = []
    for (index, (start, end)), claim, claim_doc in zip(plans, claims, nlp.pipe(claims, batch_size=32), strict=True):
        text, document = texts[index], sentences[index]
        lo, hi = premise_window([whitespace_word_count(s.text) for s in document], start, end, settings.premise_words, rng)
        window = _text_of(text, document, lo, hi)
        positive = bool(rng.random() < settings.positive_share)
        for name in shuffled(POSITIVE_TRANSFORMS if positive else settings.negatives, rng):
            counter.add(f"{name}.tried")
            premise, new_claim = window, None
            if name == "claim_removed":
                premise = _claim_removed_premise(text, document, start, end, settings.premise_words, rng)
                new_claim = claim if premise and claim not in premise else None
            else:
                new_claim = TRANSFORM_FUNCTIONS[name](claim, claim_doc, Pool(pools, index), rng)
                if new_claim == claim and name not in POSITIVE_TRANSFORMS:
                    new_claim = None  # an edit that changed nothing is no negative
            if new_claim is None:
                counter.add(f"{name}.not_applicable")
                continue
            counter.add(f"{name}.applied")
            rows.append(_pair_row(documents, index, origin_column, (start, end), premise, new_claim, name, claim))
            break
        else:
            counter.add("claims_without_transform")
    counter.counts["pairs"] = len(rows)
    return pd.DataFrame(rows, columns=list(PAIR_COLUMNS)), counter.counts


def _pair_row(
    documents: pd.DataFrame,
    index: int,
    origin_column: str,
    span: tuple[int, int],
    premise: str,
    claim: str,
    name: str,
    original: str,
) -> dict[str, object]:
    label_bin, label_3way = LABELS[name]
    doc_id = documents["doc_id"].iloc[index]
    return {
        "pair_id": f"{doc_id}#s{span[0]}-{span[1]}",  # the claim's sentences [start, end)
        "doc_id": doc_id,
        "origin": documents[origin_column].iloc[index],
        "text_a": premise,
        "text_b": claim,
        "label_bin": label_bin,
        "label_3way": label_3way,
        "task": FACTEDIT_TASK if name.startswith("factedit_") else FACTCC_TASK,
        "transform": name,
        "original_claim": original,
    }
