"""Token-level localisation of unsupported content: which output tokens a scorer flags.

Conventions. Gold token labels follow the canonical schema (1 = supported, 0 = unsupported); the
class to find is *unsupported*, so precision, recall and F1 take unsupported tokens as positives
(`y_unsupported` = 1 − label). A sentence-level scorer localises by projection: each output token
inherits the support of the output sentence that contains it (by character offsets; see
`project_sentence_support`), and its unsupported score is 1 − support. A token is flagged iff the
support is below the threshold (`support < threshold`), the mirror of factlab.metaeval.detection,
where an output is predicted consistent iff `score >= threshold`; threshold policies are named as
there: `fixed05` (0.5), `val_tuned` (tuned on validation tokens, frozen), `oracle` (tuned on the
evaluated tokens; optimistic, labelled as such). A QA-level scorer (QASemConsistency) localises by its units
instead (`project_unit_support`): a token takes the lowest support among the units whose character spans overlap
it (a QA's predicate and answer), and a token no unit covers takes support 1, since no unit found it unsupported.
Tuning maximises token F1 over every distinct
observed support value and one value above the largest (flag everything); ties go to the lowest
threshold (fewest flags).

Character level (`character_prf`): precision, recall and F1 over characters, pooled over every output, as
RAGTruth and LettuceDetect report span localisation: precision = characters both flagged and unsupported /
characters flagged, recall = the same / characters unsupported. A flagged token contributes its characters
([start, end) in the output), an unsupported gold token its own; the whitespace between tokens belongs to no
token and is not counted. Unlike a criterion that takes a predicted span as right when it overlaps any gold span,
flagging a whole output gains recall only at the price of precision.

ROC AUC is the threshold-free view: the AUC of the unsupported score for unsupported tokens, i.e.
sklearn's `roc_auc_score(y_unsupported, 1 - support)`, computed exactly as the detection AUC of
support for supported tokens. Two floors stand beside every localiser: flag-all flags every token (recall 1,
precision = the share of unsupported tokens, or of unsupported characters), and the lexical floor flags each
token with a word the source lacks (`lexically_novel`). Agreement between annotators who marked the same outputs is
Fleiss' κ and Krippendorff's α over tokens (factlab.metaeval.agreement) and the mean over annotator
pairs of the token F1 of one against the other (symmetric in the pair).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from factlab.metaeval.agreement import fleiss_kappa, krippendorff_alpha_nominal, majority_agreement_share
from factlab.metaeval.detection import FIXED_THRESHOLD, roc_auc
from factlab.metaeval.errors import StatisticsError
from factlab.metaeval.inputs import as_float_vector, require_no_nan, require_same_length
from factlab.metaeval.variants import LOCALISATION_POLICIES
from factlab.models.token_localiser import word_parts


@dataclass(frozen=True)
class TokenScores:
    """Tokens' support projected from their sentences, which sentence each took, and how many lay outside all."""

    support: NDArray[np.float64]
    sentence_index: NDArray[np.int64]  # the sentence (or unit, -1 for none) each token took its support from
    n_outside: int


@dataclass(frozen=True)
class TokenPRF:
    """Precision, recall and F1 of flagged tokens against unsupported ones (0 where undefined, as sklearn's zero_division=0)."""

    precision: float
    recall: float
    f1: float
    n_tokens: int
    n_unsupported: int
    n_flagged: int
    true_positives: int


def _spans(offsets: ArrayLike, name: str) -> NDArray[np.int64]:
    """(n, 2) [start, end) character offsets with 0 <= start < end."""
    array = np.asarray(offsets, dtype=np.int64)
    if array.size == 0:
        return np.empty((0, 2), dtype=np.int64)
    if array.ndim != 2 or array.shape[1] != 2 or (array[:, 0] < 0).any() or (array[:, 1] <= array[:, 0]).any():
        raise StatisticsError(f"{name} must be [start, end) pairs with 0 <= start < end")
    return array


def project_sentence_support(token_offsets: ArrayLike, sentence_offsets: ArrayLike, sentence_support: ArrayLike) -> TokenScores:
    """Each token's support: that of the sentence sharing the most characters with it (the earlier on a tie).

    A token that overlaps no sentence (characters a sentence splitter left out) takes the nearest
    sentence by character distance (the earlier on a tie) and is counted in `n_outside`.
    """
    tokens = _spans(token_offsets, "token_offsets")
    sentences = _spans(sentence_offsets, "sentence_offsets")
    support = as_float_vector(sentence_support, "sentence_support")
    require_same_length(sentence_offsets=sentences, sentence_support=support)
    if len(sentences) == 0:
        raise StatisticsError("no sentences to project from")
    require_no_nan(support, "sentence_support")
    starts, ends = tokens[:, :1], tokens[:, 1:]
    overlap = np.minimum(ends, sentences[:, 1]) - np.maximum(starts, sentences[:, 0])
    best = np.argmax(overlap, axis=1)
    outside = overlap.max(axis=1, initial=0) <= 0
    if outside.any():
        distance = np.maximum(sentences[:, 0] - ends, starts - sentences[:, 1])
        best = np.where(outside, np.argmin(distance, axis=1), best)
    return TokenScores(support=support[best], sentence_index=best.astype(np.int64), n_outside=int(outside.sum()))


UNCOVERED_SUPPORT = 1.0


def project_unit_support(token_offsets: ArrayLike, unit_spans: Sequence[ArrayLike], unit_support: ArrayLike) -> TokenScores:
    """Each token's support: the lowest among the units with a span overlapping it (the earlier unit on a tie).

    `unit_spans[i]` holds unit i's [start, end) character spans (a QA: its predicate and its answer; none: a unit
    that localises nothing). A token that no unit covers takes UNCOVERED_SUPPORT (1: nothing found unsupported
    there), its `sentence_index` (the unit) is -1, and it is counted in `n_outside`.
    """
    tokens = _spans(token_offsets, "token_offsets")
    support = as_float_vector(unit_support, "unit_support")
    if len(unit_spans) != len(support):
        raise StatisticsError(f"unit_spans has {len(unit_spans)} units, unit_support {len(support)}")
    require_no_nan(support, "unit_support")
    token_support = np.full(len(tokens), np.nan)
    unit = np.full(len(tokens), -1, dtype=np.int64)
    for index, spans in enumerate(unit_spans):
        for start, end in _spans(spans, "unit_spans"):
            lower = (tokens[:, 0] < end) & (tokens[:, 1] > start) & ~(token_support <= support[index])
            token_support[lower], unit[lower] = support[index], index
    outside = unit < 0
    token_support[outside] = UNCOVERED_SUPPORT
    return TokenScores(support=token_support, sentence_index=unit, n_outside=int(outside.sum()))


def unsupported_from_labels(token_labels: ArrayLike, name: str = "token_labels") -> NDArray[np.int64]:
    """1 − label for canonical 0/1 token labels (1 = supported): 1 marks an unsupported token."""
    labels = as_float_vector(token_labels, name)
    require_no_nan(labels, name)
    if not np.isin(labels, (0.0, 1.0)).all():
        raise StatisticsError(f"{name} must hold only 0 and 1 (1 = supported)")
    return (1 - labels).astype(np.int64)


def _binary(values: ArrayLike, name: str) -> NDArray[np.int64]:
    array = as_float_vector(values, name)
    require_no_nan(array, name)
    if not np.isin(array, (0.0, 1.0)).all():
        raise StatisticsError(f"{name} must hold only 0 and 1")
    return array.astype(np.int64)


def token_prf(y_unsupported: ArrayLike, flagged: ArrayLike) -> TokenPRF:
    """Precision, recall, F1 of `flagged` (1 = flagged) for the unsupported class (1 = unsupported).

    Equal to sklearn's precision_recall_fscore_support(average="binary", pos_label=1, zero_division=0).
    """
    gold = _binary(y_unsupported, "y_unsupported")
    predicted = _binary(flagged, "flagged")
    require_same_length(y_unsupported=gold, flagged=predicted)
    if len(gold) == 0:
        raise StatisticsError("no tokens")
    tp = int((gold & predicted).sum())
    n_flagged, n_unsupported = int(predicted.sum()), int(gold.sum())
    precision = tp / n_flagged if n_flagged else 0.0
    recall = tp / n_unsupported if n_unsupported else 0.0
    f1 = 2 * tp / (n_flagged + n_unsupported) if n_flagged + n_unsupported else 0.0
    return TokenPRF(precision, recall, f1, len(gold), n_unsupported, n_flagged, tp)


def token_runs(flags: NDArray[np.int64], groups: NDArray[Any]) -> list[tuple[int, int]]:
    """[start, stop) index ranges of the maximal runs of 1s in `flags` that stay inside one group (output)."""
    runs, start = [], None
    for index, flag in enumerate(flags):
        if start is not None and (not flag or groups[index] != groups[index - 1]):
            runs.append((start, index))
            start = None
        if flag and start is None:
            start = index
    if start is not None:
        runs.append((start, len(flags)))
    return runs


@dataclass(frozen=True)
class CharacterPRF:
    """Precision, recall and F1 over the characters of flagged and of unsupported tokens (0 where undefined)."""

    precision: float
    recall: float
    f1: float
    n_characters: int
    n_unsupported: int
    n_flagged: int
    overlap: int  # characters both flagged and unsupported


def _token_lengths(token_lengths: ArrayLike) -> NDArray[np.int64]:
    lengths = np.asarray(token_lengths)
    if lengths.ndim != 1 or not np.issubdtype(lengths.dtype, np.integer) or (lengths <= 0).any():
        raise StatisticsError("token_lengths must be positive integers, one per token")
    return lengths.astype(np.int64)


def character_prf(y_unsupported: ArrayLike, flagged: ArrayLike, token_lengths: ArrayLike) -> CharacterPRF:
    """Character-overlap precision, recall and F1 of `flagged` tokens against unsupported ones, pooled over outputs.

    `token_lengths[i]` is token i's number of characters (end - start); the tokens of one output must not overlap,
    so that summing lengths counts each character once. Over all tokens: overlap = Σ length · flagged · unsupported,
    precision = overlap / Σ length · flagged, recall = overlap / Σ length · unsupported, F1 = 2 · overlap /
    (Σ length · flagged + Σ length · unsupported), their harmonic mean. This is LettuceDetect's
    `evaluate_detector_char_level` (RAGTruth's span metric) on token-aligned spans, less the whitespace inside a
    span: characters between tokens are neither flagged nor gold.
    """
    gold = _binary(y_unsupported, "y_unsupported")
    predicted = _binary(flagged, "flagged")
    lengths = _token_lengths(token_lengths)
    require_same_length(y_unsupported=gold, flagged=predicted, token_lengths=lengths)
    if len(gold) == 0:
        raise StatisticsError("no tokens")
    overlap = int((lengths * gold * predicted).sum())
    n_flagged, n_unsupported = int((lengths * predicted).sum()), int((lengths * gold).sum())
    precision = overlap / n_flagged if n_flagged else 0.0
    recall = overlap / n_unsupported if n_unsupported else 0.0
    f1 = 2 * overlap / (n_flagged + n_unsupported) if n_flagged + n_unsupported else 0.0
    return CharacterPRF(precision, recall, f1, int(lengths.sum()), n_unsupported, n_flagged, overlap)


def character_f1(y_unsupported: ArrayLike, flagged: ArrayLike, token_lengths: ArrayLike) -> float:
    """F1 of `character_prf` (a statistic for the document bootstrap)."""
    return character_prf(y_unsupported, flagged, token_lengths).f1


@dataclass(frozen=True)
class FlaggedPRF:
    """One set of flags scored over tokens and over characters."""

    tokens: TokenPRF
    characters: CharacterPRF


def flagged_prf(y_unsupported: ArrayLike, flagged: ArrayLike, token_lengths: ArrayLike) -> FlaggedPRF:
    """`token_prf` and `character_prf` of the same flags."""
    return FlaggedPRF(token_prf(y_unsupported, flagged), character_prf(y_unsupported, flagged, token_lengths))


def token_f1(y_unsupported: ArrayLike, flagged: ArrayLike) -> float:
    """F1 of `token_prf` (a statistic for the document bootstrap)."""
    return token_prf(y_unsupported, flagged).f1


def flag_tokens(support: ArrayLike, threshold: float) -> NDArray[np.int64]:
    """1 where support < threshold (flagged as unsupported), else 0."""
    values = as_float_vector(support, "support")
    require_no_nan(values, "support")
    return (values < threshold).astype(np.int64)


def flag_all_baseline(y_unsupported: ArrayLike, token_lengths: ArrayLike) -> FlaggedPRF:
    """Every token flagged: recall 1 (when any token is unsupported), precision = the share of unsupported tokens
    (of unsupported characters at the character level)."""
    gold = _binary(y_unsupported, "y_unsupported")
    return flagged_prf(gold, np.ones_like(gold), token_lengths)


def lexically_novel(tokens: Sequence[str], source: str) -> NDArray[np.int64]:
    """The lexical floor's flags: 1 for a token with a word (a lower-cased run of letters and digits) that no word of
    the source matches, else 0; a token without letters or digits (punctuation) is never flagged."""
    source_words = set(word_parts(source))
    return np.asarray([any(word not in source_words for word in word_parts(token)) for token in tokens], dtype=np.int64)


def tune_token_threshold(y_unsupported: ArrayLike, support: ArrayLike) -> float:
    """The threshold maximising token F1 of `support < threshold`; ties go to the lowest threshold.

    Candidates: every distinct support value (flags the tokens strictly below it) and the next float
    above the largest (flags every token).
    """
    gold = _binary(y_unsupported, "y_unsupported")
    values = as_float_vector(support, "support")
    require_same_length(y_unsupported=gold, support=values)
    require_no_nan(values, "support")
    if len(gold) == 0:
        raise StatisticsError("no tokens to tune a threshold on")
    candidates = np.append(np.unique(values), np.nextafter(values.max(), np.inf))
    order = np.argsort(values, kind="stable")
    sorted_values, sorted_gold = values[order], gold[order]
    flagged = np.searchsorted(sorted_values, candidates, side="left")  # tokens with support < candidate
    true_positives = np.concatenate([[0], np.cumsum(sorted_gold)])[flagged]
    denominator = flagged + gold.sum()
    f1 = np.divide(2 * true_positives, denominator, out=np.zeros(len(candidates)), where=denominator > 0)
    return float(candidates[int(np.argmax(f1))])


def token_roc_auc(y_unsupported: ArrayLike, support: ArrayLike) -> float:
    """ROC AUC of the unsupported score 1 − support for unsupported tokens (= sklearn roc_auc_score(y, 1 - support))."""
    gold = _binary(y_unsupported, "y_unsupported")
    return roc_auc(1 - gold, support)


def policy_threshold(
    policy: str,
    *,
    evaluated: tuple[ArrayLike, ArrayLike],
    validation: tuple[ArrayLike, ArrayLike] | None,
) -> float:
    """The threshold a named policy picks: 0.5, tuned on `validation`, or tuned on `evaluated` (oracle).

    Each pair is (y_unsupported, support).
    """
    if policy == "fixed05":
        return FIXED_THRESHOLD
    if policy == "val_tuned":
        if validation is None:
            raise StatisticsError("policy 'val_tuned' needs validation tokens")
        return tune_token_threshold(*validation)
    if policy == "oracle":
        return tune_token_threshold(*evaluated)
    raise StatisticsError(f"unknown threshold policy {policy!r}; choose one of {LOCALISATION_POLICIES}")


def document_split(doc_ids: ArrayLike, val_fraction: float, seed: int) -> list[str]:
    """The validation documents of a seeded split: round(val_fraction · n) of the sorted distinct ids, drawn
    by numpy's default_rng(seed), returned sorted. The rest are evaluated."""
    if not 0.0 < val_fraction < 1.0:
        raise StatisticsError(f"val_fraction must be in (0, 1), got {val_fraction}")
    documents = np.unique(np.asarray(doc_ids, dtype=str))
    n_validation = round(val_fraction * len(documents))
    if not 0 < n_validation < len(documents):
        raise StatisticsError(f"a {val_fraction} split of {len(documents)} documents leaves one side empty")
    chosen = np.random.default_rng(seed).permutation(len(documents))[:n_validation]
    return sorted(documents[chosen].tolist())


@dataclass(frozen=True)
class TokenAgreement:
    """Agreement of annotators over tokens (rating slots, as with crowd workers)."""

    n_outputs: int
    n_tokens: int
    raters: int
    fleiss_kappa: float
    krippendorff_alpha: float
    majority_agreement_share: float
    mean_pairwise_f1: float
    pairwise_f1: dict[str, float]
    n_excluded_outputs: int  # outputs with fewer than `raters` annotators: not in κ and the majority share


def token_agreement(worker_labels: Sequence[ArrayLike]) -> TokenAgreement:
    """Agreement from one (annotators × tokens) 0/1 array per output (row i = rating slot i).

    Fleiss' κ and the majority share use the outputs with the most annotators; Krippendorff's α uses every
    token (missing slots allowed). Pairwise F1: for each pair of slots (i, j), the F1 of j's unsupported
    marks against i's, pooled over the tokens of the outputs both annotated; then the mean over pairs.
    """
    arrays = [np.atleast_2d(np.asarray(labels, dtype=float)) for labels in worker_labels]
    if not arrays:
        raise StatisticsError("no outputs to measure agreement on")
    raters = max(array.shape[0] for array in arrays)
    if raters < 2:
        raise StatisticsError("agreement needs at least 2 annotators")
    # tokens × raters, NaN where an output has fewer annotators.
    matrix = np.full((sum(array.shape[1] for array in arrays), raters), np.nan)
    row = 0
    for array in arrays:
        matrix[row : row + array.shape[1], : array.shape[0]] = array.T
        row += array.shape[1]
    complete = ~np.isnan(matrix).any(axis=1)
    pairwise = {}
    for i, j in itertools.combinations(range(raters), 2):
        both = ~np.isnan(matrix[:, i]) & ~np.isnan(matrix[:, j])
        pairwise[f"{i}-{j}"] = token_f1(1 - matrix[both, i], 1 - matrix[both, j])
    return TokenAgreement(
        n_outputs=len(arrays),
        n_tokens=len(matrix),
        raters=raters,
        fleiss_kappa=fleiss_kappa(matrix[complete]),
        krippendorff_alpha=krippendorff_alpha_nominal(matrix),
        majority_agreement_share=majority_agreement_share(matrix[complete]),
        mean_pairwise_f1=float(np.mean(list(pairwise.values()))),
        pairwise_f1=pairwise,
        n_excluded_outputs=sum(array.shape[0] < raters for array in arrays),
    )
