"""The aligner's token head at inference: which characters of a hypothesis its premise does not support.

`score_tokens` runs (premise, hypothesis) pairs through a trained aligner with a token head
(factlab.models.aligner, `token_head`) in the engine's batches (encoded, cut and padded as the engine
does: factlab.models.engine) and returns, per pair, the 3-way support and each kept hypothesis word
piece's character span in the hypothesis with its P(unsupported). Word pieces cut to fit
`max_length` have no probability: they are counted, never guessed.

`unsupported_phrases` turns one hypothesis's pieces into phrases a reader sees: pieces above the
threshold, grown to whole words (a word is as unsupported as its most unsupported piece; punctuation
stands alone), and words separated only by spaces merged, each phrase with its largest probability.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from tqdm import tqdm

from factlab.models.aligner import ALIGNED, ERROR_TYPES, AlignerScorer
from factlab.models.engine import (
    EngineSettings,
    encode_pairs,
    inference_context,
    length_batches,
    pad_batch,
    resolve_precision,
    scorer_template,
)

# A word: letters and digits, with inner apostrophes, hyphens and dots ("U.S.", "don't", "2.5"); any other
# character stands alone, so that a marked word does not take its sentence's full stop along.
WORD = re.compile(r"\w+(?:['\u2019.-]\w+)*|[^\w\s]")


@dataclass
class TokenResult:
    support: np.ndarray  # [pairs] P(aligned) of the 3-way head
    offsets: list[np.ndarray]  # per pair: (kept pieces, 2) [start, end) character spans in the hypothesis
    unsupported: list[np.ndarray]  # per pair: P(unsupported) of each kept piece
    hypothesis_pieces_cut: np.ndarray  # per pair: pieces of the hypothesis cut to fit (no probability)
    error_types: np.ndarray | None = None  # [pairs, len(ERROR_TYPES)]: the type head's distribution (None without it)


def hypothesis_piece_offsets(tokenizer: object, hypotheses: Sequence[str]) -> list[np.ndarray]:
    """Each hypothesis's word pieces' [start, end) character spans, the pieces the engine encodes."""
    encoded = tokenizer(list(hypotheses), add_special_tokens=False, return_offsets_mapping=True)  # type: ignore[operator]
    return [np.asarray(offsets, dtype=np.int64).reshape(-1, 2) for offsets in encoded["offset_mapping"]]


def score_tokens(
    scorer: AlignerScorer,
    pairs: Sequence[tuple[str, str]],
    settings: EngineSettings | None = None,
    description: str = "token pairs",
) -> TokenResult:
    """Support and per-piece P(unsupported) of every (premise, hypothesis) pair, in input order; one forward a batch."""
    settings = settings or EngineSettings()
    template = scorer_template(scorer)
    encoded = encode_pairs(scorer.tokenizer, pairs, scorer.max_length, template)
    distinct = sorted({hypothesis for _, hypothesis in pairs})
    piece_offsets = dict(zip(distinct, hypothesis_piece_offsets(scorer.tokenizer, distinct), strict=True))
    support = np.zeros(len(pairs), dtype=np.float64)
    unsupported: list[np.ndarray] = [np.empty(0)] * len(pairs)
    error_types = np.zeros((len(pairs), len(ERROR_TYPES)), dtype=np.float64) if scorer.has_type_head else None
    precision = resolve_precision(settings.precision, scorer.device)
    batches = length_batches(encoded.lengths.tolist(), settings.token_budget, settings.max_batch_pairs)
    with inference_context(precision, scorer.device):
        for batch in tqdm(batches, desc=description, unit="batch", disable=not settings.progress, mininterval=10):
            ids, mask, types = pad_batch(encoded, batch, scorer.tokenizer.pad_token_id, scorer.device)
            probabilities, token_probabilities, type_probabilities = scorer.sequence_and_tokens(ids, mask, types)
            probabilities, token_probabilities = probabilities.cpu().numpy(), token_probabilities.cpu().numpy()
            if error_types is not None and type_probabilities is not None:
                error_types[batch] = type_probabilities.cpu().numpy()
            first = len(template.prefix) + encoded.premise_kept[batch] + len(template.middle)
            for row, index in enumerate(batch):
                support[index] = probabilities[row, ALIGNED]
                start, kept = int(first[row]), int(encoded.hypothesis_kept[index])
                unsupported[index] = token_probabilities[row, start : start + kept].astype(np.float64)
    offsets = [piece_offsets[hypothesis][: len(values)] for (_, hypothesis), values in zip(pairs, unsupported, strict=True)]
    return TokenResult(support, offsets, unsupported, encoded.hypothesis_cut.copy(), error_types)


def phrases_from_pieces(pieces: Any, text: str, threshold: float) -> list[tuple[int, int, float]]:
    """`unsupported_phrases` of a score table's token detail (factlab.score.alignscore `tokens`: each word piece's
    start, end and support = 1 - P(unsupported)); none where the table has no token detail."""
    if pieces is None or isinstance(pieces, float) or len(pieces) == 0:
        return []
    offsets = np.asarray([[int(piece["start"]), int(piece["end"])] for piece in pieces], dtype=np.int64)
    unsupported = np.asarray([1.0 - float(piece["support"]) for piece in pieces])
    return unsupported_phrases(text, offsets, unsupported, threshold)


def word_unsupported(text: str, offsets: np.ndarray, unsupported: np.ndarray) -> list[tuple[int, int, float]]:
    """(start, end, P(unsupported)) of each word of `text` (`WORD`) that has pieces: its most unsupported piece."""
    words = []
    for match in WORD.finditer(text):
        inside = (offsets[:, 0] < match.end()) & (offsets[:, 1] > match.start()) if len(offsets) else np.zeros(0, bool)
        if inside.any():
            words.append((match.start(), match.end(), float(unsupported[inside].max())))
    return words


def unsupported_phrases(
    text: str, offsets: np.ndarray, unsupported: np.ndarray, threshold: float
) -> list[tuple[int, int, float]]:
    """(start, end, probability) of each phrase of flagged words (P(unsupported) > threshold, i.e. support below
    1 - threshold, the localisation analysis's rule); adjacent words merge."""
    phrases: list[list[float]] = []
    for start, end, probability in word_unsupported(text, offsets, unsupported):
        if probability <= threshold:
            continue
        if phrases and not text[int(phrases[-1][1]) : start].strip():
            phrases[-1][1], phrases[-1][2] = end, max(phrases[-1][2], probability)
        else:
            phrases.append([start, end, probability])
    return [(int(start), int(end), float(probability)) for start, end, probability in phrases]
