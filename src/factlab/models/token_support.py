"""The aligner's token head at inference: which characters of a hypothesis its premise does not support.

`score_tokens` runs (premise, hypothesis) pairs through a trained aligner with a token head
(factlab.models.aligner, `token_head`) in the engine's batches (encoded, cut and padded as the engine
does: factlab.models.engine) and returns, per pair, the 3-way support and each kept hypothesis word
piece's character span in the hypothesis with its P(unsupported). Word pieces cut to fit
`max_length` have no probability: they are counted, never guessed.

factlab.models.token_words reads the pieces as words and phrases.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from tqdm import tqdm

from factlab.batching import width_batches
from factlab.models.engine import (
    EngineSettings,
    batch_inputs,
    batch_token_budget,
    encode_pairs,
    host_array,
    resolve_precision,
    run_context,
    scorer_template,
    two_rows_at_least,
)
from factlab.models.protocols import ALIGNED, ERROR_TYPES

if TYPE_CHECKING:
    from factlab.models.aligner import AlignerScorer


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
    lengths = encoded.lengths.tolist()
    batches = width_batches(lengths, settings.max_batch_pairs, batch_token_budget(scorer, settings), scorer.max_length)
    with run_context(scorer, precision):
        for batch, width in tqdm(batches, desc=description, unit="batch", disable=not settings.progress, mininterval=10):
            ids, mask, types = batch_inputs(encoded, two_rows_at_least(batch), scorer, width)
            outputs = scorer.sequence_and_tokens(ids, mask, types)
            probabilities, token_probabilities, type_probabilities = (
                None if output is None else host_array(output[: len(batch)]) for output in outputs
            )
            if error_types is not None and type_probabilities is not None:
                error_types[batch] = type_probabilities
            first = len(template.prefix) + encoded.premise_kept[batch] + len(template.middle)
            for row, index in enumerate(batch):
                support[index] = probabilities[row, ALIGNED]
                start, kept = int(first[row]), int(encoded.hypothesis_kept[index])
                unsupported[index] = token_probabilities[row, start : start + kept].astype(np.float64)
    offsets = [piece_offsets[hypothesis][: len(values)] for (_, hypothesis), values in zip(pairs, unsupported, strict=True)]
    return TokenResult(support, offsets, unsupported, encoded.hypothesis_cut.copy(), error_types)
