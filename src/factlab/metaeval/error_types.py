"""Error types on FRANK: does a scorer say what kind of error a summary makes?

FRANK (Pagnoni et al., 2021) gives, per summary, the share of its sentences free of each error category
(`data/human_annotations.json`: RelE, EntE, CircE, OutE, CorefE, LinkE, GramE, ...); a category is *present*
when that share is below 1. For each category T the question is binary, "does this summary have an error of
type T?", and a score that answers it is measured by ROC AUC and by F1 at a threshold tuned on FRANK's
validation split (never the reported test split).

Scores of the aligner's type head (factlab.models.aligner.ERROR_TYPES): per output sentence its
P(unsupported) = 1 - support and its distribution over types; a summary's score for T is the largest, over
its sentences, of P(unsupported) x P(T) (`summary_type_scores`): an unsupported sentence of type T.

Baselines, on the same summaries:
- majority: every summary gets the same score (AUC 0.5; F1 of flagging all, the presence rate's F1);
- rule (`RULES`): the share of the summary's words of the category's kind that its source lacks (lemmas,
  lower-cased): entity nouns and proper nouns (EntE), numbers, months and weekdays (CircE), verbs (RelE),
  content words (OutE), and the count of third-person pronouns (CorefE); the share of novel content a
  reader would check first.

The confusion matrix compares the predicted top type (the largest summary score) with the annotated type on
the summaries that have exactly one of the evaluated categories.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from factlab.metaeval.detection import roc_auc
from factlab.metaeval.errors import StatisticsError
from factlab.metaeval.inputs import as_float_vector, require_no_nan, require_same_length
from factlab.metaeval.localisation import token_f1  # the F1 of flagged positives, zero where undefined

EVALUATED_TYPES = ("EntE", "CircE", "RelE", "OutE", "CorefE")
MONTHS_AND_DAYS = frozenset(
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday".split()
)
PRONOUNS = frozenset("he she him her his hers himself herself they them their theirs themselves it its itself".split())
CONTENT_POS = frozenset({"NOUN", "PROPN", "VERB", "ADJ", "NUM", "ADV"})


@dataclass(frozen=True)
class Word:
    """One word of a parsed text: lower-cased text and lemma, and its universal part of speech."""

    lower: str
    lemma: str
    pos: str


def category_present(free_share: ArrayLike) -> NDArray[np.int64]:
    """1 where a summary has an error of the category (its share of error-free sentences is below 1)."""
    values = as_float_vector(free_share, "free_share")
    require_no_nan(values, "free_share")
    return (values < 1.0).astype(np.int64)


def summary_type_scores(sentences: Sequence[Mapping], types: Sequence[str] = EVALUATED_TYPES) -> dict[str, float]:
    """max over sentences of (1 - support) x P(type): one score per type (NaN without sentences or types)."""
    scores = {name: np.nan for name in types}
    for sentence in sentences:
        distribution = sentence.get("error_types")
        if distribution is None:
            continue
        unsupported = 1.0 - float(sentence["support"])
        for name in types:
            value = unsupported * float(distribution.get(name, 0.0))
            scores[name] = value if np.isnan(scores[name]) else max(scores[name], value)
    return scores


def _novel_share(output: Iterable[Word], source_lemmas: set[str], keep: Callable[[Word], bool]) -> float:
    chosen = [word for word in output if keep(word)]
    novel = sum(word.lemma not in source_lemmas and word.lower not in source_lemmas for word in chosen)
    return novel / len(chosen) if chosen else 0.0


RULES = {
    "EntE": lambda output, source: _novel_share(output, source, lambda w: w.pos in {"PROPN", "NOUN"}),
    "CircE": lambda output, source: _novel_share(
        output, source, lambda w: w.pos == "NUM" or any(c.isdigit() for c in w.lower) or w.lower in MONTHS_AND_DAYS
    ),
    "RelE": lambda output, source: _novel_share(output, source, lambda w: w.pos == "VERB"),
    "OutE": lambda output, source: _novel_share(output, source, lambda w: w.pos in CONTENT_POS),
    "CorefE": lambda output, source: float(sum(word.lower in PRONOUNS for word in output)),
}


def rule_scores(output: Sequence[Word], source: Sequence[Word]) -> dict[str, float]:
    """Each evaluated category's rule score of one summary against its source (`RULES`)."""
    lemmas = {word.lemma for word in source} | {word.lower for word in source}
    return {name: float(RULES[name](output, lemmas)) for name in EVALUATED_TYPES}


def best_f1_threshold(present: ArrayLike, score: ArrayLike) -> float:
    """The threshold t maximising the F1 of `score >= t` for presence; candidates: every distinct score (ties: the
    highest threshold, fewest flags)."""
    gold = np.asarray(present, dtype=np.int64)
    values = as_float_vector(score, "score")
    require_same_length(present=gold, score=values)
    require_no_nan(values, "score")
    if len(values) == 0:
        raise StatisticsError("no summaries to tune a threshold on")
    best, best_f1 = float(values.max()), -1.0
    for candidate in np.unique(values)[::-1]:
        flagged = values >= candidate
        f1 = token_f1(gold, flagged.astype(np.int64))
        if f1 > best_f1:
            best, best_f1 = float(candidate), f1
    return best


def presence_auc(present: ArrayLike, score: ArrayLike) -> float:
    """ROC AUC of `score` for the summaries with the error (factlab.metaeval.detection.roc_auc, class 1 = present)."""
    return roc_auc(present, score)


def confusion(top_types: Sequence[str], annotated: Sequence[str], types: Sequence[str] = EVALUATED_TYPES) -> NDArray[np.int64]:
    """[annotated, predicted] counts over `types`."""
    index = {name: position for position, name in enumerate(types)}
    matrix = np.zeros((len(types), len(types)), dtype=np.int64)
    for predicted, gold in zip(top_types, annotated, strict=True):
        matrix[index[gold], index[predicted]] += 1
    return matrix
